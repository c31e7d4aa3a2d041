#!/bin/bash
# ctl-sessions.sh - iSCSI sessions through the control socket: while nvmeof-bench reads
# over iSCSI, nvmeof-ctl session list shows the session (initiator IQN, ISID, TSIH, the
# initiator's address, the portal, the target, one connection, read counters that grow);
# session disconnect TSIH ends it (the session leaves the list, the log says who did it);
# an unknown TSIH and a malformed one are refused in one line.

. "$(dirname "$0")/lib.sh"

BENCH=$top_builddir/initiator/nvmeof-bench
CTL=$top_builddir/target/nvmeof-ctl
IQN=iqn.2026-11.io.nvmeof:default

it_init
[ -x "$BENCH" ] && [ -x "$CTL" ] || { echo "$IT_NAME: build first" >&2; exit 99; }
nv_require python3
SOCK=$IT_DIR/ctl.sock
IPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
it_start_target --listen "iscsi://127.0.0.1:$IPORT" --ns ram:64M --control-socket "$SOCK" \
	--state-dir "$IT_DIR/state" || it_finish

ctl() { "$CTL" -s "$SOCK" "$@" > "$IT_DIR/ctl.out" 2> "$IT_DIR/ctl.err"; }
# busy_tsih: the TSIH of a session that has read something, or nothing
busy_tsih() {
	python3 -c 'import json, sys
for s in json.load(open(sys.argv[1])):
    if s["stats"]["read_cmds"] > 0:
        print(s["tsih"]); break' "$IT_DIR/ctl.out" 2> /dev/null
}

ctl session list
it_check no-sessions-yet grep -q 'no iSCSI sessions' "$IT_DIR/ctl.out"

"$BENCH" --scsi "iscsi://127.0.0.1:$IPORT/$IQN/0" --rw randread --bs 4k --qd 8 --time 6 \
	--warmup 0 --repeat 1 --no-progress --ctrl-loss-tmo 0 > "$IT_DIR/bench.out" 2>&1 &
BPID=$!
tsih=
for _ in $(seq 100); do
	ctl -o json session list && tsih=$(busy_tsih)
	[ -n "$tsih" ] && break
	sleep 0.1
done
it_check session-listed [ -n "$tsih" ]
cp "$IT_DIR/ctl.out" "$IT_DIR/sessions.json"
it_check session-fields python3 -c 'import json, re, sys
s = [x for x in json.load(open(sys.argv[1])) if x["tsih"] == int(sys.argv[2])][0]
ok = (s["initiator"].startswith("iqn.") and s["target"] == sys.argv[3]
      and re.fullmatch("[0-9a-f]{12}", s["isid"]) and s["peer"].startswith("127.0.0.1:")
      and s["portal_addr"] == "127.0.0.1" and s["portal_port"] == sys.argv[4]
      and s["connections"] == 1 and s["stats"]["read_bytes"] >= 4096 * s["stats"]["read_cmds"] > 0)
sys.exit(0 if ok else 1)' "$IT_DIR/sessions.json" "$tsih" "$IQN" "$IPORT"
sleep 0.5
ctl -o json session list
it_check counters-grow python3 -c 'import json, sys
a = [x for x in json.load(open(sys.argv[1])) if x["tsih"] == int(sys.argv[3])][0]
b = [x for x in json.load(open(sys.argv[2])) if x["tsih"] == int(sys.argv[3])][0]
sys.exit(0 if b["stats"]["read_cmds"] > a["stats"]["read_cmds"] else 1)' \
	"$IT_DIR/sessions.json" "$IT_DIR/ctl.out" "$tsih"
ctl session list "$IQN"
it_check list-text grep -qE "^TSIH $tsih  iqn\..*  ISID [0-9a-f]{12}  from 127\.0\.0\.1:[0-9]+  to $IQN \(portal 127\.0\.0\.1:$IPORT\)" "$IT_DIR/ctl.out"
ctl -o json session list iqn.2026-11.io.nvmeof:nobody
it_check list-other-target python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])) == [] else 1)' "$IT_DIR/ctl.out"

it_check disconnect ctl session disconnect "$tsih"
gone=
for _ in $(seq 50); do
	ctl -o json session list
	if python3 -c 'import json, sys; sys.exit(0 if all(s["tsih"] != int(sys.argv[2]) for s in json.load(open(sys.argv[1]))) else 1)' "$IT_DIR/ctl.out" "$tsih"; then
		gone=1
		break
	fi
	sleep 0.1
done
it_check session-gone [ -n "$gone" ]
it_grep disconnect-logged "$IT_LOG" "iSCSI session TSIH $tsih \(iqn\..* from 127\.0\.0\.1:[0-9]+\) disconnected by the operator"
wait "$BPID"
it_log "nvmeof-bench after its session was ended: exit status $?"

ctl session disconnect 999
it_check disconnect-unknown [ $? = 1 ]
it_check disconnect-unknown-one-line [ "$(wc -l < "$IT_DIR/ctl.err")" = 1 ]
it_check disconnect-unknown-msg grep -q 'no iSCSI session has that TSIH' "$IT_DIR/ctl.err"
ctl session disconnect abc
it_check disconnect-bad-arg [ $? = 2 ]

it_stop_target
it_finish

#!/bin/bash
# first-contact.sh - what a first user meets: every program answers -V; nvmeof discover
# lists the iSCSI portal's targets and identify/id-ctrl on iscsi:// show the SCSI logical
# unit's facts (normal and -o json); a CLI run (connect, identify, one read, disconnect)
# leaves one notice line in the daemon's log; -c takes --discovery-port 0 and friends and
# refuses --ns with one line; a bad iscsi section stops the daemon before it listens; a
# busy port is reported once.

. "$(dirname "$0")/lib.sh"

NQN=nqn.2026-11.io.nvmeof:default
IQN=iqn.2026-11.io.nvmeof:default

it_init
nv_require python3

json_has() {
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$IT_OUT" "$2" 2> "$IT_DIR/py.err"; then
		it_ok "$1"
	else
		it_not_ok "$1" "JSON check failed: $2"
		sed 's/^/#   /' "$IT_OUT" | head -n 20
		sed 's/^/#   /' "$IT_DIR/py.err" | head -n 5
	fi
}

# ---- -V everywhere
for prog in target/nvmeof-target initiator/nvmeof initiator/nvmeof-bench \
	initiator/nvmeof-tcp-ceiling; do
	name=$(basename "$prog")
	for flag in -V --version; do
		if out=$("$top_builddir/$prog" "$flag" 2>&1) && echo "$out" | grep -qE "^$name [0-9]+\.[0-9]+"; then
			it_ok "version $name $flag"
		else
			it_not_ok "version $name $flag" "printed '$out'"
		fi
	done
done

# ---- iSCSI discovery and SCSI identify
it_start_target --ns ram:64M --listen iscsi://127.0.0.1:0 || it_finish
IPORT=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" | head -n 1)
it_check iscsi-port test -n "$IPORT"
it_cli discover-iscsi 0 discover "iscsi://127.0.0.1:$IPORT"
it_grep discover-iscsi-count "$IT_OUT" '^Discovery Log Number of Records 1 '
it_grep discover-iscsi-name "$IT_OUT" "^targetname: +$IQN\$"
it_grep discover-iscsi-addr "$IT_OUT" "^trsvcid: +$IPORT\$"
it_cli discover-iscsi-json 0 discover "iscsi://127.0.0.1:$IPORT/" -o json
json_has discover-iscsi-json-fields "len(d['records']) == 1 and d['records'][0]['targetname'] == '$IQN' and d['records'][0]['traddr'] == '127.0.0.1' and d['records'][0]['trsvcid'] == '$IPORT' and d['records'][0]['tpgt'] == 1"
it_cli discover-iscsi-path 2 discover "iscsi://127.0.0.1:$IPORT/$IQN/0"
it_grep discover-iscsi-path-msg "$IT_ERR" 'not an iSCSI portal'

IU=iscsi://127.0.0.1:$IPORT/$IQN/0
it_cli identify-iscsi 0 identify "$IU"
it_grep identify-iscsi-vendor "$IT_OUT" '^  vendor: +NVMe$'
it_grep identify-iscsi-serial "$IT_OUT" '^  serial: +[0-9A-F]{8,}'
it_grep identify-iscsi-capacity "$IT_OUT" '^  capacity: +131072 blocks x 512 bytes'
it_grep identify-iscsi-desig "$IT_OUT" '^  SCSI name string +\(target device\): '"$IQN"'$'
it_grep identify-iscsi-limits "$IT_OUT" '^  max compare-and-write: +[1-9][0-9]* blocks'
if grep -qE '^ *(cntlid|mdts|oncs|subnqn)' "$IT_OUT"; then
	it_not_ok identify-iscsi-no-nvme "NVMe fields in the SCSI identify output"
else
	it_ok identify-iscsi-no-nvme
fi
it_cli identify-iscsi-json 0 identify "$IU" -o json
json_has identify-iscsi-json-fields "d['scsi']['vendor'] == 'NVMe' and d['scsi']['blocks'] == 131072 and d['scsi']['block_size'] == 512 and d['scsi']['serial'] and any(x['type'] == 8 and x['value'] == '$IQN' for x in d['scsi']['designators']) and d['scsi']['block_limits']['max_transfer'] > 0 and d['scsi']['block_limits']['max_compare_write'] > 0"
it_cli id-ctrl-iscsi-json 0 id-ctrl "$IU" -o json
json_has id-ctrl-iscsi-json-fields "d['scsi']['lun'] == 0 and d['scsi']['target'] == '$IQN'"

# ---- one notice line per CLI run
before=$(grep -c 'notice:' "$IT_LOG")
it_cli read-one 0 read "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --lba 0 --blocks 1 -d "$IT_DIR/blk"
for i in $(seq 50); do
	grep -q 'admin queue.*tearing down' "$IT_LOG" && break
	[ "$i" = 50 ] || sleep 0.1
done
sleep 0.2
after=$(grep -c 'notice:' "$IT_LOG")
if [ $((after - before)) = 1 ]; then
	it_ok "one notice line per CLI run"
else
	it_not_ok "one notice line per CLI run" "$((after - before)) notice lines:"
	tail -n $((after - before)) "$IT_LOG" | sed 's/^/#   /'
fi
it_stop_target

# ---- -c and the flags beside it
# a config port cannot be 0: a free one, picked the moment before
FREE=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$IT_DIR/t.json" << EOF
{ "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4",
    "traddr": "127.0.0.1", "trsvcid": "$FREE" }, "subsystems": [ "$NQN" ] } ],
  "subsystems": [ { "nqn": "$NQN", "attr": { "allow_any_host": "1" },
    "namespaces": [ { "nsid": 1, "device": { "path": "ram:8M" } } ] } ],
  "iscsi": { "targets": [ { "iqn": "$IQN", "lun_map": 1,
    "luns": [ { "lun": 0, "subsystem": "$NQN", "nsid": 1 } ] } ],
    "portals": [ { "addr": "127.0.0.1", "port": 0 } ] } }
EOF
IT_LOG=$IT_DIR/c.log
"$IT_TARGET_BIN" -c "$IT_DIR/t.json" --discovery-port 0 --log-level info --reactors 1 \
	--stats-socket "$IT_DIR/stats.sock" > "$IT_LOG" 2>&1 &
IT_PID=$!
for i in $(seq 100); do
	grep -q 'listening on iscsi' "$IT_LOG" && break
	sleep 0.05
done
it_grep config-flags-listening "$IT_LOG" 'listening on tcp 127\.0\.0\.1:[1-9]'
it_grep config-unknown-key-line "$IT_LOG" "t.json:5: iscsi.targets\[0\]\.lun_map: unknown key, ignored"
if grep -q '8009' "$IT_LOG"; then
	it_not_ok config-no-discovery "a discovery listener despite --discovery-port 0"
else
	it_ok config-no-discovery
fi
it_check config-stats-socket test -S "$IT_DIR/stats.sock"
it_stop_target

out=$("$IT_TARGET_BIN" -c "$IT_DIR/t.json" --ns ram:1M 2>&1)
rc=$?
if [ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
	echo "$out" | grep -q -- "-c $IT_DIR/t.json and --ns conflict"; then
	it_ok config-ns-conflict
else
	it_not_ok config-ns-conflict "status $rc: $out"
fi

sed 's/"subsystem": "\([^"]*\)", "nsid": 1/"subsystem": "\1", "nsid": 9/' "$IT_DIR/t.json" > "$IT_DIR/bad.json"
out=$("$IT_TARGET_BIN" -c "$IT_DIR/bad.json" --discovery-port 0 2>&1)
rc=$?
if [ "$rc" != 0 ] && ! echo "$out" | grep -q 'listening' &&
	echo "$out" | grep -q "bad.json: iscsi.targets\[0\].luns\[0\].nsid: subsystem \"$NQN\" has no namespace 9"; then
	it_ok config-bad-lun
else
	it_not_ok config-bad-lun "status $rc: $out"
fi

# ---- a busy port, said once
it_start_target --ns ram:8M || it_finish
out=$("$IT_TARGET_BIN" --listen "tcp://127.0.0.1:$IT_PORT" --discovery-port 0 --reactors 4 2>&1)
rc=$?
n=$(echo "$out" | grep -c 'Address already in use')
if [ "$rc" != 0 ] && [ "$n" = 1 ]; then
	it_ok busy-port-once
else
	it_not_ok busy-port-once "status $rc, $n lines: $out"
fi
it_stop_target
it_finish

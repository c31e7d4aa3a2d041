#!/bin/bash
# ctl-live.sh - operate a running nvmeof-target with nvmeof-ctl only.
#
# Start with a configuration holding nothing and a control socket in a temp dir; build two
# subsystems with namespaces, hosts and listeners; connect with the initiator CLI and do
# I/O; while I/O runs add, resize and remove namespaces and revoke a host (its live
# controller ends, its next Connect is refused); bad requests fail naming the parameter;
# save, check SIGHUP replaces unsaved live changes, restart from the saved file, save
# again: the same configuration back.
. "$(dirname "$0")/lib.sh"
it_init
CTL_BIN=$top_builddir/target/nvmeof-ctl
[ -x "$CTL_BIN" ] || { echo "$CTL_BIN is missing (build first)" >&2; exit 99; }
SOCK=$IT_DIR/run/ctl.sock
NQN_A=nqn.2026-11.io.nvmeof:ctl-a
NQN_B=nqn.2026-11.io.nvmeof:ctl-b
HOST_1=nqn.2014-08.org.nvmexpress:uuid:0c7d0f0e-1111-4c2a-9a61-000000000001
HOST_2=nqn.2014-08.org.nvmexpress:uuid:0c7d0f0e-2222-4c2a-9a61-000000000002
# host3 only has DH-HMAC-CHAP secrets (enforced: the CLI here does not authenticate)
HOST_3=nqn.2014-08.org.nvmexpress:uuid:0c7d0f0e-3333-4c2a-9a61-000000000003
KEY_1="DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:"
KEY_2="DHHC-1:01:Y3RybGN0cmxjdHJsY3RybGN0cmxjdHJsY3RybGN0cmxqLZiz:"
IO_PIDS=

ctl() { "$CTL_BIN" -s "$SOCK" "$@"; }

# ctl_ok NAME ARGS... / ctl_fails NAME ERE ARGS... : exit 0 / exit 1 with a message on stderr
ctl_ok() {
	local name=$1
	shift
	if ctl "$@" > "$IT_DIR/ctl.out" 2> "$IT_DIR/ctl.err"; then
		it_ok "$name"
	else
		it_not_ok "$name" "nvmeof-ctl $* failed: $(cat "$IT_DIR/ctl.err")"
	fi
}
ctl_fails() {
	local name=$1 want=$2 rc
	shift 2
	ctl "$@" > "$IT_DIR/ctl.out" 2> "$IT_DIR/ctl.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -qE -- "$want" "$IT_DIR/ctl.err"; then
		it_ok "$name"
	else
		it_not_ok "$name" "nvmeof-ctl $*: status $rc, stderr: $(cat "$IT_DIR/ctl.err")"
	fi
}

# start_daemon CONFIG : nvmeof-target -c CONFIG with the control socket; waits for it.
start_daemon() {
	local i
	IT_LOG=$IT_DIR/target.$RANDOM.log
	"$IT_TARGET_BIN" -c "$1" --discovery-port 0 --control-socket "$SOCK" --reactors 2 > "$IT_LOG" 2>&1 &
	IT_PID=$!
	for i in $(seq 200); do
		[ -S "$SOCK" ] && ctl status > /dev/null 2>&1 && break
		kill -0 "$IT_PID" 2> /dev/null || break
		sleep 0.05
	done
	if ctl status > /dev/null 2>&1; then
		it_ok "target-start (-c $(basename "$1"))"
	else
		it_not_ok target-start "no control socket"
		sed 's/^/#   target: /' "$IT_LOG"
		exit 1
	fi
}

# port_of NQN : the TCP port the subsystem listens on (listeners use port 0: the kernel
# picks a free one).
port_of() {
	ctl -o json subsystem list "$1" | tr -d ' \n' |
		sed -n 's/.*"listen_addresses":\[[^]]*"trsvcid":"\([0-9]*\)".*/\1/p'
}

# nsze URI HOSTNQN : the namespace size in blocks from Identify Namespace
nsze() {
	"$IT_CLI" identify "$1" --hostnqn "$2" --json 2> /dev/null | tr -d ' \n' |
		sed -n 's/.*"blocks":\([0-9]*\).*/\1/p' | head -n 1
}

stop_io() {
	local p
	for p in $IO_PIDS; do kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
	IO_PIDS=
}

cleanup_ctl() {
	stop_io
	[ -n "${HOLD_PID:-}" ] && kill "$HOLD_PID" 2> /dev/null
}
trap 'st=$?; cleanup_ctl; (exit $st); it_cleanup' EXIT

echo '{}' > "$IT_DIR/empty.json"
start_daemon "$IT_DIR/empty.json"
it_check "socket mode 0660" [ "$(stat -c %a "$SOCK")" = 660 ]
it_check "socket directory mode 0750" [ "$(stat -c %a "$IT_DIR/run")" = 750 ]
ctl -o json subsystem list > "$IT_DIR/empty.out"
it_check "empty target: only the discovery subsystem" \
	[ "$(grep -c '"nqn"' "$IT_DIR/empty.out")" = 1 ]

# ---- Build two subsystems --------------------------------------------------------------
ctl_ok "subsystem add A" subsystem add $NQN_A
ctl_ok "subsystem add B (any host)" subsystem add $NQN_B --allow-any-host --serial ctlb0001
ctl_ok "namespace add A ram:32M" namespace add $NQN_A ram:32M
ctl_ok "namespace add A null:1G as nsid 5" namespace add $NQN_A null:1G --nsid 5
truncate -s 16M "$IT_DIR/b.img"
ctl_ok "namespace add B file" namespace add $NQN_B "$IT_DIR/b.img"
ctl_ok "host add A host1" host add $NQN_A $HOST_1
ctl_ok "host add A host2" host add $NQN_A $HOST_2
ctl_ok "host add A host3 with a key" host add $NQN_A $HOST_3 --dhchap-key "$KEY_1"
ctl_ok "listener add A" listener add $NQN_A tcp://127.0.0.1:0
ctl_ok "listener add B" listener add $NQN_B tcp://127.0.0.1:0
PORT_A=$(port_of $NQN_A)
PORT_B=$(port_of $NQN_B)
it_check "both listening (A:$PORT_A B:$PORT_B)" [ -n "$PORT_A" ] && [ -n "$PORT_B" ] && [ "$PORT_A" != "$PORT_B" ]
URI_A=nvme+tcp://127.0.0.1:$PORT_A/$NQN_A
URI_B=nvme+tcp://127.0.0.1:$PORT_B/$NQN_B
it_check "the key is not logged" bash -c "! grep -q DHHC-1 '$IT_LOG'"

# ---- Errors name the parameter and value ------------------------------------------------
ctl_fails "unknown subsystem" 'parameter "nqn": subsystem "nqn.x" does not exist' \
	namespace add nqn.x ram:1M
ctl_fails "duplicate nsid" 'parameter "nsid": namespace 5' namespace add $NQN_A ram:1M --nsid 5
ctl_fails "bad size" 'parameter "size": "lots"' namespace resize $NQN_A 1 lots
ctl_fails "bad path" 'parameter "path": "rel.img"' namespace add $NQN_A rel.img
ctl_fails "duplicate subsystem" 'already exists' subsystem add $NQN_A
ctl_fails "unknown method" 'method not found' rpc no_such_method

# ---- Connect and do I/O -----------------------------------------------------------------
head -c 65536 /dev/urandom > "$IT_DIR/pattern"
it_cli "write A ns1 as host1" 0 write "$URI_A/1" --lba 0 --blocks 128 -i "$IT_DIR/pattern" \
	--hostnqn $HOST_1
it_cli "read A ns1 back" 0 read "$URI_A/1" --lba 0 --blocks 128 -o "$IT_DIR/back" \
	--hostnqn $HOST_1
it_check "read what was written" cmp -s "$IT_DIR/pattern" "$IT_DIR/back"
it_cli "B accepts any host" 0 list-ns "$URI_B" --hostnqn $HOST_2
it_cli "A refuses a host not listed" 3 list-ns "$URI_A" \
	--hostnqn nqn.2014-08.org.nvmexpress:uuid:0c7d0f0e-9999-4c2a-9a61-000000000009

# Background readers on A ns1 (host1) and B (host2) while the configuration changes.
io_loop() { # URI HOSTNQN TAG
	local n=0 fail=0
	while [ ! -e "$IT_DIR/stop" ]; do
		if "$IT_CLI" read "$1" --lba 0 --blocks 128 -o "$IT_DIR/io.$3" --hostnqn "$2" \
			2>> "$IT_DIR/io.$3.err"; then
			cmp -s "$IT_DIR/io.$3" "$4" || fail=$((fail + 1))
		else
			fail=$((fail + 1))
		fi
		n=$((n + 1))
	done
	echo "$n $fail" > "$IT_DIR/io.$3.result"
}
it_cli "write B ns1 as host2" 0 write "$URI_B/1" --lba 0 --blocks 128 -i "$IT_DIR/pattern" \
	--hostnqn $HOST_2
io_loop "$URI_A/1" $HOST_1 a "$IT_DIR/pattern" &
IO_PIDS="$IO_PIDS $!"
io_loop "$URI_B/1" $HOST_2 b "$IT_DIR/pattern" &
IO_PIDS="$IO_PIDS $!"
sleep 0.5

# A live controller of host2 on A, held open: write reading its data from a FIFO.
mkfifo "$IT_DIR/hold"
("$IT_CLI" write "$URI_A/1" --lba 256 --blocks 8 --hostnqn $HOST_2 < "$IT_DIR/hold" \
	> /dev/null 2> "$IT_DIR/hold.err"; echo $? > "$IT_DIR/hold.rc") &
HOLD_PID=$!
exec 7> "$IT_DIR/hold"
for i in $(seq 50); do
	ctl controller list $NQN_A | grep -q "$HOST_2" && break
	sleep 0.1
done
it_check "host2's controller is listed" bash -c "'$CTL_BIN' -s '$SOCK' controller list $NQN_A | grep -q '$HOST_2'"

# Changes while I/O runs.
ctl_ok "namespace add A ns2 under I/O" namespace add $NQN_A ram:8M
it_cli "A lists ns 1, 2, 5" 0 list-ns "$URI_A" --hostnqn $HOST_1
it_check "list-ns shows nsid 2" grep -qE '(^|[^0-9])2([^0-9]|$)' "$IT_OUT"
BEFORE=$(nsze "$URI_A/1" $HOST_1)
ctl_ok "namespace resize A ns1 to 64M under I/O" namespace resize $NQN_A 1 64M
AFTER=$(nsze "$URI_A/1" $HOST_1)
it_check "Identify Namespace: NSZE $BEFORE -> $AFTER blocks" \
	[ "$BEFORE" = 65536 ] && [ "$AFTER" = 131072 ]
it_grep "resize logged" "$IT_LOG" "namespace 1 resized from 65536 to 131072 blocks"
ctl_ok "namespace remove A ns5 under I/O" namespace remove $NQN_A 5
ctl_ok "host remove A host2" host remove $NQN_A $HOST_2
it_grep "host remove ends the live controller" "$IT_DIR/ctl.out" "^1 controller"
sleep 0.3
it_check "host2's controller is gone" bash -c "! '$CTL_BIN' -s '$SOCK' controller list $NQN_A | grep -q '$HOST_2'"
head -c 4096 /dev/zero >&7 2> /dev/null
exec 7>&-
wait "$HOLD_PID"
HOLD_PID=
it_check "host2's held write failed (status $(cat "$IT_DIR/hold.rc"))" \
	[ "$(cat "$IT_DIR/hold.rc")" != 0 ]
it_cli "host2's next connect to A is refused" 3 list-ns "$URI_A" --hostnqn $HOST_2
it_cli "host2 still reaches B" 0 list-ns "$URI_B" --hostnqn $HOST_2

touch "$IT_DIR/stop"
for p in $IO_PIDS; do wait "$p"; done
IO_PIDS=
for t in a b; do
	read -r n f < "$IT_DIR/io.$t.result" 2> /dev/null || { n=0; f=1; }
	it_check "I/O on $t during the changes: $n reads, $f failures" [ "$n" -gt 0 ] && [ "$f" = 0 ]
done

# ---- Save; SIGHUP and unsaved changes -----------------------------------------------------
ctl_ok "host3 gets a new key" host add $NQN_A $HOST_3 --dhchap-key "$KEY_2"
ctl_ok "save" save "$IT_DIR/saved1.json"
it_check "saved file holds a key: mode 0600" [ "$(stat -c %a "$IT_DIR/saved1.json")" = 600 ]
it_check "status: dirty before saving to the -c file" \
	bash -c "'$CTL_BIN' -s '$SOCK' status | grep -q '\"dirty\":true'"
# The file wins on SIGHUP: the live configuration goes back to empty.json, with a warning.
kill -HUP "$IT_PID"
for i in $(seq 50); do grep -q "reloaded.*empty.json.*subsystems +0 -2" "$IT_LOG" && break; sleep 0.1; done
it_grep "SIGHUP warns about unsaved live changes" "$IT_LOG" "live changes not saved to .* are replaced"
it_check "SIGHUP applied the file (no subsystems)" \
	bash -c "[ \"\$('$CTL_BIN' -s '$SOCK' -o json subsystem list | grep -c '\"nqn\"')\" = 1 ]"
it_check "status: clean after the reload" \
	bash -c "'$CTL_BIN' -s '$SOCK' status | grep -q '\"dirty\":false'"
it_stop_target

# ---- Restart from the saved file; save again; same configuration ------------------------
start_daemon "$IT_DIR/saved1.json"
PORT_A=$(port_of $NQN_A)
it_cli "after restart: host1 reads A ns1" 0 list-ns "nvme+tcp://127.0.0.1:$PORT_A/$NQN_A" \
	--hostnqn $HOST_1
it_check "after restart: ns1 is 64M" \
	[ "$(nsze "nvme+tcp://127.0.0.1:$PORT_A/$NQN_A/1" $HOST_1)" = 131072 ]
ctl_ok "save again" save "$IT_DIR/saved2.json"
if diff -u "$IT_DIR/saved1.json" "$IT_DIR/saved2.json" > "$IT_DIR/diff"; then
	it_ok "the two saved files are the same"
else
	it_not_ok "the two saved files are the same" "they differ:"
	sed 's/^/#   /' "$IT_DIR/diff"
fi
# Saving to the -c file itself clears "dirty".
ctl_ok "namespace add after restart" namespace add $NQN_B ram:1M
ctl_ok "save to the -c file" save
it_check "status: clean after saving to the -c file" \
	bash -c "'$CTL_BIN' -s '$SOCK' status | grep -q '\"dirty\":false'"
it_check "the -c file has the new namespace" grep -q '"ram:1M"' "$IT_DIR/saved1.json"
it_stop_target
it_check "control socket removed at exit" [ ! -e "$SOCK" ]
it_finish

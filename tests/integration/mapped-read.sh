#!/bin/bash
# mapped-read.sh - read data that leaves straight from a RAM namespace outlives the
# namespace's removal.
#
# A host writes a pattern over a ram namespace, sends 64 reads of 128 KiB on a connection
# with a tiny receive buffer and stops reading, so most of the read data stays queued in
# the target (sent from the namespace memory, not copied). The namespace is removed with
# nvmeof-ctl meanwhile: the removal must wait for the queued data, the host then takes
# everything and every byte must be what was written; the target must still serve a new
# controller and exit cleanly (nothing reported by the sanitizers in such a build).
. "$(dirname "$0")/lib.sh"
it_init
CTL_BIN=$top_builddir/target/nvmeof-ctl
CLIENT=$top_builddir/tests/integration/mapped_read_client
for bin in "$CTL_BIN" "$CLIENT"; do
	[ -x "$bin" ] || { echo "$bin is missing (build first)" >&2; exit 99; }
done
SOCK=$IT_DIR/run/ctl.sock
NQN=nqn.2026-11.io.nvmeof:mapped-read
CPID=
RPID=

ctl() { "$CTL_BIN" -s "$SOCK" "$@"; }

stop_clients() {
	local p
	for p in $CPID $RPID; do
		kill -KILL "$p" 2> /dev/null
	done
}
trap 'st=$?; stop_clients; (exit $st); it_cleanup' EXIT

# wait_for FILE ERE PID : until FILE has a line matching ERE (or PID is gone)
wait_for() {
	local i
	for i in $(seq 1200); do
		grep -qE -- "$2" "$1" 2> /dev/null && return 0
		kill -0 "$3" 2> /dev/null || break
		sleep 0.05
	done
	grep -qE -- "$2" "$1" 2> /dev/null
}

# An empty configuration, then the subsystem through the control socket (namespaces
# given on the command line are not managed by nvmeof-ctl).
echo '{}' > "$IT_DIR/empty.json"
IT_LOG=$IT_DIR/target.log
"$IT_TARGET_BIN" -c "$IT_DIR/empty.json" --discovery-port 0 --control-socket "$SOCK" \
	> "$IT_LOG" 2>&1 &
IT_PID=$!
for i in $(seq 200); do
	[ -S "$SOCK" ] && ctl status > /dev/null 2>&1 && break
	kill -0 "$IT_PID" 2> /dev/null || break
	sleep 0.05
done
if ! ctl subsystem add "$NQN" --allow-any-host > /dev/null ||
	! ctl namespace add "$NQN" ram:64M > /dev/null ||
	! ctl listener add "$NQN" tcp://127.0.0.1:0 > /dev/null; then
	it_not_ok target-start "could not set up $NQN through nvmeof-ctl"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
IT_PORT=$(ctl -o json subsystem list "$NQN" | tr -d ' \n' |
	sed -n 's/.*"listen_addresses":\[[^]]*"trsvcid":"\([0-9]*\)".*/\1/p')
it_ok "target-start (ram:64M, port $IT_PORT)"

mkfifo "$IT_DIR/go"
"$CLIENT" "$IT_PORT" "$NQN" < "$IT_DIR/go" > "$IT_DIR/client.out" 2>&1 &
CPID=$!
exec 3> "$IT_DIR/go"
if wait_for "$IT_DIR/client.out" '^queued$' "$CPID"; then
	it_ok "64 reads of 128 KiB sent to a host that does not read"
else
	it_not_ok "reads queued" "client: $(cat "$IT_DIR/client.out")"
fi

ctl namespace remove "$NQN" 1 > "$IT_DIR/remove.out" 2>&1 &
RPID=$!
if wait_for "$IT_LOG" 'namespace 1 removed' "$IT_PID"; then
	it_ok "namespace 1 removed while its read data is queued"
else
	it_not_ok "namespace removal started" "no 'namespace 1 removed' in the target log"
fi
# The data still queued holds the namespace: the removal cannot have finished.
if kill -0 "$RPID" 2> /dev/null; then
	it_ok "removal waits for the queued read data"
else
	it_not_ok "removal waits" "nvmeof-ctl returned before the host read: $(cat "$IT_DIR/remove.out")"
fi

echo go >&3
exec 3>&-
if wait "$CPID"; then
	it_ok "every byte of the queued reads is what was written; a new controller comes up"
else
	it_not_ok "queued reads intact" "$(sed 's/^/#   /' "$IT_DIR/client.out")"
fi
CPID=
if wait "$RPID"; then
	it_ok "namespace remove completes once the data is out"
else
	it_not_ok "namespace remove" "$(cat "$IT_DIR/remove.out")"
fi
RPID=
if ctl status > /dev/null 2>&1; then
	it_ok "target alive after the removal"
else
	it_not_ok "target alive" "nvmeof-ctl status failed"
fi
it_stop_target
it_finish

#!/bin/bash
# ctl-kernel-host.sh - the Linux kernel NVMe/TCP host stays connected while nvmeof-ctl
# changes the target under it: the guest connects to a subsystem with one namespace, this
# script adds a second namespace (a 128 MiB file) with nvmeof-ctl namespace add, the guest
# sees its block device appear with that size, then nvmeof-ctl namespace resize grows it
# to 192 MiB and the guest sees the new size and writes its last block. Both changes
# reach the host as Namespace Attribute Changed events (the target logs each one it
# sends); the host never reconnects (same controller, same controller ID, no reconnect in
# its kernel log). nvme list before and after is in the guest's output.
. "$(dirname "$0")/lib.sh"
ix_init

CTL=$top_builddir/target/nvmeof-ctl
SOCK=$IX_DIR/ctl.sock
NQN=nqn.2026-11.io.nvmeof:ctl-kernel-host
ADD_BYTES=$((128 << 20))
RESIZE_BYTES=$((192 << 20))
truncate -s "$IX_NSBYTES" "$IX_DIR/ns1.img"
truncate -s "$ADD_BYTES" "$IX_DIR/ns2.img"
# A configuration file: nvmeof-ctl changes the running configuration it describes.
PORT=$(ix_free_port) || exit 99
cat > "$IX_DIR/config.json" << JSON
{
  "hosts": [],
  "ports": [
    {"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$PORT"}, "subsystems": ["$NQN"]}
  ],
  "subsystems": [
    {"nqn": "$NQN", "attr": {"allow_any_host": "1", "serial": "CTLKH1"},
     "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$IX_DIR/ns1.img"}}]}
  ]
}
JSON
IX_TARGET_LOG=$IX_DIR/target.log
ix_log "starting nvmeof-target on 127.0.0.1:$PORT"
"$IX_TARGET_BIN" -c "$IX_DIR/config.json" --discovery-port 0 --log-level info \
	--control-socket "$SOCK" --state-dir "$IX_DIR/state" > "$IX_TARGET_LOG" 2>&1 9>&- &
IX_TARGET_PID=$!
for _ in $(seq 200); do
	[ -n "$(ss -Htln "( sport = :$PORT )" 2> /dev/null)" ] && [ -S "$SOCK" ] && break
	kill -0 "$IX_TARGET_PID" 2> /dev/null || break
	sleep 0.1
done
if [ -z "$(ss -Htln "( sport = :$PORT )" 2> /dev/null)" ]; then
	ix_not_ok target-start "not listening on :$PORT"
	cat "$IX_TARGET_LOG"
	ix_finish
fi
ix_ok target-start

# The driver: waits for the guest, adds then resizes a namespace, each after the guest
# reported the previous state.
driver() {
	for _ in $(seq 900); do
		[ -e "$IX_DIR/connected" ] || [ -e "$IX_DIR/guest-done" ] && break
		sleep 0.2
	done
	[ -e "$IX_DIR/connected" ] || { ix_not_ok driver "the guest never connected"; return; }
	if "$CTL" -s "$SOCK" namespace add "$NQN" "$IX_DIR/ns2.img" --nsid 2; then
		ix_ok ctl-namespace-add
	else
		ix_not_ok ctl-namespace-add "nvmeof-ctl namespace add failed"
		touch "$IX_DIR/host-gave-up"
		return
	fi
	touch "$IX_DIR/added"
	for _ in $(seq 600); do
		[ -e "$IX_DIR/seen-added" ] || [ -e "$IX_DIR/guest-done" ] && break
		sleep 0.2
	done
	[ -e "$IX_DIR/seen-added" ] || return
	if "$CTL" -s "$SOCK" namespace resize "$NQN" 2 "$((RESIZE_BYTES >> 20))M"; then
		ix_ok ctl-namespace-resize
	else
		ix_not_ok ctl-namespace-resize "nvmeof-ctl namespace resize failed"
		touch "$IX_DIR/host-gave-up"
		return
	fi
	touch "$IX_DIR/resized"
	"$CTL" -s "$SOCK" subsystem list "$NQN"
}

driver > "$IX_DIR/driver.out" 2>&1 &
DRIVER_PID=$!
LAB_TIMEOUT=300 ix_guest "$top_srcdir/tests/interop/guest-ctl-kernel-host.sh" 10.0.2.2 \
	"$PORT" "$NQN" "$ADD_BYTES" "$RESIZE_BYTES"
touch "$IX_DIR/guest-done"
wait "$DRIVER_PID"
sed 's/^/  driver: /' "$IX_DIR/driver.out"
while IFS= read -r line; do
	case "$line" in
	"ok "*) IX_PASS=$((IX_PASS + 1)) ;;
	"not ok "*) IX_FAIL=$((IX_FAIL + 1)) ;;
	esac
done < "$IX_DIR/driver.out"
ix_guest_results
# Notice (2), Namespace Attribute Changed (00h), log page 04h: one per change, per host
ix_expect_log ns-changed-events 2 'asynchronous event 0x40002' \
	"Namespace Attribute Changed events sent to the host"
ix_expect_log resize-logged 1 "namespace 2 resized from [0-9]+ to [0-9]+ blocks" \
	"the resize in the target log"
ix_stop_target
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok target-exit
else
	ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
fi
echo "--- target log (last 30 lines) ---"
tail -n 30 "$IX_TARGET_LOG" | sed 's/^/  target: /'
ix_finish

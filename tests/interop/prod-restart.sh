#!/bin/bash
# prod-restart.sh - the Linux kernel NVMe/TCP host (qemu lab guest) keeps its mounted ext4
# filesystem across restarts of nvmeof-target: a 256 MiB file-backed namespace, the host
# connected with --ctrl-loss-tmo=60 --reconnect-delay=2; the target is stopped with
# SIGTERM (clean exit), started again on the same file and port, later killed with
# SIGKILL and started again. Each time the host reconnects by itself to the same
# namespace (identifiers derived from the NQN, NSID and path, so unchanged), keeps
# writing, and at the end every file written before, between and after the restarts
# reads back; fsck -f is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/prod-lib.sh"
px_init
[ "$IX_REF" = nvmet ] && ix_cannot_run "no reference run: this test restarts nvmeof-target"

PORT=$(ix_free_port) || exit 99
truncate -s "$IX_NSBYTES" "$IX_DIR/ns.img"
ARGS=(--listen "tcp://127.0.0.1:$PORT" --discovery-port 0 --log-level info --ns "$IX_DIR/ns.img")

IX_TARGET_LOG=$IX_DIR/target-1.log
px_start target-start "$IX_TARGET_LOG" "$PORT" "${ARGS[@]}" || exit 1
IX_TARGET_PID=$PX_PID

t0=$SECONDS
px_guest_start "$top_srcdir/tests/interop/guest-prod-restart.sh" 10.0.2.2 "$PORT" "$IX_NQN"

# restart N SIGNAL: when the guest is ready, stop the target with SIGNAL, start it again
restart() {
	local n=$1 sig=$2 t1 pid=$IX_TARGET_PID
	px_wait_guest "ready$n" 900 || return 1
	t1=$SECONDS
	if [ "$sig" = TERM ]; then
		IX_TARGET_PID=
		px_stop "$pid"
		if [ "$PX_STATUS" = 0 ]; then
			ix_ok target-term-exit
		else
			ix_not_ok target-term-exit "SIGTERM with a host connected: exit status $PX_STATUS"
		fi
	else
		IX_TARGET_PID=
		kill -KILL "$pid"
		wait "$pid" 2> /dev/null
	fi
	sleep 3   # the host notices and starts reconnecting (every 2 s)
	IX_TARGET_LOG=$IX_DIR/target-$((n + 1)).log
	px_start "target-restart-$n" "$IX_TARGET_LOG" "$PORT" "${ARGS[@]}" || return 1
	IX_TARGET_PID=$PX_PID
	ix_log "restart $n (SIG$sig): target down for $((SECONDS - t1)) s"
	px_tell_guest "restarted$n" "nvmeof-target restarted after SIG$sig (pid $PX_PID)"
}
restart 1 TERM && restart 2 KILL
px_guest_wait
ix_log "guest run: $((SECONDS - t0)) s"
px_guest_skipped
ix_guest_results

if [ -n "$IX_TARGET_PID" ] && kill -0 "$IX_TARGET_PID" 2> /dev/null; then
	ix_ok target-alive
else
	ix_not_ok target-alive "nvmeof-target not running at the end"
fi
# the host came back to each restarted target by itself
for n in 2 3; do
	[ -f "$IX_DIR/target-$n.log" ] || continue
	IX_TARGET_LOG=$IX_DIR/target-$n.log
	ix_expect_log "target-$n-reconnected" 1 "ctrlr [0-9]+ on $IX_NQN for " \
		"a controller created by the host's reconnect"
done
ix_stop_target
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok target-exit
else
	ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
fi
for l in "$IX_DIR"/target-*.log; do
	echo "--- $(basename "$l") (last 15 of $(wc -l < "$l") lines) ---"
	tail -n 15 "$l" | sed 's/^/  target: /'
done
ix_finish

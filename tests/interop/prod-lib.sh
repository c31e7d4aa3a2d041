# tests/interop/prod-lib.sh - sourced after lib.sh by the production-scenario interop
# tests (prod-*.sh, open-iscsi.sh): the lab guest runs in the background while the test
# acts on the target (reload, restart), the two sides meeting through flag files in the
# shared directory ($IX_DIR here, /mnt/host in the guest).

PX_EXTRA_PIDS=

# px_cleanup: stop the extra daemons, then lib.sh's cleanup (guest, target, directory)
px_cleanup() {
	local rc=$? pid
	for pid in $PX_EXTRA_PIDS; do
		px_stop "$pid"
	done
	PX_EXTRA_PIDS=
	[ -n "$IX_DIR" ] && rm -f "$IX_DIR"/*.img
	(exit "$rc")
	ix_cleanup
}

# px_init: lib.sh's ix_init, with px_cleanup as the exit trap
px_init() {
	ix_init
	trap px_cleanup EXIT
}

# px_wait_listen PID PORT...: wait until PID listens on every PORT at 127.0.0.1 (20 s)
px_wait_listen() {
	local pid=$1 i p missing
	shift
	for i in $(seq 200); do
		kill -0 "$pid" 2> /dev/null || return 1
		missing=
		for p in "$@"; do
			[ -n "$(ss -Htln "( sport = :$p )" 2> /dev/null)" ] || missing=$p
		done
		[ -z "$missing" ] && return 0
		sleep 0.1
	done
	return 1
}

# px_start NAME LOG PORTS ARGS...: start nvmeof-target with ARGS (log appended to LOG) and
# wait until it listens on every port of the space-separated PORTS; records check NAME.
# Sets PX_PID. Returns 1 (check failed) when it exits or does not listen.
px_start() {
	local name=$1 log=$2 ports=$3
	shift 3
	ix_log "starting: $IX_TARGET_BIN $*"
	"$IX_TARGET_BIN" "$@" >> "$log" 2>&1 9>&- &
	PX_PID=$!
	# shellcheck disable=SC2086
	if px_wait_listen "$PX_PID" $ports; then
		ix_ok "$name"
		return 0
	fi
	if kill -0 "$PX_PID" 2> /dev/null; then
		ix_not_ok "$name" "nvmeof-target not listening on 127.0.0.1 port(s) $ports after 20 s"
		kill -KILL "$PX_PID"
	else
		ix_not_ok "$name" "nvmeof-target exited before listening"
	fi
	wait "$PX_PID" 2> /dev/null
	PX_PID=
	sed 's/^/  target: /' "$log" | tail -n 20
	return 1
}

# px_stop PID: SIGTERM, 15 s to exit, then SIGKILL; PX_STATUS is the exit status (or
# "killed")
px_stop() {
	local pid=$1 i
	PX_STATUS=
	kill -TERM "$pid" 2> /dev/null
	for i in $(seq 150); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
		PX_STATUS=killed
		return
	fi
	wait "$pid"
	PX_STATUS=$?
}

# px_guest_start CMDFILE ARGS...: boot the lab guest in the background (see ix_guest);
# the guest scripts source guest-prod-lib.sh from the share
px_guest_start() {
	cp "$top_srcdir/tests/interop/guest-prod-lib.sh" "$IX_DIR/" || exit 99
	ix_log "lab guest: $(basename "$1") ${*:2} (LAB_KERNEL=$LAB_KERNEL, LAB_SMP=${LAB_SMP:-2}," \
		"LAB_TIMEOUT=${LAB_TIMEOUT:-600})"
	LAB_SHARE=$IX_DIR LAB_TIMEOUT=${LAB_TIMEOUT:-600} LAB_APPEND="oops=panic ${LAB_APPEND:-}" \
		"$IX_LAB/run-in-guest.sh" "$@" > "$IX_DIR/console.log" 2>&1 9>&- &
	IX_GUEST_PID=$!
}

# px_guest_wait: wait for the guest started by px_guest_start; sets IX_GUEST_RC
px_guest_wait() {
	wait "$IX_GUEST_PID"
	IX_GUEST_RC=$?
	IX_GUEST_PID=
	cat "$IX_DIR/console.log"
	case "$IX_GUEST_RC" in
	124) ix_log "the lab guest timed out" ;;
	125) ix_log "the lab guest died without reporting a status" ;;
	esac
}

# px_wait_guest FILE SECONDS: wait until the guest creates $IX_DIR/FILE; 1 if the guest
# ended (or the time ran out) first
px_wait_guest() {
	local f=$IX_DIR/$1 i
	for i in $(seq $(($2 * 5))); do
		[ -e "$f" ] && return 0
		kill -0 "$IX_GUEST_PID" 2> /dev/null || { [ -e "$f" ]; return; }
		sleep 0.2
	done
	return 1
}

# px_tell_guest FILE [TEXT]: create $IX_DIR/FILE (the guest polls for it)
px_tell_guest() {
	echo "${2:-}" > "$IX_DIR/$1.tmp" && mv "$IX_DIR/$1.tmp" "$IX_DIR/$1"
}

# px_guest_skipped: the guest found the lab unable to run the test (guest-skip in the share)
px_guest_skipped() {
	[ -s "$IX_DIR/guest-skip" ] && ix_cannot_run "$(cat "$IX_DIR/guest-skip")"
}

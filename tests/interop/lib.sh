# shellcheck shell=bash
# tests/interop/lib.sh - sourced by the interop tests (tests/interop/*.sh).
#
# The Linux kernel host in the qemu lab (a stock Debian kernel, see tests/interop/lab)
# against nvmeof-target running on this machine: the target listens on
# 127.0.0.1:PORT and the guest dials 10.0.2.2:PORT, which qemu user networking maps to the
# host's 127.0.0.1.
#
# Environment:
#   NVMEOF_SKIP_INTEROP=1        skip these tests (exit 77)
#   NVMEOF_LAB=DIR               the lab (default: $top_srcdir/tests/interop/lab)
#   NVMEOF_LAB_KERNEL=K          the guest kernel: stable (default, Debian 12's 6.1) or
#                                backports (6.12); LAB_KERNEL is honoured as well
#   NVMEOF_INTEROP_TARGET=nvmet  reference run: the same guest checks against the Linux
#                                kernel target (nvmet-tcp) inside the guest instead of
#                                nvmeof-target (checks the lab and the test itself)
#   NVMEOF_INTEROP_KEEP=1        keep the per-test directory (logs, guest dmesg)
#   LAB_TIMEOUT                  hard limit for one guest run in seconds (default 600)
#   CI=true                      a lab that cannot start fails the test instead of skipping
#
# Exit status: 0 all checks passed, 1 a check failed, 77 skipped.

set -u
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
IX_NAME=$(basename "$0" .sh)
IX_DIR=
IX_TARGET_PID=
IX_GUEST_PID=
IX_PASS=0
IX_FAIL=0
IX_TARGET_BIN=$top_builddir/target/nvmeof-target
IX_NQN=nqn.2026-11.io.nvmeof:default
IX_NSBYTES=$((256 * 1024 * 1024))

ix_log() { echo "[$IX_NAME $(date +%T)] $*"; }

# Could not run the lab here: skip, except under CI where that must not pass silently.
ix_cannot_run() {
	if [ "${CI:-}" = true ]; then
		ix_log "ERROR: $* (CI=true: failing instead of skipping)"
		exit 1
	fi
	ix_log "SKIP: $*"
	exit 77
}

ix_ok() {
	IX_PASS=$((IX_PASS + 1))
	echo "ok $1"
}
ix_not_ok() {   # ix_not_ok NAME WHY...
	IX_FAIL=$((IX_FAIL + 1))
	echo "not ok $1: ${*:2}"
}

ix_cleanup() {
	local rc=$?
	if [ -n "$IX_GUEST_PID" ] && kill -0 "$IX_GUEST_PID" 2> /dev/null; then
		ix_log "stopping the lab guest (pid $IX_GUEST_PID)"
		kill -TERM "$IX_GUEST_PID" 2> /dev/null
		wait "$IX_GUEST_PID" 2> /dev/null
		cat "$IX_DIR/console.log"
	fi
	ix_stop_target
	if [ -n "$IX_DIR" ] && [ -d "$IX_DIR" ]; then
		rm -f "$IX_DIR/ns.img"
		if [ "${NVMEOF_INTEROP_KEEP:-0}" = 1 ] || { [ "$rc" != 0 ] && [ "$rc" != 77 ]; }; then
			ix_log "test files kept in $IX_DIR"
		else
			rm -rf "$IX_DIR"
		fi
	fi
	exit "$rc"
}

# ix_init: decide skip/fail, prepare the lab and a per-test directory, take the lab lock.
ix_init() {
	[ "${NVMEOF_SKIP_INTEROP:-0}" = 1 ] && { ix_log "SKIP: NVMEOF_SKIP_INTEROP=1"; exit 77; }
	IX_REF=${NVMEOF_INTEROP_TARGET:-nvmeof}
	case "$IX_REF" in
	nvmeof | nvmet) ;;
	*) ix_log "NVMEOF_INTEROP_TARGET must be nvmeof or nvmet"; exit 99 ;;
	esac

	IX_LAB=${NVMEOF_LAB:-$top_srcdir/tests/interop/lab}
	[ -x "$IX_LAB/run-in-guest.sh" ] && [ -x "$IX_LAB/build-guest.sh" ] ||
		ix_cannot_run "no qemu lab at $IX_LAB (set NVMEOF_LAB to the lab directory)"
	IX_LAB=$(cd "$IX_LAB" && pwd)
	# the kernel both build-guest.sh and every run-in-guest.sh of the test use
	LAB_KERNEL=${NVMEOF_LAB_KERNEL:-${LAB_KERNEL:-stable}}
	export LAB_KERNEL
	[ "$(id -u)" = 0 ] || ix_cannot_run "the qemu lab needs root"
	if [ "$IX_REF" = nvmeof ] && [ ! -x "$IX_TARGET_BIN" ]; then
		ix_log "no $IX_TARGET_BIN (build first)"
		exit 99
	fi

	IX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-interop-$IX_NAME.XXXXXX") || exit 99
	chmod 755 "$IX_DIR"
	trap ix_cleanup EXIT
	trap 'exit 130' INT TERM

	# build-guest.sh is idempotent (under a second once the kernel and initramfs exist)
	if ! "$IX_LAB/build-guest.sh" > "$IX_DIR/build-guest.log" 2>&1; then
		tail -n 20 "$IX_DIR/build-guest.log"
		ix_cannot_run "the lab's build-guest.sh (LAB_KERNEL=$LAB_KERNEL) failed (log above)"
	fi
	command -v ss > /dev/null || ix_cannot_run "ss (iproute2) missing"

	# One lab guest at a time on this machine: they share its CPUs and are slow under TCG.
	exec 9> "${TMPDIR:-/tmp}/nvmeof-interop.lock"
	if ! flock -n 9; then
		ix_log "waiting for another interop test to finish"
		flock -w 3600 9 || { ix_log "lab lock not released within an hour"; exit 99; }
	fi
}

# ix_free_port: a TCP port nobody listens on at 127.0.0.1
ix_free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		[ -z "$(ss -Htan "( sport = :$p )" 2> /dev/null)" ] && { echo "$p"; return 0; }
	done
	return 1
}

# ix_start_target ARGS...: start nvmeof-target listening on 127.0.0.1:$IX_PORT (only
# there: no separate discovery port) with ARGS, logging at info level to
# $IX_DIR/target.log; wait until it listens.
ix_start_target() {
	IX_PORT=$(ix_free_port) || { ix_log "no free port"; exit 99; }
	IX_TARGET_LOG=$IX_DIR/target.log
	set -- --listen "tcp://127.0.0.1:$IX_PORT" --discovery-port 0 --log-level info "$@"
	ix_log "starting: $IX_TARGET_BIN $*"
	"$IX_TARGET_BIN" "$@" > "$IX_TARGET_LOG" 2>&1 9>&- &
	IX_TARGET_PID=$!
	for _ in $(seq 200); do
		if ! kill -0 "$IX_TARGET_PID" 2> /dev/null; then
			wait "$IX_TARGET_PID"
			ix_not_ok target-start "nvmeof-target exited with status $? before listening"
			IX_TARGET_PID=
			sed 's/^/  target: /' "$IX_TARGET_LOG"
			return 1
		fi
		[ -n "$(ss -Htln "( sport = :$IX_PORT )" 2> /dev/null)" ] && { ix_ok target-start; return 0; }
		sleep 0.1
	done
	ix_not_ok target-start "nvmeof-target not listening on 127.0.0.1:$IX_PORT after 20 s"
	return 1
}

# ix_stop_target: SIGTERM, 15 s to exit cleanly, then SIGKILL. Sets IX_TARGET_STATUS to the
# exit status (or "killed").
ix_stop_target() {
	local pid=$IX_TARGET_PID
	IX_TARGET_STATUS=
	[ -n "$pid" ] || return 0
	IX_TARGET_PID=
	kill -TERM "$pid" 2> /dev/null
	for _ in $(seq 150); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
		IX_TARGET_STATUS=killed
		return 0
	fi
	wait "$pid"
	IX_TARGET_STATUS=$?
}

# ix_guest CMDFILE ARGS...: run CMDFILE in the lab guest with $IX_DIR at /mnt/host; the
# console goes to stdout and $IX_DIR/console.log. Sets IX_GUEST_RC.
ix_guest() {
	ix_log "lab guest: $(basename "$1") ${*:2} (LAB_KERNEL=$LAB_KERNEL, LAB_SMP=${LAB_SMP:-2}," \
		"LAB_TIMEOUT=${LAB_TIMEOUT:-600})"
	# a kernel oops in the guest ends the run at once (status 125) instead of at the timeout
	LAB_SHARE=$IX_DIR LAB_TIMEOUT=${LAB_TIMEOUT:-600} LAB_APPEND="oops=panic ${LAB_APPEND:-}" \
		"$IX_LAB/run-in-guest.sh" "$@" > "$IX_DIR/console.log" 2>&1 &
	IX_GUEST_PID=$!
	wait "$IX_GUEST_PID"
	IX_GUEST_RC=$?
	IX_GUEST_PID=
	cat "$IX_DIR/console.log"
	case "$IX_GUEST_RC" in
	124) ix_log "the lab guest timed out" ;;
	125) ix_log "the lab guest died without reporting a status" ;;
	esac
}

# ix_guest_results: count the guest's per-check lines (guest-results in the share)
ix_guest_results() {
	local line
	if [ ! -s "$IX_DIR/guest-results" ]; then
		ix_not_ok guest "no results from the guest (run-in-guest.sh status $IX_GUEST_RC)"
		return
	fi
	while IFS= read -r line; do
		case "$line" in
		"ok "*) IX_PASS=$((IX_PASS + 1)) ;;
		"not ok "*) IX_FAIL=$((IX_FAIL + 1)) ;;
		esac
	done < "$IX_DIR/guest-results"
	if [ "$IX_GUEST_RC" != 0 ] && ! grep -q '^not ok' "$IX_DIR/guest-results"; then
		ix_not_ok guest "guest script status $IX_GUEST_RC with no failed check"
	fi
}

# ix_expect_log NAME MIN ERE WHAT: at least MIN lines of the target log match ERE
ix_expect_log() {
	local n
	n=$(grep -cE -- "$3" "$IX_TARGET_LOG")
	if [ "$n" -ge "$2" ]; then
		ix_ok "$1"
	else
		ix_not_ok "$1" "target log: $n line(s) match /$3/, expected at least $2 ($4)"
	fi
}

# ix_kernel_host DIGEST NQUEUES: the whole kernel-host run against nvmeof-target (or the
# reference nvmet): guest checks from guest-kernel-host.sh plus the target's own view.
ix_kernel_host() {
	local digest=$1 nq=$2
	if [ "$IX_REF" = nvmet ]; then
		# host and target in one kernel: Debian 6.1's hardened usercopy check trips over
		# nvmet-tcp receiving the host's multi-page buffers over loopback
		LAB_SMP=$nq LAB_APPEND="hardened_usercopy=off ${LAB_APPEND:-}" \
			ix_guest "$top_srcdir/tests/interop/guest-kernel-host.sh" \
			10.0.2.15 4420 "$IX_NQN" "$nq" "$digest" "$IX_NSBYTES" nvmet
		ix_guest_results
		return
	fi
	truncate -s "$IX_NSBYTES" "$IX_DIR/ns.img"
	ix_start_target --ns "$IX_DIR/ns.img" || return
	LAB_SMP=$nq ix_guest "$top_srcdir/tests/interop/guest-kernel-host.sh" \
		10.0.2.2 "$IX_PORT" "$IX_NQN" "$nq" "$digest" "$IX_NSBYTES"
	ix_guest_results
	if kill -0 "$IX_TARGET_PID" 2> /dev/null; then
		ix_ok target-alive
	else
		ix_not_ok target-alive "nvmeof-target exited during the run"
	fi
	ix_target_checks "$digest" "$nq"
	ix_stop_target
	if [ "$IX_TARGET_STATUS" = 0 ]; then
		ix_ok target-exit
	else
		ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
	fi
	echo "--- target log (last 60 lines of $(wc -l < "$IX_TARGET_LOG")) ---"
	tail -n 60 "$IX_TARGET_LOG" | sed 's/^/  target: /'
}

ix_finish() {
	echo "$IX_NAME: $IX_PASS passed, $IX_FAIL failed"
	[ "$IX_FAIL" = 0 ] && [ "$IX_PASS" -gt 0 ]
	exit $?
}

# ix_target_checks DIGEST NQUEUES: what nvmeof-target itself logged about the guest's two
# connections to the subsystem (connect, then reconnect after the fsck):
#   "ctrlr N on NQN for HOSTNQN ..."           a controller of that subsystem was created
#   "ctrlr N: K I/O queue(s) connected ..."    its I/O queues as they connect
#   "PEER: ICReq ... digests header data"      the digests a connection negotiated
ix_target_checks() {
	local digest=$1 nq=$2 summary
	summary=$(awk -v nqn="$IX_NQN" '
		match($0, /ctrlr [0-9]+ on [^ ]+ for /) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			if (w[4] == nqn) { ours[w[2]] = 1; nctrl++; maxq[w[2]] = 0 }
			else delete ours[w[2]]
		}
		match($0, /ctrlr [0-9]+: [0-9]+ I\/O queues? connected/) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			id = w[2]; sub(/:$/, "", id)
			if (id in ours && w[3] + 0 > maxq[id]) maxq[id] = w[3] + 0
		}
		END {
			printf "%d", nctrl
			for (id in maxq) printf " %d", maxq[id]
			print ""
		}' "$IX_TARGET_LOG")
	# expect two controllers of the subsystem, each with exactly NQUEUES I/O queues
	if [ "$summary" = "2 $nq $nq" ]; then
		ix_ok target-io-queues
	else
		ix_not_ok target-io-queues "target log: '$summary' (number of controllers of the" \
			"subsystem, then the I/O queues of each), expected '2 $nq $nq'"
	fi
	if [ "$digest" = hdgst+ddgst ]; then
		ix_expect_log target-digests $((2 * (nq + 1))) 'digests header data' \
			"header and data digest on each of the $((nq + 1)) queues of both connections"
	fi
}

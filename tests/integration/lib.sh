# tests/integration/lib.sh - sourced by the integration test scripts.
#
# Starts nvmeof-target on 127.0.0.1 (port 0: the kernel picks a free one, read back from
# the target's log), runs checks that print "ok NAME" / "not ok NAME: why", stops every
# process it started on exit. Binaries come from $top_builddir (make check sets it).
#
# Exit status of a script: 0 when every check passed, 1 otherwise.

set -u
: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
. "$(dirname "${BASH_SOURCE[0]}")/../require.sh"
IT_NAME=$(basename "$0" .sh)
IT_TARGET_BIN=$top_builddir/target/nvmeof-target
IT_CLI=$top_builddir/initiator/nvmeof
IT_PASS=0
IT_FAIL=0
IT_DIR=
IT_PID=
IT_PORT=
IT_LOG=

it_log() { echo "# [$IT_NAME $(date +%T)] $*"; }

it_ok() {
	IT_PASS=$((IT_PASS + 1))
	echo "ok $1"
}

it_not_ok() {
	IT_FAIL=$((IT_FAIL + 1))
	echo "not ok $1: $2"
}

# it_check NAME CONDITION-COMMAND... : ok when the command succeeds
it_check() {
	local name=$1
	shift
	if "$@"; then it_ok "$name"; else it_not_ok "$name" "failed: $*"; fi
}

it_cleanup() {
	local rc=$?
	if [ -n "$IT_PID" ] && kill -0 "$IT_PID" 2> /dev/null; then
		kill -KILL "$IT_PID" 2> /dev/null
		wait "$IT_PID" 2> /dev/null
	fi
	[ -n "$IT_DIR" ] && rm -rf "$IT_DIR"
	exit "$rc"
}

it_init() {
	for bin in "$IT_TARGET_BIN" "$IT_CLI"; do
		if [ ! -x "$bin" ]; then
			echo "$IT_NAME: $bin is missing (build first)" >&2
			exit 99
		fi
	done
	IT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-$IT_NAME.XXXXXX") || exit 99
	trap it_cleanup EXIT
	trap 'exit 130' INT TERM
}

# it_start_target ARGS... : nvmeof-target on 127.0.0.1:<free port> with ARGS; sets IT_PORT.
it_start_target() {
	local i
	IT_LOG=$IT_DIR/target.$RANDOM.log
	"$IT_TARGET_BIN" --listen tcp://127.0.0.1:0 --discovery-port 0 "$@" > "$IT_LOG" 2>&1 &
	IT_PID=$!
	IT_PORT=
	for i in $(seq 200); do
		IT_PORT=$(sed -n 's/.*listening on tcp:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' \
			"$IT_LOG" | head -n 1)
		[ -n "$IT_PORT" ] && [ "$IT_PORT" != 0 ] && break
		IT_PORT=
		kill -0 "$IT_PID" 2> /dev/null || break
		sleep 0.05
	done
	if [ -z "$IT_PORT" ]; then
		it_not_ok target-start "nvmeof-target $* did not start listening"
		sed 's/^/#   target: /' "$IT_LOG"
		kill -KILL "$IT_PID" 2> /dev/null
		IT_PID=
		return 1
	fi
	it_ok "target-start ($*, port $IT_PORT)"
}

# it_stop_target: SIGTERM and a clean exit (status 0) within 10 s.
it_stop_target() {
	local i pid=$IT_PID status
	[ -n "$pid" ] || return 0
	IT_PID=
	if ! kill -0 "$pid" 2> /dev/null; then
		wait "$pid"
		it_not_ok target-alive "nvmeof-target died during the test (status $?)"
		sed 's/^/#   target: /' "$IT_LOG" | tail -n 30
		return
	fi
	kill -TERM "$pid"
	for i in $(seq 100); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2> /dev/null
		it_not_ok target-exit "nvmeof-target did not exit within 10 s of SIGTERM"
		return
	fi
	wait "$pid"
	status=$?
	if [ "$status" = 0 ]; then
		it_ok target-exit
	else
		it_not_ok target-exit "nvmeof-target exit status $status on SIGTERM"
		sed 's/^/#   target: /' "$IT_LOG" | tail -n 30
	fi
}

# it_cli NAME WANT_RC CLI-ARGS... : run the CLI; stdout in $IT_OUT, stderr in $IT_ERR.
# A failure must explain itself in exactly one line on stderr.
it_cli() {
	local name=$1 want=$2 rc lines
	shift 2
	IT_OUT=$IT_DIR/out
	IT_ERR=$IT_DIR/err
	"$IT_CLI" "$@" > "$IT_OUT" 2> "$IT_ERR"
	rc=$?
	if [ "$rc" != "$want" ]; then
		it_not_ok "$name" "exit status $rc, expected $want (nvmeof $*)"
		sed 's/^/#   stderr: /' "$IT_ERR"
		return 1
	fi
	lines=$(wc -l < "$IT_ERR")
	if [ "$want" != 0 ] && [ "$lines" != 1 ]; then
		it_not_ok "$name" "$lines lines on stderr, expected one (nvmeof $*)"
		sed 's/^/#   stderr: /' "$IT_ERR"
		return 1
	fi
	if [ "$want" = 0 ] && [ "$lines" != 0 ]; then
		it_not_ok "$name" "unexpected stderr (nvmeof $*)"
		sed 's/^/#   stderr: /' "$IT_ERR"
		return 1
	fi
	it_ok "$name"
}

# it_grep NAME FILE ERE : FILE has a line matching ERE
it_grep() {
	if grep -qE -- "$3" "$2"; then
		it_ok "$1"
	else
		it_not_ok "$1" "no line matches /$3/ in:"
		sed 's/^/#   /' "$2" | head -n 40
	fi
}

it_finish() {
	echo "# $IT_NAME: $IT_PASS passed, $IT_FAIL failed"
	[ "$IT_FAIL" = 0 ] && [ "$IT_PASS" -gt 0 ]
	exit $?
}

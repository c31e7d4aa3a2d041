# tests/interop/guest-prod-lib.sh - sourced by the guest side of the production-scenario
# interop tests (guest-prod-*.sh, guest-open-iscsi.sh), which run as root in the lab guest.
#
# Results go to the shared folder (/mnt/host): guest-results (one "ok NAME" or
# "not ok NAME: why" line per check), guest-dmesg.txt; guest-skip holds the reason when
# the guest kernel cannot run the test at all. The calling script sets PLAN (every check
# name, in order) and may define guest_cleanup (run before the results are summed up).
set -u
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
MNT=/mnt/nvmeof-test
: > "$RES"
pass=0
fail=0
t0=$(cut -d' ' -f1 /proc/uptime)
dmesg_start=$(dmesg | wc -l)
PLAN=()

now() { awk -v s="$t0" '{printf "%.1f", $1 - s}' /proc/uptime; }
say() { echo "[+$(now)s] $*"; }
ok() {
	echo "ok $1" >> "$RES"
	say "ok $1"
	pass=$((pass + 1))
}
not_ok() {
	echo "not ok $1: $2" >> "$RES"
	say "not ok $1: $2"
	fail=$((fail + 1))
}
# check NAME COND-CMD... WHY: ok when the command succeeds, else not ok with WHY
check() {
	local name=$1 why=${*: -1}
	if "${@:2:$#-2}"; then ok "$name"; else not_ok "$name" "$why"; fi
}
guest_cleanup() { :; }
finish() {
	guest_cleanup
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" |
		grep -iE 'nvme|iscsi|scsi|sd[a-z]|ext4|blk_|I/O error|Call Trace|WARNING|BUG' | tail -60
	echo "guest checks: $pass passed, $fail failed"
	exit "$fail"
}
# skip WHY: the guest cannot run this test (missing module...): the host skips (or fails
# under CI)
skip() {
	echo "$1" > "$OUT/guest-skip"
	say "SKIP: $1"
	guest_cleanup
	exit 0
}
# fatal NAME WHY: record the failure and the checks that can no longer run, then stop
fatal() {
	not_ok "$1" "$2"
	local rest
	for rest in "${PLAN[@]}"; do
		grep -q -e "^ok $rest\$" -e "^not ok $rest:" "$RES" || not_ok "$rest" "not run (earlier failure)"
	done
	finish
}
# run NAME CMD...: run a command, show its output, fail the check (fatal) if it fails
run() {
	local name=$1
	shift
	say "\$ $*"
	if "$@"; then
		ok "$name"
	else
		fatal "$name" "exit status $? from: $*"
	fi
}
# wait_host FILE SECONDS: wait for the host to create /mnt/host/FILE
wait_host() {
	local i
	for i in $(seq $(($2 * 5))); do
		[ -e "$OUT/$1" ] && return 0
		sleep 0.2
	done
	return 1
}
# tell_host FILE [TEXT]
tell_host() {
	echo "${2:-}" > "$OUT/$1.tmp" && mv "$OUT/$1.tmp" "$OUT/$1"
}
# write_files DIR SUM: random files of assorted sizes under DIR, their sha256 in SUM
write_files() (
	set -e
	mkdir -p "$1/small"
	head -c 1048576 /dev/urandom > "$1/one-mib"
	head -c 8388608 /dev/urandom > "$1/eight-mib"
	head -c 777777 /dev/urandom > "$1/odd-size"
	for i in $(seq 32); do head -c $((i * 512 + 17)) /dev/urandom > "$1/small/f$i"; done
	(cd "$1" && find . -type f | sort | xargs sha256sum) > "$2"
	sync
	echo "$(wc -l < "$2") files written under $1"
)
# verify_files DIR SUM
verify_files() {
	(cd "$1" && sha256sum --quiet -c "$2")
}
# kernel_errors ERE [FROM-LINE]: guest kernel log lines since FROM-LINE (default: the
# start) matching ERE
kernel_errors() {
	dmesg | tail -n +"$((${2:-$dmesg_start} + 1))" | grep -iE "$1"
}

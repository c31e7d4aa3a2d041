#!/bin/bash
# scripts/fresh-check.sh - the README's two commands on a really fresh Debian 12 machine.
#
#   scripts/fresh-check.sh [--keep] [--no-demo] [--logs DIR] [-- TEST_ARGS...]
#
# Builds a clean Debian 12 root (debootstrap --variant=minbase bookworm, from the archive
# apt uses on this machine), puts a bare clone of the current commit in it, and runs
# scripts/demo.sh and then `CI=true scripts/test.sh TEST_ARGS` inside it as root, in a
# chroot with /proc, /sys, /dev, /dev/pts and /dev/shm mounted (the interop tests' qemu
# runs there too, under TCG). Nothing the machine has installed can hide a missing
# install step. Prints each step's last line and wall time; the full output of each step
# is kept under --logs (default /var/tmp/nvmeof-fresh-check). The root is unmounted and
# removed at the end (--keep leaves it, unmounted, for a look).
#
# Run it before resolving work that adds a dependency, a test program or a set-up step:
# it takes about 20 minutes (CI runs on a machine that already has the packages, and
# cannot tell). Needs root and Debian's package archive.
# Exit status: 0 when the demo and the tests both passed (test.sh: 0 failed, 0 skipped).

. "$(dirname "$0")/lib.sh"

keep=0
demo=1
logs=/var/tmp/nvmeof-fresh-check
test_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=1 ;;
	--no-demo) demo=0 ;;
	--logs)
		logs=${2:?--logs needs a directory}
		shift
		;;
	--)
		shift
		test_args=("$@")
		break
		;;
	-h | --help)
		sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) nv_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || nv_die "run as root (debootstrap, chroot and mounts)"
[ -n "$(git -C "$NV_TOP" status --porcelain --untracked-files=no)" ] &&
	nv_log "note: uncommitted changes are not checked: the clone is of $(git -C "$NV_TOP" rev-parse --short HEAD)"
mkdir -p "$logs" || nv_die "cannot create $logs"

ROOT=
RESULTS=()
REV=$(git -C "$NV_TOP" rev-parse HEAD) # what is checked, fixed at the start
COMMIT=$(git -C "$NV_TOP" log -1 --format='%h %s' "$REV")

# kill_inside: every process whose root directory is the fresh root, by PID
kill_inside() {
	local p sig found
	for sig in TERM KILL; do
		found=0
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2> /dev/null)" = "$ROOT" ] || continue
			kill -"$sig" "${p#/proc/}" 2> /dev/null && found=1
		done
		[ $found = 0 ] && return 0
		sleep 2
	done
}

cleanup() {
	local rc=$?
	[ -n "$ROOT" ] || exit "$rc"
	kill_inside
	umount -R "$ROOT/proc" "$ROOT/sys" "$ROOT/dev" 2> /dev/null
	if findmnt -R -n -o TARGET "$ROOT" > /dev/null 2>&1; then
		# never remove a tree with the host's /dev or /sys still mounted inside
		nv_log "still mounted under $ROOT, not removed:"
		findmnt -R "$ROOT"
	elif [ $keep = 1 ]; then
		nv_log "kept the fresh root at $ROOT"
	else
		rm -rf --one-file-system "$ROOT"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# step NAME LOG CMD...: run CMD with its output in LOG; print its last line and time
step() {
	local name=$1 log=$2 t0 rc
	shift 2
	nv_log "$name (output: $log)"
	t0=$(date +%s)
	# in the background, so that a signal reaches the trap (and the clean-up stops what
	# runs inside the root) at once, not when the step is over
	"$@" > "$log" 2>&1 &
	wait $!
	rc=$?
	RESULTS+=("$(printf '%-22s %6d s  status %-3d %s' "$name" $(($(date +%s) - t0)) "$rc" \
		"$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c1-100)")")
	[ $rc = 0 ] || {
		echo "== $name failed (status $rc); its last lines:"
		tail -n 30 "$log" | sed 's/^/   | /'
	}
	return $rc
}

summary() {
	local r
	echo "== fresh-check: $COMMIT"
	printf '   %-22s %8s  %-10s %s\n' step "wall" status "last line"
	for r in "${RESULTS[@]}"; do echo "   $r"; done
}

# the archive apt uses here for bookworm
# shellcheck disable=SC2016 # apt expands $(SITE) and $(RELEASE)
mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE)' 2> /dev/null |
	awk '$2 == "bookworm" {print $1; exit}')
[ -n "$mirror" ] || nv_die "no bookworm archive in this machine's apt sources"
command -v debootstrap > /dev/null || nv_deps debootstrap || nv_die "cannot install debootstrap"
NV_DEPS=() # nothing else is installed on this machine: that is the point

ROOT=$(mktemp -d /var/tmp/nvmeof-fresh.XXXXXX) || nv_die "mktemp failed"
chmod 755 "$ROOT"
step debootstrap "$logs/debootstrap.log" \
	debootstrap --variant=minbase bookworm "$ROOT" "$mirror" || { summary; exit 1; }

# apt inside uses the same sources and acquire settings as this machine
cp /etc/apt/sources.list "$ROOT/etc/apt/" 2> /dev/null
for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && cp "$f" "$ROOT/etc/apt/sources.list.d/"
done
grep -l '^Acquire::' /etc/apt/apt.conf.d/* 2> /dev/null | xargs -r cp -t "$ROOT/etc/apt/apt.conf.d/"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2> /dev/null
# a bare clone of the current commit, as a new user would have it
git clone -q --no-local "$NV_TOP" "$ROOT/root/nvmeof" || nv_die "git clone failed"
git -C "$ROOT/root/nvmeof" checkout -q "$REV" ||
	nv_die "checkout of HEAD failed"

mount -t proc proc "$ROOT/proc" &&
	mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys" &&
	mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev" ||
	nv_die "mounting /proc, /sys and /dev in $ROOT failed"
# /dev/shm of its own (the host's may not be a tmpfs we want to share)
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm" ||
	nv_die "mounting /dev/shm in $ROOT failed"

inside() {
	chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

rc=0
if [ $demo = 1 ]; then
	step "scripts/demo.sh" "$logs/demo.log" inside bash -c 'cd /root/nvmeof && scripts/demo.sh' ||
		rc=1
fi
step "scripts/test.sh" "$logs/test.log" inside bash -c \
	'cd /root/nvmeof && CI=true scripts/test.sh "$@"' test.sh "${test_args[@]}" || rc=1
# test.sh passes only with 0 failed; this check also wants 0 skipped
line=$(grep '^check: ' "$logs/test.log" | tail -n 1)
case "$line" in
*" 0 failed, 0 skipped") ;;
*)
	echo "== test.sh did not end with 0 failed, 0 skipped: ${line:-no summary line}"
	rc=1
	;;
esac
summary
# the demo's table: what nvmeof-bench printed
[ $demo = 1 ] && sed -n '/nvmeof-bench --quick$/,/stopping the target/p' "$logs/demo.log" |
	grep -v '^== ' | tail -n 40
exit $rc

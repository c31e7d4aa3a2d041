#!/bin/bash
# tests/lab-package-check.sh - the qemu lab's host package check
# (tests/interop/lab/build-guest.sh) with a dpkg-query and an apt-get on PATH that play a
# machine where packages are missing. dpkg-query exits 1 when one package is unknown, as
# the real one does: the lab must still name what is missing, never end without a word.
#   - LAB_SKIP_APT=1 and one package missing: stops, naming that package, apt-get not run
#   - LAB_SKIP_APT=1 and none known to dpkg: stops, naming them all
#   - apt-get allowed, its install failing: asks it for exactly the missing package, then stops
#     with an error naming the failed install
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/require.sh"
build=$top_srcdir/tests/interop/lab/build-guest.sh
[ "$(id -u)" = 0 ] || nv_cannot_run "build-guest.sh runs as root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-labpkg.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok $1: ${*:2}"; }

mkdir -p "$tmp/bin"
# dpkg-query -W -f FORMAT PKG...: "ii PKG" for each package not in $FAKE_MISSING ("*": none
# known); like dpkg-query, a line on stderr and exit 1 for each unknown one
cat > "$tmp/bin/dpkg-query" <<'SH'
#!/bin/bash
rc=0
while [ $# -gt 0 ]; do
	case "$1" in
	-W) ;;
	-f) shift ;;
	*)
		if [ "$FAKE_MISSING" = "*" ] || [[ " $FAKE_MISSING " == *" $1 "* ]]; then
			echo "dpkg-query: no packages found matching $1" >&2
			rc=1
		else
			echo "ii $1"
		fi
		;;
	esac
	shift
done
exit $rc
SH
cat > "$tmp/bin/apt-get" <<'SH'
#!/bin/bash
echo "$*" >> "$FAKE_APT_LOG"
[[ " $* " == *" update "* ]] && exit 0
echo "E: Unable to locate package (fake apt-get)" >&2
exit 100
SH
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/apt-get"

# run NAME MISSING SKIP_APT: build-guest.sh with the fakes; sets out, rc, apt
run() {
	: > "$tmp/apt.log"
	out=$(PATH="$tmp/bin:$PATH" FAKE_MISSING=$2 FAKE_APT_LOG=$tmp/apt.log LAB_SKIP_APT=$3 \
		LAB_CACHE="$tmp/cache-$1" timeout 60 bash "$build" 2>&1)
	rc=$?
	apt=$(cat "$tmp/apt.log")
	echo "# $1: status $rc, apt-get calls: ${apt:-none}"
	echo "$out" | sed 's/^/#   /'
}

run one-missing cpio 1
if [ $rc = 0 ]; then not_ok one-missing "build-guest.sh passed with cpio missing"
elif ! grep -q 'host packages missing.*cpio' <<< "$out"; then not_ok one-missing "no message naming cpio"
elif grep -qw 'qemu-system-x86' <<< "$(grep 'missing' <<< "$out")"; then not_ok one-missing "named an installed package"
elif [ -n "$apt" ]; then not_ok one-missing "apt-get ran under LAB_SKIP_APT=1"
else ok one-missing; fi

run none-known '*' 1
if [ $rc != 0 ] && grep -q 'host packages missing.*qemu-system-x86.*busybox-static.*cpio' <<< "$out"; then
	ok none-known
else
	not_ok none-known "status $rc, the missing packages not named"
fi

run apt-fails busybox-static 0
if [ $rc = 0 ]; then not_ok apt-fails "build-guest.sh passed although apt-get failed"
elif ! grep -q 'install .*busybox-static' <<< "$apt"; then not_ok apt-fails "apt-get not asked for busybox-static"
elif grep -q 'install .*qemu-system-x86' <<< "$apt"; then not_ok apt-fails "apt-get asked for an installed package"
elif ! grep -q 'ERROR: .*busybox-static' <<< "$out"; then not_ok apt-fails "no error naming the failed install"
else ok apt-fails; fi

echo "lab-package-check: $pass passed, $fail failed"
[ $fail = 0 ]

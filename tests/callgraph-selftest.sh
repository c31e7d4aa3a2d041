#!/bin/bash
# tests/callgraph-selftest.sh - tests/callgraph.py rejects what it must: objects built
# here from a few lines of C, in two layers, with a call planted upwards, one sideways
# into another group of the same layer, and a circle of nine files; and it accepts the
# same files without them.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/require.sh"
nv_require python3 cc:gcc nm:binutils
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-callgraph.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok $1: ${*:2}"; }

cat > "$tmp/spec" <<'SPEC'
library libfake_la
layer 0 low lib/low/
layer 1 left lib/left/
layer 1 right lib/right/
layer 2 top lib/
SPEC
# obj CASE SRC CODE: compile CODE as CASE's object of SRC, named as automake names it
obj() {
	local d=$tmp/$1/$(dirname "$3") b
	b=$(basename "$3" .c)
	mkdir -p "$d/.libs"
	printf '%s\n' "$4" > "$d/$b.c"
	cc -c -o "$d/.libs/libfake_la-$b.o" "$d/$b.c" || exit 99
}
# base CASE: a tree that keeps its layers (top -> left, right -> low)
base() {
	obj "$1" x lib/low/q.c 'int low_fn(void) { return 1; }'
	obj "$1" x lib/left/n.c 'int low_fn(void); int left_fn(void) { return low_fn(); }'
	obj "$1" x lib/right/s.c 'int low_fn(void); int right_fn(void) { return low_fn(); }'
	obj "$1" x lib/c.c 'int left_fn(void), right_fn(void); int top_fn(void) { return left_fn() + right_fn(); }'
}
# expect CASE WANT: callgraph.py on CASE fails with a line matching WANT (or passes: "")
expect() {
	local out rc
	out=$(python3 "$top_srcdir/tests/callgraph.py" "$tmp/spec" "$tmp/$1" 2>&1)
	rc=$?
	if [ -z "$2" ]; then
		if [ $rc = 0 ]; then ok "$1"; else not_ok "$1" "rejected: $out"; fi
	elif [ $rc = 0 ]; then
		not_ok "$1" "accepted: $out"
	elif grep -qE "$2" <<< "$out"; then
		ok "$1: $(grep -E "$2" <<< "$out" | head -n 1)"
	else
		not_ok "$1" "wrong report: $out"
	fi
}

base clean
expect clean ""

base up
obj up x lib/low/q2.c 'int top_fn(void); int planted(void) { return top_fn(); }'
expect up "lib/low/q2.c calls up into lib/c.c .*top_fn"

base sideways
obj sideways x lib/left/n2.c 'int right_fn(void); int planted(void) { return right_fn(); }'
expect sideways "lib/left/n2.c calls sideways into lib/right/s.c .*right_fn"

base circle
for i in 0 1 2 3 4 5 6 7 8; do
	obj circle x "lib/low/r$i.c" "int r$(((i + 1) % 9))(void); int r$i(void) { return r$(((i + 1) % 9))(); }"
done
expect circle "circle of 9 files \(over 8\)"

echo "callgraph-selftest: $pass passed, $fail failed"
[ $fail = 0 ]

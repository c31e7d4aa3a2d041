#!/bin/bash
# scripts/check-format.sh [--fix] [REV] - check that the C lines changed since REV follow
# .clang-format (clang-format-diff over `git diff -U0 REV`). REV defaults to the commit in
# .ci/format-base (the last released state), else HEAD~1. --fix rewrites them in place.
# Exit 0 when clean, 1 with the needed changes printed.
set -u
cd "$(dirname "$0")/.." || exit 2
fix=()
if [ "${1:-}" = --fix ]; then
	fix=(-i)
	shift
fi
base=${1:-$(cat .ci/format-base 2> /dev/null)}
git rev-parse -q --verify "${base:-HEAD~1}^{commit}" > /dev/null || base=HEAD~1
base=${base:-HEAD~1}
cfd=$(command -v clang-format-diff-14 || command -v clang-format-diff) || {
	echo "check-format: clang-format-diff not found (apt-get install clang-format)"
	exit 2
}
out=$(git diff -U0 -M --no-color "$base" -- '*.c' '*.h' | "$cfd" -p1 "${fix[@]}")
if [ -n "$out" ]; then
	echo "$out"
	echo "check-format: lines changed since $(git rev-parse --short "$base") differ from" \
		".clang-format (scripts/check-format.sh --fix rewrites them)"
	exit 1
fi
echo "check-format: C changes since $(git rev-parse --short "$base") follow .clang-format"

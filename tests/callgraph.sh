#!/bin/bash
# tests/callgraph.sh - the built libraries keep the layers of tests/callgraph.conf: no
# file calls into a higher layer or sideways into another group, and no circle of files
# is larger than 8 (tests/callgraph.py, from the objects' symbols). Prints the circles
# that remain; each is named, with its reason, in the code.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/require.sh"
nv_require python3 nm:binutils
python3 "$top_srcdir/tests/callgraph.py" "$top_srcdir/tests/callgraph.conf" "$top_builddir" "$top_srcdir"

#!/bin/bash
# initiator-pkgconfig.sh - the example program in initiator/lib/README.md, built the way an
# application would: make install into a scratch directory, then
# cc hello.c $(pkg-config --cflags --libs libnvmeof), and run against nvmeof-target.
# Also: the installed library exports nothing but the nvmeof_* API.
. "$(dirname "$0")/lib.sh"
it_init
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
nv_require pkg-config cc:gcc nm:binutils

DEST=$IT_DIR/root
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" install \
	DESTDIR="$DEST" > "$IT_DIR/install.log" 2>&1; then
	it_ok install
else
	it_not_ok install "make install DESTDIR=... failed:"
	tail -n 20 "$IT_DIR/install.log" | sed 's/^/#   /'
	it_finish
fi
PC=$(find "$DEST" -name libnvmeof.pc | head -n 1)
HDR=$(find "$DEST" -name nvmeof.h | head -n 1)
LIB=$(find "$DEST" -name 'libnvmeof.so.*' | head -n 1)
it_check installed-files test -n "$PC" -a -n "$HDR" -a -n "$LIB"
[ -n "$PC" ] && [ -n "$LIB" ] || it_finish
export PKG_CONFIG_PATH=$(dirname "$PC")
FLAGS=$(pkg-config --define-prefix --cflags --libs libnvmeof 2> "$IT_DIR/pc.err")
it_check pkg-config test -n "$FLAGS"
echo "# pkg-config --cflags --libs libnvmeof: $FLAGS"

# only the public API leaves the shared object
if nm -D --defined-only "$LIB" | awk '$2 ~ /^[TDB]$/ {print $3}' | grep -v '^nvmeof_' |
	grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' > "$IT_DIR/extra-symbols"; then
	it_not_ok exports "symbols other than nvmeof_* exported:"
	head -n 20 "$IT_DIR/extra-symbols" | sed 's/^/#   /'
else
	it_ok exports
fi

sed -n '/^```c$/,/^```$/p' "$top_srcdir/initiator/lib/README.md" | sed '1d;$d' > "$IT_DIR/hello.c"
it_check example-extracted grep -q 'nvmeof_ctrlr_connect' "$IT_DIR/hello.c"
# A sanitizer build of the library needs its runtime linked into the program too.
SAN_CFLAGS=$(sed -n 's/^SAN_CFLAGS = //p' "$top_builddir/Makefile")
# shellcheck disable=SC2086 # word splitting of the flag lists is intended
if cc -Wall -Wextra -Werror $SAN_CFLAGS -o "$IT_DIR/hello" "$IT_DIR/hello.c" $FLAGS \
	2> "$IT_DIR/cc.log"; then
	it_ok example-builds
else
	it_not_ok example-builds "cc failed:"
	sed 's/^/#   /' "$IT_DIR/cc.log"
	it_finish
fi

NQN=nqn.2026-11.io.nvmeof:it-pkgconfig
it_start_target --nqn "$NQN" --ns ram:16M || it_finish
if LD_LIBRARY_PATH=$(dirname "$LIB") "$IT_DIR/hello" "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" \
	> "$IT_DIR/hello.out" 2>&1 && grep -q "reads back the same" "$IT_DIR/hello.out"; then
	it_ok example-runs
else
	it_not_ok example-runs "hello did not read back what it wrote:"
fi
sed 's/^/#   /' "$IT_DIR/hello.out"
# the installed CLI works too
if LD_LIBRARY_PATH=$(dirname "$LIB") "$(find "$DEST" -path '*/bin/nvmeof' | head -n 1)" \
	list-ns "nvme+tcp://127.0.0.1:$IT_PORT/$NQN" > "$IT_DIR/ls.out" 2>&1; then
	it_ok installed-cli
else
	it_not_ok installed-cli "$(cat "$IT_DIR/ls.out")"
fi
it_stop_target
it_finish

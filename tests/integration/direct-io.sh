#!/bin/bash
# direct-io.sh - file namespaces use O_DIRECT unless buffered_io is asked for: a host
# writes 512 MiB through the target and reads it back (nvmeof-bench --verify checks every
# block), then the file's pages in the page cache are counted with fincore. Served
# directly, almost none of the file is cached and the daemon's VmRSS stays flat; served
# with PATH,buffered_io, most of it is cached. Bad paths are refused with a message that
# names them. The file lives on a disk file system (O_DIRECT needs one), not tmpfs.
. "$(dirname "$0")/lib.sh"
nv_require fincore:util-linux
export TMPDIR=${NVMEOF_DIO_TMPDIR:-/var/tmp}
case $(stat -f -c %T "$TMPDIR" 2> /dev/null) in
tmpfs | ramfs | '') nv_cannot_run "$TMPDIR is not a disk file system (set NVMEOF_DIO_TMPDIR)" ;;
esac
it_init
BENCH=$top_builddir/initiator/nvmeof-bench
NQN=nqn.2026-11.io.nvmeof:it-dio
IMG=$IT_DIR/ns.img
SIZE_MB=512

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$IT_PID/status"; }
cached_mb() { echo $(($(fincore --bytes --noheadings --output RES "$IMG") >> 20)); }

# run_host NAME : write the whole namespace with a pattern, then read and check it
run_host() {
	if "$BENCH" --native "nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1" --rw read --bs 128k \
		--qd 16 --time 1 --warmup 0 --repeat 1 --verify > "$IT_DIR/bench.log" 2>&1 &&
		! grep -qiE 'mismatch|data error|unavailable' "$IT_DIR/bench.log"; then
		it_ok "$1: $SIZE_MB MiB written and read back, verified"
	else
		it_not_ok "$1" "nvmeof-bench --verify failed:"
		sed 's/^/#   /' "$IT_DIR/bench.log" | tail -n 20
	fi
}

# serve NAME SPEC : one pass; sets CACHED (MiB of the file in the page cache) and GROWTH
# (daemon VmRSS kB after minus before)
serve() {
	local rss0
	rm -f "$IMG"
	truncate -s ${SIZE_MB}M "$IMG"
	it_start_target --nqn "$NQN" --reactors 1 --ns "$2" || it_finish
	rss0=$(rss_kb)
	run_host "$1"
	GROWTH=$(($(rss_kb) - rss0))
	CACHED=$(cached_mb)
	it_log "$1: $CACHED MiB of $SIZE_MB in the page cache, VmRSS $rss0 kB, +$GROWTH kB"
	cp "$IT_LOG" "$IT_DIR/$1.log"
	it_stop_target
}

serve direct "$IMG"
it_grep "direct: the start-up line says direct I/O" "$IT_DIR/direct.log" \
	'namespace 1: .*ns\.img, .*direct I/O'
it_check "direct: $CACHED MiB of the file cached (at most $((SIZE_MB / 32)))" \
	test "$CACHED" -le $((SIZE_MB / 32))
it_check "direct: daemon VmRSS grew $GROWTH kB (at most 32 MiB)" test "$GROWTH" -le 32768

serve buffered "$IMG,buffered_io"
it_grep "buffered: the start-up line says buffered I/O" "$IT_DIR/buffered.log" \
	'namespace 1: .*ns\.img, .*buffered I/O'
it_check "buffered: $CACHED MiB of the file cached (at least $((SIZE_MB / 2)))" \
	test "$CACHED" -ge $((SIZE_MB / 2))
it_check "buffered: daemon VmRSS grew $GROWTH kB (at most 32 MiB)" test "$GROWTH" -le 32768

# Bad paths: one clear error naming the path, and the daemon does not start.
for bad in /dev/null "$IT_DIR"; do
	if "$IT_TARGET_BIN" --listen tcp://127.0.0.1:0 --discovery-port 0 --no-control-socket \
		--ns "$bad" > "$IT_DIR/bad.log" 2>&1; then
		it_not_ok "bad path $bad" "the target started"
	else
		it_grep "bad path $bad is named" "$IT_DIR/bad.log" "$bad: "
	fi
done
it_finish

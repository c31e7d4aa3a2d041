# tests/interop/rdma-lib.sh - sourced (after lib.sh) by the NVMe/RDMA interop tests.
#
# The RDMA tests run everything inside the lab guest: soft-RoCE (rdma_rxe) only works on
# the guest's eth0 and the host has no RDMA device. The guest's /tmp is its own, so the
# programs under test are copied into the shared per-test directory ($IX_DIR/bin, seen
# as /mnt/host/bin), with libnvmeof.so for the libtool-linked ones.

# rdma_init: builds without NVMe/RDMA cannot run these (a failure under CI=true), then lib.sh's ix_init, then stage the programs.
rdma_init() {
	if [ "${NVMEOF_SKIP_INTEROP:-0}" != 1 ] &&
		! grep -q '^#define HAVE_RDMA 1' "$top_builddir/config.h" 2> /dev/null; then
		ix_cannot_run "built without NVMe/RDMA (--disable-rdma, or no libibverbs/librdmacm)"
	fi
	ix_init
	command -v rdma > /dev/null && command -v ibv_devinfo > /dev/null ||
		ix_cannot_run "rdma (iproute2) or ibv_devinfo (ibverbs-utils) missing for the guest"
	rdma_stage_bins
}

# rdma_real_bin DIR NAME: the ELF behind a libtool wrapper (or the program itself)
rdma_real_bin() {
	local f
	for f in "$1/.libs/$2" "$1/.libs/lt-$2" "$1/$2"; do
		if [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			echo "$f"
			return 0
		fi
	done
	return 1
}

rdma_stage_bins() {
	local b=$IX_DIR/bin src p
	mkdir -p "$b"
	for p in target/nvmeof-target initiator/nvmeof initiator/nvmeof-bench \
		tests/integration/initiator_io; do
		src=$(rdma_real_bin "$top_builddir/$(dirname "$p")" "$(basename "$p")") || {
			ix_log "no $top_builddir/$p (build first: make check builds it)"
			exit 99
		}
		cp "$src" "$b/$(basename "$p")"
	done
	cp -a "$top_builddir"/.libs/libnvmeof.so* "$b/" 2> /dev/null
	chmod -R a+rX "$b"
}

# rdma_target_log_clean: nvmeof-target logged no error or warning during the run
rdma_target_log_clean() {
	local bad
	bad=$(grep -E 'nvmeof: (error|warning):' "$IX_TARGET_LOG")
	if [ -z "$bad" ]; then
		ix_ok target-log-clean
	else
		ix_not_ok target-log-clean "target log: $(head -n 3 <<< "$bad" | tr '\n' '|')"
	fi
}

rdma_show_target_log() {
	echo "--- target log (last 40 lines of $(wc -l < "$IX_TARGET_LOG")) ---"
	tail -n 40 "$IX_TARGET_LOG" | sed 's/^/  target: /'
}

# shellcheck shell=bash
# scripts/lib.sh - sourced by scripts/test.sh and scripts/demo.sh: dependencies, build,
# and timing of each step.

set -u
NV_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages, by role. The build (and the unit tests):
NV_DEPS=(build-essential autoconf automake libtool pkg-config
	libev-dev libssl-dev libisal-dev liburing-dev libjson-c-dev libcunit1-dev
	libibverbs-dev librdmacm-dev librbd-dev librados-dev libmicrohttpd-dev iproute2 util-linux)
# What scripts/demo.sh runs besides the build: rsvg-convert draws the chart as PNG.
NV_DEMO_DEPS=(librsvg2-bin)
# What scripts/test.sh installs for the tests: each package with the tests that run it.
# A test that finds one of these missing fails under CI=true (tests/require.sh). The qemu
# lab installs its own host packages (tests/interop/lab/build-guest.sh, HOST_PACKAGES).
# tgt and open-iscsi start services that take port 3260 (and iscsid):
# nv_stop_peer_services stops them again.
NV_TEST_DEPS=(
	python3 # most integration tests: JSON output and tests/stats-snapshot.py
	nvme-cli # tls.sh, auth-*.sh (gen-tls-key, gen-dhchap-key); the host in the interop tests
	openssl # tls.sh: TLS 1.3 handshakes with s_client
	curl # metrics.sh: scrapes /metrics
	prometheus # metrics.sh: a real prometheus scrapes the target; promtool lints
	fio # interop: kernel-host-tcp, ana-multipath, rbd-gateways (run in the guest)
	libiscsi-bin # iscsi-compliance.sh, ceph/rbd-namespace.sh: iscsi-test-cu
	tgt # iscsi-tgt-rw.sh: tgtd, the reference iSCSI target for our initiator
	open-iscsi # interop/open-iscsi.sh: iscsiadm and iscsid in the guest
	e2fsprogs # interop: mkfs.ext4 and fsck on the namespaces
	procps # interop/durability.sh: pgrep finds the guest's qemu to cut its power
	cpio # layering-selftest.sh copies the tree; the lab packs its initramfs
	git clang-format # check-format.sh (in .ci/run): git clang-format on the change
	clang libclang-rt-14-dev # the fuzz smoke (.ci/run): libFuzzer, ASan and UBSan runtimes
	ceph-mon ceph-mgr ceph-osd ceph-common # tests/ceph, interop/rbd-gateways.sh: a one-node cluster
)
NV_PEER_SERVICES=(tgt iscsid iscsid.socket open-iscsi prometheus)

NV_STEPS=()
nv_log() { echo "== $(basename "$0"): $*"; }
nv_die() {
	echo "$(basename "$0"): ERROR: $*" >&2
	exit 1
}

# nv_step NAME CMD...: run CMD, record its wall time under NAME; returns CMD's status.
# A step that fails says so: the command, its status and its last lines of output.
nv_step() {
	local name=$1 t0 rc out
	shift
	nv_log "$name"
	out=$(mktemp "${TMPDIR:-/tmp}/nvmeof-step.XXXXXX") || return 1
	t0=$(date +%s.%N)
	"$@" > >(tee "$out") 2>&1
	rc=$?
	wait $! 2> /dev/null # tee has written everything before the report below
	NV_STEPS+=("$(awk -v s="$t0" -v e="$(date +%s.%N)" -v n="$name" -v r="$rc" \
		'BEGIN {printf "%-28s %7.1f s%s", n, e - s, r ? "  (failed, status " r ")" : ""}')")
	if [ $rc != 0 ]; then
		echo "== $(basename "$0"): step '$name' FAILED (status $rc): $*"
		echo "== its last lines of output:"
		tail -n 25 "$out" | sed 's/^/   | /'
	fi
	rm -f "$out"
	return $rc
}

nv_times() {
	local s
	echo "== wall time per step"
	for s in "${NV_STEPS[@]}"; do echo "   $s"; done
}

nv_as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo > /dev/null; then
		sudo "$@"
	else
		nv_die "need root for: $*"
	fi
}

# nv_deps [EXTRA_PACKAGES...]: apt-get install whatever is not installed yet (a dpkg
# query per package; apt is not touched when everything is there)
nv_deps() {
	local p st missing=()
	for p in "${NV_DEPS[@]}" "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2> /dev/null)
		[ "${st:0:2}" = ii ] || missing+=("$p")
	done
	if [ ${#missing[@]} = 0 ]; then
		echo "all $((${#NV_DEPS[@]} + $#)) packages installed"
		return 0
	fi
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	nv_as_root apt-get -o DPkg::Lock::Timeout=600 update -qq &&
		nv_as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			--no-install-recommends "${missing[@]}"
}

# nv_stop_peer_services: stop any service a test peer's package started (tgtd on port
# 3260, iscsid), when one runs; the tests start their own peers on free ports
nv_stop_peer_services() {
	local s
	command -v systemctl > /dev/null || return 0
	for s in "${NV_PEER_SERVICES[@]}"; do
		if systemctl is-active --quiet "$s" 2> /dev/null; then
			echo "stopping the $s service the package started"
			nv_as_root systemctl stop "$s" || echo "could not stop $s"
		fi
	done
	return 0
}

# nv_lab: the qemu lab directory (NVMEOF_LAB, or the tree's own tests/interop/lab)
nv_lab() {
	local d=${NVMEOF_LAB:-$NV_TOP/tests/interop/lab}
	[ -x "$d/build-guest.sh" ] || return 1
	(cd "$d" && pwd)
}

# nv_autoreconf: generate configure when it is missing or older than its inputs
nv_autoreconf() {
	local f
	if [ -x "$NV_TOP/configure" ] && [ -f "$NV_TOP/Makefile.in" ]; then
		for f in "$NV_TOP/configure.ac" "$NV_TOP/Makefile.am" "$NV_TOP"/*/*.mk "$NV_TOP"/*/*/*.mk; do
			[ "$f" -nt "$NV_TOP/Makefile.in" ] && break
			f=
		done
		[ -z "$f" ] && { echo "configure is up to date"; return 0; }
	fi
	(cd "$NV_TOP" && autoreconf -fi)
}

# nv_configure BUILDDIR [CONFIGURE_ARGS...]: configure out of tree; again only when the
# arguments changed (make reruns configure by itself when configure.ac changes)
nv_configure() {
	local dir=$1
	shift
	[ -f "$NV_TOP/config.status" ] &&
		nv_die "$NV_TOP is configured in-tree; run 'make distclean' there first"
	mkdir -p "$dir" || return 1
	if [ -f "$dir/Makefile" ] && [ "$(cat "$dir/.configure-args" 2> /dev/null)" = "$*" ]; then
		echo "$dir is configured ($*)"
		return 0
	fi
	(cd "$dir" && "$NV_TOP/configure" "$@") || return 1
	echo "$*" > "$dir/.configure-args"
}

nv_make() {
	local dir=$1
	shift
	make -C "$dir" -j2 "$@"
}

# nv_build BUILDDIR [CONFIGURE_ARGS...]: the three build steps, each timed
nv_build() {
	local dir=$1
	shift
	nv_step autoreconf nv_autoreconf &&
		nv_step "configure ($(basename "$dir"))" nv_configure "$dir" "$@" &&
		nv_step "make ($(basename "$dir"))" nv_make "$dir"
}

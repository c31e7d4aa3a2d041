#!/bin/bash
# tests/interop/lab/build-guest.sh - prepare the kernel and initramfs the interop guest
# boots (see README.md beside this file). Safe to run again: once everything is in the
# cache it only checks and returns, in well under a second.
#
#   1. host packages: qemu, a static busybox and the tools the guest borrows from the
#      host (nvme-cli, kmod, iproute2, rdma-core, ...), apt-get installed when missing
#   2. kernel: `apt-get download` of a stock Debian kernel package, unpacked (never
#      installed) under $LAB_CACHE/<flavour>/kernel, depmod'ed, and its bzImage payload
#      decompressed to an ELF vmlinux for a PVH direct boot
#   3. initramfs: busybox, guest-init.sh as /init and the few modules it needs to reach
#      the host's root filesystem over virtio-9p
#   4. $LAB_CACHE/<flavour>/guest.env, which run-in-guest.sh reads
#
# Environment:
#   LAB_KERNEL    stable (default: this Debian release's linux-image-amd64), backports
#                 (<release>-backports, through a private apt configuration in the cache;
#                 the host's apt sources are left alone) or an exact linux-image-* package
#   LAB_CACHE     cache directory (default /var/cache/nvmeof-lab)
#   LAB_MIRROR    Debian archive for backports (default: the host's archive for its release)
#   LAB_REFRESH=1 ask the archive again for the newest kernel of the flavour
#   LAB_FORCE=1   rebuild the initramfs and vmlinux even when they look current
#   LAB_SKIP_APT=1  never install host packages (fail when one is missing)
set -eEuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_CACHE=${LAB_CACHE:-/var/cache/nvmeof-lab}
LAB_KERNEL=${LAB_KERNEL:-stable}
export DEBIAN_FRONTEND=noninteractive

say() { echo "build-guest: $*" >&2; }
die() {
	echo "build-guest: ERROR: $*" >&2
	exit 1
}
# any other command that fails ends the script (set -e): never without saying which
trap 'echo "build-guest: ERROR: line $LINENO: \"$BASH_COMMAND\" failed (status $?)" >&2' ERR

# Host packages: qemu and busybox for the harness itself; the rest is the userspace the
# guest runs (the guest sees the host's / read-only, so it uses the host's binaries).
HOST_PACKAGES=(qemu-system-x86 busybox-static kmod cpio gzip xz-utils zstd util-linux
	iproute2 nvme-cli rdma-core ibverbs-providers ibverbs-utils rdmacm-utils e2fsprogs)

case "$LAB_KERNEL" in
stable | backports) FLAVOUR=$LAB_KERNEL ;;
linux-image-[0-9]*) FLAVOUR=$LAB_KERNEL ;;
*) die "LAB_KERNEL=$LAB_KERNEL: expected stable, backports or a linux-image-<version> package" ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (apt-get, and the cache in $LAB_CACHE)"

T0=$(date +%s.%N)
mkdir -p "$LAB_CACHE"
# several tests may start at once on a cold cache: one build at a time
exec {lockfd}> "$LAB_CACHE/.build.lock"
flock -w 1800 "$lockfd" || die "another build-guest.sh holds $LAB_CACHE/.build.lock"

FDIR=$LAB_CACHE/$FLAVOUR
ENVF=$FDIR/guest.env
mkdir -p "$FDIR" "$LAB_CACHE/debs"

# ---------------------------------------------------------------- 1. host packages
HOST_APT_FRESH=0
host_apt_update() {
	[ "$HOST_APT_FRESH" = 1 ] && return 0
	say "apt-get update"
	apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 || die "apt-get update failed (output above)"
	HOST_APT_FRESH=1
}

ensure_host_packages() {
	local installed p missing=()
	# dpkg-query exits 1 when any package is unknown to dpkg: that is the answer we
	# want, not an error (under pipefail it would end the script without a word)
	installed=$({ dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' "${HOST_PACKAGES[@]}" 2> /dev/null || :; } |
		awk '$1 == "ii" {print $2}')
	for p in "${HOST_PACKAGES[@]}"; do
		grep -qx -- "$p" <<< "$installed" || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	[ "${LAB_SKIP_APT:-0}" = 1 ] && die "host packages missing (LAB_SKIP_APT=1): ${missing[*]}"
	host_apt_update
	say "apt-get install ${missing[*]}"
	apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed (output above)"
}

ensure_host_packages
ldd /bin/busybox > /dev/null 2>&1 && die "/bin/busybox is dynamically linked (busybox-static needed)"

# ---------------------------------------------------------------- 2. the kernel
# apt for this flavour: the host's own configuration, or for backports a private one
# ($FDIR/apt/apt.conf) whose only source is <release>-backports.
APT_ENV=()
setup_backports_apt() {
	local codename mirror a=$FDIR/apt
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"
	# shellcheck disable=SC2016 # apt expands $(SITE) and $(RELEASE)
	mirror=${LAB_MIRROR:-$(apt-get indextargets --format '$(SITE) $(RELEASE)' 2> /dev/null |
		awk -v r="$codename" '$2 == r {print $1; exit}')}
	[ -n "$mirror" ] || die "no Debian archive for $codename in the host's apt sources (set LAB_MIRROR)"
	mkdir -p "$a/lists/partial" "$a/archives/partial" "$a/sources.list.d"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $codename-backports main" \
		> "$a/sources.list"
	cat > "$a/apt.conf" <<- EOF
		// private apt configuration of the interop lab: $codename-backports only
		Dir::Etc::SourceList "$a/sources.list";
		Dir::Etc::SourceParts "$a/sources.list.d";
		Dir::State::Lists "$a/lists";
		Dir::Cache "$a";
		Dir::Cache::archives "$a/archives";
		Dir::Cache::pkgcache "";
		Dir::Cache::srcpkgcache "";
	EOF
	APT_ENV=(env "APT_CONFIG=$a/apt.conf")
	if [ "${LAB_REFRESH:-0}" = 1 ] || ! ls "$a/lists/"*_Packages* > /dev/null 2>&1; then
		say "apt-get update ($codename-backports, private configuration $a/apt.conf)"
		"${APT_ENV[@]}" apt-get update -qq >&2
	fi
}

# kernel_package: the versioned linux-image package of the flavour, and its version
kernel_package() {
	if [ "$FLAVOUR" = backports ]; then
		setup_backports_apt
	elif [ "${LAB_REFRESH:-0}" = 1 ]; then
		host_apt_update
	fi

	for _ in 1 2; do
		case "$LAB_KERNEL" in
		linux-image-[0-9]*) KPKG=$LAB_KERNEL ;;
		*) KPKG=$("${APT_ENV[@]}" apt-cache show --no-all-versions linux-image-amd64 2> /dev/null |
			sed -n 's/^Depends: .*\(linux-image-[0-9][^ ,]*\).*/\1/p' | head -n 1) ;;
		esac
		KPKGVER=
		[ -n "$KPKG" ] && KPKGVER=$("${APT_ENV[@]}" apt-cache policy "$KPKG" 2> /dev/null |
			awk '$1 == "Candidate:" && $2 != "(none)" {print $2}')
		[ -n "$KPKGVER" ] && return 0
		# an empty or stale package list on the host: update once and ask again
		[ "$FLAVOUR" = backports ] && break
		host_apt_update
	done
	die "no kernel package for LAB_KERNEL=$LAB_KERNEL in the archive"
}

# fetch_deb: $LAB_CACHE/debs/<package>_<version>.deb, downloaded once
fetch_deb() {
	DEB=$LAB_CACHE/debs/${KPKG}_${KPKGVER}.deb
	[ -s "$DEB" ] && return 0
	local tmp
	tmp=$(mktemp -d "$LAB_CACHE/debs/.dl.XXXXXX")
	say "apt-get download $KPKG=$KPKGVER"
	if ! (cd "$tmp" && "${APT_ENV[@]}" apt-get -q -o APT::Sandbox::User=root \
		download "$KPKG=$KPKGVER" >&2); then
		rm -rf "$tmp"
		die "apt-get download $KPKG=$KPKGVER failed"
	fi
	mv "$tmp"/*.deb "$DEB"
	rm -rf "$tmp"
}

# unpack_kernel: $FDIR/kernel/<kver>/ holds the package's files, lib/modules/<kver> with
# fresh modules.dep, boot/vmlinuz-<kver> and boot/config-<kver>
unpack_kernel() {
	local tmp mods
	KVER=
	tmp=$FDIR/kernel/.unpack
	rm -rf "$tmp"
	mkdir -p "$tmp"
	say "unpacking $(basename "$DEB")"
	dpkg-deb -x "$DEB" "$tmp"
	# Debian moved modules to /usr/lib/modules; keep one layout in the cache
	if [ -d "$tmp/usr/lib/modules" ]; then
		mkdir -p "$tmp/lib"
		mv "$tmp/usr/lib/modules" "$tmp/lib/modules"
	fi
	mods=$(ls "$tmp/lib/modules" 2> /dev/null)
	[ "$(echo "$mods" | wc -w)" = 1 ] || die "$(basename "$DEB"): expected one lib/modules/<kver>, found: $mods"
	KVER=$mods
	[ -f "$tmp/boot/vmlinuz-$KVER" ] || die "$(basename "$DEB") has no boot/vmlinuz-$KVER"
	depmod -b "$tmp" "$KVER"
	rm -rf "$FDIR/kernel/$KVER"
	mv "$tmp" "$FDIR/kernel/$KVER"
	touch "$FDIR/kernel/$KVER/.unpacked"
}

# bzimage_payload VMLINUZ: the compressed kernel inside a bzImage, located through the
# boot protocol header (setup_sects at 0x1f1, payload_offset/payload_length at 0x248)
u8() { od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '; }
u32() { od -An -tu4 -j "$2" -N 4 "$1" | tr -d ' '; }
bzimage_payload() {
	local f=$1 sects off len
	[ "$(od -An -c -j 0x202 -N 4 "$f" | tr -d ' ')" = HdrS ] || return 1
	sects=$(u8 "$f" $((0x1f1)))
	[ "$sects" = 0 ] && sects=4
	off=$(u32 "$f" $((0x248)))
	len=$(u32 "$f" $((0x24c)))
	[ "$len" -gt 0 ] || return 1
	dd if="$f" iflag=skip_bytes,count_bytes skip=$(((sects + 1) * 512 + off)) count="$len" \
		bs=1M status=none
}

# make_vmlinux: boot/vmlinux-<kver>, the uncompressed ELF. qemu boots it through its PVH
# entry point, which skips the in-guest decompression (several seconds under TCG).
make_vmlinux() {
	local kroot=$FDIR/kernel/$KVER z out
	VMLINUX=$kroot/boot/vmlinux-$KVER
	grep -q '^CONFIG_PVH=y' "$kroot/boot/config-$KVER" 2> /dev/null || {
		say "kernel without CONFIG_PVH: the guest boots the bzImage"
		VMLINUX=
		return 0
	}
	[ -s "$VMLINUX" ] && [ "${LAB_FORCE:-0}" != 1 ] && return 0
	z=$FDIR/kernel/.payload
	out=$VMLINUX.tmp
	bzimage_payload "$kroot/boot/vmlinuz-$KVER" > "$z" || die "vmlinuz-$KVER is not a bzImage"
	case "$(od -An -tx1 -N 4 "$z" | tr -d ' ')" in
	fd377a58) xz -dc --single-stream < "$z" > "$out" 2> /dev/null || true ;;
	28b52ffd) zstd -dcq < "$z" > "$out" 2> /dev/null || true ;;
	1f8b08*) gzip -dc < "$z" > "$out" 2> /dev/null || true ;;
	*) : > "$out" ;;
	esac
	rm -f "$z"
	if [ "$(od -An -c -N 4 "$out" | tr -d ' ')" = 177ELF ]; then
		mv "$out" "$VMLINUX"
		say "vmlinux for PVH boot: $(du -h "$VMLINUX" | cut -f1)"
	else
		rm -f "$out"
		say "could not decompress the bzImage payload: the guest boots the bzImage"
		VMLINUX=
	fi
}

# ---------------------------------------------------------------- 3. the initramfs
# Modules /init loads before it can mount the root, in dependency order
INIT_MODULES=(virtio_pci virtio_net virtio_blk 9pnet_virtio 9p overlay configfs)

initramfs_stamp() {
	{
		sha256sum "$HERE/guest-init.sh" "$HERE/build-guest.sh" /bin/busybox | cut -d' ' -f1
		echo "$KVER ${INIT_MODULES[*]}"
	} | sha256sum | cut -c1-16
}

make_initramfs() {
	local kroot=$FDIR/kernel/$KVER w ko name stamp
	INITRD=$FDIR/initramfs.cpio.gz
	stamp=$(initramfs_stamp)
	[ -s "$INITRD" ] && [ "$(cat "$INITRD.stamp" 2> /dev/null)" = "$stamp" ] &&
		[ "${LAB_FORCE:-0}" != 1 ] && return 0
	say "building the initramfs for $KVER"
	w=$(mktemp -d)
	mkdir -p "$w/bin" "$w/dev" "$w/proc" "$w/sys" "$w/newroot" "$w/lab" "$w/modules"
	cp /bin/busybox "$w/bin/busybox"
	cp "$HERE/guest-init.sh" "$w/init"
	chmod 755 "$w/init"
	: > "$w/modules/order"
	while read -r ko; do
		name=$(basename "$ko")
		name=${name%.xz}
		name=${name%.zst}
		name=${name%.gz}
		grep -qx "$name" "$w/modules/order" && continue
		case "$ko" in
		*.xz) xz -dc "$ko" > "$w/modules/$name" ;;
		*.zst) zstd -dcq "$ko" > "$w/modules/$name" ;;
		*.gz) gzip -dc "$ko" > "$w/modules/$name" ;;
		*) cp "$ko" "$w/modules/$name" ;;
		esac
		echo "$name" >> "$w/modules/order"
	done < <(modprobe -d "$kroot" -S "$KVER" --show-depends -a "${INIT_MODULES[@]}" |
		awk '$1 == "insmod" {print $2}')
	(cd "$w" && find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible) |
		gzip -1n > "$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
	echo "$stamp" > "$INITRD.stamp"
	say "initramfs $(du -h "$INITRD" | cut -f1), modules: $(tr '\n' ' ' < "$w/modules/order")"
	rm -rf "$w"
}

# ---------------------------------------------------------------- main
KVER=
if [ -f "$ENVF" ] && [ "${LAB_REFRESH:-0}" != 1 ]; then
	# warm: keep the kernel this flavour was built with (the lab stays the same until
	# LAB_REFRESH=1 asks for a newer one)
	KVER=$(sed -n 's/^LAB_KVER=//p' "$ENVF")
	KPKG=$(sed -n 's/^LAB_KPKG=//p' "$ENVF")
	KPKGVER=$(sed -n 's/^LAB_KPKGVER=//p' "$ENVF")
	[ -n "$KVER" ] && [ -e "$FDIR/kernel/$KVER/.unpacked" ] || KVER=
fi
if [ -z "$KVER" ]; then
	kernel_package
	say "kernel package: $KPKG $KPKGVER"
	fetch_deb
	KVER=$(dpkg-deb -f "$DEB" Package)
	KVER=${KVER#linux-image-}
	if [ ! -e "$FDIR/kernel/$KVER/.unpacked" ]; then
		unpack_kernel
	fi
fi
KROOT=$FDIR/kernel/$KVER
make_vmlinux
make_initramfs

cat > "$ENVF.tmp" <<- EOF
	LAB_FLAVOUR=$FLAVOUR
	LAB_KPKG=$KPKG
	LAB_KPKGVER=$KPKGVER
	LAB_KVER=$KVER
	LAB_KROOT=$KROOT
	LAB_MODDIR=$KROOT/lib/modules/$KVER
	LAB_CONFIG=$KROOT/boot/config-$KVER
	LAB_BZIMAGE=$KROOT/boot/vmlinuz-$KVER
	LAB_VMLINUX=$VMLINUX
	LAB_INITRD=$INITRD
EOF
if cmp -s "$ENVF.tmp" "$ENVF"; then rm -f "$ENVF.tmp"; else mv "$ENVF.tmp" "$ENVF"; fi
say "$FLAVOUR: $KPKG $KPKGVER, kernel $KVER ($(awk -v s="$T0" -v e="$(date +%s.%N)" \
	'BEGIN {printf "%.1f", e - s}') s)"

#!/bin/bash
# tests/interop/lab/run-in-guest.sh JOB [ARGS...] - boot the interop lab guest (prepared
# by build-guest.sh), run the bash script JOB in it as root with ARGS, stream the guest's
# console to stdout, and exit with JOB's exit status.
#
# In the guest: the host's / read-only (writes go to RAM), $LAB_SHARE read-write at
# /mnt/host (JOB starts there), eth0 10.0.2.15/24 with no default route, and 10.0.2.2
# ("labhost") reaching the host's 127.0.0.1. No systemd and no udev: modprobe what you
# need. JOB sees LAB_GUEST_IP, LAB_HOST_IP, LAB_SHARE_DIR and LAB_KVER.
#
# Exit status: JOB's status, or
#   124  LAB_TIMEOUT ran out (qemu stopped)
#   125  the guest ended without a status from JOB (panic, oops=panic, qemu killed)
#   126  the guest could not be started (no build, bad settings, qemu refused to start)
#   130  interrupted (SIGINT/SIGTERM); qemu is stopped on every way out
#
# Environment:
#   LAB_KERNEL    stable (default) or backports: which build-guest.sh build to boot
#   LAB_CACHE     build-guest.sh's cache (default /var/cache/nvmeof-lab)
#   LAB_SHARE     host folder at /mnt/host (default: the current directory; not /)
#   LAB_TIMEOUT   seconds before the guest is stopped (default 600)
#   LAB_MEM       guest memory (default 2G)      LAB_SMP   vCPUs (default 2)
#   LAB_ACCEL     auto (default), tcg or kvm; auto uses KVM only with kvm_intel/kvm_amd
#   LAB_HOSTFWD   host->guest forwards, comma separated, e.g. tcp:127.0.0.1:14420-:4420
#   LAB_APPEND    more kernel command line      LAB_QEMU_ARGS  more qemu arguments
#   LAB_NVME_IMAGE  a raw image the guest sees as an emulated NVMe controller (qemu's
#                 -device nvme, one namespace): /dev/nvme0, /dev/nvme0n1, /dev/ng0n1
#   LAB_VERBOSE=1 the whole kernel log on the console (default: errors only)
#   LAB_KEEP=1    keep the run folder (console.log, status) and print where it is
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cannot_start() {
	echo "run-in-guest: ERROR: $*" >&2
	exit 126
}
note() { echo "run-in-guest: $*" >&2; }

[ $# -ge 1 ] || cannot_start "usage: $0 JOB [ARGS...]"
JOB=$1
shift
[ -f "$JOB" ] && [ -r "$JOB" ] || cannot_start "no such script: $JOB"

LAB_CACHE=${LAB_CACHE:-/var/cache/nvmeof-lab}
LAB_KERNEL=${LAB_KERNEL:-stable}
LAB_SHARE=${LAB_SHARE:-$PWD}
LAB_TIMEOUT=${LAB_TIMEOUT:-600}
LAB_MEM=${LAB_MEM:-2G}
LAB_SMP=${LAB_SMP:-2}
LAB_ACCEL=${LAB_ACCEL:-auto}
case "$LAB_TIMEOUT" in '' | *[!0-9]*) cannot_start "LAB_TIMEOUT must be whole seconds" ;; esac

ENVF=$LAB_CACHE/$LAB_KERNEL/guest.env
[ -f "$ENVF" ] || cannot_start "no $ENVF: run LAB_KERNEL=$LAB_KERNEL $HERE/build-guest.sh first"
LAB_VMLINUX=
# shellcheck disable=SC1090
. "$ENVF"
[ -f "$LAB_BZIMAGE" ] && [ -f "$LAB_INITRD" ] && [ -d "$LAB_MODDIR" ] ||
	cannot_start "the $LAB_KERNEL build in $LAB_CACHE is incomplete: rerun build-guest.sh"
[ -d "$LAB_SHARE" ] || cannot_start "LAB_SHARE=$LAB_SHARE is not a folder"
LAB_SHARE=$(cd "$LAB_SHARE" && pwd -P)
[ "$LAB_SHARE" != / ] || cannot_start "LAB_SHARE=/ would give the guest the host's / read-write"
command -v qemu-system-x86_64 > /dev/null || cannot_start "no qemu-system-x86_64 (build-guest.sh installs it)"

# KVM only where it is backed by hardware virtualisation: a /dev/kvm provided by another
# module (kvm_pvm, for one) does not run a stock kernel
AUTO_ACCEL=0
if [ "$LAB_ACCEL" = auto ]; then
	AUTO_ACCEL=1
	LAB_ACCEL=tcg
	[ -r /dev/kvm ] && [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; } &&
		LAB_ACCEL=kvm
fi
case "$LAB_ACCEL" in
tcg) ;;
kvm) ;;
*) cannot_start "LAB_ACCEL must be auto, tcg or kvm" ;;
esac

# ---------------------------------------------------------------- the run folder
RUN=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-lab.XXXXXX") || cannot_start "mktemp failed"
CTL=$RUN/ctl
mkdir "$CTL"
cp "$JOB" "$CTL/job.sh"
cp "$HERE/guest-run.sh" "$CTL/guest-run.sh"
: > "$CTL/args"
for a in "$@"; do printf '%q ' "$a" >> "$CTL/args"; done
{
	printf 'LAB_KVER=%q\n' "$LAB_KVER"
	printf 'LAB_MODDIR=%q\n' "$LAB_MODDIR"
	printf 'LAB_VERBOSE=%q\n' "${LAB_VERBOSE:-0}"
	printf 'LAB_JOB_NAME=%q\n' "$(basename "$JOB")"
} > "$CTL/boot.conf"

QEMU_PID=
SLEEP_PID=
stop_qemu() {
	local pid=$QEMU_PID
	[ -n "$pid" ] || return 0
	QEMU_PID=
	kill -TERM "$pid" 2> /dev/null || { wait "$pid" 2> /dev/null; return 0; }
	for _ in $(seq 50); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2> /dev/null && kill -KILL "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
}
on_exit() {
	stop_qemu
	[ -n "$SLEEP_PID" ] && kill "$SLEEP_PID" 2> /dev/null
	if [ "${LAB_KEEP:-0}" = 1 ]; then note "run folder kept: $RUN"; else rm -rf "$RUN"; fi
}
trap on_exit EXIT
trap 'note "interrupted"; exit 130' INT TERM HUP

# ---------------------------------------------------------------- qemu
KERNEL=$LAB_BZIMAGE
FIRMWARE=()
if [ -n "$LAB_VMLINUX" ] && [ -s "$LAB_VMLINUX" ]; then
	KERNEL=$LAB_VMLINUX # PVH entry: no decompression in the guest
	# qboot reaches the kernel faster than SeaBIOS
	[ -f /usr/share/qemu/qboot.rom ] && FIRMWARE=(-bios /usr/share/qemu/qboot.rom)
fi
NET=user,id=net0,ipv6=off
if [ -n "${LAB_HOSTFWD:-}" ]; then
	IFS=, read -r -a fwds <<< "$LAB_HOSTFWD"
	for f in "${fwds[@]}"; do NET+=",hostfwd=$f"; done
fi
CMDLINE="console=ttyS0,115200 panic=-1 mitigations=off rdinit=/init"
if [ "${LAB_VERBOSE:-0}" = 1 ]; then CMDLINE+=" loglevel=7"; else CMDLINE+=" quiet loglevel=3"; fi
CMDLINE+=" ${LAB_APPEND:-}"
SHARE_MODEL=passthrough
[ "$(id -u)" = 0 ] || SHARE_MODEL=none
# shellcheck disable=SC2206
EXTRA=(${LAB_QEMU_ARGS:-})
if [ -n "${LAB_NVME_IMAGE:-}" ]; then
	[ -f "$LAB_NVME_IMAGE" ] || cannot_start "LAB_NVME_IMAGE $LAB_NVME_IMAGE is not a file"
	EXTRA+=(-drive "file=$LAB_NVME_IMAGE,if=none,id=labnvme,format=raw"
		-device "nvme,serial=labnvme0,drive=labnvme")
fi

# boot ACCEL: start qemu, wait for it or for LAB_TIMEOUT; sets QEMU_RC and TIMED_OUT
boot() {
	local cpu
	if [ "$1" = kvm ]; then
		cpu=(-accel kvm -cpu host)
	else
		# multi-threaded TCG; a plain x86-64 CPU model with SSE4.2 and POPCNT keeps glibc
		# off the AVX code paths, which TCG emulates slowly
		# shellcheck disable=SC2054 # the commas belong to qemu's option values
		cpu=(-accel tcg,thread=multi -cpu qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt)
	fi
	# shellcheck disable=SC2054 # the commas belong to qemu's option values
	local qemu=(qemu-system-x86_64 -name nvmeof-lab -nodefaults -no-user-config -no-reboot
		-machine pc "${cpu[@]}" "${FIRMWARE[@]}" -m "$LAB_MEM" -smp "$LAB_SMP"
		-display none -vga none -monitor none -serial stdio
		-kernel "$KERNEL" -initrd "$LAB_INITRD" -append "$CMDLINE"
		-fsdev "local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
		-fsdev "local,id=labctl,path=$CTL,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=labctl,mount_tag=labctl
		-fsdev "local,id=labshare,path=$LAB_SHARE,security_model=$SHARE_MODEL,multidevs=remap"
		-device virtio-9p-pci,fsdev=labshare,mount_tag=labshare
		-netdev "$NET" -device virtio-net-pci,netdev=net0,romfile=
		-device virtio-rng-pci
		"${EXTRA[@]}")
	note "booting $LAB_KVER ($LAB_KERNEL, $1, $LAB_MEM, $LAB_SMP vCPUs, ${LAB_TIMEOUT} s limit)," \
		"$LAB_SHARE at /mnt/host"
	TIMED_OUT=0
	"${qemu[@]}" < /dev/null > >(tee -a "$RUN/console.log") 2>&1 &
	QEMU_PID=$!
	sleep "$LAB_TIMEOUT" &
	SLEEP_PID=$!
	local done_pid=
	wait -n -p done_pid "$QEMU_PID" "$SLEEP_PID"
	if [ "$done_pid" = "$SLEEP_PID" ]; then
		SLEEP_PID=
		TIMED_OUT=1
		note "TIMEOUT: no status after $LAB_TIMEOUT s, stopping qemu (pid $QEMU_PID)"
		stop_qemu
		QEMU_RC=124
		return
	fi
	wait "$QEMU_PID"
	QEMU_RC=$?
	QEMU_PID=
	kill "$SLEEP_PID" 2> /dev/null
	wait "$SLEEP_PID" 2> /dev/null
	SLEEP_PID=
}

T0=$(date +%s.%N)
boot "$LAB_ACCEL"
# an automatically chosen KVM that fails at once (before the guest came up): try TCG
if [ "$LAB_ACCEL" = kvm ] && [ "$AUTO_ACCEL" = 1 ] && [ "$TIMED_OUT" = 0 ] &&
	[ ! -f "$CTL/status" ] && ! grep -q '^=== lab: .* up after' "$RUN/console.log" 2> /dev/null; then
	note "KVM did not start the guest (qemu status $QEMU_RC): trying TCG"
	boot tcg
fi
ELAPSED=$(awk -v s="$T0" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')

if [ -f "$CTL/status" ]; then
	rc=$(cat "$CTL/status")
	note "$(basename "$JOB") exit status $rc, guest wall time $ELAPSED s"
	exit "$rc"
fi
[ "$TIMED_OUT" = 1 ] && exit 124
if ! grep -q '^=== lab: .* up after' "$RUN/console.log" 2> /dev/null && [ "$QEMU_RC" != 0 ] &&
	[ "$QEMU_RC" -lt 128 ]; then
	note "qemu could not start the guest (status $QEMU_RC)"
	exit 126
fi
note "the guest stopped without a status from $(basename "$JOB") (qemu status $QEMU_RC," \
	"$ELAPSED s): see the console above"
exit 125

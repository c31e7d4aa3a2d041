#!/bin/busybox sh
# shellcheck shell=dash
# tests/interop/lab/guest-init.sh - /init of the interop lab's initramfs (build-guest.sh
# puts it there), run by the guest kernel with only busybox at hand.
#
# It builds the guest's root filesystem out of the host's: the host / (9p tag "hostroot",
# read-only) under a tmpfs overlay, so host programs run unchanged and every write stays
# in guest RAM. It mounts the per-run control folder (tag "labctl", at /run/lab) and the
# test's folder (tag "labshare", read-write at /mnt/host), configures the network, then
# hands over to /run/lab/guest-run.sh, which run-in-guest.sh put in the control folder.
# The mounting is done here because busybox is static: each exec of a dynamically
# linked host program costs a tenth of a second or more under TCG.

/bin/busybox --install -s /bin
export PATH=/bin

give_up() {
	echo "lab-init: FATAL: $*"
	# no status file in the control folder: run-in-guest.sh reports a dead guest
	reboot -f
	sleep 60
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

while read -r m; do
	insmod "/modules/$m" || echo "lab-init: insmod $m failed"
done < /modules/order

P9=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lab
n=0
# the virtio devices may need a moment after their driver loads
until mount -t 9p -o "$P9,cache=mmap" labctl /lab 2> /dev/null; do
	n=$((n + 1))
	[ $n -ge 100 ] && give_up "no control folder (9p tag labctl)"
	sleep 0.05
done
[ -f /lab/boot.conf ] && [ -f /lab/guest-run.sh ] || give_up "incomplete control folder"
. /lab/boot.conf

# root: overlay of the host's / (read-only) and a tmpfs
mkdir -p /ro /rw /newroot
mount -t 9p -o "$P9,ro,cache=loose" hostroot /ro || give_up "cannot mount the host root"
mount -t tmpfs -o mode=0755 guest-rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/ro,upperdir=/rw/upper,workdir=/rw/work guest-root /newroot ||
	give_up "cannot mount the overlay root"
R=/newroot

mount -t tmpfs -o mode=0755,nosuid,nodev run $R/run
mkdir -p $R/run/lab
mount --move /lab $R/run/lab
for d in dev proc sys; do mount --move /$d $R/$d; done
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev shm $R/dev/shm
ln -sfn /proc/self/fd $R/dev/fd
ln -sfn /proc/self/fd/0 $R/dev/stdin
ln -sfn /proc/self/fd/1 $R/dev/stdout
ln -sfn /proc/self/fd/2 $R/dev/stderr
mount -t tmpfs -o mode=1777 tmp $R/tmp
mount -t tmpfs -o mode=1777 vartmp $R/var/tmp
mount -t configfs configfs $R/sys/kernel/config 2> /dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2> /dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2> /dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2> /dev/null

# /lib/modules/<kver>: the unpacked Debian kernel package in the host's lab cache
mkdir -p $R/lib/modules
[ -e "$R/lib/modules/$LAB_KVER" ] || ln -s "$LAB_MODDIR" "$R/lib/modules/$LAB_KVER"
# kernel messages on the console: errors only, unless LAB_VERBOSE=1
[ "$LAB_VERBOSE" = 1 ] || echo 3 > $R/proc/sys/kernel/printk

hostname nvmeof-lab
echo nvmeof-lab > $R/etc/hostname
printf '127.0.1.1\tnvmeof-lab\n10.0.2.2\tlabhost\n' >> $R/etc/hosts

# qemu user networking: 10.0.2.2 is the host's 127.0.0.1. No default route, so nothing
# but the host's loopback can be reached from the guest.
ip link set lo up
if ip link set eth0 up 2> /dev/null; then
	ip addr add 10.0.2.15/24 dev eth0
else
	echo "lab-init: WARNING: no eth0"
fi

mkdir -p $R/mnt/host
mount -t 9p -o "$P9,cache=mmap,access=any" labshare $R/mnt/host ||
	echo "lab-init: WARNING: the test folder is not mounted at /mnt/host"

# shellcheck disable=SC2093 # only reached when switch_root fails
exec switch_root $R /bin/bash /run/lab/guest-run.sh
give_up "switch_root failed"

# shellcheck shell=bash
# tests/interop/lab/guest-run.sh - PID 1 of the interop lab guest, started by
# guest-init.sh with the host's bash once the root filesystem is in place. It runs the job
# that run-in-guest.sh copied into the control folder (/run/lab/job.sh, with the arguments
# in /run/lab/args), writes the job's exit status to /run/lab/status and powers off.
# No systemd, no udev: the job loads the modules it needs itself.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
export LAB_GUEST_IP=10.0.2.15 LAB_HOST_IP=10.0.2.2 LAB_SHARE_DIR=/mnt/host
. /run/lab/boot.conf
export LAB_KVER

echo "=== lab: $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s, $(nproc) vCPU(s)," \
	"$(awk '$1 == "MemTotal:" {printf "%d MiB", $2 / 1024}' /proc/meminfo): running $LAB_JOB_NAME ==="
eval "set -- $(cat /run/lab/args)"
cd /mnt/host 2> /dev/null || cd /
bash /run/lab/job.sh "$@" < /dev/null 2>&1
rc=$?
cd /
echo "$rc" > /run/lab/status.tmp && mv /run/lab/status.tmp /run/lab/status
sync
echo "=== lab: $LAB_JOB_NAME exit status $rc after $(cut -d' ' -f1 /proc/uptime) s ==="
umount /mnt/host 2> /dev/null
# qemu runs with -no-reboot: a reboot ends it
/bin/busybox reboot -f
echo b > /proc/sysrq-trigger
sleep 60

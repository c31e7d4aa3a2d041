#!/bin/bash
# guest-durability.sh - runs in the qemu lab guest for durability.sh: nvmeof-target on the
# raw virtio disk /dev/vda (no filesystem), NVMe/TCP on 10.0.2.15:4420 and iSCSI on
# 10.0.2.15:3260, reached from the host through LAB_HOSTFWD.
#
# The host drives it through files in the share (/mnt/host):
#   go-N     start target phase N; the file holds extra nvmeof-target options
#   ready-N  (written here) the target listens
#   stop-N   stop the target of phase N (SIGTERM)
#   end      stop and exit
# The host may also cut the power (kill qemu) at any time: that is the point.
set -u
S=/mnt/host
B=$S/bin
export LD_LIBRARY_PATH=$B
echo "guest: $(uname -r)"

modprobe virtio_blk 2> /dev/null
for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
if [ ! -b /dev/vda ]; then
	echo "not ok guest-disk: no /dev/vda" >> "$S/guest-results"
	exit 1
fi
echo "guest: /dev/vda $(($(blockdev --getsize64 /dev/vda) / 1048576)) MiB," \
	"logical block $(blockdev --getss /dev/vda)"
# Keep unsynced data in the page cache until the power cut: no periodic or age-based
# writeback. A target that honours FUA and Flush is unaffected; one that does not loses
# what it acknowledged, every time rather than only when the writeback timer is late.
sysctl -qw vm.dirty_expire_centisecs=360000 vm.dirty_writeback_centisecs=0

pid=
stop_target() {
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2> /dev/null
	wait "$pid"
	echo "guest: target phase $1 exited with status $?"
	pid=
}

n=1
while :; do
	while [ ! -e "$S/go-$n" ] && [ ! -e "$S/end" ]; do sleep 0.2; done
	[ -e "$S/go-$n" ] || break
	read -r -a extra < "$S/go-$n"
	# buffered: the power-cut test needs a page cache that Flush and FUA must empty
	"$B/nvmeof-target" --ns /dev/vda,buffered_io --listen tcp://10.0.2.15:4420 \
		--listen iscsi://10.0.2.15:3260 --discovery-port 0 --reactors 1 \
		--log-level info "${extra[@]}" > "$S/target-$n.log" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		ss -Htln '( sport = :4420 )' | grep -q . && ss -Htln '( sport = :3260 )' | grep -q . &&
			break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	echo "guest: target phase $n (pid $pid, options: ${extra[*]:-none}) listening"
	touch "$S/ready-$n"
	while [ ! -e "$S/stop-$n" ] && [ ! -e "$S/end" ]; do sleep 0.2; done
	stop_target "$n"
	n=$((n + 1))
done
stop_target "$n"
exit 0

#!/bin/bash
# guest-ana-multipath.sh - runs as root inside the interop lab guest (ana-multipath.sh).
#
# Connects the kernel NVMe/TCP host to NQN at ADDR through PORT1 and PORT2 with one host
# NQN (native multipath: one subsystem, two controllers, one head /dev/nvmeXnY), checks
# list-subsys and the paths' ANA states (PORT1 optimized, PORT2 non-optimized), then runs
# fio write+verify passes on the multipath head until the host side is done flipping ANA
# states and closing PORT1 (it creates host-done in the share). Every fio pass must pass.
#
# Usage: guest-ana-multipath.sh ADDR PORT1 PORT2 NQN
# Results: one "ok NAME" / "not ok NAME: why" line per check in /mnt/host/guest-results.
set -u
ADDR=$1 PORT1=$2 PORT2=$3 NQN=$4
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:4a3f0a4e-9d8c-4c55-8f0e-6b1f3e0c2a11
HOSTID=4a3f0a4e-9d8c-4c55-8f0e-6b1f3e0c2a11
: > "$RES"
fail=0
dmesg_start=$(dmesg | wc -l)
ok() { echo "ok $1" >> "$RES"; echo "ok $1"; }
not_ok() { echo "not ok $1: $2" >> "$RES"; echo "not ok $1: $2"; fail=$((fail + 1)); }
finish() {
	nvme disconnect -n "$NQN" > /dev/null 2>&1
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" | grep -iE 'nvme|I/O error|WARNING|BUG' | tail -60
	exit "$fail"
}

modprobe nvme-tcp 2> /dev/null
if [ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ]; then
	ok native-multipath
else
	not_ok native-multipath "nvme_core.multipath is" \
		"'$(cat /sys/module/nvme_core/parameters/multipath 2>&1)', not Y"
	finish
fi
for p in "$PORT1" "$PORT2"; do
	if nvme connect -t tcp -a "$ADDR" -s "$p" -n "$NQN" -q "$HOSTNQN" -I "$HOSTID" -i 2 -l 120; then
		ok "connect-$p"
	else
		not_ok "connect-$p" "nvme connect failed"
		finish
	fi
done

# The subsystem's head and its two paths (nvmeXcYnZ), with their ANA states from the host.
subsys=
for s in /sys/class/nvme-subsystem/nvme-subsys*; do
	[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$NQN" ] && subsys=$s
done
head=
for _ in $(seq 150); do
	for d in "$subsys"/nvme*n*; do
		d=$(basename "$d")
		[[ $d =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -e "/sys/class/block/$d" ] && head=$d
	done
	[ -n "$head" ] && break
	sleep 0.2
done
[ -n "$head" ] || { not_ok multipath-head "no namespace head under $subsys"; finish; }
if [ ! -b "/dev/$head" ]; then
	IFS=: read -r maj min < "/sys/class/block/$head/dev"
	mknod "/dev/$head" b "$maj" "$min"
fi
ok "multipath-head-$head"
sleep 2 # the ANA log of both controllers read
path_state() {   # path_state PORT: ANA state the host holds for the path through PORT
	local c p
	for c in "$subsys"/nvme[0-9]*; do
		c=$(basename "$c")
		[[ $c =~ ^nvme[0-9]+$ ]] || continue
		grep -q "trsvcid=$1" "/sys/class/nvme/$c/address" 2>/dev/null || continue
		for p in /sys/class/nvme/"$c"/nvme*c*n*; do
			[ -e "$p/ana_state" ] && cat "$p/ana_state" && return
		done
	done
	echo none
}
echo "\$ nvme list-subsys /dev/$head"
ls_out=$(nvme list-subsys "/dev/$head" 2>&1)
echo "$ls_out"
n=$(echo "$ls_out" | grep -cE "trsvcid=($PORT1|$PORT2)")
if [ "$n" -eq 2 ] && echo "$ls_out" | grep -E "trsvcid=$PORT1.* optimized" > /dev/null &&
	echo "$ls_out" | grep -E "trsvcid=$PORT2.* non-optimized" > /dev/null; then
	ok list-subsys-two-paths-with-ana-states
else
	not_ok list-subsys-two-paths-with-ana-states "expected both ports, $PORT1 optimized and" \
		"$PORT2 non-optimized, in the output above"
fi
s1=$(path_state "$PORT1") s2=$(path_state "$PORT2")
if [ "$s1" = optimized ] && [ "$s2" = non-optimized ]; then
	ok sysfs-ana-states
else
	not_ok sysfs-ana-states "port $PORT1: $s1, port $PORT2: $s2"
fi
cat /sys/class/nvme-subsystem/"$(basename "$subsys")"/iopolicy 2>/dev/null | sed 's/^/iopolicy: /'

# fio passes until the host is done: each writes 32 MiB and verifies it (CRC32C).
passes=0
bad=0
touch "$OUT/fio-running"
while [ ! -e "$OUT/host-done" ] && [ "$passes" -lt 200 ]; do
	if ! fio --name=mp --filename="/dev/$head" --direct=1 --ioengine=libaio --rw=randwrite \
		--bs=16k --iodepth=8 --size=32m --offset=$(((passes % 4) * 32))m --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --eta=never --output="$OUT/fio-$passes.log"; then
		bad=$((bad + 1))
		cat "$OUT/fio-$passes.log"
	fi
	passes=$((passes + 1))
done
echo "fio: $passes passes, $bad failed"
if [ "$passes" -gt 0 ] && [ "$bad" = 0 ] && [ -e "$OUT/host-done" ]; then
	ok "fio-verify-$passes-passes"
else
	not_ok fio-verify "$passes passes, $bad failed (host done: $([ -e "$OUT/host-done" ] && echo yes || echo no))"
fi
echo "port $PORT1: $(path_state "$PORT1"), port $PORT2: $(path_state "$PORT2")"
if tail -n +"$((dmesg_start + 1))" <(dmesg) | grep -E "I/O error|Buffer I/O" > /dev/null; then
	not_ok kernel-io-errors "I/O errors in the kernel log"
else
	ok no-kernel-io-errors
fi
finish

#!/bin/bash
# guest-rbd-gateways.sh - runs as root inside the interop lab guest (rbd-gateways.sh).
#
# Connects the kernel NVMe/TCP host to NQN at ADDR through PORTA (gateway A) and PORTB
# (gateway B) with one host NQN (native multipath: one subsystem, two controllers, one
# head), checks list-subsys (A optimized, B non-optimized) and that both controllers
# report the same non-zero NGUID and UUID for namespace 1, then runs fio write+verify
# passes on the head until the host side has killed and restarted gateway A (it creates
# host-done in the share). Then takes a Write Exclusive reservation (creates resv-held),
# waits for the host side's second host to try B (resv-checked), writes itself, and
# releases the reservation.
#
# Usage: guest-rbd-gateways.sh ADDR PORTA PORTB NQN
# Results: one "ok NAME" / "not ok NAME: why" line per check in /mnt/host/guest-results.
set -u
ADDR=$1 PORTA=$2 PORTB=$3 NQN=$4
OUT=${LAB_SHARE_DIR:-/mnt/host}
RES=$OUT/guest-results
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:2c9a4c77-0e0b-4f3e-b0a4-5c2d7a1e8f31
HOSTID=2c9a4c77-0e0b-4f3e-b0a4-5c2d7a1e8f31
KEY=0x5ca1ab1e
: > "$RES"
fail=0
dmesg_start=$(dmesg | wc -l)
ok() { echo "ok $1" >> "$RES"; echo "ok $1"; }
not_ok() { echo "not ok $1: ${*:2}" >> "$RES"; echo "not ok $1: ${*:2}"; fail=$((fail + 1)); }
finish() {
	nvme disconnect -n "$NQN" > /dev/null 2>&1
	dmesg > "$OUT/guest-dmesg.txt"
	echo "--- guest kernel log since the script started ---"
	tail -n +"$((dmesg_start + 1))" "$OUT/guest-dmesg.txt" | grep -iE 'nvme|I/O error|WARNING|BUG' | tail -60
	touch "$OUT/guest-finished"
	exit "$fail"
}

modprobe nvme-tcp 2> /dev/null
if [ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" = Y ]; then
	ok native-multipath
else
	not_ok native-multipath "nvme_core.multipath is not Y"
	finish
fi
for p in "$PORTA" "$PORTB"; do
	# reconnect every 2 s for up to 10 min: gateway A comes back
	if nvme connect -t tcp -a "$ADDR" -s "$p" -n "$NQN" -q "$HOSTNQN" -I "$HOSTID" -i 2 \
		-c 2 -l 600; then
		ok "connect-$p"
	else
		not_ok "connect-$p" "nvme connect failed"
		finish
	fi
done

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
ok "one-multipath-head-$head"
sleep 2

# ctrl_of PORT: the controller (nvmeN) connected through PORT
ctrl_of() {
	local c
	for c in "$subsys"/nvme[0-9]*; do
		c=$(basename "$c")
		[[ $c =~ ^nvme[0-9]+$ ]] || continue
		grep -q "trsvcid=$1" "/sys/class/nvme/$c/address" 2>/dev/null && { echo "$c"; return; }
	done
}
path_state() {
	local c p
	c=$(ctrl_of "$1")
	[ -n "$c" ] || { echo none; return; }
	for p in /sys/class/nvme/"$c"/nvme*c*n*; do
		[ -e "$p/ana_state" ] && cat "$p/ana_state" && return
	done
	echo none
}
ctrl_state() { cat "/sys/class/nvme/$(ctrl_of "$1")/state" 2>/dev/null || echo none; }
echo "\$ nvme list-subsys /dev/$head"
ls_out=$(nvme list-subsys "/dev/$head" 2>&1)
echo "$ls_out"
if [ "$(echo "$ls_out" | grep -cE "trsvcid=($PORTA|$PORTB)")" -eq 2 ] &&
	echo "$ls_out" | grep -E "trsvcid=$PORTA.* optimized" > /dev/null &&
	echo "$ls_out" | grep -E "trsvcid=$PORTB.* non-optimized" > /dev/null; then
	ok list-subsys-both-gateways-with-ana-states
else
	not_ok list-subsys-both-gateways-with-ana-states "expected $PORTA optimized and $PORTB" \
		"non-optimized in the output above"
fi

# The same identity through both gateways (the image's, not the daemon's).
ids=()
for p in "$PORTA" "$PORTB"; do
	c=$(ctrl_of "$p")
	ng=$(nvme id-ns "/dev/$c" -n 1 2>/dev/null | sed -n 's/^nguid *: *//p')
	uu=$(nvme ns-descs "/dev/$c" -n 1 2>/dev/null | sed -n 's/^uuid *: *//p')
	cid=$(cat "/sys/class/nvme/$c/cntlid" 2>/dev/null)
	echo "port $p: $c cntlid $cid nguid $ng uuid $uu"
	ids+=("$ng/$uu")
done
if [ "${ids[0]}" = "${ids[1]}" ] && [[ ${ids[0]} =~ [1-9a-f] ]] && [[ ${ids[0]} != /* ]] &&
	[[ ${ids[0]} != */ ]]; then
	ok same-nguid-uuid-through-both-gateways
else
	not_ok same-nguid-uuid-through-both-gateways "A: ${ids[0]}, B: ${ids[1]}"
fi

passes=0
bad=0
touch "$OUT/fio-running"
while [ ! -e "$OUT/host-done" ] && [ "$passes" -lt 300 ]; do
	if ! fio --name=gw --filename="/dev/$head" --direct=1 --ioengine=libaio --rw=randwrite \
		--bs=16k --iodepth=8 --size=16m --offset=$(((passes % 8) * 16))m --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --eta=never --output="$OUT/fio-$passes.log"; then
		bad=$((bad + 1))
		cat "$OUT/fio-$passes.log"
	fi
	passes=$((passes + 1))
done
echo "fio: $passes passes, $bad failed"
if [ "$passes" -gt 0 ] && [ "$bad" = 0 ] && [ -e "$OUT/host-done" ]; then
	ok "fio-verify-$passes-passes-through-kill-and-restart"
else
	not_ok fio-verify "$passes passes, $bad failed (host done:" \
		"$([ -e "$OUT/host-done" ] && echo yes || echo no))"
fi
sa=$(ctrl_state "$PORTA") sb=$(ctrl_state "$PORTB")
echo "gateway A path: $sa ($(path_state "$PORTA")), gateway B path: $sb ($(path_state "$PORTB"))"
if [ "$sa" = live ] && [ "$sb" = live ] && [ "$(path_state "$PORTA")" = optimized ]; then
	ok gateway-a-path-live-and-optimized-again
else
	not_ok gateway-a-path-live-and-optimized-again "A: $sa $(path_state "$PORTA"), B: $sb"
fi

# A Write Exclusive reservation of this host, taken through the optimized path (A).
if nvme resv-register "/dev/$head" --namespace-id=1 --nrkey=$KEY --rrega=0 &&
	nvme resv-acquire "/dev/$head" --namespace-id=1 --crkey=$KEY --rtype=1 --racqa=0; then
	ok resv-register-and-acquire
	nvme resv-report "/dev/$head" --namespace-id=1 --eds 2>&1 | head -n 20
	touch "$OUT/resv-held"
	for _ in $(seq 300); do
		[ -e "$OUT/resv-checked" ] && break
		sleep 0.5
	done
	if dd if=/dev/urandom of="/dev/$head" bs=4k count=1 seek=100 oflag=direct 2>/dev/null; then
		ok holder-writes-under-its-reservation
	else
		not_ok holder-writes-under-its-reservation "the holder's own write failed"
	fi
	nvme resv-release "/dev/$head" --namespace-id=1 --crkey=$KEY --rtype=1 --rrela=0 ||
		not_ok resv-release "resv-release failed"
	nvme resv-register "/dev/$head" --namespace-id=1 --crkey=$KEY --rrega=1 ||
		not_ok resv-unregister "resv-register --rrega=1 failed"
else
	not_ok resv-register-and-acquire "nvme resv-register/resv-acquire failed"
fi
if tail -n +"$((dmesg_start + 1))" <(dmesg) | grep -E "I/O error|Buffer I/O" > /dev/null; then
	not_ok kernel-io-errors "I/O errors in the kernel log"
else
	ok no-kernel-io-errors
fi
finish

#!/bin/bash
# guest-prod-access-discovery.sh - runs as root inside the interop lab guest (through
# run-in-guest.sh): the Linux kernel NVMe/TCP host against nvmeof-target started from a
# configuration file with an advertised address, an open subsystem and one restricted to
# host A, then reloaded (SIGHUP) with a namespace added while host A is connected:
#   discovery without -s (port 8009, when the target serves it) and on the port itself
#   lists both subsystems for host A, only the open one for host B, every entry with the
#   advertised address (the discovery subsystem's own entries too) -> host B is refused by the restricted subsystem -> host B
#   connects to the open one -> host A connects to the restricted one -> (the host adds
#   namespace 2 and reloads) -> namespace 2 appears on the same live controller, with
#   the right size, and takes I/O -> disconnect -> no errors in the kernel log.
#
# Usage: guest-prod-access-discovery.sh ADDR PORT NQN_OPEN NQN_RESTRICTED HOSTNQN_A HOSTID_A
#                                       HOSTNQN_B HOSTID_B DISC8009 NS2BYTES
#   DISC8009  1: the target serves discovery on ADDR:8009 (check nvme discover without -s)
# Hand-shake with the host through the share: this side writes "connected" (the
# controller of host A), the host answers "reloaded" once the new configuration is live.
. "${LAB_SHARE_DIR:-/mnt/host}/guest-prod-lib.sh"
if [ $# -ne 10 ]; then
	echo "usage: $0 ADDR PORT NQN_OPEN NQN_RESTRICTED HOSTNQN_A HOSTID_A HOSTNQN_B HOSTID_B DISC8009 NS2BYTES" >&2
	exit 2
fi
ADDR=$1 PORT=$2 NQN_O=$3 NQN_R=$4 HA=$5 HIDA=$6 HB=$7 HIDB=$8 DISC8009=$9 NS2BYTES=${10}
ctrl=
DISC_OUT=

PLAN=(discover-a discover-all-advertised discover-b connect-b-refused connect-b-open connect-a reload-namespace
      same-controller namespace-size namespace-io disconnect kernel-log)
[ "$DISC8009" = 1 ] && PLAN=(discover-8009 "${PLAN[@]}")

guest_cleanup() {
	nvme disconnect -n "$NQN_R" > /dev/null 2>&1
	nvme disconnect -n "$NQN_O" > /dev/null 2>&1
}

modprobe -a nvme-tcp nvme-fabrics || skip "the guest kernel $(uname -r) has no nvme-tcp"

# entries DISCOVER-OUTPUT: "subnqn traddr trsvcid" per discovery log entry
entries() {
	awk '/^=+Discovery Log Entry/ { if (n) print s, a, p; n = 1; s = a = p = "" }
	     /^subnqn:/ { s = $2 } /^traddr:/ { a = $2 } /^trsvcid:/ { p = $2 }
	     END { if (n) print s, a, p }' <<< "$1"
}
# discover NAME HOSTNQN HOSTID WANT... [-- ARGS]: nvme discover lists exactly the subsystems
# WANT (of ours), each at ADVERTISED:PORT
discover() {
	local name=$1 hn=$2 hi=$3 out rc e want=() extra=() got
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do want+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; extra=("$@"); }
	say "\$ nvme discover -t tcp -a $ADDR ${extra[*]} --hostnqn $hn"
	out=$(timeout 120 nvme discover -t tcp -a "$ADDR" "${extra[@]}" --hostnqn "$hn" --hostid "$hi" 2>&1)
	rc=$?
	echo "$out" | grep -E '^(=|subnqn|traddr|trsvcid|subtype)'
	DISC_OUT=$out
	[ $rc -eq 0 ] || { not_ok "$name" "nvme discover exit status $rc"; return; }
	got=$(entries "$out" | grep -E "^($NQN_O|$NQN_R) " | sort)
	e=$(for n in "${want[@]}"; do echo "$n $ADDR $PORT"; done | sort)
	if [ "$got" = "$e" ]; then
		ok "$name"
	else
		not_ok "$name" "entries '$(tr '\n' '|' <<< "$got")', expected '$(tr '\n' '|' <<< "$e")'"
	fi
}
# ctrl_of NQN HOSTNQN: the live controller connected to NQN as HOSTNQN
ctrl_of() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2> /dev/null)" = "$1" ] || continue
		[ "$(cat "$c/hostnqn" 2> /dev/null)" = "$2" ] || continue
		basename "$c"
		return 0
	done
	return 1
}
# ns_dev NQN NSID SECONDS: the block device of namespace NSID of NQN, once it appears
ns_dev() {
	local i s d
	for i in $(seq $(($3 * 5))); do
		for s in /sys/class/nvme-subsystem/nvme-subsys*; do
			[ "$(cat "$s/subsysnqn" 2> /dev/null)" = "$1" ] || continue
			for d in "$s"/nvme*; do
				d=$(basename "$d")
				[[ $d =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
				[ "$(cat "/sys/class/block/$d/nsid" 2> /dev/null)" = "$2" ] || continue
				[ -b "/dev/$d" ] || { IFS=: read -r maj min < "/sys/class/block/$d/dev"
					mknod "/dev/$d" b "$maj" "$min"; }
				echo "$d"
				return 0
			done
		done
		sleep 0.2
	done
	return 1
}
connect() {   # connect NQN HOSTNQN HOSTID
	say "\$ nvme connect -t tcp -a $ADDR -s $PORT -n $1 --hostnqn $2"
	timeout 120 nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$1" --hostnqn "$2" --hostid "$3" -l 120 2>&1
}

# 1. discovery: filtered by host, advertised address
[ "$DISC8009" = 1 ] && discover discover-8009 "$HA" "$HIDA" "$NQN_O" "$NQN_R"
discover discover-a "$HA" "$HIDA" "$NQN_O" "$NQN_R" -- -s "$PORT"
# every entry, the discovery subsystem's own (the port and the 8009 listener) included,
# names an address the host can dial: the advertised one
bad=$(entries "$DISC_OUT" | awk -v a="$ADDR" '$2 != a')
if [ -z "$bad" ]; then
	ok discover-all-advertised
else
	not_ok discover-all-advertised "entries not at $ADDR: $(tr '\n' '|' <<< "$bad")"
fi
discover discover-b "$HB" "$HIDB" "$NQN_O" -- -s "$PORT"

# 2. access control
if connect "$NQN_R" "$HB" "$HIDB"; then
	not_ok connect-b-refused "host B was let into $NQN_R"
	nvme disconnect -n "$NQN_R"
elif ctrl_of "$NQN_R" "$HB" > /dev/null; then
	not_ok connect-b-refused "connect failed but a controller of host B exists"
else
	ok connect-b-refused
fi
dmesg_ok=$(dmesg | wc -l)   # the refused connect is logged by the kernel: not an error
connect "$NQN_O" "$HB" "$HIDB" || fatal connect-b-open "host B cannot connect to $NQN_O"
ns_dev "$NQN_O" 1 30 > /dev/null || fatal connect-b-open "no namespace of $NQN_O appeared"
ok connect-b-open
connect "$NQN_R" "$HA" "$HIDA" || fatal connect-a "host A cannot connect to $NQN_R"
ctrl=$(ctrl_of "$NQN_R" "$HA") || fatal connect-a "no controller of $NQN_R for host A"
ns1=$(ns_dev "$NQN_R" 1 30) || fatal connect-a "namespace 1 of $NQN_R did not appear"
ns_dev "$NQN_R" 2 1 > /dev/null && fatal connect-a "namespace 2 exists before the reload"
ok connect-a
cntlid=$(cat "/sys/class/nvme/$ctrl/cntlid")
say "host A: controller $ctrl (cntlid $cntlid), namespace 1 is /dev/$ns1"

# 3. the host adds namespace 2 to the configuration and reloads; the kernel learns of it
# through the Namespace Attribute Changed event, without reconnecting
tell_host connected "$ctrl"
wait_host reloaded 600 || fatal reload-namespace "the host did not report the reload"
say "host reloaded the target: $(cat "$OUT/reloaded")"
if ns2=$(ns_dev "$NQN_R" 2 90); then
	ok reload-namespace
	say "namespace 2 is /dev/$ns2"
else
	fatal reload-namespace "namespace 2 of $NQN_R did not appear within 90 s"
fi
c2=$(ctrl_of "$NQN_R" "$HA")
st=$(cat "/sys/class/nvme/$ctrl/state" 2> /dev/null)
cid2=$(cat "/sys/class/nvme/$ctrl/cntlid" 2> /dev/null)
if [ "$c2" = "$ctrl" ] && [ "$st" = live ] && [ "$cid2" = "$cntlid" ]; then
	ok same-controller
else
	not_ok same-controller "controller now '$c2' state '$st' cntlid '$cid2'; was $ctrl live $cntlid"
fi
size=$(blockdev --getsize64 "/dev/$ns2")
if [ "$size" = "$NS2BYTES" ]; then
	ok namespace-size
else
	not_ok namespace-size "/dev/$ns2 has $size bytes, expected $NS2BYTES"
fi
head -c 4194304 /dev/urandom > /tmp/pattern
if dd if=/tmp/pattern of="/dev/$ns2" bs=1M oflag=direct status=none &&
	dd if="/dev/$ns2" of=/tmp/back bs=1M count=4 iflag=direct status=none &&
	cmp /tmp/pattern /tmp/back; then
	ok namespace-io
else
	not_ok namespace-io "4 MiB written to /dev/$ns2 did not read back the same"
fi

out=$(nvme disconnect -n "$NQN_R" 2>&1; nvme disconnect -n "$NQN_O" 2>&1)
echo "$out"
if [ "$(grep -c 'disconnected 1 controller' <<< "$out")" = 2 ]; then
	ok disconnect
else
	not_ok disconnect "unexpected output: $(tr '\n' '|' <<< "$out")"
fi

errs=$(kernel_errors 'I/O Error|I/O error|error recovery|timeout|reset|Reconnecting|failed|Call Trace|WARNING|BUG' "$dmesg_ok")
if [ -z "$errs" ]; then
	ok kernel-log
else
	not_ok kernel-log "guest kernel reported: $(head -n 3 <<< "$errs" | tr '\n' '|')"
fi
finish

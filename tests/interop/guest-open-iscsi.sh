#!/bin/bash
# guest-open-iscsi.sh - runs as root inside the interop lab guest (through run-in-guest.sh).
#
# The Linux open-iscsi initiator (iscsid + iscsiadm, kernel iscsi_tcp) against two iSCSI
# portals of nvmeof-target at ADDR:
#   PORT1  target IQN1, no authentication, no digests:
#          SendTargets discovery -> login -> SCSI disk appears -> mkfs.ext4 -> mount ->
#          write files -> umount -> fsck -> logout -> login -> every checksum matches ->
#          logout
#   PORT2  target IQN2 requiring CHAP (USER/SECRET) and CRC32C digests: the initiator
#          allows only CHAP_A SHA-256 and asks for CRC32C header and data digests:
#          SendTargets (shown, not checked), a wrong secret is refused -> login -> digests in effect -> mkfs, mount, write,
#          umount, fsck, remount, every checksum matches -> logout
#          IQN3 on PORT2 with mutual CHAP (USER3/SECRET3, the target proves MUSER/MSECRET):
#          chap_algs=MD5 is refused (not allowed by default); chap_algs=SHA3-256 with a
#          wrong target secret expected: the initiator refuses the target; with the
#          right one it logs in; 4 MiB written to the disk read back
#   no I/O errors, connection errors or warnings in the guest kernel log.
#
# Usage: guest-open-iscsi.sh ADDR PORT1 IQN1 PORT2 IQN2 USER SECRET IQN3 USER3 SECRET3
#                            MUSER MSECRET
# Writes sendtargets1 (what SendTargets answered on PORT1) to the share besides the
# results (see guest-prod-lib.sh).
. "${LAB_SHARE_DIR:-/mnt/host}/guest-prod-lib.sh"
if [ $# -ne 12 ]; then
	echo "usage: $0 ADDR PORT1 IQN1 PORT2 IQN2 USER SECRET IQN3 USER3 SECRET3 MUSER MSECRET" >&2
	exit 2
fi
ADDR=$1 PORT1=$2 IQN1=$3 PORT2=$4 IQN2=$5 CHAP_USER=$6 CHAP_SECRET=$7
IQN3=$8 CHAP3_USER=$9 CHAP3_SECRET=${10} MUTUAL_USER=${11} MUTUAL_SECRET=${12}
INITIATOR=iqn.2026-11.io.nvmeof:lab-guest
iscsid_pid=
sd=

PLAN=(iscsid discovery login disk mkfs mount write umount fsck logout relogin remount verify
      final-umount final-logout
      chap-wrong-secret chap-login chap-digests chap-disk chap-mkfs chap-mount
      chap-write chap-umount chap-fsck chap-remount chap-verify chap-final-umount chap-logout
      md5-refused mutual-wrong-target mutual-login mutual-disk mutual-io mutual-logout
      kernel-log)

guest_cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	iscsiadm -m node -U all > /dev/null 2>&1
	[ -n "$iscsid_pid" ] && kill "$iscsid_pid" 2> /dev/null
	[ -s /tmp/iscsid.log ] && cp /tmp/iscsid.log "$OUT/iscsid.log"
}

modprobe -a iscsi_tcp sd_mod 2> /dev/null ||
	skip "the guest kernel $(uname -r) has no iscsi_tcp/sd_mod module"
modprobe -a crc32c 2> /dev/null   # the CRC32C digests (libiscsi_tcp asks the crypto API)
command -v iscsid > /dev/null && command -v iscsiadm > /dev/null ||
	skip "no iscsid/iscsiadm (open-iscsi) on the host, which the guest shares"

# open-iscsi state lives in the guest's RAM overlay: a private initiator name, no nodes
# left over from the host, and timers that suit a software-emulated guest
mkdir -p /etc/iscsi /run/lock/iscsi
rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces
echo "InitiatorName=$INITIATOR" > /etc/iscsi/initiatorname.iscsi
cat > /etc/iscsi/iscsid.conf <<EOF
iscsid.startup = /bin/true
node.startup = manual
node.session.timeo.replacement_timeout = 120
node.conn[0].timeo.login_timeout = 60
node.conn[0].timeo.logout_timeout = 30
node.conn[0].timeo.noop_out_interval = 10
node.conn[0].timeo.noop_out_timeout = 60
node.session.initial_login_retry_max = 2
node.conn[0].iscsi.HeaderDigest = None
node.conn[0].iscsi.DataDigest = None
EOF
# its own session: iscsid signals its whole process group when it stops
setsid iscsid -f > /tmp/iscsid.log 2>&1 &
iscsid_pid=$!
sleep 1
if kill -0 "$iscsid_pid" 2> /dev/null; then
	ok iscsid
else
	fatal iscsid "iscsid exited: $(tail -n 3 /tmp/iscsid.log | tr '\n' '|')"
fi

# find_disk IQN: the sd device of LUN 0 of the session to IQN (waits for the LUN scan)
find_disk() {
	local i s d
	for i in $(seq 150); do
		for s in /sys/class/iscsi_session/session*; do
			[ "$(cat "$s/targetname" 2> /dev/null)" = "$1" ] || continue
			for d in "$s"/device/target*/*:0/block/sd*; do
				[ -e "$d" ] || continue
				d=$(basename "$d")
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
# add_node IQN PORT: the node record for IQN at ADDR:PORT. SendTargets answers with the
# address the target saw the connection arrive on, which behind qemu's user networking
# is the host's 127.0.0.1 (unreachable from here), so the record names the portal the
# guest dials.
add_node() {
	iscsiadm -m node -T "$1" -p "$ADDR:$2" > /dev/null 2>&1 ||
		iscsiadm -m node -o new -T "$1" -p "$ADDR:$2" > /dev/null
}
node_set() {   # node_set IQN PORT NAME VALUE
	iscsiadm -m node -T "$1" -p "$ADDR:$2" -o update -n "$3" -v "$4"
}
login() {   # login IQN PORT
	say "\$ iscsiadm -m node -T $1 -p $ADDR:$2 --login"
	timeout 180 iscsiadm -m node -T "$1" -p "$ADDR:$2" --login
}
logout() {   # logout CHECKNAME IQN PORT
	say "\$ iscsiadm -m node -T $2 -p $ADDR:$3 --logout"
	timeout 120 iscsiadm -m node -T "$2" -p "$ADDR:$3" --logout || fatal "$1" "logout failed"
	for i in $(seq 50); do
		[ -e "/sys/block/$sd" ] || break
		sleep 0.2
	done
	[ -e "/sys/block/$sd" ] && fatal "$1" "/dev/$sd still present after logout"
	ok "$1"
	sd=
}
disk() {   # disk CHECKNAME IQN: find the disk, show what the target reports
	sd=$(find_disk "$2") || fatal "$1" "no SCSI disk of $2 appeared in 30 s"
	say "/dev/$sd: $(cat /sys/block/"$sd"/device/vendor 2>/dev/null | xargs)" \
		"$(cat /sys/block/"$sd"/device/model 2>/dev/null | xargs)," \
		"$(blockdev --getsize64 "/dev/$sd") bytes, $(blockdev --getss "/dev/$sd")-byte sectors"
	if [ "$(blockdev --getsize64 "/dev/$sd")" -gt 0 ]; then
		ok "$1"
	else
		fatal "$1" "/dev/$sd has size 0"
	fi
}
mkdir -p "$MNT"

# ---- 1. plain: SendTargets, login, filesystem, logout, login again, read back ----
say "\$ iscsiadm -m discovery -t st -p $ADDR:$PORT1"
st=$(timeout 120 iscsiadm -m discovery -t st -p "$ADDR:$PORT1" 2>&1)
rc=$?
echo "$st"
echo "$st" > "$OUT/sendtargets1"
# a failed discovery is recorded; the rest goes on with the node record made by hand
if [ $rc -ne 0 ]; then
	not_ok discovery "iscsiadm discovery exit status $rc: $(grep -m1 -i fail <<< "$st")"
elif ! grep -qE "^[^ ]+ $IQN1\$" <<< "$st"; then
	not_ok discovery "SendTargets did not list $IQN1"
else
	ok discovery
fi
add_node "$IQN1" "$PORT1" || fatal login "cannot create the node record"
login "$IQN1" "$PORT1" || fatal login "login to $IQN1 failed"
ok login
disk disk "$IQN1"
run mkfs mkfs.ext4 -q -F "/dev/$sd"
run mount mount "/dev/$sd" "$MNT"
run write write_files "$MNT" "$OUT/checksums1"
run umount umount "$MNT"
run fsck fsck.ext4 -f -n "/dev/$sd"
logout logout "$IQN1" "$PORT1"
login "$IQN1" "$PORT1" || fatal relogin "second login to $IQN1 failed"
disk relogin "$IQN1"
run remount mount "/dev/$sd" "$MNT"
run verify verify_files "$MNT" "$OUT/checksums1"
run final-umount umount "$MNT"
logout final-logout "$IQN1" "$PORT1"

# ---- 2. CHAP (SHA-256 only) and CRC32C header and data digests ----
say "\$ iscsiadm -m discovery -t st -p $ADDR:$PORT2"
st=$(timeout 120 iscsiadm -m discovery -t st -p "$ADDR:$PORT2" 2>&1)
rc=$?
echo "$st"
# for the record only: open-iscsi's discovery sessions offer no digests, which this
# portal requires
say "SendTargets on port $PORT2: status $rc"
add_node "$IQN2" "$PORT2" || fatal chap-wrong-secret "cannot create the node record"
node_set "$IQN2" "$PORT2" node.session.auth.authmethod CHAP &&
	node_set "$IQN2" "$PORT2" node.session.auth.chap_algs SHA256 &&
	node_set "$IQN2" "$PORT2" node.session.auth.username "$CHAP_USER" &&
	node_set "$IQN2" "$PORT2" node.session.auth.password "${CHAP_SECRET}wrong" &&
	node_set "$IQN2" "$PORT2" 'node.conn[0].iscsi.HeaderDigest' CRC32C &&
	node_set "$IQN2" "$PORT2" 'node.conn[0].iscsi.DataDigest' CRC32C &&
	node_set "$IQN2" "$PORT2" node.session.initial_login_retry_max 1 ||
	fatal chap-wrong-secret "iscsiadm -o update of the node record failed"
iscsiadm -m node -T "$IQN2" -p "$ADDR:$PORT2" | grep -E 'auth\.(authmethod|chap_algs|username)|Digest'
login "$IQN2" "$PORT2"
rc=$?
if [ $rc -eq 24 ]; then   # ISCSI_ERR_LOGIN_AUTH_FAILED
	ok chap-wrong-secret
elif [ $rc -eq 0 ]; then
	fatal chap-wrong-secret "login with a wrong CHAP secret succeeded"
else
	not_ok chap-wrong-secret "login with a wrong secret: status $rc, expected 24 (auth failed)"
fi
iscsiadm -m node -T "$IQN2" -p "$ADDR:$PORT2" --logout > /dev/null 2>&1
dmesg_from=$(dmesg | wc -l)
node_set "$IQN2" "$PORT2" node.session.auth.password "$CHAP_SECRET" ||
	fatal chap-login "iscsiadm -o update of the password failed"
login "$IQN2" "$PORT2" || fatal chap-login "CHAP (SHA-256) login to $IQN2 failed"
ok chap-login
p2=$(iscsiadm -m session -P 2 2>&1)
echo "$p2" | grep -E 'Target:|Current Portal|HeaderDigest|DataDigest|username:'
if grep -q 'HeaderDigest: CRC32C' <<< "$p2" && grep -q 'DataDigest: CRC32C' <<< "$p2"; then
	ok chap-digests
else
	not_ok chap-digests "iscsiadm -m session -P 2 does not show CRC32C header and data digests"
fi
disk chap-disk "$IQN2"
run chap-mkfs mkfs.ext4 -q -F "/dev/$sd"
run chap-mount mount "/dev/$sd" "$MNT"
run chap-write write_files "$MNT" "$OUT/checksums2"
run chap-umount umount "$MNT"
run chap-fsck fsck.ext4 -f -n "/dev/$sd"
echo 3 > /proc/sys/vm/drop_caches
run chap-remount mount "/dev/$sd" "$MNT"
run chap-verify verify_files "$MNT" "$OUT/checksums2"
run chap-final-umount umount "$MNT"
logout chap-logout "$IQN2" "$PORT2"
KERR='I/O error|conn error|connection[0-9:]+ .*error|timed out|reset|digest|Call Trace|WARNING|BUG'
errs2=$(kernel_errors "$KERR" "$dmesg_from")

# ---- 3. mutual CHAP, SHA3-256; MD5 refused ----
add_node "$IQN3" "$PORT2" || fatal md5-refused "cannot create the node record"
node_set "$IQN3" "$PORT2" node.session.auth.authmethod CHAP &&
	node_set "$IQN3" "$PORT2" node.session.auth.chap_algs MD5 &&
	node_set "$IQN3" "$PORT2" node.session.auth.username "$CHAP3_USER" &&
	node_set "$IQN3" "$PORT2" node.session.auth.password "$CHAP3_SECRET" &&
	node_set "$IQN3" "$PORT2" node.session.auth.username_in "$MUTUAL_USER" &&
	node_set "$IQN3" "$PORT2" node.session.auth.password_in "${MUTUAL_SECRET}wrong" &&
	node_set "$IQN3" "$PORT2" 'node.conn[0].iscsi.HeaderDigest' CRC32C &&
	node_set "$IQN3" "$PORT2" 'node.conn[0].iscsi.DataDigest' CRC32C &&
	node_set "$IQN3" "$PORT2" node.session.initial_login_retry_max 1 ||
	fatal md5-refused "iscsiadm -o update of the node record failed"
login "$IQN3" "$PORT2"
rc=$?
iscsiadm -m node -T "$IQN3" -p "$ADDR:$PORT2" --logout > /dev/null 2>&1
if [ $rc -eq 0 ]; then
	fatal md5-refused "a login offering only MD5 succeeded"
else
	ok md5-refused
fi
node_set "$IQN3" "$PORT2" node.session.auth.chap_algs SHA3-256 ||
	fatal mutual-wrong-target "iscsiadm -o update of chap_algs failed"
login "$IQN3" "$PORT2"
rc=$?
iscsiadm -m node -T "$IQN3" -p "$ADDR:$PORT2" --logout > /dev/null 2>&1
if [ $rc -eq 0 ]; then
	fatal mutual-wrong-target "the initiator accepted a target that proved another secret"
else
	ok mutual-wrong-target
fi
node_set "$IQN3" "$PORT2" node.session.auth.password_in "$MUTUAL_SECRET" ||
	fatal mutual-login "iscsiadm -o update of password_in failed"
dmesg_from=$(dmesg | wc -l) # the refused logins above may leave connection errors
login "$IQN3" "$PORT2" || fatal mutual-login "mutual CHAP (SHA3-256) login to $IQN3 failed"
ok mutual-login
disk mutual-disk "$IQN3"
head -c 4M /dev/urandom > /tmp/mutual.bin
if dd if=/tmp/mutual.bin of="/dev/$sd" bs=1M oflag=direct status=none &&
	dd if="/dev/$sd" of=/tmp/mutual.back bs=1M count=4 iflag=direct status=none &&
	cmp -s /tmp/mutual.bin /tmp/mutual.back; then
	ok mutual-io
else
	not_ok mutual-io "4 MiB written to /dev/$sd did not read back the same"
fi
logout mutual-logout "$IQN3" "$PORT2"

# ---- 4. the initiator logged no I/O or connection errors ----
errs=$errs2$(kernel_errors "$KERR" "$dmesg_from")
errs1=$(dmesg | head -n "$dmesg_from" | tail -n +"$((dmesg_start + 1))" |
	grep -iE 'I/O error|timed out|reset|digest|Call Trace|WARNING|BUG')
if [ -z "$errs$errs1" ]; then
	ok kernel-log
else
	not_ok kernel-log "guest kernel reported: $(printf '%s\n%s' "$errs1" "$errs" | grep . | head -n 3 | tr '\n' '|')"
fi
finish

#!/bin/bash
# open-iscsi.sh - the Linux open-iscsi initiator (qemu lab guest: iscsid, iscsiadm, kernel
# iscsi_tcp and sd) against nvmeof-target's iSCSI portals on this machine:
#   1. a portal from the command line (--listen iscsi://127.0.0.1:PORT, 256 MiB file
#      namespace as LUN 0): SendTargets, login, ext4 mkfs/mount/write/umount, fsck -f
#      clean, logout, login again, every checksum matches;
#   2. a portal from a configuration file's "iscsi" section whose target requires CHAP and
#      CRC32C header and data digests: the initiator offers only SHA-256 CHAP; a wrong
#      secret is refused, the right one logs in, digests are in effect on both sides,
#      the same filesystem round trip;
#   3. on that portal, a target with mutual CHAP and the default chap_algs: an initiator
#      offering only MD5 is refused; with chap_algs=SHA3-256 the initiator refuses a
#      target that does not know the secret it expects, and logs in when it does; data
#      written to the disk reads back;
# plus the target's own view (sessions and digests it logged) and clean shutdowns.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/prod-lib.sh"
px_init
[ "$IX_REF" = nvmet ] && ix_cannot_run "no reference run: nvmet in the lab guest has no iSCSI"

if ! command -v iscsiadm > /dev/null || ! command -v iscsid > /dev/null; then
	ix_log "open-iscsi missing on this machine (the lab guest runs its programs): installing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q open-iscsi > "$IX_DIR/apt.log" 2>&1 ||
		ix_cannot_run "apt-get install open-iscsi failed (see $IX_DIR/apt.log)"
fi

IQN1=iqn.2026-11.io.nvmeof:default   # the command line's target
IQN2=iqn.2026-11.io.nvmeof:chap
NQN2=nqn.2026-11.io.nvmeof:chap
CHAP_USER=labguest
CHAP_SECRET=nvmeof-lab-$RANDOM$RANDOM-secret
IQN3=iqn.2026-11.io.nvmeof:mutual
CHAP3_USER=labmutual
CHAP3_SECRET=nvmeof-lab-$RANDOM$RANDOM-initiator
MUTUAL_USER=labtarget
MUTUAL_SECRET=nvmeof-lab-$RANDOM$RANDOM-target

PORT1=$(ix_free_port) || exit 99
truncate -s "$IX_NSBYTES" "$IX_DIR/lun1.img"
LOG1=$IX_DIR/target-cli.log
px_start target-cli-start "$LOG1" "$PORT1" --listen "iscsi://127.0.0.1:$PORT1" \
	--discovery-port 0 --log-level info --ns "$IX_DIR/lun1.img" || exit 1
PID1=$PX_PID
PX_EXTRA_PIDS="$PX_EXTRA_PIDS $PID1"

PORT2=$(ix_free_port) || exit 99
truncate -s "$IX_NSBYTES" "$IX_DIR/lun2.img"
LOG2=$IX_DIR/target-conf.log
truncate -s 64M "$IX_DIR/lun3.img"
cat > "$IX_DIR/iscsi-chap.json" <<EOF
{
  "subsystems": [
    { "nqn": "$NQN2", "attr": { "allow_any_host": "1" },
      "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "$IX_DIR/lun2.img" } },
                      { "nsid": 2, "enable": 1, "device": { "path": "$IX_DIR/lun3.img" } } ] }
  ],
  "iscsi": {
    "portals": [ { "addr": "127.0.0.1", "port": $PORT2 } ],
    "targets": [
      { "iqn": "$IQN2", "alias": "chap",
        "luns": [ { "lun": 0, "subsystem": "$NQN2", "nsid": 1 } ],
        "chap": { "user": "$CHAP_USER", "secret": "$CHAP_SECRET" } },
      { "iqn": "$IQN3", "alias": "mutual",
        "luns": [ { "lun": 0, "subsystem": "$NQN2", "nsid": 2 } ],
        "chap": { "user": "$CHAP3_USER", "secret": "$CHAP3_SECRET",
                  "mutual_user": "$MUTUAL_USER", "mutual_secret": "$MUTUAL_SECRET" } }
    ],
    "options": { "header_digest": "required", "data_digest": "required" }
  }
}
EOF
px_start target-conf-start "$LOG2" "$PORT2" -c "$IX_DIR/iscsi-chap.json" --discovery-port 0 --log-level info || exit 1
PID2=$PX_PID
PX_EXTRA_PIDS="$PX_EXTRA_PIDS $PID2"

t0=$SECONDS
px_guest_start "$top_srcdir/tests/interop/guest-open-iscsi.sh" 10.0.2.2 "$PORT1" "$IQN1" \
	"$PORT2" "$IQN2" "$CHAP_USER" "$CHAP_SECRET" \
	"$IQN3" "$CHAP3_USER" "$CHAP3_SECRET" "$MUTUAL_USER" "$MUTUAL_SECRET"
px_guest_wait
ix_log "guest run: $((SECONDS - t0)) s"
px_guest_skipped
ix_guest_results

# What SendTargets told the initiator: the portal address it reached, as this machine saw
# it. Behind qemu's user networking that is 127.0.0.1, which the guest cannot dial (so the
# guest names the portal itself); on a real network it is the address the initiator used.
[ -s "$IX_DIR/sendtargets1" ] && ix_log "SendTargets answer on port $PORT1: $(cat "$IX_DIR/sendtargets1")"

for t in cli:$PID1 conf:$PID2; do
	if kill -0 "${t#*:}" 2> /dev/null; then
		ix_ok "target-${t%%:*}-alive"
	else
		ix_not_ok "target-${t%%:*}-alive" "nvmeof-target exited during the run"
	fi
done

IX_TARGET_LOG=$LOG1
# discovery session + two normal sessions, no digests
ix_expect_log target-cli-discovery 1 'discovery session of iqn.2026-11.io.nvmeof:lab-guest' \
	"the SendTargets session"
ix_expect_log target-cli-sessions 2 "normal session of iqn.2026-11.io.nvmeof:lab-guest to $IQN1.*digests none/none" \
	"two logins without digests"
IX_TARGET_LOG=$LOG2
ix_expect_log target-conf-chap-refused 1 "CHAP authentication of '$CHAP_USER' failed" \
	"the login with the wrong secret"
ix_expect_log target-conf-digests 1 "normal session of iqn.2026-11.io.nvmeof:lab-guest to $IQN2.*digests CRC32C/CRC32C" \
	"the CHAP login with CRC32C header and data digests"
ix_expect_log target-conf-md5-refused 1 "CHAP refused: the initiator offers MD5, the target allows SHA3-256,SHA256" \
	"the login offering only MD5"
ix_expect_log target-conf-mutual 1 "normal session of iqn.2026-11.io.nvmeof:lab-guest to $IQN3.*CHAP SHA3-256 mutual" \
	"the mutual CHAP login with SHA3-256"
if grep -qF -e "$CHAP_SECRET" -e "$CHAP3_SECRET" -e "$MUTUAL_SECRET" "$LOG1" "$LOG2"; then
	ix_not_ok target-no-secrets "a CHAP secret is in the target log"
else
	ix_ok target-no-secrets
fi
if grep -qiE 'digest error' "$LOG1" "$LOG2"; then
	ix_not_ok target-no-digest-errors "$(grep -hiE 'digest error' "$LOG1" "$LOG2" | head -n 2)"
else
	ix_ok target-no-digest-errors
fi

PX_EXTRA_PIDS=
px_stop "$PID1"
[ "$PX_STATUS" = 0 ] && ix_ok target-cli-exit ||
	ix_not_ok target-cli-exit "SIGTERM: exit status $PX_STATUS"
px_stop "$PID2"
[ "$PX_STATUS" = 0 ] && ix_ok target-conf-exit ||
	ix_not_ok target-conf-exit "SIGTERM: exit status $PX_STATUS"
for l in "$LOG1" "$LOG2"; do
	echo "--- $(basename "$l") (last 30 of $(wc -l < "$l") lines) ---"
	tail -n 30 "$l" | sed 's/^/  target: /'
done
ix_finish

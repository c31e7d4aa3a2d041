#!/bin/bash
# auth-kernel-host.sh - NVMe in-band authentication (DH-HMAC-CHAP) between the Linux 6.12
# kernel host (the lab's backports kernel: Debian's 6.1 is built without it) and
# nvmeof-target started from a configuration file in nvmetcli's format:
#
#   host A  "dhchap": {"key_file": (mode 0600), "hash": "hmac(sha256)", "dhgroup": "null"}
#   host B  "dhchap": {"key", "ctrl_key", "hash": "hmac(sha512)", "dhgroup": "ffdhe4096"}
#
# with secrets from `nvme gen-dhchap-key` (transformed forms, NN = 01 and 03). The guest
# (guest-auth-kernel-host.sh) connects as A, then as B with --dhchap-ctrl-secret, each
# with two I/O queues (every queue authenticates), makes and checks an ext4 file system
# and its checksums; a wrong secret and a missing one are refused, and so is a controller
# the host cannot verify, with the reasons the kernel logs; host A's secret changed in its
# key file and SIGHUP end its connected controller. Here: the target's own log
# (every queue authenticated, the failures and their reasons, no secret in it), and a
# clean exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/prod-lib.sh"
# in-band authentication needs the backports kernel, whatever the caller asked for
NVMEOF_LAB_KERNEL=backports
LAB_KERNEL=backports
export NVMEOF_LAB_KERNEL LAB_KERNEL
px_init
[ "$IX_REF" = nvmet ] && ix_cannot_run "no reference run: this test exercises nvmeof-target's DH-HMAC-CHAP"
command -v nvme > /dev/null || ix_cannot_run "nvme-cli (nvme gen-dhchap-key) missing on this machine"

NQN=nqn.2026-11.io.nvmeof:auth
HA=nqn.2014-08.org.nvmexpress:uuid:a0000000-0000-4000-8000-00000000000a
HIDA=a0000000-0000-4000-8000-00000000000a
HB=nqn.2014-08.org.nvmexpress:uuid:b0000000-0000-4000-8000-00000000000b
HIDB=b0000000-0000-4000-8000-00000000000b
gen() { nvme gen-dhchap-key "$@" 2> /dev/null | grep -m1 '^DHHC-1:'; }
KEYA=$(gen -l 32 -m 1 -n "$HA")
KEYB=$(gen -l 64 -m 3 -n "$HB")
CKEYB=$(gen -l 64 -m 3 -n "$NQN")
WRONGA=$(gen -l 32 -m 1 -n "$HA")
KEYA2=$(gen -l 48 -m 2 -n "$HA")
WRONGCB=$(gen -l 64 -m 3 -n "$NQN")
for k in "$KEYA" "$KEYA2" "$KEYB" "$CKEYB" "$WRONGA" "$WRONGCB"; do
	[ -n "$k" ] || ix_cannot_run "nvme gen-dhchap-key printed no DHHC-1 secret"
done
(umask 077 && echo "$KEYA" > "$IX_DIR/host-a.key")
cat > "$IX_DIR/keys.env" << EOF
HA=$HA
HIDA=$HIDA
KEYA='$KEYA'
KEYA2='$KEYA2'
HB=$HB
HIDB=$HIDB
KEYB='$KEYB'
CKEYB='$CKEYB'
WRONGA='$WRONGA'
WRONGCB='$WRONGCB'
EOF

PORT=$(ix_free_port) || exit 99
truncate -s "$IX_NSBYTES" "$IX_DIR/ns.img"
CONF=$IX_DIR/auth.json
(umask 077 && cat > "$CONF") << EOF
{
  "hosts": [
    {"nqn": "$HA", "dhchap": {"key_file": "$IX_DIR/host-a.key",
                              "hash": "hmac(sha256)", "dhgroup": "null"}},
    {"nqn": "$HB", "dhchap": {"key": "$KEYB", "ctrl_key": "$CKEYB",
                              "hash": "hmac(sha512)", "dhgroup": "ffdhe4096"}}
  ],
  "ports": [
    {"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
                           "trsvcid": "$PORT"},
     "advertise": "10.0.2.2", "subsystems": ["$NQN"]}
  ],
  "subsystems": [
    {"nqn": "$NQN", "attr": {"allow_any_host": "0"}, "allowed_hosts": ["$HA", "$HB"],
     "namespaces": [{"nsid": 1, "enable": 1, "device": {"path": "$IX_DIR/ns.img"}}]}
  ]
}
EOF
IX_TARGET_LOG=$IX_DIR/target.log
px_start target-start "$IX_TARGET_LOG" "$PORT" -c "$CONF" --discovery-port 0 \
	--log-level info || exit 1
IX_TARGET_PID=$PX_PID

t0=$SECONDS
px_guest_start "$top_srcdir/tests/interop/guest-auth-kernel-host.sh" 10.0.2.2 "$PORT" "$NQN"
if px_wait_guest a-connected 600; then
	# revocation: a new secret for host A in its key file, then SIGHUP
	nlines=$(wc -l < "$IX_TARGET_LOG")
	(umask 077 && echo "$KEYA2" > "$IX_DIR/host-a.key.new") && mv "$IX_DIR/host-a.key.new" "$IX_DIR/host-a.key"
	t0r=$(date +%s.%N)
	kill -HUP "$IX_TARGET_PID"
	gone=
	for _ in $(seq 100); do
		if tail -n +"$((nlines + 1))" "$IX_TARGET_LOG" | grep -q "(host $HA): disconnecting: host access revoked"; then
			gone=$(date +%s.%N)
			break
		fi
		sleep 0.05
	done
	if [ -n "$gone" ]; then
		ix_ok "target-rekey-revoked ($(awk -v a="$t0r" -v b="$gone" 'BEGIN { printf "%.2f", b - a }') s after SIGHUP)"
	else
		ix_not_ok target-rekey-revoked "no 'host access revoked' for host A within 5 s of SIGHUP"
	fi
	ix_expect_log target-rekey-logged 1 "host $HA: authentication keys changed" "the reload"
	px_tell_guest rekeyed
fi
px_guest_wait
ix_log "guest run: $((SECONDS - t0)) s"
px_guest_skipped
ix_guest_results

if kill -0 "$IX_TARGET_PID" 2> /dev/null; then
	ix_ok target-alive
else
	ix_not_ok target-alive "nvmeof-target exited during the run"
fi
# every queue of each good connection (admin + 2 I/O) authenticated, with what was asked
ix_expect_log target-auth-a 3 "host $HA authenticated \(DH-HMAC-CHAP sha256, null\)" \
	"admin and two I/O queues of host A"
ix_expect_log target-auth-b 3 \
	"host $HB authenticated \(DH-HMAC-CHAP sha512, ffdhe4096, bidirectional\)" \
	"admin and two I/O queues of host B, the controller authenticated too"
ix_expect_log target-wrong-secret 1 "host $HA: DH-HMAC-CHAP on qid 0 failed: authentication failed" \
	"the Failure1 reason for host A's wrong secret"
ix_expect_log target-host-refused 1 "host $HB: DH-HMAC-CHAP on qid 0: the host refused the controller" \
	"host B's AUTH_Failure2 for the wrong controller secret"
ix_expect_log target-required 1 "host $HA: DH-HMAC-CHAP required" "AUTHREQ on host A's queues"
leak=
for k in "$KEYA" "$KEYA2" "$KEYB" "$CKEYB" "$WRONGA" "$WRONGCB"; do
	b64=${k#DHHC-1:??:}
	b64=${b64%:}
	grep -qF -- "${b64:0:16}" "$IX_TARGET_LOG" && leak=1
done
if [ -z "$leak" ]; then
	ix_ok target-no-secrets-logged
else
	ix_not_ok target-no-secrets-logged "a secret appears in the target log"
fi
ix_stop_target
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok target-exit
else
	ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
fi
echo "--- target log (last 60 lines of $(wc -l < "$IX_TARGET_LOG")) ---"
tail -n 60 "$IX_TARGET_LOG" | sed 's/^/  target: /'
ix_finish

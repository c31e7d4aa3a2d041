#!/bin/bash
# auth-tcp.sh - DH-HMAC-CHAP on the target over real NVMe/TCP, with a raw host
# (auth_client) that authenticates from the specification:
#   - quick flags: --dhchap-key and --dhchap-ctrl-key HOST=/PATH (0600 files), --dhchap-hash,
#     --dhchap-dhgroup; the admin and an I/O queue authenticate (bidirectional, SHA-384,
#     ffdhe2048), commands before that fail with Authentication Required, the admin queue
#     re-authenticates; a wrong secret gets AUTH_Failure1 and the connection closes;
#   - --auth-timeout: a host that stops after Connect, or after the Challenge, is closed;
#   - a key file readable by others is refused at start with one line;
#   - a configuration file: host A's secret replaced in its key_file, SIGHUP: its
#     authenticated controller ends within a second, the new secret works;
#   - no secret ever appears in the target's log.
. "$(dirname "$0")/lib.sh"
it_init
AC=$top_builddir/tests/integration/auth_client
[ -x "$AC" ] || { echo "$AC missing (build first)" >&2; exit 99; }
NQN=nqn.2026-11.io.nvmeof:it-auth
H1=nqn.2014-08.org.nvmexpress:uuid:a1a1a1a1-0000-4000-8000-000000000001
H2=nqn.2014-08.org.nvmexpress:uuid:a1a1a1a1-0000-4000-8000-000000000002

# key LEN: a DHHC-1:00: secret of LEN random bytes (what nvme gen-dhchap-key prints)
key() {
	python3 -c 'import base64, os, struct, sys, zlib
k = os.urandom(int(sys.argv[1]))
print("DHHC-1:00:%s:" % base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode())' "$1"
}
K1=$(key 48)
CK1=$(key 48)
WRONG=$(key 48)
K1NEW=$(key 32)
(umask 077 && echo "$K1" > "$IT_DIR/h1.key" && echo "$CK1" > "$IT_DIR/h1-ctrl.key")
no_secret_logged() {   # no_secret_logged NAME: none of the secrets in the target log
	local k b64
	for k in "$K1" "$CK1" "$WRONG" "$K1NEW"; do
		b64=${k#DHHC-1:00:}
		if grep -qF -- "${b64:0:16}" "$IT_LOG"; then
			it_not_ok "$1" "a secret appears in the target log"
			return
		fi
	done
	it_ok "$1"
}

# 1. a key file others may read is refused, in one line
chmod 644 "$IT_DIR/h1.key"
out=$("$IT_TARGET_BIN" --listen tcp://127.0.0.1:0 --discovery-port 0 --ns ram:16M --nqn "$NQN" \
	--dhchap-key "$H1=$IT_DIR/h1.key" 2>&1)
rc=$?
if [ "$rc" != 0 ] && [ "$(grep -c . <<< "$out")" = 1 ] && grep -q "mode 0644" <<< "$out"; then
	it_ok "key file of mode 0644 refused: $out"
else
	it_not_ok key-file-mode "exit $rc, output: $(tr '\n' '|' <<< "$out")"
fi
chmod 600 "$IT_DIR/h1.key"

# 2. quick flags
it_start_target --ns ram:16M --nqn "$NQN" --dhchap-key "$H1=$IT_DIR/h1.key" \
	--dhchap-ctrl-key "$H1=$IT_DIR/h1-ctrl.key" --dhchap-hash 'hmac(sha384)' --dhchap-dhgroup ffdhe2048 \
	--allow-host "$H2" --auth-timeout 2 --log-level info || it_finish
P=$IT_PORT
if out=$("$AC" "$P" "$NQN" ok "$H1" "$K1" "$CK1" 2>&1); then
	it_ok "authenticated admin and I/O queue, I/O, re-authentication"
else
	it_not_ok auth-ok "$(tr '\n' '|' <<< "$out")"
fi
it_check "both queues authenticated with SHA-384, ffdhe2048, bidirectional" \
	test "$(grep -c "host $H1 authenticated (DH-HMAC-CHAP sha384, ffdhe2048, bidirectional)" "$IT_LOG")" -ge 3
if out=$("$AC" "$P" "$NQN" wrong "$H1" "$WRONG" 2>&1); then
	it_ok "wrong secret: AUTH_Failure1, $(grep closed <<< "$out")"
else
	it_not_ok auth-wrong "$(tr '\n' '|' <<< "$out")"
fi
it_check "the target logged the reason" grep -q "host $H1: DH-HMAC-CHAP on qid 0 failed: authentication failed" "$IT_LOG"
for s in stall stall-mid; do
	out=$("$AC" "$P" "$NQN" "$s" "$H1" 2>&1)
	t=$(sed -n 's/^closed \([0-9.]*\) s.*/\1/p' <<< "$out")
	if [ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t >= 1.0 && t < 5.0) }'; then
		it_ok "$s: closed $t s later (--auth-timeout 2)"
	else
		it_not_ok "$s" "$(tr '\n' '|' <<< "$out")"
	fi
done
it_check "the deadline is logged" grep -q "host $H1: DH-HMAC-CHAP on qid 0 not done within 2000 ms" "$IT_LOG"
# a host without settings on this subsystem is not asked to authenticate
if out=$("$IT_CLI" identify "nvme+tcp://127.0.0.1:$P/$NQN" --hostnqn "$H2" 2>&1); then
	it_ok "a host without a secret is not asked"
else
	it_not_ok no-auth-host "$(tr '\n' '|' <<< "$out")"
fi
no_secret_logged "no secret in the log (quick flags)"
it_stop_target

# 3. configuration file and SIGHUP: a new secret ends the host's controller
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$IT_DIR/auth.json" << JSON
{ "hosts": [ { "nqn": "$H1", "dhchap": { "key_file": "$IT_DIR/h1.key",
      "hash": "hmac(sha256)", "dhgroup": "null" } } ],
  "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
    "trsvcid": "$PORT", "treq": "not specified" }, "subsystems": [ "$NQN" ], "referrals": [] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ "$H1" ], "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] } ] }
JSON
IT_LOG=$IT_DIR/target-conf.log
"$IT_TARGET_BIN" -c "$IT_DIR/auth.json" --discovery-port 0 --log-level info > "$IT_LOG" 2>&1 &
IT_PID=$!
for _ in $(seq 200); do
	grep -q "listening on tcp://127.0.0.1:$PORT" "$IT_LOG" && break
	sleep 0.05
done
it_check "target started from a configuration file" grep -q "listening on tcp://127.0.0.1:$PORT" "$IT_LOG"
"$AC" "$PORT" "$NQN" hold "$H1" "$K1" > "$IT_DIR/hold.out" 2>&1 &
holder=$!
for _ in $(seq 100); do
	grep -q '^authenticated' "$IT_DIR/hold.out" && break
	sleep 0.05
done
if grep -q '^authenticated' "$IT_DIR/hold.out"; then
	(umask 077 && echo "$K1NEW" > "$IT_DIR/h1.key.new") && mv "$IT_DIR/h1.key.new" "$IT_DIR/h1.key"
	kill -HUP "$IT_PID"
	wait "$holder"
	t=$(sed -n 's/^closed \([0-9.]*\) s.*/\1/p' "$IT_DIR/hold.out")
	if [ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t < 1.5) }'; then
		it_ok "new secret by SIGHUP: the authenticated controller ended (connection closed $t s after authenticating, SIGHUP included)"
	else
		it_not_ok rekey "$(tr '\n' '|' < "$IT_DIR/hold.out")"
	fi
else
	kill "$holder" 2> /dev/null
	wait "$holder" 2> /dev/null
	it_not_ok rekey "the host did not authenticate: $(tr '\n' '|' < "$IT_DIR/hold.out")"
fi
it_check "the reload says why" grep -q "host $H1: authentication keys changed" "$IT_LOG"
if out=$("$AC" "$PORT" "$NQN" wrong "$H1" "$K1" 2>&1); then
	it_ok "the old secret is refused after the reload"
else
	it_not_ok old-secret "$(tr '\n' '|' <<< "$out")"
fi
if out=$("$AC" "$PORT" "$NQN" ok "$H1" "$K1NEW" 2>&1); then
	it_ok "the new secret works"
else
	it_not_ok new-secret "$(tr '\n' '|' <<< "$out")"
fi
no_secret_logged "no secret in the log (configuration file)"
it_stop_target
it_finish

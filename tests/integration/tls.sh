#!/bin/bash
# tls.sh - NVMe/TCP over TLS 1.3 with PSKs: our initiator against our target with PSK
# identities of version 0 and 1 and both cipher suites (a SHA-256 and a SHA-384 PSK made
# by `nvme gen-tls-key`, taken as it prints them), every byte checked, digests inside TLS;
# a plain host refused on a TLS-required port and served on a "not required" one; wrong,
# missing and foreign PSKs refused; TLS 1.2 refused and a TLS 1.3 PSK handshake by
# `openssl s_client` with an identity and key derived here, independently of the C code;
# a handshake that stops half way closed at the connect deadline; the discovery log's
# SECTYPE/TREQ (a host is shown only the ports it can use); a psk_file of mode 0644 refused with one line.
. "$(dirname "$0")/lib.sh"
it_init
IO=$top_builddir/tests/integration/initiator_io
NQN=nqn.2026-11.io.nvmeof:it-tls
H1=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-5555555555a1 # SHA-256 PSK
H2=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-5555555555a2 # SHA-384 PSK
H3=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-5555555555a3 # no PSK

nv_require nvme:nvme-cli openssl python3
gen() { nvme gen-tls-key --hmac="$1" | grep '^NVMeTLSkey-1:'; }
K256=$(gen 1)
K384=$(gen 2)
KWRONG=$(gen 1)
case "$K256$K384$KWRONG" in
*NVMeTLSkey-1:01:*NVMeTLSkey-1:02:*NVMeTLSkey-1:01:*) it_ok "nvme gen-tls-key made a SHA-256 and a SHA-384 PSK" ;;
*)
	it_not_ok gen-tls-key "nvme gen-tls-key did not print NVMeTLSkey-1:01/02 keys"
	it_finish
	;;
esac
umask 077
echo "$K256" > "$IT_DIR/h1.key"
echo "$K384" > "$IT_DIR/h2.key"
echo "$KWRONG" > "$IT_DIR/wrong.key"

conf() { # FILE H2-PSK-FILE
	cat > "$1" << JSON
{ "hosts": [ { "nqn": "$H1", "psk": "$K256" }, { "nqn": "$H2", "psk_file": "$2" },
             { "nqn": "$H3" } ],
  "limits": { "connect_timeout": 2 },
  "ports": [
    { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$PA", "treq": "required", "tsas": "tls1.3" }, "subsystems": [ "$NQN" ] },
    { "portid": 2, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$PB", "treq": "not required", "tsas": "tls1.3" }, "subsystems": [ "$NQN" ] },
    { "portid": 3, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$PC", "treq": "not specified" }, "subsystems": [ "$NQN" ] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ "$H1", "$H2", "$H3" ],
    "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:64M" } } ] } ] }
JSON
}

freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The configuration names its ports: pick free ones, again if another listener wins one.
for attempt in 1 2 3 4 5; do
	PA=$(freeport) PB=$(freeport) PC=$(freeport)
	conf "$IT_DIR/tls.json" h2.key # relative: next to the configuration file
	cp "$IT_DIR/h2.key" "$IT_DIR/h2.key.bak"
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/tls.json" --discovery-port 0 --log-level info \
		--no-control-socket > "$IT_LOG" 2>&1 &
	IT_PID=$!
	up=
	for _ in $(seq 200); do
		grep -q "listening on tcp://127.0.0.1:$PC" "$IT_LOG" && { up=1; break; }
		kill -0 "$IT_PID" 2> /dev/null || break
		sleep 0.05
	done
	[ -n "$up" ] && break
	kill -KILL "$IT_PID" 2> /dev/null
	wait "$IT_PID" 2> /dev/null
	IT_PID=
	grep -q 'Address already in use' "$IT_LOG" || break
done
if [ -z "$up" ]; then
	it_not_ok target-start "nvmeof-target -c did not start listening"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target started: TLS required on $PA, TLS optional on $PB, plain on $PC"
it_grep "TLS-required port announced" "$IT_LOG" "listening on tls://127.0.0.1:$PA"
URI_A="nvme+tcp://127.0.0.1:$PA/$NQN"
URI_B="nvme+tcp://127.0.0.1:$PB/$NQN"
URI_C="nvme+tcp://127.0.0.1:$PC/$NQN"

# io NAME HOST KEYFILE VERSION [ARGS...]: initiator_io with every byte checked
io() {
	local name=$1 host=$2 key=$3 ver=$4
	shift 4
	if "$IO" "$URI_A" --queues 2 --qd 16 --seconds 0.5 --hostnqn "$host" \
		--tls-key-file "$key" --tls-identity "$ver" "$@" > "$IT_DIR/io.log" 2>&1; then
		it_ok "$name: $(grep -c '^ok' "$IT_DIR/io.log") checks passed"
	else
		it_not_ok "$name" "initiator_io failed:"
		grep -v '^ok' "$IT_DIR/io.log" | sed 's/^/#   /' | head -n 20
	fi
}
# the handshake the target logged last for HOST
last_hs() { grep "handshake done: .*host $1," "$IT_LOG" | tail -n 1; }

io "SHA-256 PSK, identity v1, data verified" "$H1" "$IT_DIR/h1.key" 1
it_grep "v1 handshake used TLS_AES_128_GCM_SHA256" <(last_hs "$H1") \
	'TLS_AES_128_GCM_SHA256, .*PSK identity v1'
io "SHA-256 PSK, identity v0, data verified" "$H1" "$IT_DIR/h1.key" 0
it_grep "v0 handshake used TLS_AES_128_GCM_SHA256" <(last_hs "$H1") \
	'TLS_AES_128_GCM_SHA256, .*PSK identity v0'
io "SHA-384 PSK from psk_file, identity v1, data verified" "$H2" "$IT_DIR/h2.key" 1
it_grep "SHA-384 v1 handshake used TLS_AES_256_GCM_SHA384" <(last_hs "$H2") \
	'TLS_AES_256_GCM_SHA384, .*PSK identity v1'
io "SHA-384 PSK, identity v0, data verified" "$H2" "$IT_DIR/h2.key" 0
it_grep "SHA-384 v0 handshake used TLS_AES_256_GCM_SHA384" <(last_hs "$H2") \
	'TLS_AES_256_GCM_SHA384, .*PSK identity v0'
io "header and data digests inside TLS" "$H1" "$IT_DIR/h1.key" 1 --digests
it_grep "digests negotiated over TLS" "$IT_LOG" \
	'ICReq .*digests header data over TLS 1.3'

# The CLI: discovery through TLS (the identity names the discovery NQN) and a read.
it_cli "discover over TLS" 0 discover "nvme+tcp://127.0.0.1:$PA" --hostnqn "$H1" \
	--tls-key "$K256" -o json
it_grep "discovery log: the TLS-required port says tls1.3, required" "$IT_OUT" \
	"\"treq\": \"required[^\"]*\", \"portid\": 1, \"trsvcid\": \"$PA\".*\"sectype\": \"tls1.3\""
it_grep "discovery log: the optional port says tls1.3, not required" "$IT_OUT" \
	"\"treq\": \"not required[^\"]*\", \"portid\": 2, \"trsvcid\": \"$PB\".*\"sectype\": \"tls1.3\""
if grep -q "\"portid\": 3," "$IT_OUT"; then
	it_not_ok disc-plain-hidden "the PSK host was shown the plain port it may not use"
else
	it_ok "discovery log: no plain port for a host with a PSK"
fi
it_cli "plain discovery by a host without a PSK" 0 discover "nvme+tcp://127.0.0.1:$PC" \
	--hostnqn "$H3" -o json
it_grep "discovery log: the plain port says none" "$IT_OUT" \
	"\"portid\": 3, \"trsvcid\": \"$PC\".*\"sectype\": \"none\""
it_cli "read over TLS with --tls --tls_key" 0 read "$URI_A/1" --lba 0 --blocks 8 \
	-d "$IT_DIR/blk" --hostnqn "$H1" --tls --tls_key "$K256"

# Refusals, each explained in one line.
it_cli "plain host refused on the TLS-required port" 3 identify "$URI_A" --hostnqn "$H1"
it_grep "the refusal says why" "$IT_ERR" 'rejected ICReq.*require TLS'
it_grep "the target logged the plain ICReq" "$IT_LOG" \
	'plain NVMe/TCP on a port that requires TLS: refused'
it_cli "plain host served where TLS is not required" 0 identify "$URI_B" --hostnqn "$H3"
it_cli "TLS host served where TLS is not required" 0 identify "$URI_B" --hostnqn "$H2" \
	--tls-key-file "$IT_DIR/h2.key"
it_cli "plain port unchanged" 0 identify "$URI_C" --hostnqn "$H3"
it_cli "wrong PSK refused (identity v1)" 3 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/wrong.key"
it_grep "the target saw the digest of another key" "$IT_LOG" "host $H1: PSK digest differs"
it_cli "wrong PSK refused (identity v0)" 3 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/wrong.key" --tls-identity 0
it_grep "the v0 handshake failed on the key" "$IT_LOG" "host $H1: wrong PSK"
it_grep "the host was told the handshake failed" "$IT_ERR" 'TLS handshake .* failed'
it_cli "host without a PSK refused" 3 identify "$URI_A" --hostnqn "$H3" \
	--tls-key-file "$IT_DIR/h1.key"
it_grep "the target has no PSK for it" "$IT_LOG" "no TLS PSK configured for host $H3"
it_cli "SHA-384 key offered for a SHA-256 host refused" 3 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/h2.key"
chmod 644 "$IT_DIR/wrong.key"
it_cli "client key file of mode 0644 refused" 2 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/wrong.key" || :
grep -q 'must be 0600' "$IT_ERR" && it_ok "the client names the mode" ||
	it_not_ok client-key-mode "$(cat "$IT_ERR")"

# openssl s_client: TLS 1.2 is refused; TLS 1.3 with the PSK identity (v0) and the TLS PSK
# derived here in Python, offering every default suite (the target picks by <hh>).
if timeout 10 openssl s_client -connect "127.0.0.1:$PA" -tls1_2 < /dev/null \
	> "$IT_DIR/s12.log" 2>&1; then
	it_not_ok tls12-refused "openssl s_client -tls1_2 completed a handshake"
else
	it_grep "TLS 1.2 refused" "$IT_DIR/s12.log" 'alert protocol version|no protocols|wrong version|unsupported protocol'
fi
psk_hex=$(python3 - "$K256" "$H1" "$NQN" << 'PY'
import base64, hashlib, hmac, sys
key, hostnqn, subnqn = sys.argv[1:4]
hh = int(key.split(':')[1])
raw = base64.b64decode(key.split(':')[2])[:-4]          # strip the CRC-32
h = hashlib.sha256 if hh == 1 else hashlib.sha384
def extract(ikm): return hmac.new(b'\0' * h().digest_size, ikm, h).digest()
def expand_label(prk, label, ctx, n):
    lab = b'tls13 ' + label
    info = n.to_bytes(2, 'big') + bytes([len(lab)]) + lab + bytes([len(ctx)]) + ctx
    out, t, i = b'', b'', 1
    while len(out) < n:
        t = hmac.new(prk, t + info + bytes([i]), h).digest()
        out += t
        i += 1
    return out[:n]
retained = expand_label(extract(raw), b'HostNQN', hostnqn.encode(), len(raw))
identity = 'NVMe0R%02d %s %s' % (hh, hostnqn, subnqn)
print(expand_label(extract(retained), b'nvme-tls-psk', identity.encode(),
                   h().digest_size).hex())
PY
)
timeout 10 openssl s_client -connect "127.0.0.1:$PA" -tls1_3 -psk "$psk_hex" \
	-psk_identity "NVMe0R01 $H1 $NQN" < /dev/null > "$IT_DIR/s13.log" 2>&1
it_grep "openssl s_client: TLS 1.3 with the PSK" "$IT_DIR/s13.log" 'TLSv1\.3'
it_grep "openssl s_client: the suite of the identity's hash" "$IT_DIR/s13.log" \
	'TLS_AES_128_GCM_SHA256'
timeout 10 openssl s_client -connect "127.0.0.1:$PA" -tls1_3 -psk 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff \
	-psk_identity "NVMe0R01 $H1 $NQN" < /dev/null > "$IT_DIR/s13b.log" 2>&1
if grep -q 'Cipher is TLS_AES' "$IT_DIR/s13b.log" && ! grep -q 'Cipher is (NONE)' "$IT_DIR/s13b.log"; then
	it_not_ok s_client-wrong-psk "openssl s_client with a made-up PSK got a session"
else
	it_ok "openssl s_client with a made-up PSK gets no session"
fi

# A handshake that stops half way: a ClientHello record header and nothing more is closed
# at the connect deadline (2 s here), and real hosts still connect meanwhile.
t=$(python3 - "$PA" << 'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(bytes([0x16, 0x03, 0x01, 0x00, 0x80]) + b'\x01\x00\x00\x7c')
t0 = time.time()
s.settimeout(10)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print("%.1f" % (time.time() - t0))
PY
)
if awk -v t="$t" 'BEGIN { exit !(t >= 1.5 && t < 5) }'; then
	it_ok "a stalled handshake was closed after $t s"
else
	it_not_ok stalled-handshake "closed after $t s, expected about 2"
fi
it_grep "the target says why" "$IT_LOG" 'TLS handshake not finished in time'
io "a TLS host still connects afterwards" "$H1" "$IT_DIR/h1.key" 1

# A reload that gives H1 another key: its live controller ends (it proved the old key),
# new handshakes use the new key, the old key is refused.
mkfifo "$IT_DIR/hold"
("$IT_CLI" write "$URI_A/1" --lba 64 --blocks 8 --hostnqn "$H1" --tls-key-file "$IT_DIR/h1.key" \
	< "$IT_DIR/hold" > /dev/null 2> "$IT_DIR/hold.err"; echo $? > "$IT_DIR/hold.rc") &
HOLD_PID=$!
exec 7> "$IT_DIR/hold"
for _ in $(seq 100); do grep -q "host $H1.*TLS\|TLS.*$H1" "$IT_LOG" && break; sleep 0.05; done
sleep 0.5
sed -i "s|\"psk\": \"$K256\"|\"psk\": \"$KWRONG\"|" "$IT_DIR/tls.json"
chmod 600 "$IT_DIR/wrong.key"
kill -HUP "$IT_PID"
for _ in $(seq 100); do grep -q 'reloaded' "$IT_LOG" && break; sleep 0.05; done
it_grep "configuration reloaded" "$IT_LOG" 'reloaded'
it_grep "the rekeyed host's live controller ended" "$IT_LOG" "host $H1: TLS PSK changed: 1 controller ended"
head -c 4096 /dev/zero >&7 2> /dev/null
exec 7>&-
wait "$HOLD_PID"
it_check "its held write failed (status $(cat "$IT_DIR/hold.rc"))" [ "$(cat "$IT_DIR/hold.rc")" != 0 ]
it_cli "after the reload H1's old key is refused" 3 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/h1.key"
it_cli "and its new key accepted" 0 identify "$URI_A" --hostnqn "$H1" \
	--tls-key-file "$IT_DIR/wrong.key"
! grep -qF -e "$K256" -e "$K384" -e "$KWRONG" "$IT_LOG" && it_ok "no key in the target log" ||
	it_not_ok key-in-log "a PSK appears in the target log"
it_stop_target

# A psk_file that others may read stops the start with one line naming file, key and mode.
chmod 644 "$IT_DIR/h2.key"
"$IT_TARGET_BIN" -c "$IT_DIR/tls.json" --discovery-port 0 --no-control-socket \
	> "$IT_DIR/bad.log" 2>&1 &
pid=$!
for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2> /dev/null; then
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null
	it_not_ok psk-file-mode "the target started with a psk_file of mode 0644"
else
	wait "$pid"
	rc=$?
	lines=$(grep -c . "$IT_DIR/bad.log")
	if [ "$rc" != 0 ] && [ "$lines" = 1 ] &&
		grep -qE 'tls\.json: hosts\[1\]\.psk_file: .*h2\.key.*mode 0644, must be 0600' "$IT_DIR/bad.log"; then
		it_ok "psk_file of mode 0644 refused: $(cat "$IT_DIR/bad.log")"
	else
		it_not_ok psk-file-mode "exit $rc, $lines lines:"
		sed 's/^/#   /' "$IT_DIR/bad.log"
	fi
fi
it_finish

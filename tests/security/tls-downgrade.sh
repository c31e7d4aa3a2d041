#!/bin/bash
# tls-downgrade.sh - a TLS port is not a plain one. Ports with "tsas": "tls1.3" and no
# "treq", with "not specified" (as the example configurations write) and with "not
# required", and a plain port; a host with a PSK (H1) and one without (H3). A plain ICReq
# and Connect as H1 (whose PSK the attacker does not have) must read nothing anywhere; a
# plain host is served only where the operator said "not required" or on the plain port;
# the refusal of H1 is logged with its reason; the port that serves plain hosts is warned
# about at start; the discovery log's TREQ says what each port enforces and lists only
# ports the asking host can use.
. "$(dirname "$0")/../integration/lib.sh"
it_init
RAW=$top_builddir/tests/integration/tcp_raw_client
NQN=nqn.2026-11.io.nvmeof:sec-tls
H1=nqn.2014-08.org.nvmexpress:uuid:5ec00000-0000-4000-8000-0000000000a1 # has a PSK
H3=nqn.2014-08.org.nvmexpress:uuid:5ec00000-0000-4000-8000-0000000000a3 # has none

for t in python3 "$RAW"; do
	if ! command -v "$t" > /dev/null; then
		echo "# $t is missing"
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
done
# A TLS PSK in interchange format (SHA-256, CRC-32 appended), made here.
K1=$(python3 -c 'import base64, os, struct, zlib
k = os.urandom(32)
print("NVMeTLSkey-1:01:%s:" % base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode())')
umask 077
echo "$K1" > "$IT_DIR/h1.key"

freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
conf() {
	cat > "$IT_DIR/tls.json" << JSON
{ "hosts": [ { "nqn": "$H1", "psk": "$K1" }, { "nqn": "$H3" } ],
  "ports": [
    { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P1", "tsas": "tls1.3" }, "subsystems": [ "$NQN" ] },
    { "portid": 2, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P2", "treq": "not specified", "tsas": "tls1.3" }, "subsystems": [ "$NQN" ] },
    { "portid": 3, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P3", "treq": "not required", "tsas": "tls1.3" }, "subsystems": [ "$NQN" ] },
    { "portid": 4, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P4" }, "subsystems": [ "$NQN" ] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ "$H1", "$H3" ],
    "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] } ] }
JSON
}
for attempt in 1 2 3 4 5; do
	P1=$(freeport) P2=$(freeport) P3=$(freeport) P4=$(freeport)
	conf
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/tls.json" --discovery-port 0 --log-level info \
		--no-control-socket > "$IT_LOG" 2>&1 &
	IT_PID=$!
	up=
	for _ in $(seq 200); do
		grep -q "listening on tcp://127.0.0.1:$P4" "$IT_LOG" && { up=1; break; }
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
it_ok "target started: TLS ports $P1 (no treq), $P2 (not specified), $P3 (not required), plain $P4"

# plain NAME PORT HOST WANT: a plain ICReq, Connect and 4 KiB Read; WANT ok or refused
plain() {
	local out rc
	out=$(TCP_RAW_HOSTNQN=$3 timeout 20 "$RAW" "$2" "$NQN" read 2>&1)
	rc=$?
	if [ "$4" = ok ] && [ "$rc" = 0 ]; then
		it_ok "$1: $(echo "$out" | grep '^read')"
	elif [ "$4" = refused ] && [ "$rc" != 0 ] && ! echo "$out" | grep -q '^read '; then
		it_ok "$1: refused ($(echo "$out" | grep -m1 FAIL | sed 's/.*: //'))"
	else
		it_not_ok "$1" "expected $4, exit $rc:"
		echo "$out" | sed 's/^/#   /' | head -n 5
	fi
}
plain "TLS port without treq: plain read as the PSK host" "$P1" "$H1" refused
plain "TLS port without treq: plain read as a host without a PSK" "$P1" "$H3" refused
plain "TLS port, treq not specified: plain read as the PSK host" "$P2" "$H1" refused
plain "TLS port, treq not specified: plain read as a host without a PSK" "$P2" "$H3" refused
plain "TLS port, treq not required: plain read as the PSK host" "$P3" "$H1" refused
plain "TLS port, treq not required: plain host served" "$P3" "$H3" ok
plain "plain port: plain read as the PSK host" "$P4" "$H1" refused
plain "plain port: plain host served" "$P4" "$H3" ok
it_grep "the PSK host's plain Connect is logged with its reason" "$IT_LOG" \
	"Connect as $H1 to $NQN over plain NVMe/TCP refused: the host has a TLS PSK"
it_grep "TLS-required ports refuse the plain ICReq" "$IT_LOG" \
	'plain NVMe/TCP on a port that requires TLS: refused'
it_grep "the optional-TLS port is warned about at start" "$IT_LOG" \
	"port 3: 127.0.0.1:$P3: TLS 1.3 is \"not required\""
it_grep "ports 1 and 2 announced as requiring TLS" "$IT_LOG" \
	"port 2: listening on tcp 127.0.0.1:$P2 \(TLS 1.3 required\)"

# The discovery log: TREQ as enforced; only ports the asking host can use.
if "$IT_CLI" discover "nvme+tcp://127.0.0.1:$P1" --hostnqn "$H1" --tls-key "$K1" -o json \
	> "$IT_DIR/d1.json" 2> "$IT_DIR/d1.err"; then
	it_ok "discovery over TLS as the PSK host"
else
	it_not_ok disc-tls "nvmeof discover failed: $(cat "$IT_DIR/d1.err")"
fi
if "$IT_CLI" discover "nvme+tcp://127.0.0.1:$P4" --hostnqn "$H3" -o json \
	> "$IT_DIR/d3.json" 2> "$IT_DIR/d3.err"; then
	it_ok "plain discovery as the host without a PSK"
else
	it_not_ok disc-plain "nvmeof discover failed: $(cat "$IT_DIR/d3.err")"
fi
check_disc() { # NAME FILE PYTHON-EXPR over r (the records by (portid, subtype))
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = {(e["portid"], e["subtype"]): e for e in d["records"]}
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2> "$IT_DIR/py.err"; then
		it_ok "$1"
	else
		it_not_ok "$1" "$3 is false in:"
		sed 's/^/#   /' "$2" | head -n 20
		sed 's/^/#   /' "$IT_DIR/py.err" | head -n 3
	fi
}
NVME='"nvme subsystem"'
check_disc "TREQ of the TLS port without treq: required" "$IT_DIR/d1.json" \
	"r[(1, $NVME)][\"treq\"].startswith(\"required\")"
check_disc "TREQ of the \"not specified\" TLS port: required" "$IT_DIR/d1.json" \
	"r[(2, $NVME)][\"treq\"].startswith(\"required\")"
check_disc "TREQ of the \"not required\" TLS port: not required" "$IT_DIR/d1.json" \
	"r[(3, $NVME)][\"treq\"].startswith(\"not required\")"
check_disc "the PSK host is not shown the plain port" "$IT_DIR/d1.json" \
	"not any(p == 4 for p, s in r)"
check_disc "the host without a PSK is not shown the TLS-required ports" "$IT_DIR/d3.json" \
	"not any(p in (1, 2) for p, s in r) and (3, $NVME) in r and (4, $NVME) in r"
it_stop_target
it_finish

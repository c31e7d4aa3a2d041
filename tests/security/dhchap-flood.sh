#!/bin/bash
# dhchap-flood.sh - hosts without the secret flood DH-HMAC-CHAP's Diffie-Hellman work:
#   200 processes (auth_client flood) claim an allowed host NQN that has a secret and no
#   pinned DH group, from 127.0.0.2 ... 127.0.0.5, offer ffdhe8192 only, and answer each
#   Challenge with a valid DH value and a random response, on new connections for 12 s.
# Meanwhile:
#   - a host with the right secret (ffdhe2048) authenticates three new admin queues, the
#     middle one of their times within 1 s;
#   - a queue authenticated before the flood re-authenticates (3 times) within 1 s;
#   - the target refused work at its pending limits (stats: auth.refused_*) instead of
#     queueing it, and served the re-authentications in their own lane;
#   - afterwards the host still authenticates, and the target exits cleanly.
# Also prints what one Reply costs in DH work per group (dh_derive_cost).
. "$(dirname "$0")/../integration/lib.sh"
it_init
AC=$top_builddir/tests/integration/auth_client
COST=$top_builddir/tests/security/dh_derive_cost
for p in "$AC" "$COST"; do
	if [ ! -x "$p" ]; then
		echo "$(basename "$p") missing: $p" >&2
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
done
NQN=nqn.2026-11.io.nvmeof:sec-dhchap-flood
H1=nqn.2014-08.org.nvmexpress:uuid:d1d1d1d1-0000-4000-8000-000000000001
H2=nqn.2014-08.org.nvmexpress:uuid:d1d1d1d1-0000-4000-8000-000000000002
ATTACKERS=200
FLOOD_SECS=12

key() {
	python3 -c 'import base64, os, struct, zlib
k = os.urandom(32)
print("DHHC-1:00:%s:" % base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode())'
}
K1=$(key)
(umask 077 && echo "$K1" > "$IT_DIR/h1.key" && key > "$IT_DIR/h2.key")

"$COST" 5 | sed 's/^/# DH work: /'

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SOCK=$IT_DIR/stats.sock
cat > "$IT_DIR/flood.json" << JSON
{ "hosts": [ { "nqn": "$H1", "dhchap": { "key_file": "$IT_DIR/h1.key", "hash": "hmac(sha256)",
               "dhgroup": "ffdhe2048" } },
             { "nqn": "$H2", "dhchap": { "key_file": "$IT_DIR/h2.key" } } ],
  "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
    "trsvcid": "$PORT", "treq": "not specified" }, "subsystems": [ "$NQN" ], "referrals": [] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ "$H1", "$H2" ],
    "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] } ] }
JSON
IT_LOG=$IT_DIR/target.log
"$IT_TARGET_BIN" -c "$IT_DIR/flood.json" --discovery-port 0 --stats-socket "$SOCK" \
	--log-level info > "$IT_LOG" 2>&1 &
IT_PID=$!
for _ in $(seq 200); do
	grep -q "listening on tcp://127.0.0.1:$PORT" "$IT_LOG" && break
	sleep 0.05
done
if ! grep -q "listening on tcp://127.0.0.1:$PORT" "$IT_LOG"; then
	it_not_ok target-start "$(tail -n 5 "$IT_LOG" | tr '\n' '|')"
	it_finish
fi

stats() {   # stats KEY...: the sum of auth.KEY... in a snapshot ("none" without)
	python3 "$(dirname "$0")/../stats-snapshot.py" "$SOCK" | python3 -c 'import json, sys
a = json.loads(sys.stdin.read() or "{}").get("auth")
print(sum(a[k] for k in sys.argv[1:]) if a else "none")' "$@"
}

# a queue authenticated before the flood; it re-authenticates 6 s later, mid-flood
"$AC" "$PORT" "$NQN" timed "$H1" "$K1" 6 > "$IT_DIR/live.out" 2>&1 &
live=$!
for _ in $(seq 100); do
	grep -q '^authenticated' "$IT_DIR/live.out" && break
	sleep 0.05
done
it_check "a queue authenticated before the flood: $(head -n 1 "$IT_DIR/live.out")" \
	grep -q '^authenticated' "$IT_DIR/live.out"

it_log "flood: $ATTACKERS hosts without the secret for $FLOOD_SECS s, ffdhe8192"
# niced: the attackers stand for other machines; it is the target's CPU that is contended
nice -n 19 "$AC" "$PORT" "$NQN" flood "$H2" "$ATTACKERS" "$FLOOD_SECS" 4 > "$IT_DIR/flood.out" 2>&1 &
flood=$!
sleep 3
# Three new queues: each must authenticate, the middle one of their times within 1 s (on a
# shared test machine one may lose its CPU for a while; the old code made every one of
# them miss the 5 s deadline).
times=()
for i in 1 2 3; do
	out=$(timeout 20 "$AC" "$PORT" "$NQN" timed "$H1" "$K1" 2>&1)
	t=$(sed -n 's/^authenticated in \([0-9.]*\) s.*/\1/p' <<< "$out")
	if [ -n "$t" ]; then
		times+=("$t")
		it_ok "under the flood, the host with the secret $(grep '^authenticated' <<< "$out"), ffdhe2048"
	else
		it_not_ok "auth-under-flood-$i" "$(tr '\n' '|' <<< "$out")"
	fi
	sleep 0.5
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
if [ -n "$median" ] && awk -v t="$median" 'BEGIN { exit !(t < 1.0) }'; then
	it_ok "under the flood, a new queue authenticates in $median s (median of ${times[*]})"
else
	it_not_ok auth-under-flood "median ${median:-none} s of ${times[*]:-nothing}, not within 1 s"
fi
wait "$live"
rc=$?
t=$(sed -n 's/^re-authenticated in \([0-9.]*\) s/\1/p' "$IT_DIR/live.out")
if [ "$rc" = 0 ] && [ -n "$t" ] && awk -v t="$t" 'BEGIN { exit !(t < 1.0) }'; then
	it_ok "under the flood, the live queue re-authenticated 3 times, the slowest in $t s"
else
	it_not_ok reauth-under-flood "exit $rc: $(tr '\n' '|' < "$IT_DIR/live.out")"
fi
prio=$(stats queued_priority)
refused=$(stats refused_total refused_host refused_addr)
wait "$flood"
sed 's/^/# /' "$IT_DIR/flood.out"
it_check "the flood ran its course" grep -q '^flood: .* exchanges' "$IT_DIR/flood.out"
it_log "auth stats: queued $(stats queued), re-authentication lane $prio, refused $refused" \
	"(total $(stats refused_total), host $(stats refused_host), address $(stats refused_addr))," \
	"done $(stats done), run $(stats run_ns) ns, longest wait $(stats wait_max_ns) ns"
at_least() { [ "$1" != none ] && [ "$1" -ge "$2" ]; }
it_check "work past the pending limits was refused (stats auth.refused_*: $refused)" \
	at_least "$refused" 1
it_check "re-authentications took their own lane (stats auth.queued_priority: $prio)" \
	at_least "$prio" 3
it_check "the refusal is logged" grep -q "DH-HMAC-CHAP on qid 0 refused: authentication work pending" "$IT_LOG"
if out=$("$AC" "$PORT" "$NQN" ok "$H1" "$K1" 2>&1); then
	it_ok "after the flood: authentication, I/O and re-authentication"
else
	it_not_ok after-flood "$(tr '\n' '|' <<< "$out")"
fi
it_stop_target
it_finish

#!/bin/bash
# revoke.sh - revocation bites: a host connected and doing I/O is removed from a
# subsystem's allowed hosts by SIGHUP and loses its controller within a second (not only
# its next Connect); another allowed host keeps working, and the removed one cannot
# connect again. Then a DH-HMAC-CHAP key given to that other host by SIGHUP ends its
# live controller too (it connected without the key).
. "$(dirname "$0")/lib.sh"
it_init
IO=$top_builddir/tests/integration/initiator_io
NQN=nqn.2026-11.io.nvmeof:it-revoke
H1=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555501
H2=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555502

conf() { # ALLOWED-HOST...
	local hosts="" h h2key=""
	for h in "$@"; do hosts="$hosts${hosts:+, }\"$h\""; done
	[ -n "${H2_DHCHAP:-}" ] && h2key=", \"dhchap\": { \"key\": \"$H2_DHCHAP\" }"
	# every host stays defined; only the subsystem's allowed list (and H2's key) changes
	cat > "$IT_DIR/revoke.json" << JSON
{ "hosts": [ { "nqn": "$H1" }, { "nqn": "$H2"$h2key } ],
  "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
    "trsvcid": "$PORT", "treq": "not specified" }, "subsystems": [ "$NQN" ], "referrals": [] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ $hosts ],
    "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:64M" } } ] } ] }
JSON
}

# a configuration file names its port: pick a free one, again if another listener wins it
for attempt in 1 2 3 4 5; do
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	conf "$H1" "$H2"
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/revoke.json" --discovery-port 0 --log-level info > "$IT_LOG" 2>&1 &
	IT_PID=$!
	up=
	for _ in $(seq 200); do
		grep -q "listening on tcp://127.0.0.1:$PORT" "$IT_LOG" && { up=1; break; }
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
it_ok "target started from a configuration file, port $PORT"
URI="nvme+tcp://127.0.0.1:$PORT/$NQN"

# H1 runs I/O long enough to be revoked in the middle of it (and does not try to
# reconnect, so that its I/O fails instead of being held); H2 stays allowed.
"$IO" "$URI" --queues 2 --qd 16 --seconds 30 --hostnqn "$H1" --ctrl-loss-tmo 0 \
	> "$IT_DIR/h1.log" 2>&1 &
h1=$!
for _ in $(seq 100); do
	grep -q 'connect .*with 2 I/O queues' "$IT_DIR/h1.log" && break
	sleep 0.1
done
sleep 1
conf "$H2"
t0=$(date +%s.%N)
kill -HUP "$IT_PID"
gone=
for _ in $(seq 200); do
	if grep -q "host $H1).*host access revoked" "$IT_LOG"; then
		gone=$(date +%s.%N)
		break
	fi
	sleep 0.02
done
if [ -n "$gone" ] && awk -v a="$t0" -v b="$gone" 'BEGIN { exit !(b - a < 1.0) }'; then
	it_ok "H1's controller ended $(awk -v a="$t0" -v b="$gone" 'BEGIN { printf "%.2f", b - a }') s after the reload"
else
	it_not_ok revoke-in-time "no 'host access revoked' for H1 within 1 s of SIGHUP"
fi
# its I/O stops: initiator_io sees its commands fail and exits with an error
for _ in $(seq 150); do kill -0 "$h1" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$h1" 2> /dev/null; then
	it_not_ok h1-io-stopped "H1 still running 15 s after the revocation"
	kill -KILL "$h1"
	wait "$h1" 2> /dev/null
else
	wait "$h1"
	rc=$?
	[ "$rc" != 0 ] && it_ok "H1's I/O failed after the revocation (exit $rc)" ||
		it_not_ok h1-io-stopped "H1's I/O ran to the end"
fi
if "$IO" "$URI" --queues 1 --qd 8 --seconds 1 --hostnqn "$H1" > "$IT_DIR/h1b.log" 2>&1; then
	it_not_ok h1-refused "H1 connected again after its removal"
else
	it_ok "H1 refused at its next Connect"
fi
if "$IO" "$URI" --queues 1 --qd 8 --seconds 1 --hostnqn "$H2" > "$IT_DIR/h2.log" 2>&1; then
	it_ok "H2, still allowed, does I/O"
else
	it_not_ok h2-works "initiator_io for H2 failed:"
	sed 's/^/#   /' "$IT_DIR/h2.log" | grep -v '^#   ok ' || :
fi

# H2 connected without a key; a key configured for it on reload ends its controller
"$IO" "$URI" --queues 1 --qd 8 --seconds 30 --hostnqn "$H2" --ctrl-loss-tmo 0 \
	> "$IT_DIR/h2b.log" 2>&1 &
h2=$!
for _ in $(seq 100); do
	grep -q 'connect .*with 1 I/O queue' "$IT_DIR/h2b.log" && break
	sleep 0.1
done
sleep 1
H2_DHCHAP="DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2Nzg=:" conf "$H2"
t0=$(date +%s.%N)
kill -HUP "$IT_PID"
gone=
for _ in $(seq 200); do
	if grep -q "host $H2: authentication keys changed" "$IT_LOG"; then
		gone=$(date +%s.%N)
		break
	fi
	sleep 0.02
done
if [ -n "$gone" ] && awk -v a="$t0" -v b="$gone" 'BEGIN { exit !(b - a < 1.0) }'; then
	it_ok "H2's controller ended $(awk -v a="$t0" -v b="$gone" 'BEGIN { printf "%.2f", b - a }') s after its key changed"
else
	it_not_ok rekey-in-time "no 'authentication keys changed' for H2 within 1 s of SIGHUP"
fi
for _ in $(seq 150); do kill -0 "$h2" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$h2" 2> /dev/null; then
	it_not_ok h2-io-stopped "H2 still running 15 s after its key changed"
	kill -KILL "$h2"
	wait "$h2" 2> /dev/null
else
	wait "$h2"
	rc=$?
	[ "$rc" != 0 ] && it_ok "H2's I/O failed after its key changed (exit $rc)" ||
		it_not_ok h2-io-stopped "H2's I/O ran to the end"
fi
it_stop_target
it_finish

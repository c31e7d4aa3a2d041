#!/bin/bash
# iscsi-security.sh - iSCSI authentication, login deadlines and revocation, and secrets
# that stay secret. One daemon from a configuration file (CHAP with mutual CHAP and an
# initiator list on one target, CHAP on another, CHAP on discovery sessions with the
# secret in a file of mode 0600, a DH-HMAC-CHAP key for an NVMe host, login_timeout 2 s,
# max_connections 8), at --log-level debug:
#   - CHAP with each digest list open-iscsi may offer: the strongest both allow is chosen,
#     MD5 alone is refused (not in the default chap_algs), a wrong secret is refused with
#     status 0201, mutual CHAP proves the target, a reflected challenge is refused, an
#     initiator not listed gets 0202, discovery needs CHAP; libnvmeof (the nvmeof CLI)
#     logs in with CHAP and is refused with a wrong secret;
#   - 1,000 sockets that never send a Login and a CHAP exchange that stops after the
#     challenge, while a real login and the CLI still succeed; all are closed at the
#     2 s deadline;
#   - SIGHUP removing an initiator from the list and changing another target's secret
#     ends both live sessions within a second (an Async Message first), and their next
#     logins are refused;
#   - no secret in the log, the statistics socket's JSON or save_config's reply; the file
#     nvmeof-ctl save writes is mode 0600.
. "$(dirname "$0")/lib.sh"
it_init
CLIENT=$top_builddir/tests/integration/iscsi_chap_client
RW=$top_builddir/tests/integration/iscsi_init_rw
CTL=$top_builddir/target/nvmeof-ctl
NQN=nqn.2026-11.io.nvmeof:it-sec
T1=iqn.2026-11.io.nvmeof:sec-acl
T2=iqn.2026-11.io.nvmeof:sec-chap
I1=iqn.2026-11.io.nvmeof:sec-i1
I2=iqn.2026-11.io.nvmeof:sec-i2
I3=iqn.2026-11.io.nvmeof:sec-i3
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5ec00000-0000-4000-8000-000000000001
CLI_INAME=iqn.2014-08.org.nvmexpress:uuid:5ec00000-0000-4000-8000-000000000001
# secrets: random, so that a hit in the log cannot be a coincidence
S1=s1-$RANDOM$RANDOM-initiator
M1=m1-$RANDOM$RANDOM-target
S2=s2-$RANDOM$RANDOM-initiator
S2B=s2b-$RANDOM$RANDOM-initiator
D1=d1-$RANDOM$RANDOM-discovery
DHKEY=DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:
DHB64=c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2Nzg

ulimit -n 4096 2> /dev/null || :
umask 077
printf '%s\n' "$D1" > "$IT_DIR/disc.secret"
chmod 600 "$IT_DIR/disc.secret"

conf() { # T1-INITIATORS T2-SECRET
	cat > "$IT_DIR/sec.json" << JSON
{ "hosts": [ { "nqn": "$HOSTNQN", "dhchap": { "key": "$DHKEY" } } ], "ports": [],
  "limits": { "login_timeout": 2, "max_connections": 8 },
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [], "attr": { "allow_any_host": "1" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } },
                    { "nsid": 2, "enable": 1, "device": { "path": "ram:16M" } } ] } ],
  "iscsi": {
    "portals": [ { "addr": "127.0.0.1", "port": 0 } ],
    "discovery_chap": { "user": "disc-user", "secret_file": "$IT_DIR/disc.secret" },
    "targets": [
      { "iqn": "$T1", "initiators": [ $1 ],
        "luns": [ { "lun": 0, "subsystem": "$NQN", "nsid": 1 } ],
        "chap": { "user": "acl-user", "secret": "$S1",
                  "mutual_user": "sec-target", "mutual_secret": "$M1" } },
      { "iqn": "$T2", "luns": [ { "lun": 0, "subsystem": "$NQN", "nsid": 2 } ],
        "chap": { "user": "chap-user", "secret": "$2" } } ] } }
JSON
}

conf "\"$I1\", \"$I2\", \"$CLI_INAME\"" "$S2"
IT_LOG=$IT_DIR/target.log
"$IT_TARGET_BIN" -c "$IT_DIR/sec.json" --discovery-port 0 --log-level debug --reactors 2 \
	--no-pin --stats-socket "$IT_DIR/stats.sock" --control-socket "$IT_DIR/ctl.sock" \
	> "$IT_LOG" 2>&1 &
IT_PID=$!
PORT=
for _ in $(seq 200); do
	PORT=$(sed -n 's/.*listening on iscsi:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$IT_LOG" | head -n 1)
	[ -n "$PORT" ] && break
	kill -0 "$IT_PID" 2> /dev/null || break
	sleep 0.05
done
if [ -z "$PORT" ]; then
	it_not_ok target-start "nvmeof-target -c did not start"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target started, iSCSI portal on port $PORT"

# client NAME WANT-RC GREP ARGS... : iscsi_chap_client with ARGS; GREP must match its output
client() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$CLIENT" "$PORT" "$@" > "$IT_DIR/c.out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$IT_DIR/c.out"; }; then
		it_ok "$name"
	else
		it_not_ok "$name" "status $rc (want $want), output: $(tr '\n' ' ' < "$IT_DIR/c.out")"
	fi
}

# ---- CHAP and mutual CHAP -----------------------------------------------------------------
client "open-iscsi's list: SHA3-256 chosen" 0 "CHAP_A=8" login "$T1" "$I1" acl-user "$S1"
client "SHA-256 first in the list of a CHAP_A=5,7 initiator" 0 "CHAP_A=7" \
	login "$T1" "$I1" acl-user "$S1" 5,7
client "MD5 alone refused (not in chap_algs)" 1 "status 0x0201" login "$T1" "$I1" acl-user "$S1" 5
it_check "the refusal says why" grep -q "CHAP refused: the initiator offers MD5, the target allows SHA3-256,SHA256" "$IT_LOG"
client "wrong secret refused (0201)" 1 "status 0x0201" login "$T1" "$I1" acl-user "wrong-secret-0000"
client "wrong user refused (0201)" 1 "status 0x0201" login "$T1" "$I1" someone "$S1"
client "mutual CHAP: the target proves its secret" 0 "the target proved sec-target" \
	login "$T1" "$I1" acl-user "$S1" sec-target "$M1"
client "mutual CHAP with SHA-256" 0 "the target proved" \
	login "$T1" "$I1" acl-user "$S1" sec-target "$M1" 7
client "mutual CHAP: our challenge reflected back is refused" 0 "status 0x0201" \
	reflect "$T1" "$I1" acl-user "$S1"
client "mutual CHAP asked of a target without mutual_user refused" 1 "status 0x0201" \
	login "$T2" "$I3" chap-user "$S2" sec-target "$M1"
client "initiator not in the list refused (0202)" 1 "status 0x0202" login "$T1" "$I3" acl-user "$S1"
client "no authentication refused where CHAP is required" 1 "status 0x0201" none "$T2" "$I1"
client "discovery without CHAP refused" 1 "status 0x0201" none - "$I1"
client "discovery with CHAP (secret from a 0600 file)" 0 "discovery session" login - "$I1" disc-user "$D1"

URI2="iscsi://chap-user%$S2@127.0.0.1:$PORT/$T2/0"
if "$IT_CLI" identify "$URI2" --hostnqn "$HOSTNQN" > "$IT_DIR/cli.out" 2>&1; then
	it_ok "libnvmeof (nvmeof identify) logs in with CHAP"
else
	it_not_ok cli-chap "nvmeof identify failed: $(head -n 3 "$IT_DIR/cli.out")"
fi
if "$IT_CLI" identify "iscsi://chap-user%wrong-secret-0000@127.0.0.1:$PORT/$T2/0" \
	--hostnqn "$HOSTNQN" > "$IT_DIR/cli.out" 2>&1; then
	it_not_ok cli-chap-wrong "nvmeof identify with a wrong secret succeeded"
else
	it_ok "libnvmeof with a wrong secret refused"
fi

# ---- 1,000 silent sockets and a stalled CHAP exchange -------------------------------------
"$CLIENT" "$PORT" silent 1000 8 > "$IT_DIR/silent.out" 2>&1 &
silent=$!
for _ in $(seq 200); do
	grep -q '^ready' "$IT_DIR/silent.out" && break
	kill -0 "$silent" 2> /dev/null || break
	sleep 0.05
done
"$CLIENT" "$PORT" stall "$T1" "$I1" 8 > "$IT_DIR/stall.out" 2>&1 &
stall=$!
if grep -q '^ready 1000' "$IT_DIR/silent.out"; then
	it_ok "1000 sockets open, not one byte sent"
	t0=$(date +%s.%N)
	client "a CHAP login while 1000 logins stall" 0 "full feature" login "$T1" "$I2" acl-user "$S1"
	if "$IT_CLI" identify "$URI2" --hostnqn "$HOSTNQN" > "$IT_DIR/cli.out" 2>&1; then
		it_ok "libnvmeof logs in too ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s for both)"
	else
		it_not_ok cli-under-siege "nvmeof identify failed: $(head -n 3 "$IT_DIR/cli.out")"
	fi
else
	it_not_ok silent-open "$(cat "$IT_DIR/silent.out")"
fi
if wait "$silent"; then
	it_ok "the target closed them at the deadline: $(grep closed "$IT_DIR/silent.out")"
else
	it_not_ok silent-closed "$(cat "$IT_DIR/silent.out")"
fi
if wait "$stall"; then
	it_ok "stalled CHAP exchange dropped: $(grep closed "$IT_DIR/stall.out")"
else
	it_not_ok stall-closed "$(cat "$IT_DIR/stall.out")"
fi
it_check "login timeouts logged" grep -q "iSCSI login not finished within 2000 ms" "$IT_LOG"

# ---- Revocation on SIGHUP -----------------------------------------------------------------
"$CLIENT" "$PORT" hold "$T1" "$I1" acl-user "$S1" 20 > "$IT_DIR/hold.out" 2>&1 &
hold=$!
"$RW" "$URI2" --bench 20 --bench-only --qd 4 --ctrl-loss-tmo 0 > "$IT_DIR/rw.out" 2>&1 &
rw=$!
for _ in $(seq 100); do
	grep -q holding "$IT_DIR/hold.out" && break
	sleep 0.05
done
sleep 1
conf "\"$I2\", \"$CLI_INAME\"" "$S2B"
t0=$(date +%s.%N)
kill -HUP "$IT_PID"
wait "$hold"
rc=$?
ended=$(sed -n 's/^ended \([0-9.]*\).*/\1/p' "$IT_DIR/hold.out")
if [ "$rc" = 0 ] && [ -n "$ended" ] && awk -v a="$t0" -v b="$ended" 'BEGIN { exit !(b - a < 1.0) }'; then
	it_ok "removed initiator's session ended $(awk -v a="$t0" -v b="$ended" 'BEGIN { printf "%.3f", b - a }') s after SIGHUP"
else
	it_not_ok revoke-acl "status $rc: $(cat "$IT_DIR/hold.out")"
fi
it_check "it got an Async Message (drop all connections) first" grep -q "async-event 3" "$IT_DIR/hold.out"
gone=
for _ in $(seq 50); do
	grep -q "to $T2 ended: its CHAP secret changed" "$IT_LOG" && { gone=$(date +%s.%N); break; }
	sleep 0.02
done
if [ -n "$gone" ] && awk -v a="$t0" -v b="$gone" 'BEGIN { exit !(b - a < 1.0) }'; then
	it_ok "session with the old CHAP secret ended $(awk -v a="$t0" -v b="$gone" 'BEGIN { printf "%.2f", b - a }') s after SIGHUP"
else
	it_not_ok revoke-secret "no 'its CHAP secret changed' within 1 s of SIGHUP"
fi
for _ in $(seq 500); do kill -0 "$rw" 2> /dev/null || break; sleep 0.02; done
rw_end=$(date +%s.%N)
if kill -0 "$rw" 2> /dev/null; then
	it_not_ok rw-stopped "libnvmeof's I/O still running 10 s after the revocation"
	kill -KILL "$rw"
	wait "$rw" 2> /dev/null
else
	wait "$rw"
	rc=$?
	[ "$rc" != 0 ] && it_ok "libnvmeof's I/O failed after the revocation (exit $rc, $(awk -v a="$t0" -v b="$rw_end" 'BEGIN { printf "%.2f", b - a }') s after SIGHUP)" ||
		it_not_ok rw-stopped "its I/O ran to the end: $(tail -n 2 "$IT_DIR/rw.out")"
fi
client "the removed initiator is refused (0202)" 1 "status 0x0202" login "$T1" "$I1" acl-user "$S1"
client "the old secret is refused" 1 "status 0x0201" login "$T2" "$I3" chap-user "$S2"
client "the new secret works" 0 "full feature" login "$T2" "$I3" chap-user "$S2B"
client "the initiator still listed keeps working" 0 "full feature" login "$T1" "$I2" acl-user "$S1"

# ---- Secrets stay secret -------------------------------------------------------------------
"$top_srcdir/tests/stats-snapshot.py" "$IT_DIR/stats.sock" 3 > "$IT_DIR/stats.json" 2> /dev/null
python3 - "$IT_DIR/ctl.sock" > "$IT_DIR/save.json" 2> /dev/null << 'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(json.dumps({"jsonrpc": "2.0", "method": "save_config", "id": 1}).encode() + b"\n")
out = b""
while not out.endswith(b"\n"):
    b = s.recv(65536)
    if not b:
        break
    out += b
sys.stdout.write(out.decode(errors="replace"))
PY
it_check "the statistics socket answered" grep -q '"tcp"' "$IT_DIR/stats.json"
it_check "save_config answered" grep -q '"config"' "$IT_DIR/save.json"
"$CTL" -s "$IT_DIR/ctl.sock" save "$IT_DIR/saved.json" > /dev/null 2>&1
it_check "nvmeof-ctl save: a file of mode 0600" [ "$(stat -c %a "$IT_DIR/saved.json" 2> /dev/null)" = 600 ]
it_check "... that holds the inline secrets" grep -q -- "$S1" "$IT_DIR/saved.json"
leaks=
for f in "$IT_LOG" "$IT_DIR/stats.json" "$IT_DIR/save.json"; do
	for s in "$S1" "$M1" "$S2" "$S2B" "$D1" "$DHB64"; do
		grep -q -- "$s" "$f" && leaks="$leaks $(basename "$f"):${s%%-*}"
	done
done
if [ -z "$leaks" ]; then
	it_ok "no secret in the debug log ($(wc -l < "$IT_LOG") lines), stats JSON or save_config reply"
else
	it_not_ok secrets "found:$leaks"
fi
"$IT_TARGET_BIN" --help > "$IT_DIR/help.txt" 2>&1
it_check "--help documents --login-timeout" grep -q -- "--login-timeout" "$IT_DIR/help.txt"
it_stop_target
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG"; then
	it_not_ok sanitizers "$(grep -E -m 3 'AddressSanitizer|LeakSanitizer|runtime error:' "$IT_LOG")"
fi
it_finish

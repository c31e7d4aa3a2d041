#!/bin/bash
# disc-filter.sh - the discovery log lists only what the asking host can connect to.
# Port 1 exports a subsystem open to any host, port 2 only one that H2 is allowed on.
# H1 must not learn of port 2 (neither its subsystem nor its discovery entry); H2 sees
# both ports; either host still sees port 1 and the referral.
. "$(dirname "$0")/../integration/lib.sh"
it_init
OPEN=nqn.2026-11.io.nvmeof:sec-open
PRIV=nqn.2026-11.io.nvmeof:sec-private
H1=nqn.2014-08.org.nvmeof.test:disc-h1
H2=nqn.2014-08.org.nvmeof.test:disc-h2
if ! command -v python3 > /dev/null; then
	echo "# python3 is missing"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
conf() {
	cat > "$IT_DIR/disc.json" << JSON
{ "hosts": [ { "nqn": "$H2" } ],
  "ports": [
    { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P1" }, "subsystems": [ "$OPEN" ],
      "referrals": [ { "name": "r", "enable": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4",
        "traddr": "192.0.2.1", "trsvcid": "8009", "portid": 9 } } ] },
    { "portid": 2, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
      "trsvcid": "$P2" }, "subsystems": [ "$PRIV" ] } ],
  "subsystems": [
    { "nqn": "$OPEN", "attr": { "allow_any_host": "1" },
      "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] },
    { "nqn": "$PRIV", "attr": { "allow_any_host": "0" }, "allowed_hosts": [ "$H2" ],
      "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:16M" } } ] } ] }
JSON
}
for attempt in 1 2 3 4 5; do
	P1=$(freeport) P2=$(freeport)
	conf
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/disc.json" --discovery-port 0 --no-control-socket \
		> "$IT_LOG" 2>&1 &
	IT_PID=$!
	up=
	for _ in $(seq 200); do
		grep -q "listening on tcp://127.0.0.1:$P2" "$IT_LOG" && { up=1; break; }
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
it_ok "target started: port 1 on $P1 (open subsystem), port 2 on $P2 (H2 only)"

check() { # NAME FILE PYTHON-EXPR over p (portid -> subtypes) and n (subsystem NQNs)
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = {}
for e in d["records"]:
    p.setdefault(e["portid"], []).append(e["subtype"])
n = [e["subnqn"] for e in d["records"]]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2> "$IT_DIR/py.err"; then
		it_ok "$1"
	else
		it_not_ok "$1" "$3 is false in:"
		sed 's/^/#   /' "$2" | head -n 20
	fi
}
it_cli "H1 discovers through port 1" 0 discover "nvme+tcp://127.0.0.1:$P1" --hostnqn "$H1" -o json
cp "$IT_OUT" "$IT_DIR/h1.json"
check "H1 is not shown port 2 at all" "$IT_DIR/h1.json" "2 not in p and \"$PRIV\" not in n"
check "H1 still sees port 1 and the referral" "$IT_DIR/h1.json" \
	"\"$OPEN\" in n and 9 in p and len(p[1]) == 2"
it_cli "H2 discovers through port 1" 0 discover "nvme+tcp://127.0.0.1:$P1" --hostnqn "$H2" -o json
cp "$IT_OUT" "$IT_DIR/h2.json"
check "H2 sees both ports" "$IT_DIR/h2.json" "len(p[1]) == 2 and len(p[2]) == 2 and \"$PRIV\" in n"
it_cli "H1 discovers through port 2 (where it asks from is listed)" 0 discover \
	"nvme+tcp://127.0.0.1:$P2" --hostnqn "$H1" -o json
check "through port 2: only port 2's discovery entry, no private subsystem" "$IT_OUT" \
	"p.get(2) == [\"current discovery subsystem\"] and \"$PRIV\" not in n"
it_stop_target
it_finish

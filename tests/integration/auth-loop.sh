#!/bin/bash
# auth-loop.sh - DH-HMAC-CHAP between our initiator and nvmeof-target on 127.0.0.1: the
# target reads a configuration file whose hosts entry carries the host's secrets as
# nvmetcli saves them ("dhchap": key, ctrl_key, hash, dhgroup) and whose subsystem allows
# only that host.
#   right secret, unidirectional and bidirectional (the secrets also as 0600 files):
#   identify reports what was negotiated, data written is read back and compared;
#   refused with exit status 3 and one clear line: a wrong host secret, no secret, a wrong
#   controller secret; no secret in the CLI's or the target's output; a clean target exit.
. "$(dirname "$0")/lib.sh"
it_init
NQN=nqn.2026-11.io.nvmeof:it-auth
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5e0a0a17-0000-4000-8000-00000000a001

# DHHC-1:00: text of @1 random bytes (what nvme gen-dhchap-key --hmac=0 prints)
genkey() {
	python3 -c 'import base64, os, sys, zlib
k = os.urandom(int(sys.argv[1]))
print("DHHC-1:00:" + base64.b64encode(k + zlib.crc32(k).to_bytes(4, "little")).decode() + ":")' "$1"
}
if command -v nvme > /dev/null && nvme gen-dhchap-key --help > /dev/null 2>&1; then
	HOSTKEY=$(nvme gen-dhchap-key --key-length=64 --hmac=3 --nqn="$HOSTNQN")
	CTRLKEY=$(nvme gen-dhchap-key --key-length=48 --hmac=2 --nqn="$NQN")
else
	HOSTKEY=$(genkey 64)
	CTRLKEY=$(genkey 48)
fi
BADKEY=$(genkey 64)
BADCTRL=$(genkey 48)

for attempt in 1 2 3 4 5; do
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat > "$IT_DIR/auth.json" << JSON
{ "hosts": [ { "nqn": "$HOSTNQN",
    "dhchap": { "key": "$HOSTKEY", "ctrl_key": "$CTRLKEY", "hash": "hmac(sha512)",
                "dhgroup": "ffdhe4096" } } ],
  "ports": [ { "portid": 1, "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
    "trsvcid": "$PORT", "treq": "not specified" }, "subsystems": [ "$NQN" ], "referrals": [] } ],
  "subsystems": [ { "nqn": "$NQN", "allowed_hosts": [ "$HOSTNQN" ],
    "attr": { "allow_any_host": "0" },
    "namespaces": [ { "nsid": 1, "enable": 1, "device": { "path": "ram:64M" } } ] } ] }
JSON
	chmod 0600 "$IT_DIR/auth.json"
	IT_LOG=$IT_DIR/target.log
	"$IT_TARGET_BIN" -c "$IT_DIR/auth.json" --discovery-port 0 --log-level info > "$IT_LOG" 2>&1 &
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
	it_not_ok target-start "nvmeof-target -c (hosts with dhchap) did not start listening"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "target started with DH-HMAC-CHAP hosts, port $PORT"
URI="nvme+tcp://127.0.0.1:$PORT/$NQN"
H=(--hostnqn "$HOSTNQN")

nokey() { # nokey NAME FILE: no piece of a secret in FILE
	if grep -qF -e "${HOSTKEY:10:24}" -e "${CTRLKEY:10:24}" -e "${BADKEY:10:24}" \
		-e "${BADCTRL:10:24}" "$2"; then
		it_not_ok "$1" "a secret was printed in $2"
	else
		it_ok "$1"
	fi
}

head -c $((1 << 20)) /dev/urandom > "$IT_DIR/p1"
head -c $((1 << 20)) /dev/urandom > "$IT_DIR/p2"

# unidirectional
it_cli uni-identify 0 identify "$URI" "${H[@]}" --dhchap-secret "$HOSTKEY"
it_grep uni-negotiated "$IT_OUT" "auth: +DH-HMAC-CHAP sha512 ffdhe4096, unidirectional"
it_cli uni-write 0 write "$URI" --lba 0 --blocks 2048 -i "$IT_DIR/p1" "${H[@]}" -S "$HOSTKEY"
it_cli uni-read 0 read "$URI" --lba 0 --blocks 2048 -o "$IT_DIR/r1" "${H[@]}" -S "$HOSTKEY"
it_check uni-verify cmp -s "$IT_DIR/p1" "$IT_DIR/r1"

# bidirectional, the secrets in key files
(umask 077 && echo "$HOSTKEY" > "$IT_DIR/host.key" && echo "$CTRLKEY" > "$IT_DIR/ctrl.key")
it_cli bi-identify 0 identify "$URI" "${H[@]}" --dhchap-secret "$IT_DIR/host.key" \
	--dhchap-ctrl-secret "$IT_DIR/ctrl.key"
it_grep bi-negotiated "$IT_OUT" "auth: +DH-HMAC-CHAP sha512 ffdhe4096, bidirectional"
it_cli bi-write 0 write "$URI" --lba 4096 --blocks 2048 -i "$IT_DIR/p2" "${H[@]}" \
	-S "$HOSTKEY" -C "$CTRLKEY"
it_cli bi-compare 0 compare "$URI" --lba 4096 --blocks 2048 -d "$IT_DIR/p2" "${H[@]}" \
	-S "$IT_DIR/host.key" -C "$IT_DIR/ctrl.key"
it_cli bi-read-first 0 read "$URI" --lba 0 --blocks 2048 -o "$IT_DIR/r1b" "${H[@]}" \
	-S "$HOSTKEY" -C "$CTRLKEY"
it_check bi-verify-first cmp -s "$IT_DIR/p1" "$IT_DIR/r1b"

# refused
it_cli wrong-secret 3 identify "$URI" "${H[@]}" --dhchap-secret "$BADKEY"
it_log "wrong secret: $(cat "$IT_ERR")"
it_grep wrong-secret-msg "$IT_ERR" "DH-HMAC-CHAP authentication failed: .*(AUTH_Failure1|Authentication Required)"
nokey wrong-secret-no-key "$IT_ERR"
it_cli no-secret 3 identify "$URI" "${H[@]}"
it_log "no secret: $(cat "$IT_ERR")"
it_grep no-secret-msg "$IT_ERR" "(requires DH-HMAC-CHAP authentication and no secret was given|Authentication Required)"
it_cli wrong-ctrl-secret 3 identify "$URI" "${H[@]}" -S "$HOSTKEY" -C "$BADCTRL"
it_log "wrong controller secret: $(cat "$IT_ERR")"
it_grep wrong-ctrl-secret-msg "$IT_ERR" "the controller failed authentication: its response does not match"
nokey wrong-ctrl-secret-no-key "$IT_ERR"
it_cli after-refusals 0 compare "$URI" --lba 0 --blocks 2048 -d "$IT_DIR/p1" "${H[@]}" \
	-S "$HOSTKEY"

it_stop_target
nokey target-log-no-key "$IT_LOG"
it_finish

#!/bin/bash
# auth-initiator.sh - the nvmeof CLI (libnvmeof) authenticating with DH-HMAC-CHAP against
# nvmeof-target, as `nvme connect` does: --dhchap-secret, and --dhchap-ctrl-secret for the
# controller to prove itself too. Two targets: unidirectional SHA-256 without DH, and
# bidirectional SHA-512 with ffdhe3072. Each: identify, a write and its read-back (so the
# I/O queue authenticates too), then a wrong secret, a wrong controller secret and no
# secret, each refused with one line; the target logs every queue authenticated and never
# a secret.
#
# Cannot run (a skip, a failure under CI=true) while the CLI has no --dhchap-secret.
. "$(dirname "$0")/lib.sh"
it_init
if ! "$IT_CLI" identify --help 2>&1 | grep -q -- '--dhchap-secret'; then
	nv_cannot_run "the nvmeof CLI has no --dhchap-secret"
fi
NQN=nqn.2026-11.io.nvmeof:it-auth-initiator
H=nqn.2014-08.org.nvmexpress:uuid:a2a2a2a2-0000-4000-8000-000000000001

key() { # key LEN: a DHHC-1:00: secret of LEN random bytes
	python3 -c 'import base64, os, struct, sys, zlib
k = os.urandom(int(sys.argv[1]))
print("DHHC-1:00:%s:" % base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode())' "$1"
}
K=$(key 32)
CK=$(key 64)
WRONG=$(key 32)
(umask 077 && echo "$K" > "$IT_DIR/host.key" && echo "$CK" > "$IT_DIR/ctrl.key")
head -c 4096 /dev/urandom > "$IT_DIR/data"

# run_case NAME WANT_LOG TARGET-FLAGS... -- CLI-AUTH-FLAGS...
run_case() {
	local name=$1 want=$2 tflags=() cflags=() uri b64 k rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do tflags+=("$1"); shift; done
	shift
	cflags=("$@")
	it_start_target --ns ram:16M --nqn "$NQN" --dhchap-key "$H=$IT_DIR/host.key" \
		"${tflags[@]}" --log-level info || return
	uri="nvme+tcp://127.0.0.1:$IT_PORT/$NQN"
	it_cli "$name: identify" 0 identify "$uri" --hostnqn "$H" "${cflags[@]}"
	it_cli "$name: write" 0 write "$uri/1" --lba 8 --blocks 8 -d "$IT_DIR/data" \
		--hostnqn "$H" "${cflags[@]}"
	it_cli "$name: read" 0 read "$uri/1" --lba 8 --blocks 8 -d "$IT_DIR/back" \
		--hostnqn "$H" "${cflags[@]}"
	it_check "$name: data read back" cmp -s "$IT_DIR/data" "$IT_DIR/back"
	it_check "$name: admin and I/O queues authenticated" \
		test "$(grep -c "host $H authenticated (DH-HMAC-CHAP $want)" "$IT_LOG")" -ge 4
	"$IT_CLI" identify "$uri" --hostnqn "$H" --dhchap-secret "$WRONG" > /dev/null \
		2> "$IT_DIR/err"
	rc=$?
	it_check "$name: wrong secret refused, one line ($(head -n 1 "$IT_DIR/err"))" \
		test "$rc" != 0 -a "$(wc -l < "$IT_DIR/err")" = 1
	if [ "${#cflags[@]}" -gt 2 ]; then
		"$IT_CLI" identify "$uri" --hostnqn "$H" --dhchap-secret "$K" \
			--dhchap-ctrl-secret "$WRONG" > /dev/null 2> "$IT_DIR/err"
		rc=$?
		it_check "$name: wrong controller secret refused ($(head -n 1 "$IT_DIR/err"))" \
			test "$rc" != 0
	fi
	"$IT_CLI" identify "$uri" --hostnqn "$H" > /dev/null 2> "$IT_DIR/err"
	rc=$?
	it_check "$name: no secret refused ($(head -n 1 "$IT_DIR/err"))" test "$rc" != 0
	for k in "$K" "$CK" "$WRONG"; do
		b64=${k#DHHC-1:00:}
		if grep -qF -- "${b64:0:16}" "$IT_LOG"; then
			it_not_ok "$name: no secret logged" "a secret appears in the target log"
			break
		fi
	done
	it_stop_target
}

run_case unidirectional "sha256, null" --dhchap-hash 'hmac(sha256)' --dhchap-dhgroup null \
	-- --dhchap-secret "$K"
run_case bidirectional "sha512, ffdhe3072, bidirectional" \
	--dhchap-ctrl-key "$H=$IT_DIR/ctrl.key" --dhchap-hash 'hmac(sha512)' \
	--dhchap-dhgroup ffdhe3072 -- --dhchap-secret "$K" --dhchap-ctrl-secret "$CK"
it_finish

#!/bin/bash
# auth-initiator-nvmet.sh - the nvmeof CLI on this host authenticating with DH-HMAC-CHAP
# against the Linux kernel target, nvmet-tcp, in the qemu lab guest. Debian 12's 6.1
# kernel has no NVMe in-band authentication, so the guest boots the backports 6.12 one.
# The guest (guest-nvmet-auth.sh) configures, through configfs, one host with a host
# secret (NN 03, transformed with SHA-512), a controller secret (NN 01), hmac(sha512) and
# ffdhe4096, both made by nvme gen-dhchap-key, and lets no other host in.
#   unidirectional: identify reports sha512/ffdhe4096, write, read back, same bytes
#   (nvmet's block device namespaces have no Compare command);
#   bidirectional (the secrets given as 0600 files): the same;
#   refused, each with exit status 3 and one clear line: a wrong host secret (the
#   controller's AUTH_Failure1, which the guest kernel logs as "host response mismatch"
#   and "failure1 (1)"), no secret, a wrong controller secret (our AUTH_Failure2);
#   a key file readable by others is refused before connecting (exit status 2);
#   the library on two I/O queues at QD 32, bidirectional, after a re-authentication;
#   a clean guest kernel log.
. "$(dirname "$0")/lib.sh"
NVMEOF_INTEROP_TARGET=nvmet # the target is the guest's kernel: nvmeof-target not needed
NVMEOF_LAB_KERNEL=backports # NVMe in-band authentication (CONFIG_NVME_TARGET_AUTH)
LAB_KERNEL=backports
ix_init

CLI=$top_builddir/initiator/nvmeof
NQN=nqn.2026-11.io.nvmeof:auth-interop
HOSTNQN=nqn.2014-08.io.nvmeof:auth-interop-host
[ -x "$CLI" ] || { ix_log "no $CLI (build first)"; exit 99; }
command -v nvme > /dev/null || { ix_cannot_run "no nvme-cli for gen-dhchap-key"; }

HOSTKEY=$(nvme gen-dhchap-key --key-length=64 --hmac=3 --nqn="$HOSTNQN") &&
	CTRLKEY=$(nvme gen-dhchap-key --key-length=32 --hmac=1 --nqn="$NQN") &&
	BADKEY=$(nvme gen-dhchap-key --key-length=64 --hmac=3 --nqn="$HOSTNQN") ||
	{ ix_log "nvme gen-dhchap-key failed"; exit 99; }
case $HOSTKEY$CTRLKEY in DHHC-1:03:*DHHC-1:01:*) ;; *)
	ix_log "unexpected gen-dhchap-key output"
	exit 99
	;;
esac

PORT=$(ix_free_port) || { ix_log "no free port"; exit 99; }
ix_log "lab guest: nvmet-tcp with DH-HMAC-CHAP on 10.0.2.15:4420, forwarded from 127.0.0.1:$PORT"
LAB_HOSTFWD=tcp:127.0.0.1:$PORT-:4420 LAB_SHARE=$IX_DIR LAB_TIMEOUT=${LAB_TIMEOUT:-600} \
	"$IX_LAB/run-in-guest.sh" "$top_srcdir/tests/interop/guest-nvmet-auth.sh" \
	10.0.2.15 4420 "$NQN" "$HOSTNQN" "$HOSTKEY" "$CTRLKEY" "hmac(sha512)" ffdhe4096 500 \
	> "$IX_DIR/console.log" 2>&1 &
IX_GUEST_PID=$!
for _ in $(seq 360); do
	[ -e "$IX_DIR/target-ready" ] || [ -e "$IX_DIR/target-failed" ] && break
	kill -0 "$IX_GUEST_PID" 2> /dev/null || break
	sleep 0.5
done
if [ ! -e "$IX_DIR/target-ready" ]; then
	ix_not_ok guest-target "nvmet-tcp with DH-HMAC-CHAP did not come up in the guest:" \
		"$(cat "$IX_DIR/target-failed" 2> /dev/null)"
	tail -n 20 "$IX_DIR/console.log" | sed 's/^/  /'
	touch "$IX_DIR/host-done"
	ix_finish
fi
ix_ok guest-target

URI=nvme+tcp://127.0.0.1:$PORT/$NQN
OUT=$IX_DIR/out
ERR=$IX_DIR/err

# cli NAME WANT_RC ARGS... : the CLI's exit status, and one stderr line when it fails
cli() {
	local name=$1 want=$2 rc
	shift 2
	"$CLI" "$1" --timeout 60000 --hostnqn "$HOSTNQN" "${@:2}" > "$OUT" 2> "$ERR"
	rc=$?
	if [ "$rc" != "$want" ]; then
		ix_not_ok "$name" "exit status $rc, expected $want (nvmeof $1 ...)"
		sed 's/^/  stderr: /' "$ERR"
	elif [ "$want" != 0 ] && [ "$(wc -l < "$ERR")" != 1 ]; then
		ix_not_ok "$name" "expected one line on stderr (nvmeof $1 ...)"
		sed 's/^/  stderr: /' "$ERR"
	else
		ix_ok "$name"
	fi
}
has() {   # has NAME FILE ERE
	if grep -qE -- "$3" "$2"; then ix_ok "$1"; else
		ix_not_ok "$1" "no line matches /$3/"
		sed 's/^/  | /' "$2" | head -n 40
	fi
}
same() {  # same NAME FILE1 FILE2
	if cmp -s "$2" "$3"; then ix_ok "$1"; else ix_not_ok "$1" "$2 and $3 differ"; fi
}
nokey() { # nokey NAME FILE: no secret printed
	if grep -qF -e "${HOSTKEY:10:24}" -e "${CTRLKEY:10:24}" -e "${BADKEY:10:24}" "$2"; then
		ix_not_ok "$1" "a secret was printed"
	else
		ix_ok "$1"
	fi
}

head -c $((1 << 20)) /dev/urandom > "$IX_DIR/p1"
head -c $((1 << 20)) /dev/urandom > "$IX_DIR/p2"

# unidirectional: the host proves itself
cli uni-identify 0 identify "$URI" --dhchap-secret "$HOSTKEY"
has uni-negotiated "$OUT" "auth: +DH-HMAC-CHAP sha512 ffdhe4096, unidirectional"
cli uni-write 0 write "$URI" --lba 0 --blocks 2048 -i "$IX_DIR/p1" --dhchap-secret "$HOSTKEY"
cli uni-read 0 read "$URI" --lba 0 --blocks 2048 -o "$IX_DIR/r1" --dhchap-secret "$HOSTKEY"
same uni-verify "$IX_DIR/p1" "$IX_DIR/r1"

# bidirectional, the secrets in key files
(umask 077 && echo "$HOSTKEY" > "$IX_DIR/host.key" && echo "$CTRLKEY" > "$IX_DIR/ctrl.key")
cli bi-identify 0 identify "$URI" --dhchap-secret "$IX_DIR/host.key" \
	--dhchap-ctrl-secret "$IX_DIR/ctrl.key" --json
has bi-negotiated "$OUT" '"dhchap": \{ "hash": "sha512", "dhgroup": "ffdhe4096", "bidirectional": true \}'
cli bi-write 0 write "$URI" --lba 4096 --blocks 2048 -i "$IX_DIR/p2" \
	-S "$IX_DIR/host.key" -C "$IX_DIR/ctrl.key"
cli bi-read 0 read "$URI" --lba 4096 --blocks 2048 -o "$IX_DIR/r2" \
	--dhchap-secret "$HOSTKEY" --dhchap-ctrl-secret "$CTRLKEY"
same bi-verify "$IX_DIR/p2" "$IX_DIR/r2"
cli bi-read-first 0 read "$URI" --lba 0 --blocks 2048 -o "$IX_DIR/r1b" \
	-S "$HOSTKEY" -C "$CTRLKEY"
same bi-verify-first "$IX_DIR/p1" "$IX_DIR/r1b"

# refused
cli wrong-secret 3 identify "$URI" --dhchap-secret "$BADKEY"
has wrong-secret-msg "$ERR" "DH-HMAC-CHAP authentication failed: the controller refused authentication: AUTH_Failure1 .*authentication failed \(reason 01h, explanation 01h\)"
nokey wrong-secret-no-key "$ERR"
cli no-secret 3 identify "$URI"
has no-secret-msg "$ERR" "requires DH-HMAC-CHAP authentication and no secret was given"
cli wrong-ctrl-secret 3 identify "$URI" -S "$HOSTKEY" -C "$(nvme gen-dhchap-key --key-length=32 --hmac=1 --nqn="$NQN")"
has wrong-ctrl-secret-msg "$ERR" "the controller failed authentication: its response does not match the controller secret"
nokey wrong-ctrl-secret-no-key "$ERR"
chmod 0644 "$IX_DIR/host.key"
cli key-file-mode 2 identify "$URI" --dhchap-secret "$IX_DIR/host.key"
has key-file-mode-msg "$ERR" "must be 0600 or stricter"
nokey key-file-mode-no-key "$ERR"
# the data is still there for the right host afterwards
cli after-refusals 0 read "$URI" --lba 4096 --blocks 2048 -o "$IX_DIR/r2b" -S "$HOSTKEY"
same after-refusals-verify "$IX_DIR/p2" "$IX_DIR/r2b"

# the library: two I/O queue pairs at QD 32 (every queue authenticates), bidirectional,
# and a re-authentication of the admin queue before the I/O
IO=$top_builddir/tests/integration/initiator_io
if [ -x "$IO" ]; then
	if "$IO" "$URI" --loose --queues 2 --qd 32 --seconds 1 --hostnqn "$HOSTNQN" \
		--dhchap-secret "$HOSTKEY" --dhchap-ctrl-secret "$CTRLKEY" --reauth \
		> "$IX_DIR/io.log" 2>&1; then
		ix_ok library-qd32-auth-reauth
	else
		ix_not_ok library-qd32-auth-reauth "initiator_io failed"
	fi
	grep -vE '^ok ' "$IX_DIR/io.log" | sed 's/^/  /'
else
	ix_log "no $IO: library check skipped (make check builds it)"
fi

touch "$IX_DIR/host-done"
wait "$IX_GUEST_PID"
IX_GUEST_RC=$?
IX_GUEST_PID=
if [ "$IX_GUEST_RC" = 0 ]; then ix_ok guest-exit; else
	ix_not_ok guest-exit "guest script status $IX_GUEST_RC"
	tail -n 30 "$IX_DIR/console.log"
fi
# the kernel's own account of the wrong secret: R1 mismatch, AUTH_Failure1 reason 01h
has guest-wrong-secret-logged "$IX_DIR/guest-dmesg.txt" "nvmet: ctrl [0-9]+ qid 0 host response mismatch"
has guest-failure1-logged "$IX_DIR/guest-dmesg.txt" "nvmet: ctrl [0-9]+ qid 0 failure1 \(1\)"
if [ -s "$IX_DIR/guest-dmesg.txt" ] && ! grep -qiE 'Call Trace|BUG|oops' "$IX_DIR/guest-dmesg.txt"; then
	ix_ok guest-kernel-log
else
	ix_not_ok guest-kernel-log "the guest kernel complained (or no log):"
fi
ix_log "guest kernel log about nvmet:"
grep -iE 'nvmet' "$IX_DIR/guest-dmesg.txt" | tail -n 20 | sed 's/^/  /'
ix_finish

#!/bin/bash
# initiator-nvmet.sh - the nvmeof CLI (and libnvmeof through initiator_io) on this host
# against the Linux kernel target, nvmet-tcp, in the qemu lab guest: the guest serves
# two namespaces (64 MiB of 512-byte blocks, 32 MiB of 4096-byte blocks) on
# 10.0.2.15:4420, reached here through LAB_HOSTFWD on 127.0.0.1.
#   discover, identify (text and JSON), list-ns; write/read/compare on both namespaces
#   without digests, then with header and data digests (and read back both ways); flush;
#   errors (past the end, inactive namespace, unknown NQN) with their exit status; the
#   library at QD 32 on two queue pairs with and without digests; a clean guest log.
. "$(dirname "$0")/lib.sh"
NVMEOF_INTEROP_TARGET=nvmet # the target is the guest's kernel: nvmeof-target not needed
ix_init

CLI=$top_builddir/initiator/nvmeof
IO=$top_builddir/tests/integration/initiator_io
NQN=nqn.2026-11.io.nvmeof:interop
[ -x "$CLI" ] || { ix_log "no $CLI (build first)"; exit 99; }

PORT=$(ix_free_port) || { ix_log "no free port"; exit 99; }
ix_log "lab guest: nvmet-tcp on 10.0.2.15:4420, forwarded from 127.0.0.1:$PORT"
LAB_HOSTFWD=tcp:127.0.0.1:$PORT-:4420 LAB_SHARE=$IX_DIR LAB_TIMEOUT=${LAB_TIMEOUT:-600} \
	"$IX_LAB/run-in-guest.sh" "$top_srcdir/tests/interop/guest-nvmet-target.sh" \
	10.0.2.15 4420 "$NQN" 500 > "$IX_DIR/console.log" 2>&1 &
IX_GUEST_PID=$!
for _ in $(seq 360); do
	[ -e "$IX_DIR/target-ready" ] || [ -e "$IX_DIR/target-failed" ] && break
	kill -0 "$IX_GUEST_PID" 2> /dev/null || break
	sleep 0.5
done
if [ ! -e "$IX_DIR/target-ready" ]; then
	ix_not_ok guest-target "nvmet-tcp did not come up in the guest"
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
	"$CLI" "$1" --timeout 60000 "${@:2}" > "$OUT" 2> "$ERR"
	rc=$?
	if [ "$rc" != "$want" ]; then
		ix_not_ok "$name" "exit status $rc, expected $want (nvmeof $*)"
		sed 's/^/  stderr: /' "$ERR"
	elif [ "$want" != 0 ] && [ "$(wc -l < "$ERR")" != 1 ]; then
		ix_not_ok "$name" "expected one line on stderr (nvmeof $*)"
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

# Options go after the subcommand; --timeout is generous because the guest is slow.
"$CLI" discover "nvme+tcp://127.0.0.1:$PORT" --timeout 60000 > "$OUT" 2> "$ERR"
if [ $? = 0 ]; then ix_ok discover; else ix_not_ok discover "$(cat "$ERR")"; fi
has discover-subsystem "$OUT" "^subnqn: +$NQN\$"
has discover-traddr "$OUT" "^traddr: +10\.0\.2\.15\$"

cli identify 0 identify "$URI"
has identify-linux "$OUT" "model: +Linux"
has identify-ns1 "$OUT" "131072 x 512 bytes"
has identify-ns2 "$OUT" "8192 x 4096 bytes"
cli identify-json 0 identify "$URI" --json
if command -v python3 > /dev/null; then
	if python3 -c "import json; d=json.load(open('$OUT')); assert [n['nsid'] for n in d['namespaces']] == [1, 2]"; then
		ix_ok identify-json-valid
	else
		ix_not_ok identify-json-valid "JSON did not parse or lacks the namespaces"
	fi
fi
cli list-ns 0 list-ns "$URI"
has list-ns-2 "$OUT" "^2 +8192 +4096 "

head -c $((1 << 20)) /dev/urandom > "$IX_DIR/p1"
head -c $((2 << 20)) /dev/urandom > "$IX_DIR/p2"
cli write-ns1 0 write "$URI" --lba 0 --blocks 2048 -i "$IX_DIR/p1"
cli read-ns1 0 read "$URI" --lba 0 --blocks 2048 -o "$IX_DIR/r1"
same verify-ns1 "$IX_DIR/p1" "$IX_DIR/r1"
cli write-ns2 0 write "$URI/2" --lba 10 --blocks 256 -i "$IX_DIR/p1" --fua
cli read-ns2 0 read "$URI/2" --lba 10 --blocks 256 -o "$IX_DIR/r1b"
same verify-ns2 "$IX_DIR/p1" "$IX_DIR/r1b"

cli identify-digests 0 identify "$URI" --hdgst --ddgst
has identify-digests-on "$OUT" "header digest on, data digest on"
cli write-digests 0 write "$URI" --lba 4096 --blocks 4096 -i "$IX_DIR/p2" --hdgst --ddgst
cli read-digests 0 read "$URI" --lba 4096 --blocks 4096 -o "$IX_DIR/r2" --hdgst --ddgst
same verify-digests "$IX_DIR/p2" "$IX_DIR/r2"
cli read-plain 0 read "$URI" --lba 4096 --blocks 4096 -o "$IX_DIR/r2b"
same verify-cross "$IX_DIR/p2" "$IX_DIR/r2b"
cli write-hdgst-only 0 write "$URI/2" --lba 1000 --blocks 512 -i "$IX_DIR/p2" --hdgst
cli read-ddgst-only 0 read "$URI/2" --lba 1000 --blocks 512 -o "$IX_DIR/r2c" --ddgst
same verify-mixed "$IX_DIR/p2" "$IX_DIR/r2c"
cli flush 0 flush "$URI"

cli read-past-end 1 read "$URI" --lba 131071 --blocks 2 -o "$IX_DIR/x"
cli inactive-ns 1 read "$URI/3" --lba 0 --blocks 1 -o "$IX_DIR/x"
cli unknown-nqn 3 identify "nvme+tcp://127.0.0.1:$PORT/nqn.2026-11.io.nvmeof:nobody"
has unknown-nqn-msg "$ERR" "invalid subsystem NQN"

if [ -x "$IO" ]; then
	for mode in plain digests; do
		args=(--loose --queues 2 --qd 32 --seconds 1)
		[ $mode = digests ] && args+=(--digests)
		if "$IO" "$URI" "${args[@]}" > "$IX_DIR/io.log" 2>&1; then
			ix_ok "library-qd32-$mode"
		else
			ix_not_ok "library-qd32-$mode" "initiator_io ${args[*]} failed"
		fi
		grep -vE '^ok ' "$IX_DIR/io.log" | sed 's/^/  /'
	done
else
	ix_log "no $IO: library checks skipped (make check builds it)"
fi

touch "$IX_DIR/host-done"
wait "$IX_GUEST_PID"
IX_GUEST_RC=$?
IX_GUEST_PID=
if [ "$IX_GUEST_RC" = 0 ]; then ix_ok guest-exit; else
	ix_not_ok guest-exit "guest script status $IX_GUEST_RC"
	tail -n 30 "$IX_DIR/console.log"
fi
# (the unknown-NQN check above makes nvmet log "connect request for invalid subsystem")
if [ -s "$IX_DIR/guest-dmesg.txt" ] &&
	! grep -v 'connect request for invalid subsystem' "$IX_DIR/guest-dmesg.txt" |
	grep -qiE 'nvmet.*(error|fail|invalid|unexpected|digest)|Call Trace|BUG'; then
	ix_ok guest-kernel-log
else
	ix_not_ok guest-kernel-log "nvmet complained (or no log):"
	grep -iE 'nvme|nvmet' "$IX_DIR/guest-dmesg.txt" | tail -n 30 | sed 's/^/  /'
fi
ix_finish

#!/bin/bash
# SPDX-License-Identifier: MIT
# Aborted writes must not hold request slots, descriptors or connection slots for ever.
# One host opens 20 controllers with KATO 0 (nothing reclaims an idle controller), each an
# admin queue of depth 32: 31 admin writes (16 KiB, by R2T) whose R2Ts it has read, each
# aborted (the slots wait for data that never comes), then two more writes, the last of
# which finds no free slot so the queue stops reading. The host then closes every socket:
# the daemon must notice, give back all 20 descriptors within 15 s, and with
# --max-connections 20 (which that host had filled) serve a new host at once. A host that
# leaves an R2T unanswered on an open connection loses the queue at --r2t-timeout.
. "$(dirname "$0")/../integration/lib.sh"
it_init
client=$top_builddir/tests/integration/fault_client
nqn=nqn.2026-11.io.nvmeof:park-test
if [ ! -x "$client" ]; then
	echo "$client is missing (build the check programs first)" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi

it_start_target --nqn "$nqn" --ns ram:64M --reactors 2 --no-pin --max-connections 20 ||
	it_finish
timeout 60 "$client" "$IT_PORT" "$nqn" park 20 32 "$IT_PID" 15 20 > "$IT_DIR/park.out" 2>&1
rc=$?
sed 's/^/#   /' "$IT_DIR/park.out"
if [ "$rc" = 0 ]; then
	it_ok "parked aborted writes: descriptors and connection slots back once the host left"
else
	it_not_ok park "exit status $rc"
fi
it_stop_target
it_check "no sanitizer report in the daemon log" \
	bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$IT_LOG'"

it_start_target --nqn "$nqn" --ns ram:64M --reactors 2 --no-pin --r2t-timeout 2 || it_finish
timeout 30 "$client" "$IT_PORT" "$nqn" r2t-silent 2 > "$IT_DIR/r2t.out" 2>&1
rc=$?
sed 's/^/#   /' "$IT_DIR/r2t.out"
if [ "$rc" = 0 ]; then
	it_ok "unanswered R2T: the queue ends at --r2t-timeout"
else
	it_not_ok r2t-silent "exit status $rc"
fi
it_grep "R2T timeout logged" "$IT_LOG" 'no H2CData for .* after the R2T'
it_stop_target
it_check "no sanitizer report in the daemon log" \
	bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$IT_LOG'"
it_finish

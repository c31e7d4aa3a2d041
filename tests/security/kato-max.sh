#!/bin/bash
# kato-max.sh - a Connect with KATO FFFFFFFFh used to wrap to 4 ms when rounded up to the
# 100 ms granularity, and the controller was killed at once. It must get the longest KATO
# the target grants (one hour), stay alive, answer Get Features KATO with that value, and
# the target must say in one line that it granted less than was asked.
. "$(dirname "$0")/../integration/lib.sh"
it_init
RAW=$top_builddir/tests/integration/tcp_raw_client
if [ ! -x "$RAW" ]; then
	echo "# $RAW is missing"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
it_start_target --ns ram:16M || it_finish
NQN=$(sed -n 's/.*listening on tcp:\/\/[^ ]* (\([^,]*\),.*/\1/p' "$IT_LOG" | head -n 1)
if timeout 30 "$RAW" "$IT_PORT" "$NQN" kato-max > "$IT_DIR/raw.out" 2>&1; then
	it_ok "KATO FFFFFFFFh: alive after 1.5 s, $(grep '^KATO' "$IT_DIR/raw.out")"
else
	it_not_ok kato-max "the controller did not survive:"
	sed 's/^/#   /' "$IT_DIR/raw.out" | head -n 5
fi
it_grep "the KATO granted is 3600000 ms" "$IT_DIR/raw.out" '^KATO granted: 3600000 ms'
it_grep "the target logged the clamp" "$IT_LOG" 'KATO 4294967295 ms asked by .*3600000 ms granted'
if grep -q 'keep alive timeout' "$IT_LOG"; then
	it_not_ok no-ka-timeout "the target killed a controller: $(grep -m1 'keep alive timeout' "$IT_LOG")"
else
	it_ok "no keep alive timeout in the log"
fi
it_stop_target
it_finish

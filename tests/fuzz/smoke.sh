#!/bin/sh
# SPDX-License-Identifier: MIT
# Run each libFuzzer target for a bounded time from its seed corpus (copied to a scratch
# directory, so the repository's corpus stays as committed) plus its regression inputs.
#   smoke.sh BUILD_FUZZ_DIR SRC_FUZZ_DIR     (FUZZ_SECONDS, FUZZ_TARGETS from make)
# Prints one line per target: seconds run, executions, and whether it found anything.
# A finding leaves its input in $FUZZ_ARTIFACTS (default: the build directory) and makes
# the run fail.
set -u
bin=$1
src=$2
secs=${FUZZ_SECONDS:-30}
targets=${FUZZ_TARGETS:-"tcp_recv fabrics iscsi iscsi_conn scsi_xlate config initiator tls_recv"}
art=${FUZZ_ARTIFACTS:-$bin/artifacts}
mkdir -p "$art"
status=0
for t in $targets; do
	work=$(mktemp -d)
	cp "$src/corpus/$t"/* "$work/" 2>/dev/null || :
	[ -d "$src/regress/$t" ] && cp "$src/regress/$t"/* "$work/" 2>/dev/null
	log=$bin/fuzz-$t.log
	start=$(date +%s)
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		"$bin/fuzz_$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
		-max_len=65536 -artifact_prefix="$art/$t-" -print_final_stats=1 \
		"$work" >"$log" 2>&1
	rc=$?
	end=$(date +%s)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		echo "fuzz_$t: $((end - start)) s, ${runs:-?} runs, no finding"
	else
		echo "fuzz_$t: FINDING after $((end - start)) s (exit $rc); see $log and $art"
		tail -n 40 "$log"
		status=1
	fi
	rm -rf "$work"
done
exit $status

#!/bin/bash
# tests/integration/tcp-ceiling.sh - nvmeof-tcp-ceiling runs each PDU shape nvmeof-bench
# asks of it, reports what the bench parses, and refuses bad options naming them.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
bin=$top_builddir/initiator/nvmeof-tcp-ceiling
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok $1: ${*:2}"; }
num() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<< "$2"; }

# shape NAME ARGS...: a one-second run; requests > 0 and the CPU figure present
shape() {
	local name=$1 out iops cpu
	shift
	if ! out=$("$bin" --json -t 1 "$@" 2>&1); then
		not_ok "$name" "exit status $?: $out"
		return
	fi
	iops=$(num iops "$out")
	cpu=$(num server_cpu_us_per_req "$out")
	if [ -n "$iops" ] && [ -n "$cpu" ] && awk -v i="$iops" 'BEGIN { exit !(i > 100) }'; then
		ok "$name: $iops IOPS, $cpu us server CPU per request"
	else
		not_ok "$name" "unexpected output: $out"
	fi
}
shape "4K read QD32" -q 32 --req 72 --resp 4120 --resp2 24
shape "4K write in capsule" -q 32 --req 4168 --resp 24 --resp2 0
shape "128K read QD4, 2 connections" -q 4 -c 2 --req 72 --resp 131096 --resp2 24
shape "QD1" -q 1

out=$("$bin" --qd 0 2>&1)
rc=$?
if [ $rc = 2 ] && grep -q -- "--qd: bad value '0'" <<< "$out"; then
	ok "bad --qd named"
else
	not_ok "bad --qd" "status $rc: $out"
fi
out=$("$bin" --pin x 2>&1)
if [ $? = 2 ] && grep -q -- "--pin: bad value 'x'" <<< "$out"; then ok "bad --pin named"; else not_ok "bad --pin" "$out"; fi
echo "tcp-ceiling: $pass passed, $fail failed"
[ $fail = 0 ]

#!/bin/bash
# tests/layering-selftest.sh - tests/layering.sh accepts this tree, and rejects a copy
# of it with one forbidden include of each kind, naming the file, line and rule.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
check=$top_srcdir/tests/layering.sh
. "$top_srcdir/tests/require.sh"
nv_require cpio
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvmeof-layering.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok $1: ${*:2}"; }

if out=$(bash "$check" "$top_srcdir"); then ok "tree"; else not_ok "tree" "$out"; fi

# copy FILE INCLUDE RULE-TEXT: a fresh copy with INCLUDE added to FILE must fail naming it
case_of() {
	local file=$1 inc=$2 want=$3 t=$tmp/t out
	rm -rf "$t" && mkdir -p "$t"
	(cd "$top_srcdir" && find common target initiator -name '*.[ch]' -print0 |
		cpio -0 -pdm --quiet "$t") || { not_ok "$file" "copy failed"; return; }
	printf '#include "%s"\n' "$inc" >> "$t/$file"
	if out=$(bash "$check" "$t"); then
		not_ok "$file <- $inc" "accepted"
	elif grep -qF "$file:" <<< "$out" && grep -qF "$want" <<< "$out"; then
		ok "$file <- $inc: $want"
	else
		not_ok "$file <- $inc" "wrong report: $out"
	fi
}
case_of target/tcp/tcp_qpair.c iscsi/iscsi_internal.h "private to target/iscsi/"
case_of common/log.c core/nvmf.h "common/ must not include another room"
case_of target/core/io.c lib/nvmeof.h "must not include the other side's rooms"
case_of initiator/cli/cli.c lib/host_ctrlr.h "private to initiator/lib/"
case_of initiator/lib/queue/host_qpair.c nvme/host_nvme.h "initiator/lib/queue/ must not include nvme/"
case_of initiator/lib/nvme/host_tcp.c scsi/host_iscsi.h "initiator/lib/nvme/ must not include scsi/"
case_of initiator/lib/scsi/host_iscsi.c nvme/host_auth.h "initiator/lib/scsi/ must not include nvme/"
case_of initiator/lib/nvme/host_tcp.c nvme/host_nvme.h "a room includes its own headers by bare name"
case_of initiator/lib/scsi/host_iscsi.c host_internal.h "not in initiator/lib/scsi/"
case_of target/bdev/bdev.c tcp_internal.h "not in target/bdev/"
case_of target/core/io.c core/nvmf.h "a room includes its own headers by bare name"
echo "layering-selftest: $pass passed, $fail failed"
[ $fail = 0 ]

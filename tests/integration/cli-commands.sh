#!/bin/bash
# cli-commands.sh - every nvme-cli-style command of the nvmeof CLI against the daemon on
# 127.0.0.1: get-log pages, get/set-feature, id-ctrl/id-ns, compare (one that must fail
# does), write-zeroes (reads back zeroes), dsm, verify, reservations between two hosts
# (the second host's write conflicts while the first holds Write Exclusive, and goes
# through once it is released), -o json on each, -V, write's block count from its file,
# and a failed read that leaves no output file.

. "$(dirname "$0")/lib.sh"

NQN=nqn.2026-11.io.nvmeof:default
H1=(--hostnqn nqn.2014-08.org.nvmeof.test:host1 --hostid 11111111-1111-4111-8111-111111111111)
H2=(--hostnqn nqn.2014-08.org.nvmeof.test:host2 --hostid 22222222-2222-4222-8222-222222222222)

it_init
nv_require python3
it_start_target --ns ram:64M || it_finish
U=nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1

# json_has NAME PYTHON-EXPR: $IT_OUT parses as JSON and EXPR (over d) is true
json_has() {
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$IT_OUT" "$2" 2> "$IT_DIR/py.err"; then
		it_ok "$1"
	else
		it_not_ok "$1" "JSON check failed: $2"
		sed 's/^/#   /' "$IT_OUT" | head -n 20
		sed 's/^/#   /' "$IT_DIR/py.err" | head -n 5
	fi
}

it_cli version 0 -V
it_grep version-text "$IT_OUT" '^nvmeof [0-9]'
it_cli version-cmd 0 get-log -V
it_grep version-cmd-text "$IT_OUT" '^nvmeof [0-9]'

# ---- identify data, field by field
it_cli id-ctrl 0 id-ctrl "$U"
it_grep id-ctrl-subnqn "$IT_OUT" "^subnqn +: $NQN\$"
it_grep id-ctrl-mdts "$IT_OUT" '^mdts +: [0-9]+'
it_cli id-ctrl-json 0 id-ctrl "$U" -o json
json_has id-ctrl-json-fields "d['subnqn'] == '$NQN' and d['nn'] >= 1 and d['cntrltype'] == 1"
it_cli id-ns-json 0 id-ns "$U" -o json
json_has id-ns-json-size "d['nsid'] == 1 and d['nsze'] * (1 << [f['ds'] for f in d['lbafs'] if f['in_use']][0]) == 64 << 20"

# ---- log pages
it_cli smart 0 get-log "$U" --log-id smart -o json
json_has smart-json "d['avail_spare'] == 100 and 'data_units_written' in d and d['temperature'] > 0"
it_cli smart-normal 0 get-log "$U" -i smart
it_grep smart-normal-text "$IT_OUT" '^critical_warning *: 0'
it_cli error-log 0 get-log "$U" --log-id error -o json
json_has error-log-json "isinstance(d['errors'], list)"
it_cli fw-log 0 get-log "$U" --log-id fw-slot -o json
json_has fw-log-json "d['afi'] & 7 >= 1 and d['frs%d' % (d['afi'] & 7)]"
it_cli changed-ns 0 get-log "$U" --log-id changed-ns -o json
json_has changed-ns-json "isinstance(d['changed_ns'], list)"
it_cli effects 0 get-log "$U" --log-id effects -o json
# Read (io 0x02) and Write (io 0x01) are supported commands
json_has effects-json "{(c['set'], c['opcode']) for c in d['commands']} >= {('io', 1), ('io', 2), ('admin', 6)}"
it_cli log-bad-id 2 get-log "$U" --log-id smrt
it_grep log-bad-id-msg "$IT_ERR" "--log-id: bad value 'smrt'"

# ---- features: the Number of Queues, then Asynchronous Event Configuration set and read back
it_cli get-feature 0 get-feature "$U" -f 7 -o json
json_has get-feature-json "d['feature_id'] == 7 and d['value'] > 0"
# (a feature set lives as long as its controller: every CLI run connects a new one)
it_cli set-feature-aec 0 set-feature "$U" -f 0x0b --value 0x100 -o json
json_has set-feature-aec-json "d['feature_id'] == 11 and d['set'] == 0x100"
it_cli set-feature-bad 1 set-feature "$U" -f 0x0b --value 0x80000000

# ---- data: write a file (block count from its size), compare, write-zeroes, dsm, verify
head -c 65536 /dev/urandom > "$IT_DIR/data"
it_cli write-from-file 0 write "$U" --lba 2048 -d "$IT_DIR/data"
it_cli compare-same 0 compare "$U" --lba 2048 --blocks 128 -d "$IT_DIR/data"
it_cli compare-json 0 compare "$U" --lba 2048 --blocks 128 -d "$IT_DIR/data" -o json
json_has compare-json-status "d['status'] == 'ok' and d['command'] == 'compare'"
# a compare that must fail: one byte changed in the last block
cp "$IT_DIR/data" "$IT_DIR/data2"
printf 'X' | dd of="$IT_DIR/data2" bs=1 seek=65000 conv=notrunc 2> /dev/null
it_cli compare-differs 1 compare "$U" --lba 2048 --blocks 128 -d "$IT_DIR/data2"
it_grep compare-differs-msg "$IT_ERR" 'differs in LBAs .*Compare Failure'
it_cli write-zeroes 0 write-zeroes "$U" --lba 2048 --blocks 64
it_cli read-zeroes 0 read "$U" --lba 2048 --blocks 128 -d "$IT_DIR/back"
it_check read-back-zeroes cmp -s <(head -c 32768 /dev/zero) <(head -c 32768 "$IT_DIR/back")
it_check read-back-rest cmp -s <(tail -c 32768 "$IT_DIR/data") <(tail -c 32768 "$IT_DIR/back")
it_cli compare-after-zeroes 1 compare "$U" --lba 2048 --blocks 64 -d "$IT_DIR/data"
it_cli verify 0 verify "$U" --lba 0 --blocks 1024
it_cli verify-json 0 verify "$U" --lba 0 --blocks 8 -o json
json_has verify-json-status "d['status'] == 'ok'"
it_cli verify-out-of-range 1 verify "$U" --lba 999999999 --blocks 1
it_cli dsm 0 dsm "$U" --lba 4096 --blocks 256 --ad
it_cli dsm-needs-ad 2 dsm "$U" --lba 4096 --blocks 256

# ---- a failed read leaves no output file; an odd-sized input is refused by name
it_cli read-fails 1 read "$U" --lba 999999999 --blocks 1 -d "$IT_DIR/never"
it_check read-fails-no-file test ! -e "$IT_DIR/never"
head -c 1000 /dev/urandom > "$IT_DIR/odd"
it_cli write-odd-size 2 write "$U" --lba 0 -d "$IT_DIR/odd"
it_grep write-odd-size-msg "$IT_ERR" 'not a multiple of the block size'

# ---- reservations between two hosts
it_cli resv-register-1 0 resv-register "$U" "${H1[@]}" --nrkey 0xaa
it_cli resv-register-2 0 resv-register "$U" "${H2[@]}" --nrkey 0xbb
it_cli resv-acquire-1 0 resv-acquire "$U" "${H1[@]}" --crkey 0xaa --rtype 1
it_cli resv-report 0 resv-report "$U" "${H1[@]}" -o json
json_has resv-report-json "d['rtype'] == 1 and d['regctl'] == 2 and sorted(r['rkey'] for r in d['regctlext']) == [0xaa, 0xbb] and [r['rkey'] for r in d['regctlext'] if r['rcsts']] == [0xaa]"
it_cli resv-write-conflict 1 write "$U" "${H2[@]}" --lba 0 -d "$IT_DIR/data"
it_grep resv-write-conflict-msg "$IT_ERR" 'Reservation Conflict'
it_cli resv-read-allowed 0 read "$U" "${H2[@]}" --lba 0 --blocks 1 -d "$IT_DIR/r2"
it_cli resv-acquire-2-conflict 1 resv-acquire "$U" "${H2[@]}" --crkey 0xbb --rtype 1
it_cli resv-release-wrong-key 1 resv-release "$U" "${H1[@]}" --crkey 0xcc --rtype 1
it_cli resv-release-1 0 resv-release "$U" "${H1[@]}" --crkey 0xaa --rtype 1
it_cli resv-write-after-release 0 write "$U" "${H2[@]}" --lba 0 -d "$IT_DIR/data"
it_cli resv-unregister-2 0 resv-register "$U" "${H2[@]}" --crkey 0xbb --action 1
it_cli resv-report-after 0 resv-report "$U" "${H1[@]}" -o json
json_has resv-report-after-json "d['rtype'] == 0 and [r['rkey'] for r in d['regctlext']] == [0xaa]"

# ---- -o json on the older commands too, and usage errors name the value
it_cli list-ns-json 0 list-ns "$U" -o json
json_has list-ns-json-ns "d['namespaces'][0]['nsid'] == 1"
it_cli flush-json 0 flush "$U" -o json
json_has flush-json-status "d['status'] == 'ok'"
it_cli bad-format 2 id-ctrl "$U" -o xml
it_grep bad-format-msg "$IT_ERR" "-o: bad value 'xml'"

# ---- a read into a device or FIFO writes into it, and leaves it one (a temporary file
# renamed over it would replace the device: /dev/null with a regular file)
mkfifo "$IT_DIR/fifo"
cat "$IT_DIR/fifo" > "$IT_DIR/from-fifo" &
cat_pid=$!
it_cli read-into-fifo 0 read "$U" --lba 2048 --blocks 8 -d "$IT_DIR/fifo"
wait "$cat_pid"
if [ -p "$IT_DIR/fifo" ] && [ "$(wc -c < "$IT_DIR/from-fifo")" = 4096 ]; then
	it_ok read-into-fifo-kept
else
	it_not_ok read-into-fifo-kept "the FIFO was replaced or got $(wc -c < "$IT_DIR/from-fifo") bytes"
fi

it_stop_target
it_finish

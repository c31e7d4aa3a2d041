#!/bin/bash
# ptpl.sh - reservations that persist through power loss: two hosts register (the first
# with Persist Through Power Loss set, nvmeof resv-register --cptpl 3), the first takes
# Write Exclusive, the target is killed with SIGKILL and restarted on the same
# --state-dir: the report shows the same holder, keys and generation, PTPLS set, and the
# second host's write still conflicts. Turned off (Set Features 83h), or never set, the
# state is gone after the next kill and restart, as the spec says. A corrupt state file
# costs one error line: the namespace comes up with no reservation, the file is kept
# aside as *.corrupt.

. "$(dirname "$0")/lib.sh"

NQN=nqn.2026-11.io.nvmeof:default
H1=(--hostnqn nqn.2014-08.org.nvmeof.test:host1 --hostid 11111111-1111-4111-8111-111111111111)
H2=(--hostnqn nqn.2014-08.org.nvmeof.test:host2 --hostid 22222222-2222-4222-8222-222222222222)

it_init
nv_require python3
STATE=$IT_DIR/state
DISK=$IT_DIR/disk.img
truncate -s 64M "$DISK"
head -c 4096 /dev/urandom > "$IT_DIR/data"
TARGET_ARGS=(--ns "$DISK" --state-dir "$STATE" --reactors 2)

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

# kill_target: SIGKILL, as a power cut would stop it (no shutdown path runs)
kill_target() {
	kill -KILL "$IT_PID"
	wait "$IT_PID" 2> /dev/null
	IT_PID=
}

start() {
	it_start_target "${TARGET_ARGS[@]}" || it_finish
	U=nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1
}

# ---- registered and reserved with PTPL: survives SIGKILL
start
it_cli reg1-ptpl 0 resv-register "$U" "${H1[@]}" --nrkey 0xaa --cptpl 3
it_cli reg2 0 resv-register "$U" "${H2[@]}" --nrkey 0xbb
it_cli acquire1 0 resv-acquire "$U" "${H1[@]}" --crkey 0xaa --rtype 1
it_cli report-before 0 resv-report "$U" "${H1[@]}" -o json
json_has report-before-json "d['ptpls'] == 1 and d['rtype'] == 1 and d['regctl'] == 2 and [r['rkey'] for r in d['regctlext'] if r['rcsts']] == [0xaa]"
cp "$IT_OUT" "$IT_DIR/before.json"
it_cli id-ns-rescap 0 id-ns "$U" -o json
json_has id-ns-rescap-ptpl "d['rescap'] & 1 == 1"
it_cli get-feature-ptpl 0 get-feature "$U" "${H1[@]}" -f 0x83 --nsid 1 -o json
json_has get-feature-ptpl-on "d['value'] == 1"
it_check state-file test -n "$(ls "$STATE"/resv-*.state 2> /dev/null)"
it_check state-file-mode test "$(stat -c %a "$STATE"/resv-*.state)" = 600

kill_target
start
it_grep restored-log "$IT_LOG" 'reservation restored \(2 registrant'
it_cli report-after-kill 0 resv-report "$U" "${H2[@]}" -o json
if python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
key = lambda d: (d["gen"], d["rtype"], d["ptpls"], sorted((r["hostid"], r["rkey"], r["rcsts"]) for r in d["regctlext"]))
sys.exit(0 if key(a) == key(b) else 1)' "$IT_DIR/before.json" "$IT_OUT"; then
	it_ok same-holder-and-registrants
else
	it_not_ok same-holder-and-registrants "the report changed across the restart"
	sed 's/^/#   before: /' "$IT_DIR/before.json"
	sed 's/^/#   after:  /' "$IT_OUT"
fi
it_cli write-conflicts-after-kill 1 write "$U" "${H2[@]}" --lba 0 -d "$IT_DIR/data"
it_grep write-conflicts-after-kill-msg "$IT_ERR" 'Reservation Conflict'
it_cli holder-writes-after-kill 0 write "$U" "${H1[@]}" --lba 0 -d "$IT_DIR/data"
it_cli holder-releases 0 resv-release "$U" "${H1[@]}" --crkey 0xaa --rtype 1
it_cli holder-acquires-again 0 resv-acquire "$U" "${H1[@]}" --crkey 0xaa --rtype 1

# ---- PTPL turned off (Set Features 83h): the next restart clears the state
it_cli set-feature-ptpl-off 0 set-feature "$U" "${H1[@]}" -f 0x83 --nsid 1 --value 0
it_check state-file-removed test -z "$(ls "$STATE"/resv-*.state 2> /dev/null)"
kill_target
start
it_cli report-cleared 0 resv-report "$U" "${H1[@]}" -o json
json_has report-cleared-json "d['ptpls'] == 0 and d['rtype'] == 0 and d['regctl'] == 0"
it_cli write-after-clear 0 write "$U" "${H2[@]}" --lba 0 -d "$IT_DIR/data"

# ---- never set: gone after a restart
it_cli reg1-no-ptpl 0 resv-register "$U" "${H1[@]}" --nrkey 0xaa
it_cli acquire1-no-ptpl 0 resv-acquire "$U" "${H1[@]}" --crkey 0xaa --rtype 2
it_cli write-conflicts-no-ptpl 1 write "$U" "${H2[@]}" --lba 0 -d "$IT_DIR/data"
kill_target
start
it_cli report-no-ptpl 0 resv-report "$U" "${H1[@]}" -o json
json_has report-no-ptpl-json "d['rtype'] == 0 and d['regctl'] == 0"

# ---- a corrupt state file: one error line, the namespace serves with no reservation
it_cli reg1-ptpl-again 0 resv-register "$U" "${H1[@]}" --nrkey 0xaa --cptpl 3
it_cli acquire1-again 0 resv-acquire "$U" "${H1[@]}" --crkey 0xaa --rtype 2
kill_target
F=$(ls "$STATE"/resv-*.state)
sed -i 's/^gen=.*/gen=999/' "$F"
start
n=$(grep -c 'reservation state' "$IT_LOG")
it_check corrupt-one-line test "$n" = 1
it_grep corrupt-names-file "$IT_LOG" "$(basename "$F"): corrupt reservation state \(checksum mismatch\); namespace 1 of $NQN starts with no reservation"
it_check corrupt-kept test -f "$F.corrupt"
it_cli corrupt-ns-serves 0 read "$U" "${H2[@]}" --lba 0 --blocks 8 -d "$IT_DIR/r"
it_cli corrupt-report 0 resv-report "$U" "${H1[@]}" -o json
json_has corrupt-report-json "d['rtype'] == 0 and d['regctl'] == 0"
# and reservations work again, saved afresh
it_cli reg-after-corrupt 0 resv-register "$U" "${H1[@]}" --nrkey 0xcc --cptpl 3
kill_target
start
it_cli report-after-corrupt 0 resv-report "$U" "${H1[@]}" -o json
json_has report-after-corrupt-json "d['regctl'] == 1 and d['regctlext'][0]['rkey'] == 0xcc"

it_stop_target
it_finish

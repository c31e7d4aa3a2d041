#!/bin/bash
# state-dir.sh - the root daemon's writes under --state-dir cannot be aimed elsewhere. A
# symlink planted at the name a reservation save used to write its temporary under
# (resv-ID.state.tmp) pointing at a victim file: a save with PTPL on must leave the victim
# as it was and still replace the state file. A state directory of mode 0777 stops the
# start with one line naming the path and the mode.
. "$(dirname "$0")/../integration/lib.sh"
it_init
NQN=nqn.2026-11.io.nvmeof:default
H1=(--hostnqn nqn.2014-08.org.nvmeof.test:host1 --hostid 11111111-1111-4111-8111-111111111111)
H2=(--hostnqn nqn.2014-08.org.nvmeof.test:host2 --hostid 22222222-2222-4222-8222-222222222222)
STATE=$IT_DIR/state
DISK=$IT_DIR/disk.img
truncate -s 16M "$DISK"
mkdir -m 0700 "$STATE"

it_start_target --ns "$DISK" --state-dir "$STATE" || it_finish
U=nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1
it_cli "register with PTPL" 0 resv-register "$U" "${H1[@]}" --nrkey 0xaa --cptpl 3
st=$(ls "$STATE"/resv-*.state 2> /dev/null | head -n 1)
it_check "the state file exists" test -n "$st"
echo "precious victim data" > "$IT_DIR/victim"
ln -s "$IT_DIR/victim" "$st.tmp"
it_cli "a second registration saves the state again" 0 resv-register "$U" "${H2[@]}" --nrkey 0xbb
sleep 0.3 # the save runs on its own thread
if [ "$(cat "$IT_DIR/victim")" = "precious victim data" ]; then
	it_ok "the planted symlink was not followed: the victim is intact"
else
	it_not_ok symlink-followed "the victim now holds: $(head -c 200 "$IT_DIR/victim" | tr '\n' ' ')"
fi
it_check "the planted symlink is still a symlink" test -L "$st.tmp"
it_check "the state file is a regular file" test -f "$st" -a ! -L "$st"
it_grep "the state file has the second registrant" "$st" '^reg=22222222'
it_check "no temporary left behind" test -z "$(ls "$STATE" | grep -v -e '\.state$' -e '\.state\.tmp$' -e '\.id$')"
it_stop_target

# A state directory that anyone may write: refused at start, in one line.
mkdir "$IT_DIR/open"
chmod 0777 "$IT_DIR/open"
"$IT_TARGET_BIN" --listen tcp://127.0.0.1:0 --discovery-port 0 --ns "$DISK" \
	--state-dir "$IT_DIR/open" --no-control-socket > "$IT_DIR/open.log" 2>&1 &
pid=$!
for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2> /dev/null; then
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null
	it_not_ok state-dir-0777 "the target started with a state directory of mode 0777"
	sed 's/^/#   /' "$IT_DIR/open.log" | head -n 5
else
	wait "$pid"
	rc=$?
	lines=$(grep -c . "$IT_DIR/open.log")
	if [ "$rc" != 0 ] && [ "$lines" = 1 ] &&
		grep -qE "state directory $IT_DIR/open: mode 0777, writable by group or other" "$IT_DIR/open.log"; then
		it_ok "state directory of mode 0777 refused: $(cat "$IT_DIR/open.log")"
	else
		it_not_ok state-dir-0777 "exit $rc, $lines lines:"
		sed 's/^/#   /' "$IT_DIR/open.log"
	fi
fi
it_check "nothing was written in it" test -z "$(ls -A "$IT_DIR/open")"
it_finish

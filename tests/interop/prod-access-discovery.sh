#!/bin/bash
# prod-access-discovery.sh - nvmeof-target as deployed: started from a configuration file
# (-c) with one NVMe/TCP port on 127.0.0.1 that advertises 10.0.2.2 (the address the lab
# guest dials), an open subsystem and one restricted to host A, file-backed namespaces
# and the discovery service on 127.0.0.1:8009. The Linux kernel host in the lab guest:
#   - nvme discover without -s (8009) and with -s PORT: host A sees both subsystems, host
#     B only the open one, each entry at 10.0.2.2:PORT (the advertised address);
#   - host B is refused by the restricted subsystem and gets into the open one, host A
#     gets into the restricted one;
#   - while host A is connected, a namespace is added to the file and the target gets
#     SIGHUP: it appears on host A's controller without a reconnect and takes I/O.
# If another program holds 127.0.0.1:8009, the check without -s is skipped (failed under
# CI=true).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/prod-lib.sh"
px_init
[ "$IX_REF" = nvmet ] && ix_cannot_run "no reference run: this test exercises nvmeof-target's configuration file"

NQN_O=nqn.2026-11.io.nvmeof:open
NQN_R=nqn.2026-11.io.nvmeof:restricted
HIDA=$(cat /proc/sys/kernel/random/uuid)
HIDB=$(cat /proc/sys/kernel/random/uuid)
HA=nqn.2014-08.org.nvmexpress:uuid:$HIDA
HB=nqn.2014-08.org.nvmexpress:uuid:$HIDB
NS2BYTES=$((32 * 1024 * 1024))
PORT=$(ix_free_port) || exit 99
truncate -s $((64 * 1024 * 1024)) "$IX_DIR/open.img" "$IX_DIR/restricted1.img"
truncate -s "$NS2BYTES" "$IX_DIR/restricted2.img"
CONF=$IX_DIR/nvmeof-target.json

# write_config NNS: the configuration with NNS namespaces in the restricted subsystem
write_config() {
	local ns2=
	[ "$1" = 2 ] && ns2=',
        { "nsid": 2, "enable": 1, "device": { "path": "'"$IX_DIR"'/restricted2.img" } }'
	cat > "$CONF.new" <<EOF
{
  "hosts": [ { "nqn": "$HA" } ],
  "ports": [
    { "portid": 1, "advertise": "10.0.2.2",
      "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1", "trsvcid": "$PORT",
                "treq": "not specified" },
      "param": { "inline_data_size": "-1", "pi_enable": "0" },
      "referrals": [],
      "subsystems": [ "$NQN_O", "$NQN_R" ] }
  ],
  "subsystems": [
    { "nqn": "$NQN_O", "attr": { "allow_any_host": "1", "model": "nvmeof open" },
      "allowed_hosts": [],
      "namespaces": [
        { "nsid": 1, "enable": 1, "device": { "path": "$IX_DIR/open.img" } } ] },
    { "nqn": "$NQN_R", "attr": { "allow_any_host": "0", "model": "nvmeof restricted" },
      "allowed_hosts": [ "$HA" ],
      "namespaces": [
        { "nsid": 1, "enable": 1, "device": { "path": "$IX_DIR/restricted1.img" } }$ns2 ] }
  ]
}
EOF
	mv "$CONF.new" "$CONF"
}
write_config 1

# Every other test starts its targets with --discovery-port 0; a target outside the suite
# may still hold 8009 for a while, so wait up to a minute for it to go.
held8009() {
	ss -Htlnp "( sport = :8009 )" 2> /dev/null | grep -E '127\.0\.0\.1:8009|0\.0\.0\.0:8009|\*:8009'
}
for _ in $(seq 120); do
	busy8009=$(held8009) || break
	sleep 0.5
done
IX_TARGET_LOG=$IX_DIR/target.log
px_start target-start "$IX_TARGET_LOG" "$PORT" -c "$CONF" --log-level info || exit 1 # serves 8009
IX_TARGET_PID=$PX_PID

sleep 0.5
if grep -q 'discovery on tcp://127.0.0.1:8009' "$IX_TARGET_LOG"; then
	DISC8009=1
else
	DISC8009=0
	why="127.0.0.1:8009 is not served by this nvmeof-target (held by: ${busy8009:-nobody?})"
	if [ "${CI:-}" = true ]; then
		ix_not_ok discover-8009 "$why"
	else
		ix_log "SKIP check discover-8009 (nvme discover without -s): $why"
	fi
fi

t0=$SECONDS
px_guest_start "$top_srcdir/tests/interop/guest-prod-access-discovery.sh" 10.0.2.2 "$PORT" \
	"$NQN_O" "$NQN_R" "$HA" "$HIDA" "$HB" "$HIDB" "$DISC8009" "$NS2BYTES"
if px_wait_guest connected 600; then
	ix_log "host A connected ($(cat "$IX_DIR/connected")): adding namespace 2, SIGHUP"
	nlines=$(wc -l < "$IX_TARGET_LOG")
	write_config 2
	kill -HUP "$IX_TARGET_PID"
	for i in $(seq 100); do
		tail -n +"$((nlines + 1))" "$IX_TARGET_LOG" | grep -qE 'namespaces \+1 -0|reload failed' && break
		sleep 0.1
	done
	rl=$(tail -n +"$((nlines + 1))" "$IX_TARGET_LOG")
	if grep -qE 'namespaces \+1 -0' <<< "$rl" && ! grep -q 'reload failed' <<< "$rl"; then
		ix_ok reload
	else
		ix_not_ok reload "target log after SIGHUP: $(tr '\n' '|' <<< "$rl")"
	fi
	px_tell_guest reloaded "$(grep -E 'namespaces \+1 -0' <<< "$rl")"
fi
px_guest_wait
ix_log "guest run: $((SECONDS - t0)) s"
px_guest_skipped
ix_guest_results

if kill -0 "$IX_TARGET_PID" 2> /dev/null; then
	ix_ok target-alive
else
	ix_not_ok target-alive "nvmeof-target exited during the run"
fi
ix_expect_log target-refused-b 1 "host $HB refused on $NQN_R" "host B's connect to the restricted subsystem"
n=$(grep -cE "ctrlr [0-9]+ on $NQN_R for $HA" "$IX_TARGET_LOG")
if [ "$n" = 1 ]; then
	ix_ok target-one-controller
else
	ix_not_ok target-one-controller "$n controllers of $NQN_R for host A (expected 1: no reconnect)"
fi
if grep -qE "ctrlr [0-9]+ on $NQN_R for $HB" "$IX_TARGET_LOG"; then
	ix_not_ok target-no-controller-b "the target created a controller of $NQN_R for host B"
else
	ix_ok target-no-controller-b
fi
ix_stop_target
if [ "$IX_TARGET_STATUS" = 0 ]; then
	ix_ok target-exit
else
	ix_not_ok target-exit "nvmeof-target on SIGTERM: exit status $IX_TARGET_STATUS"
fi
echo "--- target log (last 40 lines of $(wc -l < "$IX_TARGET_LOG")) ---"
tail -n 40 "$IX_TARGET_LOG" | sed 's/^/  target: /'
ix_finish

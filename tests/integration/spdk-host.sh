#!/bin/bash
# spdk-host.sh - hosts that behave like SPDK's (spdk_host_client.c) against the daemon on
# 127.0.0.1: Connect with an empty Host NQN, Identify and verified I/O where any host is
# allowed, refused (Connect Invalid Host) by a host list; an Asynchronous Event Request
# outstanding when Property Set CC.SHN arrives with its command ID: the Property Set is
# answered, the admin queue stays up. The daemon stays up throughout and exits cleanly.

. "$(dirname "$0")/lib.sh"

NQN=nqn.2026-11.io.nvmeof:spdk-host
CLIENT=$top_builddir/tests/integration/spdk_host_client

it_init
[ -x "$CLIENT" ] || { echo "$IT_NAME: $CLIENT is missing (build first)" >&2; exit 99; }

# it_client NAME SCENARIO : the client's own checks, its output kept on failure
it_client() {
	if "$CLIENT" "$IT_PORT" "$NQN" "$2" > "$IT_DIR/client" 2>&1; then
		it_ok "$1"
	else
		it_not_ok "$1" "spdk_host_client $2 failed:"
		sed 's/^/#   /' "$IT_DIR/client"
	fi
}

file=$IT_DIR/ns.img
truncate -s 64M "$file"
if it_start_target --nqn "$NQN" --ns ram:64M --ns "$file" --reactors 2 --no-pin; then
	it_client empty-hostnqn empty-hostnqn
	it_client aer-cid-reuse aer-cid-reuse
	it_client empty-hostnqn-again empty-hostnqn
	it_grep aer-retired-logged "$IT_LOG" 'command ID [0-9]+ reused'
	it_stop_target
fi

if it_start_target --nqn "$NQN" --ns ram:64M --allow-host nqn.2014-08.org.nvmeof.test:only \
	--reactors 1 --no-pin; then
	it_client refused-hostnqn refused-hostnqn
	it_stop_target
fi
it_finish

#!/bin/bash
# initiator-cli.sh - the nvmeof CLI against nvmeof-target on 127.0.0.1: a RAM namespace
# and a file namespace; discover (text and JSON), identify (text, JSON, one namespace),
# list-ns, write/read/compare patterns (across MDTS and the CLI's chunking, with and
# without digests, FUA), flush, then every failure a script may meet: exit status 1 with
# the NVMe status by name, 2 for usage and URI errors, 3 for connection failures, each
# with one line on stderr. After the target stops, the file holds what was written.
. "$(dirname "$0")/lib.sh"
it_init

NQN=nqn.2026-11.io.nvmeof:it-cli
IMG=$IT_DIR/ns2.img
truncate -s 32M "$IMG"
it_start_target --nqn "$NQN" --ns ram:64M --ns "$IMG" || it_finish
URI=nvme+tcp://127.0.0.1:$IT_PORT/$NQN
have_json() { command -v python3 > /dev/null; }
json_eval() { python3 -c "import json,sys; d=json.load(open('$IT_OUT')); sys.exit(0 if ($1) else 1)"; }

# ---- discovery ------------------------------------------------------------------------
it_cli discover 0 discover "nvme+tcp://127.0.0.1:$IT_PORT"
it_grep discover-subnqn "$IT_OUT" "^subnqn: +$NQN\$"
it_grep discover-trsvcid "$IT_OUT" "^trsvcid: +$IT_PORT\$"
it_grep discover-header "$IT_OUT" "^Discovery Log Number of Records [0-9]+, Generation counter"
it_cli discover-json 0 discover "nvme+tcp://127.0.0.1:$IT_PORT" --json
if have_json; then
	it_check discover-json-valid json_eval "any(r['subnqn'] == '$NQN' and r['trtype'] == 'tcp' for r in d['records'])"
fi
# the discovery NQN spelled out means the same controller
it_cli discover-explicit-nqn 0 discover "nvme+tcp://127.0.0.1:$IT_PORT/nqn.2014-08.org.nvmexpress.discovery"

# ---- identify / list-ns ------------------------------------------------------------------
it_cli identify 0 identify "$URI"
it_grep identify-subnqn "$IT_OUT" "subnqn: +$NQN"
it_grep identify-ns1 "$IT_OUT" "^Namespace 1:"
it_grep identify-ns2 "$IT_OUT" "^Namespace 2:"
it_grep identify-ns1-size "$IT_OUT" "131072 x 512 bytes"
it_cli identify-json 0 identify "$URI" --json
if have_json; then
	it_check identify-json-valid json_eval "d['controller']['subnqn'] == '$NQN' and [n['nsid'] for n in d['namespaces']] == [1, 2] and d['namespaces'][0]['blocks'] == 131072 and d['controller']['cntrltype'] == 1"
fi
it_cli identify-one-ns 0 identify "$URI/2" --json
if have_json; then
	it_check identify-one-ns-json json_eval "[n['nsid'] for n in d['namespaces']] == [2] and d['namespaces'][0]['bytes'] == 32 * 1024 * 1024"
fi
it_cli list-ns 0 list-ns "$URI"
it_grep list-ns-1 "$IT_OUT" "^1 +131072 +512 "
it_grep list-ns-2 "$IT_OUT" "^2 +65536 +512 "

# ---- data ---------------------------------------------------------------------------------
head -c $((1 << 20)) /dev/urandom > "$IT_DIR/p1"
head -c $((5 << 20)) /dev/urandom > "$IT_DIR/p5"
it_cli write-ns1 0 write "$URI" --lba 0 --blocks 2048 -i "$IT_DIR/p1"
it_cli read-ns1 0 read "$URI" --lba 0 --blocks 2048 -o "$IT_DIR/r1"
it_check compare-ns1 cmp -s "$IT_DIR/p1" "$IT_DIR/r1"
it_cli write-ns2-fua 0 write "$URI/2" --lba 100 --blocks 2048 -i "$IT_DIR/p1" --fua
it_cli read-ns2 0 read "$URI/2" --lba 100 --blocks 2048 -o "$IT_DIR/r2"
it_check compare-ns2 cmp -s "$IT_DIR/p1" "$IT_DIR/r2"
# 5 MiB: several CLI chunks, each split by MDTS; digests on both ways
it_cli write-digests 0 write "$URI" --lba 4096 --blocks 10240 -i "$IT_DIR/p5" --hdgst --ddgst
it_cli read-digests 0 read "$URI" --lba 4096 --blocks 10240 -o "$IT_DIR/r5" --hdgst --ddgst
it_check compare-digests cmp -s "$IT_DIR/p5" "$IT_DIR/r5"
# stdin and stdout
if "$IT_CLI" write "$URI" --lba 30000 --blocks 8 < <(head -c 4096 "$IT_DIR/p5") &&
	"$IT_CLI" read "$URI" --lba 30000 --blocks 8 | cmp -s - <(head -c 4096 "$IT_DIR/p5"); then
	it_ok stdin-stdout
else
	it_not_ok stdin-stdout "write from stdin / read to stdout did not round-trip"
fi
# a write that did not happen leaves the data alone
it_cli read-unchanged 0 read "$URI" --lba 0 --blocks 2048 -o "$IT_DIR/r1b"
it_check compare-unchanged cmp -s "$IT_DIR/p1" "$IT_DIR/r1b"
it_cli flush 0 flush "$URI/2"

# ---- failures scripts can rely on ----------------------------------------------------------
it_cli read-past-end 1 read "$URI" --lba 131071 --blocks 2 -o "$IT_DIR/x"
it_grep read-past-end-msg "$IT_ERR" "^nvmeof: read: LBA Out of Range \(sct 0 sc 0x80\)$"
it_cli inactive-ns 1 read "$URI/9" --lba 0 --blocks 1 -o "$IT_DIR/x"
it_grep inactive-ns-msg "$IT_ERR" "namespace 9 is not active"
it_cli bad-uri 2 identify "nvme+tcp://127.0.0.1:$IT_PORT/not-an-nqn"
it_grep bad-uri-msg "$IT_ERR" "^nvmeof: identify: bad URI: "
it_cli bad-scheme 2 identify "http://127.0.0.1/"
it_cli missing-lba 2 read "$URI" --blocks 1
it_cli bad-number 2 read "$URI" --lba x --blocks 1
it_cli unknown-option 2 flush "$URI" --nope
it_cli json-not-for-read 2 read "$URI" --lba 0 --blocks 1 --json
it_cli unknown-command 2 frobnicate "$URI"
it_cli missing-uri 2 identify
it_cli short-input 2 write "$URI" --lba 0 --blocks 4 -i <(head -c 1000 /dev/zero)
it_grep short-input-msg "$IT_ERR" "ended after 1000 of 2048 bytes"
it_cli unknown-nqn 3 identify "nvme+tcp://127.0.0.1:$IT_PORT/nqn.2026-11.io.nvmeof:nobody"
it_grep unknown-nqn-msg "$IT_ERR" "Connect rejected"
closed_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2> /dev/null || echo 9)
it_cli unreachable 3 identify "nvme+tcp://127.0.0.1:$closed_port/$NQN"
it_grep unreachable-msg "$IT_ERR" "cannot connect to 127.0.0.1:$closed_port"
for cmd in discover identify list-ns read write flush; do
	it_cli "help-$cmd" 0 "$cmd" --help
	it_grep "help-$cmd-usage" "$IT_OUT" "^Usage: nvmeof $cmd URI"
done
it_cli help 0 --help

it_stop_target
# what ns2 received is in the file, at LBA 100
it_check file-ns-persisted cmp -s "$IT_DIR/p1" <(dd if="$IMG" bs=512 skip=100 count=2048 2> /dev/null)
it_finish

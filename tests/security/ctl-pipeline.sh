#!/bin/bash
# ctl-pipeline.sh - a client the control socket admits pipelines requests and never reads
# the replies. The daemon must stop reading that connection while its replies wait (its
# memory stays within a small bound), still answer another client, and refuse connections
# beyond --max-control-connections (default 16) with a log line while serving on.
# Skips (77) without python3, unless CI=true.

. "$(dirname "$0")/../integration/lib.sh"

ATTACK_SECS=8
RSS_BOUND_KB=$((24 * 1024)) # growth allowed under the attack
CAP=16                      # the documented default of --max-control-connections
EXTRA=24                    # connections opened beyond the cap

it_init
if ! command -v python3 > /dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "$IT_NAME: python3 is missing (apt-get install python3)" >&2
		exit 1
	fi
	echo "$IT_NAME: python3 not installed, skipping" >&2
	exit 77
fi
CTL_BIN=$top_builddir/target/nvmeof-ctl
[ -x "$CTL_BIN" ] || { echo "$CTL_BIN is missing (build first)" >&2; exit 99; }
SOCK=$IT_DIR/run/ctl.sock
ctl() { timeout 10 "$CTL_BIN" -s "$SOCK" "$@"; }

it_start_target --ns ram:16M --reactors 1 --control-socket "$SOCK" || exit 1

# The pipelining client: sends requests as fast as the socket takes them for ATTACK_SECS,
# reads nothing, samples the daemon's VmRSS; stops early once the growth is far past the
# bound (the answer is known, and the machine is spared).
cat > "$IT_DIR/pipeline.py" << 'PY'
import os, select, socket, sys, time
pid, path, secs, bound = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
def rss():
    with open("/proc/%s/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
base = rss()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.setblocking(False)
req = b"".join(b'{"jsonrpc":"2.0","method":"rpc_get_methods","id":%d}\n' % i for i in range(256))
sent = 0
peak = base
end = time.monotonic() + secs
nextsample = 0
while time.monotonic() < end:
    now = time.monotonic()
    if now >= nextsample:
        peak = max(peak, rss())
        nextsample = now + 0.1
        if peak - base > 8 * bound:
            break
    _, w, _ = select.select([], [s], [], 0.1)
    if w:
        try:
            sent += s.send(req)
        except BlockingIOError:
            pass
peak = max(peak, rss())
print("baseline %d kB peak %d kB growth %d kB sent %d bytes" % (base, peak, peak - base, sent))
sys.stdout.flush()
s.close()
PY

python3 "$IT_DIR/pipeline.py" "$IT_PID" "$SOCK" $ATTACK_SECS $RSS_BOUND_KB > "$IT_DIR/attack.out" 2>&1 &
ATTACK_PID=$!
trap 'rc=$?; kill -KILL $ATTACK_PID 2> /dev/null; (exit $rc); it_cleanup' EXIT
sleep 2
# Another client while the attack runs.
t0=$(date +%s%N)
if ctl status > "$IT_DIR/status.out" 2>&1; then
	it_ok "other-client-answered ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
else
	it_not_ok other-client-answered "nvmeof-ctl status failed during the attack: $(head -c 300 "$IT_DIR/status.out")"
fi
wait $ATTACK_PID
res=$(cat "$IT_DIR/attack.out")
it_log "pipelining client: $res"
growth=$(sed -n 's/.* growth \([0-9-]*\) kB.*/\1/p' "$IT_DIR/attack.out")
sent=$(sed -n 's/.* sent \([0-9]*\) bytes.*/\1/p' "$IT_DIR/attack.out")
if [ -n "$growth" ] && [ "$growth" -lt $RSS_BOUND_KB ]; then
	it_ok "rss-bounded (grew $growth kB < $RSS_BOUND_KB kB; client sent $sent bytes)"
else
	it_not_ok rss-bounded "the daemon grew ${growth:-?} kB under the pipelining client (bound $RSS_BOUND_KB kB): $res"
fi
it_check alive-after-pipeline kill -0 "$IT_PID"
it_check answered-after-pipeline ctl status

# Connections beyond the cap: the daemon closes them at once and logs it (rate-limited).
cat > "$IT_DIR/flood.py" << 'PY'
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    socks.append(s)
time.sleep(1.0)
closed = 0
for s in socks:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print("opened %d closed-by-daemon %d" % (n, closed))
sys.stdout.flush()
# hold them while the caller checks the log, then let go
time.sleep(float(sys.argv[3]))
PY
python3 "$IT_DIR/flood.py" "$SOCK" $((CAP + EXTRA)) 2 > "$IT_DIR/flood.out" 2>&1 &
FLOOD_PID=$!
trap 'rc=$?; kill -KILL $FLOOD_PID 2> /dev/null; (exit $rc); it_cleanup' EXIT
wait $FLOOD_PID
res=$(cat "$IT_DIR/flood.out")
it_log "connection flood: $res"
closed=$(sed -n 's/.*closed-by-daemon \([0-9]*\).*/\1/p' "$IT_DIR/flood.out")
it_check "beyond-cap-refused (${closed:-?} of $((CAP + EXTRA)) closed, want $EXTRA)" \
	[ "${closed:-0}" = $EXTRA ]
it_grep refusal-logged "$IT_LOG" 'control: refused a client: [0-9]+ connections open'
lines=$(grep -c 'control: refused a client' "$IT_LOG")
it_check "refusal-log-rate-limited ($lines lines)" [ "$lines" -le 12 ]
it_check answered-after-flood ctl status

it_stop_target
it_finish

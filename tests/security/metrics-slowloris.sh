#!/bin/bash
# metrics-slowloris.sh - 100 connections to the metrics endpoint, from four addresses
# (127.0.0.3-6), each trickling one byte of a request header per second and reconnecting
# when closed. Scrapes from another address (127.0.0.2) must all succeed meanwhile; the
# daemon must close a connection that has not sent a whole request within
# --metrics-timeout (default 5 s), refuse more than --metrics-per-address (default 8)
# connections from one address, and count both in its metrics.
# Skips (77) without curl or python3, unless CI=true.

. "$(dirname "$0")/../integration/lib.sh"

SLOW=100
ATTACK_SECS=12
TIMEOUT=5 # the documented default of --metrics-timeout
SCRAPES=8

it_init
for tool in curl python3; do
	if ! command -v $tool > /dev/null; then
		if [ "${CI:-}" = true ]; then
			echo "$IT_NAME: $tool is missing (apt-get install curl python3)" >&2
			exit 1
		fi
		echo "$IT_NAME: $tool not installed, skipping" >&2
		exit 77
	fi
done

it_start_target --ns ram:16M --reactors 1 --metrics tcp://127.0.0.1:0 || exit 1
mport=$(sed -n 's/.*metrics on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\)\/metrics.*/\1/p' "$IT_LOG" |
	head -n 1)
if [ -z "$mport" ] || [ "$mport" = 0 ]; then
	it_not_ok metrics-port "no 'metrics on http://127.0.0.1:PORT/metrics' line"
	it_finish
fi
scrape() { # OUT: one scrape from 127.0.0.2 within 3 s
	curl -sf --interface 127.0.0.2 --max-time 3 -o "$1" "http://127.0.0.1:$mport/metrics"
}
it_check scrape-before scrape "$IT_DIR/before.txt"

# The slow clients: each connection sends "GET /metrics HTTP/1.1\r\n" and then a header
# one byte a second, never ending it; a closed one reconnects (at most twice a second).
# Reports how long the daemon let an accepted connection live.
cat > "$IT_DIR/slow.py" << 'PY'
import errno, select, socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
srcs = ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"]
head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "
end = time.monotonic() + secs
conns = {}  # slot -> [sock, connected-at, bytes sent, next byte at]
retry = [0.0] * n
closed = 0
longest = 0.0
def open_one(i):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((srcs[i % len(srcs)], 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    conns[i] = [s, time.monotonic(), 0, time.monotonic()]
def drop(i, now):
    global closed, longest
    s, t0, _, _ = conns.pop(i)
    s.close()
    closed += 1
    longest = max(longest, now - t0)
    retry[i] = now + 0.5
while True:
    now = time.monotonic()
    if now >= end:
        break
    for i in range(n):
        if i not in conns and now >= retry[i]:
            open_one(i)
    rd = [c[0] for c in conns.values()]
    r, _, _ = select.select(rd, [], [], 0.1)
    now = time.monotonic()
    for i in list(conns):
        s, t0, off, nxt = conns[i]
        if s in r:
            try:
                if s.recv(4096) == b"":
                    drop(i, now)
                    continue
            except OSError:
                drop(i, now)
                continue
        if now >= nxt:
            b = head[off:off + 1] if off < len(head) else b"a"
            try:
                s.send(b)
                conns[i][2] = off + 1
                conns[i][3] = now + 1.0
            except BlockingIOError:
                pass
            except OSError:
                drop(i, now)
now = time.monotonic()
oldest = max([now - c[1] for c in conns.values()] or [0.0])
print("connections closed by the daemon %d, longest lived %.1f s, open at the end %d, "
      "oldest open %.1f s" % (closed, longest, len(conns), oldest))
sys.stdout.flush()
for c in conns.values():
    c[0].close()
PY
python3 "$IT_DIR/slow.py" "$mport" $SLOW $ATTACK_SECS > "$IT_DIR/slow.out" 2>&1 &
SLOW_PID=$!
trap 'rc=$?; kill -KILL $SLOW_PID 2> /dev/null; (exit $rc); it_cleanup' EXIT
sleep 2
ok=0
for i in $(seq $SCRAPES); do
	scrape "$IT_DIR/during.txt" && ok=$((ok + 1))
	sleep 1
done
it_log "scrapes from 127.0.0.2 under $SLOW slow connections: $ok of $SCRAPES"
it_check "scrapes-during-attack ($ok of $SCRAPES)" [ $ok = $SCRAPES ]
wait $SLOW_PID
res=$(cat "$IT_DIR/slow.out")
it_log "slow clients: $res"
longest=$(sed -n 's/.*longest lived \([0-9.]*\) s.*/\1/p' "$IT_DIR/slow.out")
oldest=$(sed -n 's/.*oldest open \([0-9.]*\) s.*/\1/p' "$IT_DIR/slow.out")
# accepted ones lived about the deadline (refused ones, none), and none outlived it
it_check "slow-connections-closed-in-time (longest ${longest:-?} s, oldest open ${oldest:-?} s, deadline $TIMEOUT s)" \
	python3 -c "import sys; l, o = float('${longest:-0}'), float('${oldest:-99}')
sys.exit(0 if $TIMEOUT - 1 <= l <= $TIMEOUT + 1.5 and o <= $TIMEOUT + 1.5 else 1)"
it_check alive kill -0 "$IT_PID"
after=$IT_DIR/after.txt
it_check scrape-after scrape "$after"
value() { grep "^$1 " "$after" | awk '{print $NF}'; }
refused=$(value nvmeof_metrics_connections_refused_total)
timedout=$(value nvmeof_metrics_requests_timed_out_total)
it_check "refused-counted (${refused:-none})" [ "${refused:-0}" -gt 0 ]
it_check "timed-out-counted (${timedout:-none})" [ "${timedout:-0}" -gt 0 ]
it_grep refusal-logged "$IT_LOG" 'metrics: refused a connection from 127\.0\.0\.[3-6]'
it_grep timeout-logged "$IT_LOG" 'metrics: closed a connection from 127\.0\.0\.[3-6]'
it_log "target log: $(wc -l < "$IT_LOG") lines"

it_stop_target
it_finish

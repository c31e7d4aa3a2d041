#!/bin/bash
# metrics.sh - the Prometheus endpoint end to end: nvmeof-target --metrics on a free port,
# reads and writes with the CLI, a scrape with curl whose counters must equal the commands
# done (by namespace and by path), promtool's linter on the scrape, then a real Prometheus
# scraping the endpoint every second, whose query API must report the same counter.
# Skips (77) without curl, promtool or prometheus, unless CI=true.

. "$(dirname "$0")/lib.sh"

NQN=nqn.2026-11.io.nvmeof:default
READS=12
WRITES=3

it_init
nv_require curl promtool:prometheus prometheus python3

PROM_PID=
stop_prometheus() {
	if [ -n "$PROM_PID" ] && kill -0 "$PROM_PID" 2> /dev/null; then
		kill -TERM "$PROM_PID"
		for _ in $(seq 50); do kill -0 "$PROM_PID" 2> /dev/null || break; sleep 0.1; done
		kill -KILL "$PROM_PID" 2> /dev/null
		wait "$PROM_PID" 2> /dev/null
	fi
	PROM_PID=
}
trap 'stop_prometheus; it_cleanup' EXIT

it_start_target --ns ram:64M --reactors 2 --metrics tcp://127.0.0.1:0 || exit 1
mport=$(sed -n 's/.*metrics on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\)\/metrics.*/\1/p' "$IT_LOG" |
	head -n 1)
if [ -z "$mport" ] || [ "$mport" = 0 ]; then
	it_not_ok metrics-port "no 'metrics on http://127.0.0.1:PORT/metrics' line"
	sed 's/^/#   target: /' "$IT_LOG"
	it_finish
fi
it_ok "metrics-port ($mport)"
url=nvme+tcp://127.0.0.1:$IT_PORT/$NQN/1

head -c 4096 /dev/urandom > "$IT_DIR/data"
for i in $(seq $WRITES); do
	"$IT_CLI" write "$url" --lba $((i * 8)) --blocks 8 -d "$IT_DIR/data" > /dev/null ||
		it_not_ok "write-$i" "nvmeof write failed"
done
for i in $(seq $READS); do
	"$IT_CLI" read "$url" --lba $((i * 8)) --blocks 8 -d "$IT_DIR/read.out" ||
		it_not_ok "read-$i" "nvmeof read failed"
done

scrape=$IT_DIR/scrape.txt
it_check scrape curl -sf -o "$scrape" "http://127.0.0.1:$mport/metrics"
it_check not-found sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' \
	http://127.0.0.1:$mport/other) = 404 ]"

value() { # METRIC-WITH-LABELS: the sample's value in the scrape
	grep -F "$1 " "$scrape" | head -n 1 | awk '{print $NF}'
}
nsl="subsystem=\"$NQN\",nsid=\"1\",path=\"nvme_tcp\""
got=$(value "nvmeof_namespace_commands_total{$nsl,op=\"read\"}")
it_check "ns-reads ($got, want $READS)" [ "$got" = $READS ]
got=$(value "nvmeof_namespace_commands_total{$nsl,op=\"write\"}")
it_check "ns-writes ($got, want $WRITES)" [ "$got" = $WRITES ]
got=$(value "nvmeof_namespace_bytes_total{$nsl,op=\"read\"}")
it_check "ns-read-bytes ($got)" [ "$got" = $((READS * 4096)) ]
got=$(value "nvmeof_namespace_latency_seconds_count{$nsl}")
it_check "latency-count ($got)" [ "$got" = $((READS + WRITES)) ]
got=$(value "nvmeof_namespace_latency_seconds_bucket{$nsl,le=\"+Inf\"}")
it_check "latency-inf-bucket ($got)" [ "$got" = $((READS + WRITES)) ]
# the stats counters of controllers that are gone (every CLI command disconnects)
got=$(value 'nvmeof_path_commands_total{path="nvme",op="read"}')
it_check "path-reads ($got, want $READS)" [ "$got" = $READS ]
it_check reactor-busy grep -q '^nvmeof_reactor_busy_seconds_total{reactor="1"} ' "$scrape"
it_check outstanding grep -q "^nvmeof_namespace_outstanding_commands{subsystem=\"$NQN\",nsid=\"1\"} 0$" "$scrape"
if promtool check metrics < "$scrape" > "$IT_DIR/promtool.out" 2>&1; then
	it_ok promtool-check-metrics
else
	it_not_ok promtool-check-metrics "promtool found problems:"
	sed 's/^/#   /' "$IT_DIR/promtool.out" | head -n 20
fi

# A real Prometheus, scraping every second.
pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$IT_DIR/prometheus.yml" << EOF2
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: nvmeof
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF2
prometheus --config.file="$IT_DIR/prometheus.yml" --storage.tsdb.path="$IT_DIR/tsdb" \
	--web.listen-address="127.0.0.1:$pport" > "$IT_DIR/prometheus.log" 2>&1 &
PROM_PID=$!
it_log "prometheus pid $PROM_PID on port $pport"
q='nvmeof_namespace_commands_total{op="read",path="nvme_tcp",nsid="1"}'
pval=
for _ in $(seq 60); do
	pval=$(curl -sf -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q" |
		python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2> /dev/null)
	[ -n "$pval" ] && break
	kill -0 "$PROM_PID" 2> /dev/null || break
	sleep 0.5
done
if [ "$pval" = $READS ]; then
	it_ok "prometheus-query ($q = $pval)"
else
	it_not_ok prometheus-query "Prometheus says '$pval' for $q, the target $READS"
	tail -n 20 "$IT_DIR/prometheus.log" | sed 's/^/#   prometheus: /'
fi
up=$(curl -sf -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=up{job="nvmeof"}' |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2> /dev/null)
it_check "prometheus-target-up ($up)" [ "$up" = 1 ]
stop_prometheus

it_stop_target
it_finish

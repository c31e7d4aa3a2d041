#!/bin/bash
# tests/ceph/ceph-cluster.sh - a one-node Ceph cluster for tests, all of it in one directory.
#
#   ceph-cluster.sh start DIR    create and start it: one mon (msgr2, a free port on
#                                127.0.0.1), one mgr, one OSD; wait for HEALTH_OK and
#                                active+clean; create pool "rbd" (size 1) and client.nvmeof.
#                                Prints shell variables to eval on stdout (also in DIR/env).
#   ceph-cluster.sh stop DIR     stop every daemon it started, by PID (TERM, then KILL)
#   ceph-cluster.sh status DIR   which daemons run, and the cluster's status
#
# cephx is on; everything listens on 127.0.0.1 only. Daemons run in the foreground (-f) as
# children of the script, their output in DIR/log, their PIDs in DIR/run/NAME.pid.
# Clients: CEPH_CONF=DIR/ceph.conf and --id nvmeof (keyring DIR/client.nvmeof.keyring,
# caps mon 'profile rbd' osd 'profile rbd pool=rbd'); client.admin's keyring is beside it.
# Environment: CEPH_STORE=bluestore (default; a sparse file of CEPH_OSD_GIB, default 4) or
# memstore; CEPH_START_TIMEOUT seconds (default 120); CEPH_STOP_TIMEOUT (default 15).
set -u
unset CEPH_ARGS CEPH_KEYRING # the script's own calls are client.admin's
STORE=${CEPH_STORE:-bluestore}
START_TIMEOUT=${CEPH_START_TIMEOUT:-120}
STOP_TIMEOUT=${CEPH_STOP_TIMEOUT:-15}
DAEMONS=(osd.0 mgr.x mon.a) # in the order they are stopped

log() { echo "ceph-cluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# ceph_cli ARGS...: the ceph tool as client.admin, bounded in time
ceph_cli() { timeout 30 ceph -c "$D/ceph.conf" --id admin --connect-timeout 20 "$@"; }

# pid_of NAME: the PID of daemon NAME if it is alive and still ours (the PID's command
# line names our ceph.conf: a PID reused by another process is never signalled)
pid_of() {
	local pid
	pid=$(cat "$D/run/$1.pid" 2> /dev/null) || return 1
	[ -n "$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null |
		grep -qF -- "-c $D/ceph.conf" && echo "$pid"
}

# launch NAME CMD...: start a daemon in the background, its PID recorded at once
launch() {
	"${@:2}" -f -c "$D/ceph.conf" < /dev/null > "$D/log/$1.out" 2>&1 &
	echo $! > "$D/run/$1.pid"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

write_conf() {
	cat > "$D/ceph.conf" << EOF
[global]
fsid = $FSID
mon_host = v2:127.0.0.1:$PORT
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_msgr1 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
run_dir = $D/run
crash_dir = $D/crash
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_data_avail_warn = 2
mon_data_avail_crit = 1
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_mgr_digest_period = 1
mgr_stats_period = 1

[mon]
mon_data = $D/mon.\$id
log_file = $D/log/\$name.log
admin_socket = $D/run/\$name.asok
mgr_initial_modules = iostat

[mgr]
mgr_data = $D/mgr.\$id
log_file = $D/log/\$name.log
admin_socket = $D/run/\$name.asok

[osd]
osd_data = $D/osd.\$id
log_file = $D/log/\$name.log
admin_socket = $D/run/\$name.asok
osd_objectstore = $STORE
bluestore_block_create = true
bluestore_block_size = $((${CEPH_OSD_GIB:-4} << 30))
bluestore_cache_autotune = false
bluestore_cache_size = 134217728
memstore_device_bytes = 2147483648
osd_client_watch_timeout = 5
osd_mon_shutdown_timeout = 1

[client]
keyring = $D/\$name.keyring
rbd_cache = false
EOF
}

# keys: mon., client.admin, mgr.x, osd.0 and client.nvmeof, all known to the mon at mkfs
make_keys() {
	local k=$D/mon.keyring f
	ceph-authtool "$k" -C -g -n mon. --cap mon 'allow *' &&
		ceph-authtool "$D/client.admin.keyring" -C -g -n client.admin \
			--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' &&
		ceph-authtool "$D/mgr.x/keyring" -C -g -n mgr.x \
			--cap mon 'allow profile mgr' --cap osd 'allow *' --cap mds 'allow *' &&
		ceph-authtool "$D/osd.0/keyring" -C -g -n osd.0 \
			--cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *' &&
		ceph-authtool "$D/client.nvmeof.keyring" -C -g -n client.nvmeof \
			--cap mon 'profile rbd' --cap osd 'profile rbd pool=rbd' || return 1
	for f in client.admin.keyring mgr.x/keyring osd.0/keyring client.nvmeof.keyring; do
		ceph-authtool "$k" --import-keyring "$D/$f" || return 1
	done
	chmod 0600 "$D"/*.keyring "$D"/*/keyring
}

# healthy: true when the cluster is HEALTH_OK with its OSD up and every PG active+clean
healthy() {
	ceph_cli status -f json 2> /dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
pg = s["pgmap"]
clean = sum(x["count"] for x in pg["pgs_by_state"] if x["state_name"] == "active+clean")
ok = s["health"]["status"] == "HEALTH_OK" and s["osdmap"]["num_up_osds"] == 1
sys.exit(0 if ok and pg["num_pgs"] > 0 and clean == pg["num_pgs"] else 1)'
}

# wait_healthy: poll until healthy, a daemon dies, or START_TIMEOUT s since the start
wait_healthy() {
	local n
	until healthy; do
		[ $SECONDS -lt "$START_TIMEOUT" ] || { log "not healthy after ${START_TIMEOUT}s"; return 1; }
		for n in "${DAEMONS[@]}"; do
			pid_of "$n" > /dev/null || { log "$n died: see $D/log/$n.log"; return 1; }
		done
		sleep 0.5
	done
	log "HEALTH_OK, PGs active+clean after $(since "$T0") s"
}

do_start() {
	local uuid
	T0=$(now)
	SECONDS=0
	case "$D" in *[[:space:]]*) die "$D: a path with spaces cannot go into ceph.conf" ;; esac
	[ -d "$D" ] && [ -n "$(ls -A "$D")" ] && die "$D is not empty"
	mkdir -p "$D" && D=$(cd "$D" && pwd) || die "cannot create $D"
	OWN=1 # from here on a failure stops what was started in $D
	[ ${#D} -le 60 ] || log "warning: $D is long for the daemons' unix sockets"
	for t in ceph-mon ceph-mgr ceph-osd ceph ceph-authtool monmaptool rbd python3; do
		command -v $t > /dev/null || die "$t not found (apt-get install ceph-mon ceph-mgr ceph-osd ceph-common)"
	done
	mkdir -p "$D"/{log,run,crash,mgr.x,osd.0} || die "cannot populate $D"
	FSID=$(cat /proc/sys/kernel/random/uuid)
	PORT=$(free_port) || die "no free port"
	write_conf && make_keys > /dev/null || die "writing ceph.conf and keys failed"
	monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$PORT]" "$D/monmap" > /dev/null &&
		ceph-mon -c "$D/ceph.conf" --mkfs -i a --monmap "$D/monmap" --keyring "$D/mon.keyring" \
			> "$D/log/mon.a.mkfs" 2>&1 || die "ceph-mon --mkfs failed: see $D/log/mon.a.mkfs"
	launch mon.a ceph-mon -i a
	launch mgr.x ceph-mgr -i x
	# the OSD's store is made while the mon starts; the mon then gives it id 0
	uuid=$(cat /proc/sys/kernel/random/uuid)
	ceph-osd -c "$D/ceph.conf" -i 0 --mkfs --osd-uuid "$uuid" > "$D/log/osd.0.mkfs" 2>&1 &
	echo $! > "$D/run/osd.0.mkfs.pid"
	ceph_cli osd new "$uuid" 0 > /dev/null 2>> "$D/log/cli.err" ||
		die "ceph osd new failed: see $D/log/cli.err and mon.a.log"
	log "mon up after $(since "$T0") s"
	ceph_cli osd pool create rbd 8 8 replicated --size 1 > /dev/null 2>> "$D/log/cli.err" ||
		die "ceph osd pool create failed: see $D/log/cli.err"
	wait "$(cat "$D/run/osd.0.mkfs.pid")" || die "ceph-osd --mkfs failed: see $D/log/osd.0.mkfs"
	rm -f "$D/run/osd.0.mkfs.pid"
	log "OSD store ($STORE) made after $(since "$T0") s"
	launch osd.0 ceph-osd -i 0
	timeout 60 rbd -c "$D/ceph.conf" --id admin pool init rbd 2>> "$D/log/cli.err" ||
		die "rbd pool init failed: see $D/log/cli.err and osd.0.log"
	wait_healthy || die "the cluster did not become healthy"
	cat > "$D/env" << EOF
export CEPH_CONF=$D/ceph.conf
export NVMEOF_CEPH_ID=nvmeof
export NVMEOF_CEPH_KEYRING=$D/client.nvmeof.keyring
export NVMEOF_CEPH_ADMIN_KEYRING=$D/client.admin.keyring
export NVMEOF_CEPH_MON=v2:127.0.0.1:$PORT
export NVMEOF_CEPH_POOL=rbd
EOF
	cat "$D/env"
}

# alive PID: running and not a zombie (a failed start reaps nothing before it stops)
alive() { local st; read -r _ _ st _ 2> /dev/null < "/proc/$1/stat" && [ "$st" != Z ]; }

do_stop() {
	local n pid pids=() t1 i left=()
	[ -d "$D/run" ] || { log "nothing to stop in $D"; return 0; }
	t1=$(now)
	# all at once: the OSD waits at most osd_mon_shutdown_timeout (1 s) for the mon
	for n in osd.0.mkfs "${DAEMONS[@]}"; do
		pid=$(pid_of "$n") && kill -TERM "$pid" 2> /dev/null && pids+=("$n:$pid")
		rm -f "$D/run/$n.pid"
	done
	for ((i = 0; i <= STOP_TIMEOUT * 10; i++)); do
		left=()
		for n in "${pids[@]}"; do alive "${n#*:}" && left+=("$n"); done
		[ ${#left[@]} = 0 ] && break
		sleep 0.1
	done
	for n in "${left[@]}"; do
		kill -KILL "${n#*:}" 2> /dev/null
		log "${n%%:*} (pid ${n#*:}) still ran after ${STOP_TIMEOUT}s: killed"
	done
	for n in "${pids[@]}"; do wait "${n#*:}" 2> /dev/null; done # reaps our own children
	log "stopped ${#pids[@]} daemon(s) in $(since "$t1") s${pids[*]:+: ${pids[*]}}"
}

do_status() {
	local n pid rc=0
	for n in "${DAEMONS[@]}"; do
		pid=$(pid_of "$n") || { echo "$n: not running"; rc=1; continue; }
		echo "$n: running, pid $pid, rss $(awk '/VmRSS/ { printf "%d MiB", $2 / 1024 }' "/proc/$pid/status")"
	done
	pid_of mon.a > /dev/null && { ceph_cli -s || rc=1; }
	return $rc
}

[ $# = 2 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
D=$2
case "$1" in
start)
	# a start that fails midway stops whatever it had started
	OWN=0
	trap 'rc=$?; [ $rc = 0 ] || [ $OWN = 0 ] || { do_stop; exit $rc; }' EXIT
	trap 'exit 130' INT TERM HUP
	do_start
	log "started in $(since "$T0") s ($STORE); logs in $D/log"
	;;
stop | status)
	D=$(cd "$D" 2> /dev/null && pwd) || die "no cluster directory $2"
	"do_$1"
	;;
*) die "unknown command $1 (start, stop or status)" ;;
esac

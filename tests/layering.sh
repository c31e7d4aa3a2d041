#!/bin/bash
# tests/layering.sh [TREE] - check that every room includes only what it may.
#
# Rooms are the folders common/, target/<room>/ and initiator/<room>/. The rules:
#   - common/ includes only its own headers (no target/ or initiator/ header, no libev,
#     no sockets' event loops: it is shared by both sides);
#   - a room includes its own headers by bare name, common/ headers as "common/x.h", and
#     another room of its own side only through that room's public headers, as
#     "room/x.h"; headers named *_internal.h are private to their room, and
#     initiator/lib/ exports only nvmeof.h (the rest is the library's inside);
#   - target/ never includes initiator/ headers, nor initiator/ target/ headers;
#   - inside initiator/lib/ the library's own rooms call only downwards: queue/ (the
#     layer both paths share) < nvme/ and scsi/ (which never include each other) < the
#     controller in initiator/lib/ itself. A file includes its own room's headers by bare
#     name, a lower room's as "queue/x.h", and the public header as "lib/nvmeof.h".
# Tests (tests/) may reach inside the room they test and are not checked.
#
# Exit status 0 when the tree keeps the rules, 1 with one line per offending include.
set -u
tree=${1:-${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}}
cd "$tree" || exit 99
bad=0

offend() { # FILE LINE INCLUDE WHY
	echo "$1:$2: #include \"$3\": $4"
	bad=1
}

# is_private SIDE ROOM HEADER
is_private() {
	case "$3" in *_internal.h) return 0 ;; esac
	[ "$1/$2" = initiator/lib ] && [ "$3" != nvmeof.h ] && return 0
	return 1
}

# The library's inner rooms, lowest first: a room includes only lower ones.
lib_rank() {
	case "$1" in
	queue) echo 0 ;;
	nvme | scsi) echo 1 ;;
	lib) echo 2 ;;
	*) echo -1 ;;
	esac
}

# check_lib_include FILE LINE INCLUDE ROOM: an include of a file inside initiator/lib/
# (ROOM: queue, nvme, scsi, or lib for the controller on top)
check_lib_include() {
	local f=$1 n=$2 inc=$3 room=$4 dir base here=initiator/lib
	[ "$room" != lib ] && here=initiator/lib/$room
	case "$inc" in
	lib/nvmeof.h) return ;;
	*/*/*) offend "$f" "$n" "$inc" "a path deeper than room/header" ;;
	*/*)
		dir=${inc%%/*}
		base=${inc#*/}
		if [ "$dir" = common ]; then
			[ -f "common/$base" ] || offend "$f" "$n" "$inc" "no such common header"
		elif [ "$(lib_rank "$dir")" -lt 0 ] || [ "$dir" = lib ]; then
			offend "$f" "$n" "$inc" "not a room of initiator/lib/ (queue, nvme, scsi)"
		elif [ "$dir" = "$room" ]; then
			offend "$f" "$n" "$inc" "a room includes its own headers by bare name"
		elif [ ! -f "initiator/lib/$dir/$base" ]; then
			offend "$f" "$n" "$inc" "no such header in initiator/lib/$dir/"
		elif [ "$(lib_rank "$dir")" -ge "$(lib_rank "$room")" ]; then
			offend "$f" "$n" "$inc" "initiator/lib/$room/ must not include $dir/ (rooms of the library include only lower ones)"
		fi
		;;
	*)
		[ -f "$here/$inc" ] || offend "$f" "$n" "$inc" \
			"not in $here/ (a lower room's header is named room/header)"
		;;
	esac
}

check_file() { # FILE SIDE ROOM
	local f=$1 side=$2 room=$3 n inc dir base
	while IFS=: read -r n inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		[ "$inc" = config.h ] && continue
		case "$side/$room" in
		initiator/lib | initiator/lib/*)
			check_lib_include "$f" "$n" "$inc" "${room#lib/}"
			continue
			;;
		esac
		case "$inc" in
		*/*/*) offend "$f" "$n" "$inc" "a path deeper than room/header" ;;
		*/*)
			dir=${inc%%/*}
			base=${inc#*/}
			if [ "$dir" = common ]; then
				[ -f "common/$base" ] || offend "$f" "$n" "$inc" "no such common header"
			elif [ "$side" = common ]; then
				offend "$f" "$n" "$inc" "common/ must not include another room"
			elif [ -d "$side/$dir" ]; then
				if [ "$dir" = "$room" ]; then
					offend "$f" "$n" "$inc" "a room includes its own headers by bare name"
				elif [ ! -f "$side/$dir/$base" ]; then
					offend "$f" "$n" "$inc" "no such header in $side/$dir/"
				elif is_private "$side" "$dir" "$base"; then
					offend "$f" "$n" "$inc" "private to $side/$dir/"
				fi
			elif [ -d "target/$dir" ] || [ -d "initiator/$dir" ]; then
				offend "$f" "$n" "$inc" "$side/ must not include the other side's rooms"
			else
				offend "$f" "$n" "$inc" "unknown room '$dir'"
			fi
			;;
		*)
			if [ "$side" = common ]; then
				[ -f "common/$inc" ] || offend "$f" "$n" "$inc" "not a common/ header"
			else
				[ -f "$side/$room/$inc" ] || offend "$f" "$n" "$inc" \
					"not in $side/$room/ (another room's header is named room/header)"
			fi
			;;
		esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	# common/ stays free of event loops and transports
	if [ "$side" = common ] && grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(ev|infiniband/verbs|rdma/rdma_cma|liburing)\.h>' "$f"; then
		offend "$f" "$(grep -nE '#[[:space:]]*include[[:space:]]*<(ev|infiniband/verbs|rdma/rdma_cma|liburing)\.h>' "$f" | head -n1 | cut -d: -f1)" \
			"<$(grep -oE '<(ev|infiniband/verbs|rdma/rdma_cma|liburing)\.h>' "$f" | head -n1 | tr -d '<>')>" \
			"common/ is shared by both sides: no event loop, verbs or io_uring"
	fi
}

nfiles=0
for f in common/*.[ch]; do
	[ -f "$f" ] || continue
	check_file "$f" common ""
	nfiles=$((nfiles + 1))
done
for side in target initiator; do
	for d in "$side"/*/; do
		room=$(basename "$d")
		for f in "$d"*.[ch]; do
			[ -f "$f" ] || continue
			check_file "$f" "$side" "$room"
			nfiles=$((nfiles + 1))
		done
	done
done
for d in initiator/lib/*/; do
	for f in "$d"*.[ch]; do
		[ -f "$f" ] || continue
		check_file "$f" initiator "lib/$(basename "$d")"
		nfiles=$((nfiles + 1))
	done
done
if [ $bad = 0 ]; then
	echo "layering: $nfiles files keep to their rooms"
fi
exit $bad

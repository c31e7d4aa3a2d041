#!/bin/bash
# discovery-port.sh - every test script that starts nvmeof-target passes --discovery-port,
# so that tests run side by side (make -j) never race for the default discovery port 8009.
# The one test that exercises 8009 on purpose says so with "# serves 8009" on the line.
# Usage: discovery-port.sh [DIR]   (default: the tests/ folder beside this script)
dir=${1:-$(dirname "$0")}
bad=0
while IFS= read -r f; do
	# Join continuation lines, then look at each command that runs the target binary
	# (wrappers that pass "$@", or an argument array, are judged at their callers).
	awk -v f="$f" '
		{ line = line $0; if (sub(/\\$/, "", line)) next }
		line ~ /((_TARGET_BIN|\$TGT|\$target|\$TARGET)"?|px_start [^ ]+ [^ ]+ [^ ]+)[ \t]+[-"$]/ &&
		line !~ /"\$@"|"\$\{[A-Z_]+\[@\]\}"/ && line !~ /for [a-z]+ in|i[tx]_log / &&
		line !~ /^[ \t]*#/ && line !~ /--discovery-port/ && line !~ /# serves 8009/ &&
		line !~ /--help|--version|-h[ \t]|\$\(/ {
			printf "%s:%d: starts nvmeof-target without --discovery-port: %s\n", f, NR, line
			bad = 1
		}
		{ line = "" }
		END { exit bad }' "$f" || bad=1
done < <(find "$dir" -name '*.sh' ! -name 'guest-*' ! -name "$(basename "$0")" | sort)
[ "$bad" = 0 ] && echo "discovery-port: every test target start names its discovery port"
exit "$bad"

# shellcheck shell=sh
# tests/require.sh - sourced by test scripts (POSIX sh): what a test needs before it can
# run. A test that cannot run skips (exit 77) on a developer's machine, and fails (exit 1)
# under CI=true, where every dependency is installed by scripts/test.sh and a skip would
# hide a missing install step. Each message names what is missing.
#
#   nv_require PROG[:PACKAGE]...   every PROG on PATH (PACKAGE: the Debian package that
#                                  has it, named in the message; default PROG)
#   nv_cannot_run REASON...        this test cannot run here, for REASON

nv_cannot_run() {
	if [ "${CI:-}" = true ]; then
		echo "$(basename "$0" .sh): ERROR: cannot run: $* (CI=true: failing instead of skipping)" >&2
		exit 1
	fi
	echo "$(basename "$0" .sh): SKIP: $*" >&2
	exit 77
}

nv_require() {
	_nv_missing=
	_nv_pkgs=
	for _nv_r in "$@"; do
		_nv_prog=${_nv_r%%:*}
		_nv_pkg=${_nv_r#*:}
		command -v "$_nv_prog" > /dev/null 2>&1 && continue
		_nv_missing="$_nv_missing $_nv_prog"
		case " $_nv_pkgs " in *" $_nv_pkg "*) ;; *) _nv_pkgs="$_nv_pkgs $_nv_pkg" ;; esac
	done
	[ -z "$_nv_missing" ] && return 0
	nv_cannot_run "missing:$_nv_missing (apt-get install$_nv_pkgs; scripts/test.sh installs them)"
}

#!/bin/bash
# scripts/test.sh - install the dependencies (Debian 12), build, and run every test.
#
#   scripts/test.sh                 build in build/ and run `make check`: unit, integration
#                                   and interop tests (the Linux kernel host in the qemu lab)
#   scripts/test.sh --sanitizers    build with ASan+UBSan in build-san/ and run the unit and
#                                   integration tests (interop tests skipped)
#   scripts/test.sh --no-interop    skip the interop tests (same as NVMEOF_SKIP_INTEROP=1)
#
# Environment: NVMEOF_LAB (the qemu lab directory, default tests/interop/lab),
# NVMEOF_LAB_KERNEL (the guest kernel: stable or backports), CI=true (interop tests fail
# instead of skipping when the lab cannot run, and a failed set-up step fails the run),
# TESTS="..." (only these tests).
# Last line: "check: N passed, N failed, N skipped" (test programs, from test-suite.log).

. "$(dirname "$0")/lib.sh"

builddir=$NV_TOP/build
configure_args=()
interop=1
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitizers)
		builddir=$NV_TOP/build-san
		configure_args+=(--enable-sanitizers)
		interop=0
		;;
	--no-interop) interop=0 ;;
	-h | --help)
		sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) nv_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[ "${NVMEOF_SKIP_INTEROP:-0}" = 1 ] && interop=0
[ $interop = 0 ] && export NVMEOF_SKIP_INTEROP=1

# report STATUS: print the logs of the tests that did not pass, and the summary line
# (a `make check` that failed outside any test, e.g. building a test program, counts as
# one failure).
report() {
	local status=$1 trs name n_pass=0 n_fail=0 n_skip=0 res not_passed=()
	for trs in $(find "$builddir" -name '*.trs' 2> /dev/null | sort); do
		res=$(sed -n 's/^:global-test-result: //p' "$trs")
		name=${trs#"$builddir"/}
		name=${name%.trs}
		case "$res" in
		PASS | XFAIL) n_pass=$((n_pass + 1)) ;;
		SKIP)
			n_skip=$((n_skip + 1))
			not_passed+=("SKIP: $name")
			;;
		*)
			n_fail=$((n_fail + 1))
			not_passed+=("$res: $name")
			echo "================ $res: $name ================"
			cat "$builddir/$name.log"
			;;
		esac
	done
	if [ -f "$builddir/test-suite.log" ]; then
		echo "================ summary ($builddir/test-suite.log)"
		sed -n '/^# TOTAL/,/^# ERROR/p' "$builddir/test-suite.log"
	fi
	for res in "${not_passed[@]}"; do echo "$res"; done
	# a set-up step that failed under CI=true fails the run even if every test skipped
	if [ "${CI:-}" = true ]; then
		for res in "${setup_failed[@]}"; do
			echo "FAIL: set-up step: $res"
			n_fail=$((n_fail + 1))
		done
	fi
	nv_times
	if [ "$status" != 0 ] && [ $n_fail = 0 ]; then
		echo "make check failed (status $status) outside the tests: see the make output above"
		n_fail=1
	fi
	echo "check: $n_pass passed, $n_fail failed, $n_skip skipped"
}

lab_setup() {
	local lab kernel=${NVMEOF_LAB_KERNEL:-${LAB_KERNEL:-stable}}
	if ! lab=$(nv_lab); then
		echo "no qemu lab at ${NVMEOF_LAB:-$NV_TOP/tests/interop/lab} (no executable build-guest.sh)"
		return 1
	fi
	echo "qemu lab: $lab (LAB_KERNEL=$kernel)"
	nv_as_root env LAB_KERNEL="$kernel" "$lab/build-guest.sh"
}

nv_step dependencies nv_deps "${NV_TEST_DEPS[@]}" || nv_die "installing the dependencies failed"
nv_stop_peer_services
setup_failed=()
if [ $interop = 1 ]; then
	# the lab installs its own host packages (qemu, busybox-static, nvme-cli, ...)
	if ! nv_step "qemu lab (build-guest.sh)" lab_setup; then
		setup_failed+=("qemu lab (build-guest.sh)")
		echo "the qemu lab could not be prepared (the reason is above): the interop tests" \
			"cannot run; they skip, and fail under CI=true, as does this script"
	fi
fi
if ! nv_build "$builddir" "${configure_args[@]}"; then
	nv_times
	nv_die "the build failed"
fi

if [ ${#configure_args[@]} -gt 0 ]; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
rm -f "$builddir"/test-suite.log
find "$builddir" -name '*.trs' -delete 2> /dev/null
check_args=(check)
[ -n "${TESTS:-}" ] && check_args+=("TESTS=$TESTS")
nv_step "make check ($(basename "$builddir"))" nv_make "$builddir" "${check_args[@]}"
rc=$?
report $rc | tee "$builddir/check-summary.txt"
# the summary's counts decide: a set-up failure under CI=true fails the run too
grep -q '^check: [0-9]* passed, 0 failed' "$builddir/check-summary.txt" || rc=1
exit $rc

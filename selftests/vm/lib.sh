# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Sourced by the VM runners (sh) once they have set dir to their own
# directory: build, the build directory of the checkout; rc, 0 until a
# test fails; and run_device_tests.
# shellcheck shell=sh disable=SC2034,SC2154 # dir is the caller's, rc its verdict
build=${IBPD_BUILD:-$dir/../../build}
rc=0

# run_device_tests [--no-unload]: the kselftests that change cgroups and
# devices (exit status 4 is kselftest's skip), then the unload test, which
# must come last.
# shellcheck disable=SC2120 # the option is optional: run_debug.sh runs all
run_device_tests() {
	for t in ibpd_memcg_test.sh ibpd_rdmacg_test.sh \
		 ibpd_rdmacg_teardown_test.sh ibpd_lifecycle_test.sh; do
		"$dir/../$t"
		r=$?
		[ $r = 0 ] || [ $r = 4 ] || rc=1
	done
	[ "${1:-}" = --no-unload ] || "$build/selftests/ibpd_unload_test" || rc=1
}

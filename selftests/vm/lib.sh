# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Sourced by the VM runners (sh) once they have set dir to their own
# directory: build, the build directory of the checkout; rc, 0 until a
# test fails; and run_kselftests.
# shellcheck shell=sh disable=SC2034,SC2154 # dir is the caller's, rc its verdict
build=${IBPD_BUILD:-$dir/../../build}
rc=0
ksft_skip=

# run_kselftests --no-unload | --unload: the kselftests (selftests/
# Makefile's TEST_GEN_PROGS and TEST_PROGS, less the "COLLECTION:PROG"
# words of ksft_skip), as the top Makefile's "make
# selftests" installs them with the test kernel's runner (build/ksft),
# through that runner: all but the unload test, or the unload test
# alone, which must come last. The runner's output is printed as it
# prints it: each program's TAP nested under "# ", then a line "ok N
# selftests: ibpd: PROG" (not ok: failed; # SKIP: exit status 4), which
# the parser of nested TAP (scripts/tests/ibpd_check/tap.py) reads as the
# parent of the cases before it.
run_kselftests() {
	ksft=$build/ksft
	if [ ! -x "$ksft/run_kselftest.sh" ]; then
		echo "not ok 1 selftests: ibpd: no $ksft/run_kselftest.sh (make selftests)"
		rc=1
		return
	fi
	if [ "$1" = --unload ]; then
		sel=$(grep -x 'ibpd:ibpd_unload_test' "$ksft/kselftest-list.txt")
	else
		sel=$(grep -vx 'ibpd:ibpd_unload_test' "$ksft/kselftest-list.txt")
	fi
	for s in $ksft_skip; do
		sel=$(printf '%s\n' "$sel" | grep -vxF "$s")
	done
	set --
	for t in $sel; do
		set -- "$@" -t "$t"
	done
	# the installed scripts find the build (the ibpd tool, the provider)
	# through IBPD_BUILD
	IBPD_BUILD=$(cd "$build" && pwd)
	export IBPD_BUILD
	out=$(mktemp)
	{ "$ksft/run_kselftest.sh" "$@" 2>&1; echo $? > "$out.rc"; } |
		tee "$out"
	# 6.1's and 6.12's runners exit 0 whatever failed
	[ "$(cat "$out.rc")" = 0 ] || rc=1
	! grep -q '^not ok ' "$out" || rc=1
	grep -q '^ok ' "$out" || rc=1
	rm -f "$out" "$out.rc"
}

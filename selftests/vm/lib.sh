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
# alone, which must come last. The runner nests each program's TAP under
# "# " and follows it with a line "ok N selftests: ibpd: PROG" (not ok:
# failed; # SKIP: exit status 4). For the summary that adds up the "#
# Totals:" lines at the top (scripts/tests/check), a program's own totals
# are repeated un-nested right after that line, where a parser of nested
# TAP (scripts/tests/ibpd_check/tap.py) takes them for the runner's and
# does not count them again; 7.x's runner's own "# Totals:" (programs,
# not cases) is renamed "# Totals of programs:".
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
	# line by line as it comes (the watchdog of vm-run sees progress)
	# and after each program's result, how long it took (a comment)
	t=
	{ "$ksft/run_kselftest.sh" "$@" 2>&1; echo $? > "$out.rc"; } |
		tee "$out" | while IFS= read -r line; do
		case $line in
		"# Totals: "*) line="# Totals of programs: ${line#"# Totals: "}" ;;
		esac
		printf '%s\n' "$line"
		case $line in
		"# selftests: "*) t0=$(date +%s) ;;
		"# # Totals: "*) t=${line#"# "} ;;
		"ok "[0-9]*" selftests: "* | "not ok "[0-9]*" selftests: "*)
			[ -z "$t" ] || printf '%s\n' "$t"
			t=
			p=${line#*selftests: }
			echo "# ${p%% #*}: $(($(date +%s) - t0)) s"
			;;
		esac
	done
	# 6.1's and 6.12's runners exit 0 whatever failed
	[ "$(cat "$out.rc")" = 0 ] || rc=1
	! grep -q '^not ok ' "$out" || rc=1
	grep -q '^ok ' "$out" || rc=1
	rm -f "$out" "$out.rc"
}

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Sourced by the VM runners of selftests/vm (sh) once they have set top
# to the checkout: build, the build directory of the checkout (exported
# as IBPD_BUILD: the installed kselftests find the ibpd tool and the
# provider through it); rc, 0 until a test fails; run_programs and
# run_kselftests, which run what the matrix (scripts/matrix.conf) says a
# boot runs; test_program, a test program found by its name.
# shellcheck shell=sh disable=SC2034,SC2154 # top is the caller's, rc its verdict
build=${IBPD_BUILD:-$top/build}
IBPD_BUILD=$(cd "$build" && pwd)
export IBPD_BUILD
rc=0

# boot NAME: the matrix's NAME (boot-stock-programs, ...)
boot() {
	"$top/scripts/build/matrix" "$1"
}

# run_programs BOOT: the programs of the matrix's BOOT-programs, in
# order, from the kselftests' install; after each, "# ibpd: PROG: N s",
# the seconds it took.
run_programs() {
	for t in $(boot "$1-programs"); do
		t0=$(date +%s)
		"$build/ksft/ibpd/$t" || rc=1
		echo "# ibpd: $t: $(($(date +%s) - t0)) s"
	done
}

# timed FILE: its input to stdout and to FILE, with, after each of the
# kselftest runner's result lines ("ok N selftests: COLLECTION: PROG"),
# "# COLLECTION: PROG: N s", the seconds since the runner started PROG
# ("# selftests: COLLECTION: PROG")
timed() {
	while IFS= read -r l || [ -n "$l" ]; do
		printf '%s\n' "$l"
		case $l in
		"# selftests: "*) t0=$(date +%s) ;;
		"ok "*" selftests: "* | "not ok "*" selftests: "*)
			p=${l#* selftests: }
			echo "# ${p%% #*}: $(($(date +%s) - ${t0:-$(date +%s)})) s"
			;;
		esac
	done | tee "$1"
}

# run_kselftests --no-unload BOOT | --unload: the kselftests (selftests/
# Makefile's TEST_GEN_PROGS and TEST_PROGS, less the "COLLECTION:PROG"
# words of the matrix's BOOT-skip), as the top Makefile's "make
# selftests" installs them with the test kernel's runner (build/ksft),
# through that runner: all but the matrix's ksft-last (the unload
# test), or that one alone, which must come last. The runner's output is
# printed as it prints it: each program's TAP nested under "# ", then a
# line "ok N selftests: ibpd: PROG" (not ok: failed; # SKIP: exit status
# 4), which the parser of nested TAP (scripts/tests/ibpd_check/tap.py)
# reads as the parent of the cases before it.
run_kselftests() {
	ksft=$build/ksft
	if [ ! -x "$ksft/run_kselftest.sh" ]; then
		echo "not ok 1 selftests: ibpd: no $ksft/run_kselftest.sh (make selftests)"
		rc=1
		return
	fi
	last=$(boot ksft-last)
	if [ "$1" = --unload ]; then
		sel=$(grep -xF "$last" "$ksft/kselftest-list.txt")
	else
		sel=$(grep -vxF "$last" "$ksft/kselftest-list.txt")
		for s in $(boot "$2-skip"); do
			sel=$(printf '%s\n' "$sel" | grep -vxF "$s")
		done
	fi
	set --
	for t in $sel; do
		set -- "$@" -t "$t"
	done
	out=$(mktemp)
	{ "$ksft/run_kselftest.sh" "$@" 2>&1; echo $? > "$out.rc"; } |
		timed "$out"
	# 6.1's and 6.12's runners exit 0 whatever failed
	[ "$(cat "$out.rc")" = 0 ] || rc=1
	! grep -q '^not ok ' "$out" || rc=1
	grep -q '^ok ' "$out" || rc=1
	rm -f "$out" "$out.rc"
}

# test_program PROG: the path of the test program PROG names: itself
# when it has a "/", else the first of a kselftest program
# (build/selftests/PROG, build/selftests/stress/PROG), a kselftest script
# (selftests/PROG) and a verbs test (build/provider/PROG) that is there;
# PROG itself when none is.
test_program() {
	case $1 in
	*/*) ;;
	*)
		for p in "$build/selftests/$1" "$build/selftests/stress/$1" \
			 "$top/selftests/$1" "$build/provider/$1"; do
			[ -f "$p" ] && [ -x "$p" ] && { echo "$p"; return; }
		done
		;;
	esac
	echo "$1"
}

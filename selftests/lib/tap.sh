# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# kselftest-style TAP for every shell test, the kselftest scripts (through
# ksft.sh), the VM's runners and the host's tests of scripts/tests:
# source it, call "ok STATUS DESC" per case (STATUS 0 = pass; on failure
# $tap_out, if set, is shown), and "skip DESC" for a case that cannot run
# here, "expect_rc" for a command's exit status, and "tap_totals" at the
# end (its status: 0 if nothing failed). A test of the checkout on the
# host starts with "tap_setup".
tap_n=0 tap_pass=0 tap_fail=0 tap_skip=0

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		tap_pass=$((tap_pass + 1))
		echo "ok $tap_n $2"
	else
		tap_fail=$((tap_fail + 1))
		echo "not ok $tap_n $2"
		[ -n "${tap_out:-}" ] && [ -f "$tap_out" ] &&
			sed 's/^/# /' "$tap_out" | head -n 40
	fi
	return 0
}

skip() {
	tap_n=$((tap_n + 1))
	tap_skip=$((tap_skip + 1))
	echo "ok $tap_n # SKIP $1"
}

# expect_rc WANT DESC CMD...: a case passes when CMD exits with WANT; its
# output goes to $tap_out.
expect_rc() {
	local want=$1 desc=$2 rc
	shift 2
	"$@" > "$tap_out" 2>&1
	rc=$?
	[ "$rc" = "$want" ]
	ok $? "$desc (exit $rc, want $want)"
}

tap_totals() {
	echo "# Totals: pass:$tap_pass fail:$tap_fail xfail:0 xpass:0 skip:$tap_skip error:0"
	[ "$tap_fail" = 0 ]
}

# tap_setup [PLAN]: the start of a test run on the host from the checkout
# (scripts/tests/*_test.sh): sets top (the checkout), tmp (a scratch
# directory, removed on exit) and tap_out ($tmp/out), and prints the TAP
# header, with the plan when PLAN is given (else the test prints "1..N"
# once it knows N).
# shellcheck disable=SC2034 # top and tap_out are for the tests that source this
tap_setup() {
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tap_out=$tmp/out
	echo "TAP version 13"
	[ -z "${1:-}" ] || echo "1..$1"
}

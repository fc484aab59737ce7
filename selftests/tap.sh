# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# kselftest-style TAP for the shell tests: source it, call "ok STATUS DESC"
# per case (STATUS 0 = pass; on failure $tap_out, if set, is shown), and
# "skip DESC" for a case that cannot run here, "expect_rc" for a command's
# exit status, and "tap_totals" at the end
# (its status: 0 if nothing failed).
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

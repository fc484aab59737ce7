# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The tooling tests' TAP helpers are the kselftests' own: selftests/tap.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/tap.sh"

# tap_setup [PLAN]: the start of a test of scripts/tests: sets top (the
# checkout), here (scripts/tests), tmp (a scratch directory, removed on
# exit) and tap_out ($tmp/out), and prints the TAP header, with the plan
# when PLAN is given (else the test prints "1..N" once it knows N).
# shellcheck disable=SC2034 # top and tap_out are for the tests that source this
tap_setup() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	top=$(cd "$here/../.." && pwd)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tap_out=$tmp/out
	echo "TAP version 13"
	[ -z "${1:-}" ] || echo "1..$1"
}

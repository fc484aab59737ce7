#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_one.sh PROG [ARGS...]: one test program in the test VM, for make
# vm-test (scripts/vm/vm-run --rxe):
# brings up rxe0 over dummy0 beside ibpd0, as run_vm.sh does, then runs
# PROG with ARGS. PROG is a path, or the name of a kselftest program
# (build/selftests/PROG, build/selftests/stress/PROG), of a kselftest
# script (selftests/PROG) or of a verbs test (build/provider/PROG, run on
# the system's libibverbs with ibpd's provider for its ABI, loaded
# uninstalled). A kselftest harness program takes the harness's own
# selection: -r FIXTURE.VARIANT.TEST, -f FIXTURE, -v VARIANT, -t TEST, -l
# to list. Exit status: PROG's; 127 if there is no such program.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

[ -n "${IBPD_IN_VM:-}" ] ||
	{ echo "$0: run me in the test VM: make vm-test TEST=\"PROG [ARGS]\"" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: $0 PROG [ARGS...]" >&2; exit 2; }
prog=$(test_program "$1")
shift
if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then
	echo "run_one.sh: no test program '$prog'" >&2
	exit 127
fi

case $(realpath "$prog") in
"$(realpath "$build")/provider/"*)
	abi=$("$top/scripts/build/provider-abi")
	export LD_LIBRARY_PATH="$build/provider/abi$abi"
	export RDMAV_DRIVERS="$build/provider/abi$abi/libibpd"
	;;
esac

"$dir/rxe_up.sh" || exit 1
exec "$prog" "$@"

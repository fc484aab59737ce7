#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_vm.sh [--no-unload | --unload]
#
# Runs inside the test VM (scripts/vm/vm-run --rxe): brings up rxe0 over
# dummy0 as ibpd's neighbour when rxe is loaded, runs the stock kernels'
# programs (the matrix's boot-stock-programs: the stress and fuzz
# programs of stress/, not kselftests), then the kselftests through the
# test kernel's kselftest runner (run_kselftests, selftests/lib/vm.sh; less
# boot-stock-skip), the unload test last. --no-unload: everything but
# the unload test; --unload: the unload test alone (after other tests in
# the same boot). kselftest TAP on stdout; exit status 0 when everything
# passed.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

case ${1:-} in
--unload)
	run_kselftests --unload
	exit $rc
	;;
--no-unload | "") ;;
*)
	echo "usage: $0 [--no-unload | --unload]" >&2
	exit 2
	;;
esac

"$dir/rxe_up.sh"

export IBPD_FUZZ_SECONDS="${IBPD_FUZZ_SECONDS:-20}"
run_programs boot-stock

# The rxe differential runs through libibverbs: selftests/vm/run_verbs.sh.
run_kselftests --no-unload boot-stock
[ "${1:-}" = --no-unload ] || run_kselftests --unload
exit $rc

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_vm.sh [--no-unload | --unload]
#
# Runs inside the test VM (scripts/vm/vm-run --rxe): brings up rxe0 over
# dummy0 as ibpd's neighbour when rxe is loaded, runs the stress and fuzz
# programs (stress/: not kselftests), then the kselftests through the
# test kernel's kselftest runner (run_kselftests, lib.sh), the unload
# test last. --no-unload: everything but the unload test; --unload: the
# unload test alone (after other tests in the same boot). kselftest TAP
# on stdout; exit status 0 when everything passed.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/vm/lib.sh
. "$dir/lib.sh"

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
for t in stress/ibpd_stress stress/ibpd_fuzz; do
	"$build/selftests/$t" || rc=1
done

# The rxe differential runs through libibverbs: selftests/vm/run_verbs.sh.
# The fail-nth sweeps and the race of "rdma link add" with its netdev run
# on the debug kernel (run_debug.sh), as before the kernel's runner ran
# the kselftests: the stock kernels have no fault injection (there the
# sweeps only skip), and make check's stock boots stay what they were.
ksft_skip="ibpd:ibpd_fail_nth ibpd:ibpd_netdev_race_test.sh"
run_kselftests --no-unload
[ "${1:-}" = --no-unload ] || run_kselftests --unload
exit $rc

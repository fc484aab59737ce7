#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the VM for make bench (scripts/tests/ibpd_check/bench.py):
# rxe0 up, then bench/ibpd_bench at the same addresses in every run
# (setarch -R: qemu's soft TLB and translation cache are indexed by guest
# addresses, and a layout drawn anew at each run moves the cost of every
# op by several percent). With IBPD_PROVIDER (the run on the patched
# kernel): the libibverbs of IBPD_RDMA_CORE and that provider.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

"$dir/rxe_up.sh" || exit 1
if [ -n "${IBPD_PROVIDER:-}" ]; then
	# RUNPATH: the library path comes first
	LD_LIBRARY_PATH=$IBPD_RDMA_CORE/lib:${IBPD_PROVIDER%/*}
	RDMAV_DRIVERS=$IBPD_PROVIDER
	export LD_LIBRARY_PATH RDMAV_DRIVERS
fi
exec setarch -R "$build/bench/ibpd_bench"

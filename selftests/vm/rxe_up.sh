#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# In the test VM (scripts/vm/vm-run --rxe):
# brings up rxe0 over dummy0, ibpd's upstream neighbour and reference,
# unless an earlier part of the boot has (selftests/vm/run_kernel.sh).
# rxe is a module of the stock kernels (vm-run --rxe loads it) and built
# into the debug kernel: no check of /sys/module, which a built-in
# driver without parameters does not have.
# Exit status 0 when rxe0 is up.
[ ! -e /sys/class/infiniband/rxe0 ] || exit 0
ip link add dummy0 type dummy 2>/dev/null
if ! ip link set dummy0 up ||
   ! rdma link add rxe0 type rxe netdev dummy0; then
	echo "# could not bring up rxe0 (rdma_rxe neither loaded nor built in?)"
	exit 1
fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# In the test VM (scripts/vm/vm-run --rxe):
# brings up rxe0 over dummy0, ibpd's upstream neighbour and reference,
# unless an earlier part of the boot has (selftests/vm/run_kernel.sh).
# Exit status 0 when rxe0 is up.
[ -d /sys/module/rdma_rxe ] || { echo "# rdma_rxe is not loaded"; exit 1; }
[ ! -e /sys/class/infiniband/rxe0 ] || exit 0
ip link add dummy0 type dummy 2>/dev/null
if ! ip link set dummy0 up ||
   ! rdma link add rxe0 type rxe netdev dummy0; then
	echo "# could not bring up rxe0"
	exit 1
fi

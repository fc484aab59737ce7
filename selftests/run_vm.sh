#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM (scripts/vm-run --modules "crc32_generic rdma_rxe
# dummy"): brings up rxe0 over dummy0 as ibpd's neighbour when rxe is
# loaded, then every ibpd selftest program (kselftest TAP on stdout), the
# unload test last. Exit status 0 when everything passed.
dir=$(cd "$(dirname "$0")" && pwd)
build=${IBPD_BUILD:-$dir/../build}
rc=0

if [ -d /sys/module/rdma_rxe ]; then
	ip link add dummy0 type dummy 2>/dev/null
	ip link set dummy0 up &&
		rdma link add rxe0 type rxe netdev dummy0 ||
		echo "# could not bring up rxe0"
fi

export IBPD_FUZZ_SECONDS=${IBPD_FUZZ_SECONDS:-20}
for t in ibpd_test ibpd_stress ibpd_fuzz ibpd_unload_test; do
	"$build/selftests/$t" || rc=1
done
exit $rc

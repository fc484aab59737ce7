#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM (KASAN, lockdep, kmemleak, failslab): the KUnit
# suites (run_kunit.sh; their KTAP with each line tagged "IBPD-KUNIT: ",
# which make check hands to kunit.py), concurrent stress, ioctl fuzzing,
# a short soak, then the kselftests through the kernel's runner (the
# functional ones, the fail-nth sweeps, device delete and module unload
# cycles), then a kmemleak scan, all as kselftest TAP. vm-run fails the
# run on any splat in the console.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

# KUnit first, apart from the kselftests' TAP (and before the kmemleak
# scan's start: the suites are not the campaign it judges)
"$dir/run_kunit.sh" > /tmp/kunit.out 2>&1 || rc=1
sed 's/^/IBPD-KUNIT: /' /tmp/kunit.out

"$dir/kmemleak_check.sh" clear

if [ -d /sys/class/net ] && ! [ -e /sys/class/infiniband/rxe0 ]; then
	ip link add dummy0 type dummy 2>/dev/null
	ip link set dummy0 up && rdma link add rxe0 type rxe netdev dummy0 ||
		echo "# could not bring up rxe0"
fi

export IBPD_STRESS_PROCS="${IBPD_STRESS_PROCS:-4}"
export IBPD_STRESS_OPS="${IBPD_STRESS_OPS:-5000}"
export IBPD_FUZZ_ITERS="${IBPD_FUZZ_ITERS:-20000}"
export IBPD_FUZZ_SECONDS="${IBPD_FUZZ_SECONDS:-90}"
export IBPD_CYCLES="${IBPD_CYCLES:-10}"
# ibpd_test's debugfs.pds_seek_readers: the listing's walks under KASAN
# with 10,000 PDs; the stock kernels' boots measure the stall at 100,000
export IBPD_TEST_SEEK_PDS="${IBPD_TEST_SEEK_PDS:-10000}"

# the stress and fuzz programs and a short soak (make soak runs the long
# one), the matrix's boot-debug-programs: the soak before the lifecycle
# test, which wants the namespaces the soak deletes gone
export IBPD_SOAK_SECONDS="${IBPD_SOAK_SECONDS:-60}"
run_programs boot-debug
# the kselftests through the kernel's runner (lib/vm.sh), the fail-nth
# sweeps and "rdma link add" racing its netdev's move and deletion
# (make soak: longer) among them, less boot-debug-skip, then the unload
# test
run_kselftests --no-unload boot-debug
run_kselftests --unload

"$dir/kmemleak_check.sh" check || rc=1
"$dir/gcov_dump.sh"
exit $rc

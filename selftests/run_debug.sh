#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM (KASAN, lockdep, kmemleak, failslab): the
# functional selftests, concurrent stress, the fail-nth sweeps, ioctl
# fuzzing, device delete and module unload cycles, then a kmemleak scan,
# all as kselftest TAP. vm-run fails the run on any splat in the console.
dir=$(cd "$(dirname "$0")" && pwd)
build=${IBPD_BUILD:-$dir/../build}
kml=/sys/kernel/debug/kmemleak
rc=0

[ -w $kml ] && echo clear > $kml

if [ -d /sys/class/net ] && ! [ -e /sys/class/infiniband/rxe0 ]; then
	ip link add dummy0 type dummy 2>/dev/null
	ip link set dummy0 up && rdma link add rxe0 type rxe netdev dummy0 ||
		echo "# could not bring up rxe0"
fi

export IBPD_STRESS_PROCS=${IBPD_STRESS_PROCS:-4}
export IBPD_STRESS_OPS=${IBPD_STRESS_OPS:-5000}
export IBPD_FUZZ_ITERS=${IBPD_FUZZ_ITERS:-20000}
export IBPD_FUZZ_SECONDS=${IBPD_FUZZ_SECONDS:-90}
export IBPD_CYCLES=${IBPD_CYCLES:-10}

for t in ibpd_test ibpd_stress ibpd_fail_nth ibpd_fuzz; do
	"$build/selftests/$t" || rc=1
done
# exit status 4: the kernel cannot run it (kselftest's skip)
for t in ibpd_memcg_test.sh ibpd_lifecycle_test.sh; do
	"$dir/$t"
	r=$?
	[ $r = 0 ] || [ $r = 4 ] || rc=1
done
"$build/selftests/ibpd_unload_test" || rc=1

# kmemleak reports objects older than 5s that nothing points to.
. "$dir/../scripts/tests/tap.sh"
echo "TAP version 13"
echo "1..1"
tap_out=/tmp/kmemleak.out
if [ -w $kml ]; then
	sleep 6
	echo scan > $kml
	echo scan > $kml
	cat $kml > $tap_out
	leaks=$(grep -c '^unreferenced object' $tap_out)
	[ "$leaks" = 0 ]
	ok $? "kmemleak: $leaks suspected leaks"
	[ "$leaks" = 0 ] || sed 's/^/# /' $tap_out | head -n 120
else
	skip "kmemleak: no $kml"
fi
tap_totals || rc=1
"$dir/gcov_dump.sh"
exit $rc

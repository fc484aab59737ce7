#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# bridge_module_vm.sh BUILT QUERY [SHARED_UCONTEXT]: in the test VM
# (scripts/vm/vm-run --no-ibpd --modules "the modules' dependencies and
# dummy"), the modules of ibpd-rxe-dkms and ibpd-siw-dkms that
# scripts/build/dkms-prebuild built for this kernel (BUILT/rxe/rdma_rxe.ko,
# BUILT/siw/siw.ko) against the kernel's own rdma_rxe: each loaded with
# insmod, a device over dummy0 added with `rdma link add`, then QUERY
# (query_context: gcc -Iuapi -Iselftests -o out/bridge/query_context
# selftests/bridge/query_context.c) on it:
# QUERY_CONTEXT must fail with EOPNOTSUPP on the stock rxe0 and answer on
# ours, rxe0 and siw0. SHARED_UCONTEXT, when given: the rdma kselftest
# of patches/core/next/ "selftests/rdma: Add a test of a uverbs file
# shared by two processes" (make upstream-proof builds it into the
# cache's upstream kernel directory, ksft-rdma-*/rdma/shared_ucontext),
# run on our rxe0 and siw0. One line
# per case, "bridge-vm: pass|fail DESC", after the case's output; exit
# status 0 when all passed.
set -u
built=$1 query=$2 shared=${3:-}
kver=$(uname -r)
stock=$IBPD_KERNEL_DIR/root/lib/modules/$kver/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko
rc=0

case_() {	# case_ STATUS DESC
	if [ "$1" = 0 ]; then
		echo "bridge-vm: pass $2"
	else
		echo "bridge-vm: fail $2"
		rc=1
	fi
}

ip link add dummy0 type dummy 2> /dev/null
ip link set dummy0 up

# link DRIVER DEV KO [EXPECT]: KO loaded, DEV added over dummy0, QUERY on it
# (its exit status: 0 answered, 1 failed), then DEV and KO gone.
link() {
	d=$1 dev=$2 ko=$3 expect=${4:-0}
	mod=$(basename "$ko" .ko)
	t0=$(date +%s)
	insmod "$ko" &&
		echo "$ko: version $(cat "/sys/module/$mod/version" 2> /dev/null || echo none)" &&
		rdma link add "$dev" type "$d" netdev dummy0 &&
		rdma link show "$dev/1"
	st=$?
	if [ $st = 0 ]; then
		"$query" "$dev" "$d"
		q=$?
		[ $q = "$expect" ] || st=1
		if [ $st = 0 ] && [ -n "$shared" ] && [ "$expect" = 0 ]; then
			RDMA_DEV=$dev RDMA_DRIVER=$d "$shared" || st=1
		fi
	fi
	rdma link del "$dev" 2> /dev/null
	rmmod "$mod" || st=1
	echo "    ($(($(date +%s) - t0)) s)"
	return $st
}

link rxe rxe0 "$stock" 1
case_ $? "$kver: the stock rdma_rxe: rxe0 up, QUERY_CONTEXT fails (EOPNOTSUPP)"
link rxe rxe0 "$built/rxe/rdma_rxe.ko"
case_ $? "$kver: ibpd-rxe-dkms's rdma_rxe: rxe0 up, QUERY_CONTEXT answers${shared:+, shared_ucontext passes}"
if [ -f "$built/siw/siw.ko" ]; then
	link siw siw0 "$built/siw/siw.ko"
	case_ $? "$kver: ibpd-siw-dkms's siw: siw0 up, QUERY_CONTEXT answers${shared:+, shared_ucontext passes}"
fi
exit $rc

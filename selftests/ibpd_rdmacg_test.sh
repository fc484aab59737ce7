#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# max_pd is a limit of the device, not of a user: one user can take every
# PD. The kernel's answer is the rdma cgroup controller: "DEV hca_object=N"
# in a cgroup's rdma.max caps the uverbs objects (PDs, MRs, ...) that its
# processes hold on DEV together. A holder of N objects in such a cgroup
# gets them all, one more fails (EAGAIN), and a process in another cgroup
# still allocates meanwhile. As root, in the test VM; kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
dev=${IBPD_DEV:-ibpd0}
n=4		# the holder's PDs; with its MR, n + 1 objects
holder_in=""

# The limit goes back to max before the cgroup goes: 6.1.y and 6.12.y
# keep a cgroup's idle pool of a device while it has a limit, also after
# the cgroup is freed, and the device's unregistration then corrupts a
# list (kernel BUG in rdmacg_unregister_device() at rmmod; upstream
# c68095c4a4c9 fixed it in 7.2, ibpd_rdmacg_teardown_test.sh tests it).
cleanup() {
	[ -n "$holder_in" ] && exec {holder_in}>&-
	wait
	[ -d "$cgroot/ibpd_rdmacg_lim" ] &&
		echo "$dev hca_object=max" > "$cgroot/ibpd_rdmacg_lim/rdma.max"
	rmdir "$cgroot"/ibpd_rdmacg_* 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# run_in CG CMD...: CMD in cgroup ibpd_rdmacg_CG, from its first
# allocation on.
run_in() {
	local cg=$cgroot/ibpd_rdmacg_$1

	shift
	(echo "$BASHPID" > "$cg/cgroup.procs" && exec "$@")
}

# The cgroup's count of hca_object on the device.
current() {
	sed -n "s/^$dev .*hca_object=\([0-9]*\).*/\1/p" \
		"$cgroot/ibpd_rdmacg_$1/rdma.current"
}

echo "TAP version 13"
need_cgroup2 rdma "no rdma cgroup controller (CONFIG_CGROUP_RDMA)"
echo "1..4"

{
	echo +rdma > "$cgroot/cgroup.subtree_control" &&
	mkdir "$cgroot/ibpd_rdmacg_lim" "$cgroot/ibpd_rdmacg_free" &&
	echo "$dev hca_object=$((n + 1))" > "$cgroot/ibpd_rdmacg_lim/rdma.max" &&
	mkfifo "$tmp/fifo" &&
	{ run_in lim "$ibpd_hold" "$dev" "$n" < "$tmp/fifo" \
		> "$tmp/hold.out" 2>&1 & } &&
	exec {holder_in}> "$tmp/fifo" &&
	for _ in $(seq 600); do
		grep -q ready "$tmp/hold.out" && break
		sleep 0.1
	done &&
	grep ready "$tmp/hold.out" &&
	[ "$(current lim)" = $((n + 1)) ]
} > "$tap_out" 2>&1
ok $? "a cgroup with rdma.max \"$dev hca_object=$((n + 1))\" holds $n PDs and an MR"

{
	! run_in lim "$ibpd_hold" "$dev" 1 < /dev/null &&
	[ "$(current lim)" = $((n + 1)) ]
} > "$tap_out" 2>&1
grep -q "Resource temporarily unavailable" "$tap_out"
ok $? "another process of that cgroup cannot allocate a PD (EAGAIN)"

run_in free "$ibpd_hold" "$dev" 100 < /dev/null > "$tap_out" 2>&1
ok $? "a process in another cgroup still allocates 100 PDs"

{
	exec {holder_in}>&- &&
	holder_in="" &&
	wait &&
	[ "$(current lim)" = 0 ] &&
	run_in lim "$ibpd_hold" "$dev" "$n" < /dev/null
} > "$tap_out" 2>&1
ok $? "the holder's exit uncharges its objects: the cgroup allocates again"
tap_totals

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A core bug of the rdma cgroup controller, reachable through any RDMA
# device (ibpd's as rxe's): a limit in rdma.max gives the cgroup a pool of
# the device; a cgroup removed while it holds nothing on the device is
# freed with that pool still linked on it, and the device's unregistration
# then unlinks the pool from freed memory: "list_del corruption" and a
# kernel BUG in rdmacg_unregister_device(), the task dead with
# rdmacg_mutex held. Upstream c68095c4a4c9 ("cgroup/rdma: add rdma.peak
# for per-device peak usage tracking", 7.2) frees the pools left on a
# cgroup in rdmacg_css_free(); 6.1.y and 6.12.y lack it
# (patches/stable/0001 is its backport, which the debug kernel has).
# Here: the limit on a device of its own, the cgroup removed idle and
# freed, cgroups made to reuse its memory, then "rdma link delete": the
# device goes and the controller still answers. It runs only where the
# kernel frees those pools, as told by the running kernel's source
# (IBPD_KERNEL_DIR, which vm-run gives) or else by its release (7.2 and
# later); elsewhere it is skipped as the known upstream bug, as running it
# would kill the test VM. IBPD_RDMACG_TEARDOWN=run runs it anyway, to see
# the bug. As root, in the test VM; kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
dev=ibpdG0
cg=$cgroot/ibpd_rdmacg_td
nreuse=64	# a CPU
reused=()
wedged=0
# a sleep without a process (under KASAN and TCG each costs a lot): a
# read that times out on a fifo nobody writes
mkfifo "$tmp/nap" && exec {nap}<> "$tmp/nap"
nap() {
	read -r -t "$1" -u "$nap" || :
}

cleanup() {
	if [ "$wedged" = 0 ]; then
		rdma link delete "$dev" 2> /dev/null
		rmdir "$cg" "${reused[@]}" 2> /dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# body FILE FUNCTION: FUNCTION's lines in the C file FILE.
body() {
	sed -n "/^static void $2(/,/^}/p" "$1"
}

# Whether the running kernel frees the idle pools of a cgroup that goes:
# in its css_free (upstream since 7.2) or in its css_offline (the fix
# posted for stable, not merged as of 7.3). "yes", "no" or "unknown".
frees_idle_pools() {
	local src=${IBPD_KERNEL_DIR:-}/source/kernel/cgroup/rdma.c rel

	if [ -n "${IBPD_KERNEL_DIR:-}" ] && [ -r "$src" ]; then
		if body "$src" rdmacg_css_free | grep -q free_cg_rpool_locked ||
		   body "$src" rdmacg_css_offline | grep -q free_cg_rpool_locked; then
			echo yes
		else
			echo no
		fi
		return
	fi
	rel=$(uname -r)
	case $rel in
	[0-6].* | 7.[01] | 7.[01][.-]*) echo unknown ;;
	*) echo yes ;;
	esac
}

# The count of dying cgroups in $dying.
dying() {
	local k v

	dying=""
	while read -r k v; do
		[ "$k" != nr_dying_descendants ] || dying=$v
	done < "$cgroot/cgroup.stat"
	[ -n "$dying" ]
}

# $nreuse new cgroups on each CPU, where the freed one may wait for reuse.
reuse() {
	local c i names

	for c in $(seq 0 $(($(nproc) - 1))); do
		names=()
		for i in $(seq "$nreuse"); do
			names+=("$cgroot/ibpd_rdmacg_r${c}_$i")
		done
		reused+=("${names[@]}")
		taskset -c "$c" mkdir "${names[@]}" || return 1
	done
}

# Up to 20 s for the dying cgroups to be no more than $1 again.
released() {
	local i

	for i in $(seq 200); do
		dying
		[ "$dying" -le "$1" ] && return 0
		nap 0.1
	done
	echo "$dying dying cgroups after 20 s, $1 before"
	return 1
}

# CMD... in the background, for up to 20 s: its status, or 124 when it
# has not returned (blocked on rdmacg_mutex, or in the device's
# unregistration, for good).
bounded() {
	local pid i

	"$@" &
	pid=$!
	for i in $(seq 200); do
		kill -0 "$pid" 2> /dev/null || { wait "$pid"; return; }
		nap 0.1
	done
	wedged=1
	echo "$* has not returned after 20 s"
	return 124
}

echo "TAP version 13"
need_cgroup2 rdma "no rdma cgroup controller (CONFIG_CGROUP_RDMA)"
echo "1..1"
what="a limit in rdma.max, the cgroup removed idle and freed, $nreuse cgroups made on each CPU, then rdma link delete: the device goes, the controller answers"
fix=$(frees_idle_pools)
if [ "$fix" != yes ] && [ "${IBPD_RDMACG_TEARDOWN:-}" != run ]; then
	if [ "$fix" = no ]; then
		why="known upstream bug: $(uname -r) frees no idle rdma cgroup pool on cgroup removal (list_del corruption, kernel BUG in rdmacg_unregister_device(); upstream c68095c4a4c9, 7.2; backport: patches/stable/0001)"
	else
		why="cannot tell whether $(uname -r) frees the idle rdma cgroup pools of a removed cgroup (upstream c68095c4a4c9, 7.2): IBPD_RDMACG_TEARDOWN=run runs it"
	fi
	skip "$what: $why"
	tap_totals
	exit 4
fi

{
	dying && before=$dying &&
	rdma link add "$dev" type ibpd netdev lo &&
	echo +rdma > "$cgroot/cgroup.subtree_control" &&
	mkdir "$cg" &&
	echo "$dev hca_object=10" > "$cg/rdma.max" &&
	grep "^$dev .*hca_object=10" "$cg/rdma.max" &&
	rmdir "$cg" &&
	released "$before" &&
	# the release is followed by an RCU grace period, then css_free
	nap 1 &&
	reuse &&
	bounded rdma link delete "$dev" &&
	! [ -e "/sys/class/infiniband/$dev" ] &&
	bounded cat "${reused[0]}/rdma.max"
} > "$tap_out" 2>&1
rc=$?
# after a BUG on the way, the device and the controller are best left alone
[ "$rc" = 0 ] || [ "$fix" = yes ] || wedged=1
ok $rc "$what"
tap_totals

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Kernel memory of user-created objects is charged to the creator's memory
# cgroup: two processes in two cgroups hold 1 and N PDs (and one MR each);
# the difference of their cgroups' unreclaimable slab must be at least
# N - 1 PD objects (64 bytes taken as the least a PD can cost). As root,
# in the test VM; kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
n=${IBPD_MEMCG_PDS:-8192}
fds=()

cleanup() {
	local fd
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	wait
	rmdir "$cgroot"/ibpd_memcg_* 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "TAP version 13"
need_cgroup2 memory "no memory cgroup controller"
echo "1..3"
echo +memory > "$cgroot/cgroup.subtree_control"

# hold NAME NPDS: ibpd_hold in cgroup ibpd_memcg_NAME, from its first
# allocation on; its stdin in fds.
hold() {
	local cg=$cgroot/ibpd_memcg_$1 fd
	mkdir "$cg" && mkfifo "$tmp/$1.in" || return 1
	(echo "$BASHPID" > "$cg/cgroup.procs" &&
	 exec "$ibpd_hold" ibpd0 "$2" < "$tmp/$1.in" \
		> "$tmp/$1.out" 2>&1) &
	exec {fd}> "$tmp/$1.in"
	fds+=("$fd")
	for _ in $(seq 600); do
		grep -q ready "$tmp/$1.out" && return 0
		sleep 0.1
	done
	return 1
}

slab() {
	awk '$1 == "slab_unreclaimable" { print $2 }' \
		"$cgroot/ibpd_memcg_$1/memory.stat"
}

{ hold one 1 && hold many "$n"; } > "$tap_out" 2>&1
ok $? "two holders, of 1 and $n PDs, each in a memory cgroup of its own"

one=$(slab one)
many=$(slab many)
echo "# unreclaimable slab: ${one:-?} bytes with 1 PD, ${many:-?} with $n PDs"
[ -n "$one" ] && [ -n "$many" ] && [ $((many - one)) -ge $(((n - 1) * 64)) ]
ok $? "the PDs are charged to their creator's cgroup: $(((${many:-0} - ${one:-0}) / n)) bytes per PD"

for fd in "${fds[@]}"; do exec {fd}>&-; done
fds=()
wait
sleep 1
after=$(slab many)
echo "# after the holder's exit: ${after:-?} bytes"
[ -n "$after" ] && [ $((many - after)) -ge $(((n - 1) * 64)) ]
ok $? "and uncharged when they are destroyed"
tap_totals

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device lifecycle in the test VM, as root: network namespace moves (there
# and back, with a file open), "rdma link delete" inside a namespace, the
# deletion of a namespace that holds a device, renames with a new device
# taking the old name, devices that follow their netdev as rxe and siw do
# (rdma link show, the node GUID, the netdev's deletion or move with a
# file open), device names across namespaces (the core's rules, which
# changed in 7.3), and "rmmod ibpd" after all of it. After each step
# every device has exactly one debugfs directory, whose "name" is its
# current name, and every file there can be read (a directory left behind
# would point into a freed device). Needs IBPD_KO to load the module back;
# run before the unload test. kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
holder_in=""

cleanup() {
	[ -n "$holder_in" ] && exec {holder_in}>&-
	[ -n "${pds_unread:-}" ] && exec {pds_unread}<&-
	[ -n "${pds_part:-}" ] && exec {pds_part}<&-
	for ns in ibpd_t1 ibpd_t2 ibpd_t3 ibpd_t4 ibpd_t5 ibpd_init; do
		ip netns del "$ns" 2> /dev/null
	done
	for d in ibpdL0 ibpdL1 ibpdL2 ibpdL3 ibpdL3x ibpdL4 ibpdS0 ibpdS1 ibpdS2; do
		rdma link delete "$d" 2> /dev/null
	done
	for n in ibpdn0 ibpdn1 ibpdn2; do
		ip link del "$n" 2> /dev/null
	done
	rdma system set netns shared 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# One directory for device $1 (dbg_dirs, lib/ibpd_debugfs.sh), and every
# file of every directory readable. (These helpers run dozens of times:
# shell builtins and one cat, as processes are slow on the debug kernel
# under TCG: Documentation/testing.rst, "Run times".)
dbg_sound() {
	local dirs d files=()
	mapfile -t dirs < <(dbg_dirs "$1")
	[ ${#dirs[@]} = 1 ] ||
		{ echo "${#dirs[@]} debugfs directories named $1"; return 1; }
	for d in "$dbg_root"/*/; do
		files+=("$d"{name,pds,num_pds,num_mrs,max_pd,pdn_next})
	done
	cat "${files[@]}" > /dev/null
}

dbg_gone() {
	[ -z "$(dbg_dirs "$1")" ]
}

# Waits up to 20 s for CMD to succeed (namespaces are cleaned up
# asynchronously).
wait_for() {
	local _
	for _ in $(seq 200); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

in_init() {
	[ -e "/sys/class/infiniband/$1" ]
}

in_ns() {	# in_ns NS DEV
	ip netns exec "$1" test -e "/sys/class/infiniband/$2"
}

gone() {
	! in_init "$1"
}

# The device that came back to init_net renamed ibdev%d.
returned() {
	local d

	for d in /sys/class/infiniband/ibdev[0-9]*; do
		[ -e "$d" ] && basename "$d" && return 0
	done
	return 1
}

# Starts ibpd_hold on $1 (3 PDs, one MR), its stdin in holder_in; in
# network namespace $2 if given.
hold() {
	local ns=()

	[ -n "${2:-}" ] && ns=(ip netns exec "$2")
	mkfifo "$tmp/fifo"
	"${ns[@]}" "$ibpd_hold" "$1" 3 < "$tmp/fifo" \
		> "$tmp/hold.out" 2>&1 &
	exec {holder_in}> "$tmp/fifo"
	wait_for grep -q ready "$tmp/hold.out"
}

release() {
	exec {holder_in}>&-
	holder_in=""
	wait
	rm -f "$tmp/fifo"
}

num_pds() {
	cat "$(dbg_dirs "$1")/num_pds"
}

echo "TAP version 13"
if ! [ -e /proc/self/ns/net ]; then
	echo "1..0 # SKIP no network namespaces"
	exit 4
fi
echo "1..23"
dmesg -c > /dev/null
# The mode can change only while no other namespace exists.
{
	rdma system set netns exclusive &&
	ip netns add ibpd_t1 &&
	ip netns attach ibpd_init 1 &&
	rdma link add ibpdL0 type ibpd netdev lo &&
	dbg_sound ibpdL0
} > "$tap_out" 2>&1
ok $? "exclusive netns mode; ibpdL0 added, one debugfs directory"

{
	hold ibpdL0 &&
	[ "$(num_pds ibpdL0)" = 3 ] &&
	rdma dev set ibpdL0 netns ibpd_t1 &&
	! in_init ibpdL0 && in_ns ibpd_t1 ibpdL0 &&
	dbg_sound ibpdL0 &&
	release &&
	[ "$(num_pds ibpdL0)" = 0 ]
} > "$tap_out" 2>&1
ok $? "move to a namespace with a file open: the file is disassociated, its close frees everything"

{
	ip netns exec ibpd_t1 rdma dev set ibpdL0 netns ibpd_init &&
	in_init ibpdL0 && dbg_sound ibpdL0 &&
	"$ibpd_hold" ibpdL0 1 < /dev/null
} > "$tap_out" 2>&1
ok $? "and back: one debugfs directory, the device works"

{
	rdma link add ibpdL1 type ibpd netdev lo &&
	rdma dev set ibpdL1 netns ibpd_t1 &&
	ip netns exec ibpd_t1 rdma link delete ibpdL1 &&
	dbg_gone ibpdL1 && dbg_sound ibpdL0
} > "$tap_out" 2>&1
ok $? "rdma link delete inside a namespace: its debugfs directory goes too"

{
	ip netns add ibpd_t2 &&
	rdma link add ibpdL2 type ibpd netdev lo &&
	rdma dev set ibpdL2 netns ibpd_t2 &&
	ip netns del ibpd_t2 &&
	wait_for in_init ibpdL2 &&
	dbg_sound ibpdL2 &&
	"$ibpd_hold" ibpdL2 1 < /dev/null &&
	rdma link delete ibpdL2 && dbg_gone ibpdL2
} > "$tap_out" 2>&1
ok $? "a namespace deleted with a device in it: the device comes back to init_net, then deletes"

{
	rdma link add ibpdL3 type ibpd netdev lo &&
	rdma dev set ibpdL3 name ibpdL3x &&
	dbg_sound ibpdL3x && dbg_gone ibpdL3 &&
	rdma link add ibpdL3 type ibpd netdev lo &&
	dbg_sound ibpdL3 && dbg_sound ibpdL3x &&
	rdma link delete ibpdL3x &&
	dbg_gone ibpdL3x && dbg_sound ibpdL3 &&
	"$ibpd_hold" ibpdL3 1 < /dev/null &&
	rdma link delete ibpdL3 && dbg_gone ibpdL3
} > "$tap_out" 2>&1
ok $? "rename, a new device under the old name, delete the renamed one: each keeps its own directory"

{
	ip netns add ibpd_t3 &&
	rdma link add ibpdL3 type ibpd netdev lo &&
	rdma dev set ibpdL3 netns ibpd_t3 &&
	ip netns exec ibpd_t3 rdma dev set ibpdL3 name ibpdL3x &&
	dbg_sound ibpdL3x && dbg_gone ibpdL3
} > "$tap_out" 2>&1
ok $? "rename inside a namespace: debugfs follows"

# A pds listing opened and never read, and one read in part, across the
# device's deletion: reads then fail (EIO), and the files are closed only
# later (below), seconds after, once the device is freed (kfree_rcu
# batches for up to 5 s): their release must not touch it (KASAN on the
# debug kernel; slub_debug=P on a stock one, where its poisoned lock hangs).
pds_unread="" pds_part="" pds_deleted=$SECONDS
{
	rdma link add ibpdL4 type ibpd netdev lo &&
	d=$(dbg_dirs ibpdL4 || :) && [ -n "$d" ] &&
	exec {pds_unread}< "$d/pds" {pds_part}< "$d/pds" &&
	head -c 1 <&"$pds_part" > /dev/null &&
	rdma link delete ibpdL4 && pds_deleted=$SECONDS && dbg_gone ibpdL4 &&
	! cat <&"$pds_part" && ! cat <&"$pds_unread"
} > "$tap_out" 2>&1
ok $? "pds files open across rdma link delete: reads fail"

dmesg > "$tap_out"
! grep -q -e 'already present' -e 'Couldn' "$tap_out"
ok $? "no debugfs directory made twice, no failed namespace move (dmesg)"

# What the rdma-core provider matches on, whatever the name.
[ "$(cat /sys/class/infiniband/ibpdL0/hca_type 2> "$tap_out")" = ibpd ] &&
	[ "$(ip netns exec ibpd_t3 cat /sys/class/infiniband/ibpdL3x/hca_type)" = ibpd ]
ok $? "sysfs hca_type is \"ibpd\" (after renames and namespace moves too)"

# Devices that follow their netdev, as rxe and siw do.
{
	ip link add ibpdn0 type dummy &&
	ip link set ibpdn0 address 02:11:22:33:44:55 up &&
	rdma link add ibpdN0 type ibpd netdev ibpdn0 &&
	rdma link show ibpdN0/1 | grep -w "netdev ibpdn0" &&
	[ "$(cat /sys/class/infiniband/ibpdN0/node_guid)" = 0011:22ff:fe33:4455 ] &&
	rdma link show ibpd0/1 && ! rdma link show ibpd0/1 | grep -w netdev &&
	[ "$(cat /sys/class/infiniband/ibpd0/node_guid)" = 0000:0000:0000:0000 ]
} > "$tap_out" 2>&1
ok $? "rdma link show shows the netdev, the node GUID is its MAC's EUI-64 (none for ibpd0)"

{
	hold ibpdN0 &&
	[ "$(num_pds ibpdN0)" = 3 ] &&
	timeout 60 ip link del ibpdn0 &&
	gone ibpdN0 && dbg_gone ibpdN0 &&
	release
} > "$tap_out" 2>&1
ok $? "deleting the netdev with a file open: the device goes, the file's close frees everything"

# ip link set netns unregisters the netdev in its namespace: the device
# goes, asynchronously (no one waits for the netdev's references).
{
	ip link add ibpdn1 type dummy &&
	rdma link add ibpdN1 type ibpd netdev ibpdn1 &&
	ip link set ibpdn1 netns ibpd_t1 &&
	wait_for gone ibpdN1 && wait_for dbg_gone ibpdN1 &&
	ip netns exec ibpd_t1 ip link del ibpdn1
} > "$tap_out" 2>&1
ok $? "moving the netdev to another namespace takes the device with it"

{
	ip netns add ibpd_t4 &&
	ip link add ibpdn2 type dummy &&
	rdma link add ibpdN2 type ibpd netdev ibpdn2 &&
	rdma dev set ibpdN2 netns ibpd_t4 &&
	hold ibpdN2 ibpd_t4 &&
	timeout 60 ip link del ibpdn2 &&
	! in_ns ibpd_t4 ibpdN2 && dbg_gone ibpdN2 &&
	release &&
	ip netns del ibpd_t4
} > "$tap_out" 2>&1
ok $? "deleting the netdev of a device in another namespace, with a file open there"

# Names across namespaces are the core's, as for rxe (lib/rdma_netns.sh).
per_ns=0
names_per_netns && per_ns=1
{
	rdma link add ibpdS0 type ibpd netdev lo &&
	rdma dev set ibpdS0 netns ibpd_t1 &&
	if [ $per_ns = 1 ]; then
		rdma link add ibpdS0 type ibpd netdev lo && in_init ibpdS0
	else
		! rdma link add ibpdS0 type ibpd netdev lo && ! in_init ibpdS0
	fi && in_ns ibpd_t1 ibpdS0
} > "$tap_out" 2>&1
ok $? "the same name in two namespaces: per namespace from 7.3, refused before"

if [ $per_ns = 1 ]; then
	{
		! rdma dev set ibpdS0 netns ibpd_t1 &&
		in_init ibpdS0 && in_ns ibpd_t1 ibpdS0 &&
		[ "$(dbg_dirs ibpdS0 | wc -l)" = 2 ]
	} > "$tap_out" 2>&1
	ok $? "a move onto a name taken there fails and leaves both"
else
	skip "a move onto a name taken there: names are unique on the system"
fi

{
	rdma link add ibpdS1 type ibpd netdev lo &&
	! rdma dev set ibpdS1 name ibpdL0 &&
	in_init ibpdS1 && in_init ibpdL0 && dbg_sound ibpdS1 &&
	rdma link delete ibpdS1
} > "$tap_out" 2>&1
ok $? "a rename onto a taken name fails and leaves both"

# The device that comes back to init_net meets a name taken there: the
# core renames it ibdev%d.
if [ $per_ns = 1 ]; then
	{
		ip netns add ibpd_t5 &&
		rdma link add ibpdS2 type ibpd netdev lo &&
		rdma dev set ibpdS2 netns ibpd_t5 &&
		rdma link add ibpdS2 type ibpd netdev lo &&
		ip netns del ibpd_t5 &&
		wait_for returned && b=$(returned) && dbg_sound "$b" &&
		"$ibpd_hold" "$b" 1 < /dev/null &&
		rdma link delete "$b" && rdma link delete ibpdS2
	} > "$tap_out" 2>&1
	ok $? "a namespace deleted with a device whose name is taken in init_net: it comes back renamed"
else
	skip "a device coming back onto a taken name: names are unique on the system"
fi

{
	[ -n "$pds_unread" ] && [ -n "$pds_part" ] &&
	sleep $((pds_deleted + 7 - SECONDS > 0 ? pds_deleted + 7 - SECONDS : 0)) &&
	exec {pds_unread}<&- {pds_part}<&- && pds_unread="" pds_part="" &&
	dbg_sound ibpdL0
} > "$tap_out" 2>&1
ok $? "the pds files' close, after their device is freed, touches nothing of it"

# ibpdL3x is still in ibpd_t3, ibpdL0 in init_net: rmmod takes both.
if [ -z "${IBPD_KO:-}" ]; then
	skip "rmmod after the lifecycle events: IBPD_KO is not set"
	skip "insmod again"
	skip "loading with ndevs out of range"
	skip "rmmod with a device in a namespace being deleted"
	tap_totals
	exit
fi
{
	timeout 60 rmmod ibpd &&
	! [ -d "$dbg_root" ] && ! in_init ibpdL0 && ! in_ns ibpd_t3 ibpdL3x
} > "$tap_out" 2>&1
ok $? "rmmod ibpd after all of that, with a device in a namespace"

# max_pd has one rule, at load as in debugfs: 1 to 2^24 - 1.
{
	dmesg -c > /dev/null &&
	! insmod "$IBPD_KO" max_pd=0 &&
	dmesg | grep "invalid for parameter .max_pd" &&
	! insmod "$IBPD_KO" max_pd=16777216 &&
	! [ -d "$dbg_root" ] &&
	insmod "$IBPD_KO" && in_init ibpd0 && dbg_sound ibpd0
} > "$tap_out" 2>&1
ok $? "insmod with max_pd 0 or 2^24 fails (EINVAL); insmod again: ibpd0 back"

# load_errno ARGS: loads ibpd with ARGS (one string, as finit_module(2)
# takes them) and prints the errno's name, or "loaded": the kernel's own
# errno, where insmod's message would be its rendering of it.
load_errno() {
	python3 - "$IBPD_KO" "$1" <<'PY'
import ctypes, errno, os, sys
nr = {"x86_64": 313, "aarch64": 273}[os.uname().machine]	# finit_module
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY)
r = libc.syscall(nr, fd, sys.argv[2].encode(), 0)
print(errno.errorcode[ctypes.get_errno()] if r else "loaded")
PY
}

# ndevs out of range is EINVAL, also past the parser's range (2^32, where
# kstrtouint() says ERANGE; max_pd's set callback, the same at load as in
# sysfs, is tested in ibpd_test's max_pd_param_bounds); ndevs at its
# bound, 64, loads them all.
{
	timeout 60 rmmod ibpd &&
	bad=0 &&
	for arg in ndevs=65 ndevs=4294967296; do
		e=$(load_errno "$arg")
		echo "load with $arg: $e"
		[ "$e" = EINVAL ] || bad=1
		[ "$e" != loaded ] || rmmod ibpd
	done &&
	[ "$bad" = 0 ] && ! [ -d "$dbg_root" ] &&
	[ "$(load_errno ndevs=0)" = loaded ] &&
	! rdma dev | grep -q ': ibpd' && rmmod ibpd &&
	insmod "$IBPD_KO" ndevs=64 &&
	[ "$(rdma dev | grep -c ': ibpd[0-9]*:')" = 64 ] && in_init ibpd63 &&
	timeout 120 rmmod ibpd && ! in_init ibpd0 &&
	insmod "$IBPD_KO" && in_init ibpd0
} > "$tap_out" 2>&1
ok $? "loading with ndevs 65 or 2^32 fails with EINVAL; ndevs=0 makes none, ndevs=64 64 devices"
# whatever failed above, ibpd is loaded for what follows
[ -d /sys/module/ibpd ] || insmod "$IBPD_KO" > /dev/null 2>&1

# The namespace's deletion runs in a workqueue: rmmod may meet the device
# on its way back to init_net.
{
	rdma link add ibpdL2 type ibpd netdev lo &&
	ip netns add ibpd_t2 &&
	rdma dev set ibpdL2 netns ibpd_t2 &&
	ip netns del ibpd_t2 &&
	timeout 60 rmmod ibpd &&
	! [ -d "$dbg_root" ] && ! in_init ibpdL2 &&
	insmod "$IBPD_KO" && in_init ibpd0
} > "$tap_out" 2>&1
ok $? "rmmod while a namespace holding a device is being deleted"
tap_totals

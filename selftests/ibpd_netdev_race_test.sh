#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# "rdma link add" racing the move of its netdev to another network
# namespace, and the netdev's deletion: the device must end up
# unregistered, as when the netdev of a registered device goes. A move
# sends NETDEV_UNREGISTER once, and while the device registers its driver
# cannot take a reference on it (ib_device_try_get() fails): a driver that
# skips it then leaves the device bound to a netdev in the other namespace
# for good. ibpd_link_race makes a dummy netdev per try, adds the device
# over netlink and moves or deletes the netdev after a delay that steps
# across the add's time; the device must be gone 10 s later. An add that
# meets the name of a device the core has not yet let go of (ENFILE) is
# made again: the third case holds the name with another device for 2 s.
# IBPD_RACE_TRIES (default 100) tries of each; make soak runs more.
# Then the same windows for certain, with ibpd's debugfs knobs that hold
# an add at a stage (Documentation/ibpd.rst, "debugfs"): before the
# notifier can see the device (lookup), while it sees it and the device
# cannot be taken (register), and once it can (enable). The netdev is
# deleted, or moved, while an add waits at one; then the device must go,
# and the netdev's deletion must return: a reference to the netdev left
# behind keeps it waiting for ever ("unregister_netdevice: waiting for").
# As root, in the test VM; kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
tries=${IBPD_RACE_TRIES:-100}
race=$build/selftests/ibpd_link_race
[ -x "$race" ] || race=$dir/ibpd_link_race
ns=ibpd_race

cleanup() {
	for st in lookup register enable; do
		echo 0 > "$dbg_root/add_delay_${st}_ms" 2> /dev/null
	done
	rdma link delete ibpdD0 2> /dev/null
	ip link del ibpdd0 2> /dev/null
	ip -n "$ns" link del ibpdd0 2> /dev/null
	rdma link delete ibpdR0 2> /dev/null
	rdma link delete ibpdR1 2> /dev/null
	rdma link delete ibpdR2 2> /dev/null
	ip link del ibpdr0 2> /dev/null
	ip link del ibpdr1 2> /dev/null
	ip link del ibpdr2 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "TAP version 13"
if ! ip link add ibpdr0 type dummy 2> /dev/null; then
	echo "1..0 # SKIP no dummy netdevs (CONFIG_DUMMY)"
	exit 4
fi
ip link del ibpdr0
echo "1..9"
ip netns add "$ns"

"$race" move "$tries" "$ns" ibpd ibpdR0 ibpdr0 > "$tap_out" 2>&1
ok $? "rdma link add racing a move of its netdev to another namespace: the device goes ($(tail -n 1 "$tap_out"))"
"$race" del "$tries" "$ns" ibpd ibpdR1 ibpdr1 > "$tap_out" 2>&1
ok $? "rdma link add racing the deletion of its netdev: the device goes ($(tail -n 1 "$tap_out"))"

# The name held by a device on lo until 2 s after the program starts:
# its adds fail with ENFILE until then, and it must wait, not give up.
rdma link add ibpdR2 type ibpd netdev lo > "$tap_out" 2>&1 &&
	{ "$race" del 5 "$ns" ibpd ibpdR2 ibpdr2 > "$tap_out" 2>&1 & } &&
	sleep 2 && rdma link delete ibpdR2 && wait $!
ok $? "an add that meets a name not yet let go of is made again ($(tail -n 1 "$tap_out"))"

# returns_within SECS PID: whether PID ends within SECS seconds (a task
# waiting for a netdev's references cannot be killed: it is left there).
returns_within() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$2" 2> /dev/null || return 0
		sleep 0.1
	done
	return 1
}

# held STAGE ACTION: "rdma link add" held at STAGE for 3 s, the netdev
# deleted (ACTION del) or moved to $ns (move) while it waits there. The
# add may fail or not (lookup: ENODEV); the device must be gone 10 s
# after it returns, and the netdev's deletion must return within 30 s.
held() {
	local stage=$1 action=$2 knob=$dbg_root/add_delay_$1_ms i add del
	ip link add ibpdd0 type dummy || return 1
	echo 3000 > "$knob" || return 1
	rdma link add ibpdD0 type ibpd netdev ibpdd0 2> /dev/null &
	add=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(cat "$dbg_root/add_delayed")" = 1 ] && break
		sleep 0.1
	done
	echo 0 > "$knob"
	if [ "$i" = 300 ]; then
		echo "# the add never reached $stage"
		return 1
	fi
	if [ "$action" = del ]; then
		ip link del ibpdd0 &
	else
		ip link set ibpdd0 netns "$ns" && ip -n "$ns" link del ibpdd0 &
	fi
	del=$!
	wait "$add"
	echo "# add at $stage, netdev ${action}: add exited $?"
	for ((i = 0; i < 100; i++)); do
		[ -e /sys/class/infiniband/ibpdD0 ] || break
		sleep 0.1
	done
	if [ "$i" = 100 ]; then
		echo "# ibpdD0 still registered 10 s later"
		rdma link delete ibpdD0
		return 1
	fi
	if ! returns_within 30 "$del"; then
		echo "# the netdev's deletion still waits 30 s later"
		return 1
	fi
	wait "$del"
}

for stage in lookup register enable; do
	for action in del move; do
		what=deleted
		[ "$action" = move ] && what="moved to another namespace"
		held "$stage" "$action" > "$tap_out" 2>&1
		ok $? "the netdev $what while rdma link add waits at $stage: the device and the netdev go ($(grep -m1 'add exited' "$tap_out" | sed 's/^# //'))"
		grep -v 'add exited' "$tap_out"
	done
done
tap_totals

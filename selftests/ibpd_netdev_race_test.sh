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
echo "1..3"
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
tap_totals

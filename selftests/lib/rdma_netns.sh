# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Sourced by the tests of RDMA device names across network namespaces
# (through ksft.sh, or alone). names_per_netns: whether the running
# kernel's ib_core keeps a device's name unique in its namespace, 7.3 and
# later (__ib_device_get_by_name() looks in the device's namespace; rxe
# and ibpd alike), or on the whole system, before: a name taken in another
# namespace is refused (EEXIST for a rename, ENFILE for a new device).
# shellcheck shell=bash
names_per_netns() {
	case $(uname -r) in
	[0-6].* | 7.[0-2].*) return 1 ;;
	*) return 0 ;;
	esac
}

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# ibpd's debugfs as the shell tests find it, as ibpd_debugfs.h does for
# the C ones: one directory per device under $dbg_root, named after the
# device's index, whose "name" file says the device's current name, which
# "rdma dev set" may change. Sourced through ksft.sh.
dbg_root=/sys/kernel/debug/ibpd

# dbg_dirs NAME: the debugfs directories whose "name" says NAME, one a
# line: one for a device of that name, none without one (more only if
# debugfs is wrong, which the lifecycle test looks for). Shell builtins
# and no process: the lifecycle test calls it dozens of times, and a
# process is slow on the debug kernel under TCG (Documentation/
# testing.rst, "Run times").
dbg_dirs() {
	local f n
	for f in "$dbg_root"/*/name; do
		read -r n 2> /dev/null < "$f" && [ "$n" = "$1" ] &&
			echo "${f%/name}"
	done
}

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Sourced by the ibpd kselftest scripts (bash) once they have set dir to
# their own directory. Gives the TAP helpers (tap.sh) and the lookup of a
# device's debugfs directory (ibpd_debugfs.sh); names_per_netns, how the
# kernel scopes device names (rdma_netns.sh); build, the build
# directory of a checkout; ibpd_hold, the program that holds PDs (in
# build/selftests, else beside the scripts, where kselftest installs it);
# tmp, a scratch directory the script removes, and tap_out in it; and
# need_cgroup2 for the tests of a cgroup controller.
# shellcheck shell=bash disable=SC2154 # dir is the caller's
# shellcheck source=selftests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
# shellcheck source=selftests/lib/ibpd_debugfs.sh
. "$(dirname "${BASH_SOURCE[0]}")/ibpd_debugfs.sh"
# shellcheck source=selftests/lib/rdma_netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/rdma_netns.sh"
build=${IBPD_BUILD:-$dir/../build}
ibpd_hold=$build/selftests/ibpd_hold
[ -x "$ibpd_hold" ] || ibpd_hold=$dir/ibpd_hold
tmp=$(mktemp -d)
tap_out=$tmp/out
cgroot=/sys/fs/cgroup

# need_cgroup2 CONTROLLER WHY: cgroup2 at $cgroot (mounted if it is not)
# with CONTROLLER available; else the test is skipped, "1..0 # SKIP WHY"
# and kselftest's exit status 4.
need_cgroup2() {
	mkdir -p "$cgroot"
	grep -q " $cgroot cgroup2 " /proc/mounts ||
		mount -t cgroup2 none "$cgroot" 2> /dev/null
	if ! grep -qw "$1" "$cgroot/cgroup.controllers" 2> /dev/null; then
		echo "1..0 # SKIP $2"
		exit 4
	fi
}

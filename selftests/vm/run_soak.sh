#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM for make soak (scripts/tests/ibpd_check/soak.py): the
# matrix's boot-soak-programs, ibpd_soak for IBPD_SOAK_SECONDS and "rdma
# link add" racing its netdev's move and deletion (IBPD_SOAK_RACE_TRIES
# tries of each, default 1000), then a kmemleak scan;
# kselftest TAP. vm-run fails the run on any splat in the console.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

"$dir/kmemleak_check.sh" clear
IBPD_RACE_TRIES=${IBPD_SOAK_RACE_TRIES:-1000}
export IBPD_RACE_TRIES
run_programs boot-soak
"$dir/kmemleak_check.sh" check || rc=1
exit $rc

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM for make soak (scripts/vm/soak): ibpd_soak for
# IBPD_SOAK_SECONDS, then a kmemleak scan; kselftest TAP. vm-run fails the
# run on any splat in the console.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/vm/lib.sh
. "$dir/lib.sh"

"$dir/kmemleak_check.sh" clear
"$build/selftests/stress/ibpd_soak" || rc=1
"$dir/kmemleak_check.sh" check || rc=1
exit $rc

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_kernel.sh [LIBS...]: a kernel's section of make check in one boot of
# the test VM (scripts/vm/vm-run --rxe): with IBPD_PROOF=stock, first the
# upstream proof's run on this stock kernel (run_proof.sh, which wants a
# fresh boot: the rdma kselftests make and unload rxe devices of their
# own); the kselftests (run_vm.sh, the unload test held back), the verbs
# tests with each libibverbs of LIBS (run_verbs.sh), then the unload test,
# which takes ibpd away. kselftest TAP; exit status 0 when everything
# passed.
dir=$(cd "$(dirname "$0")" && pwd)
rc=0
[ "${IBPD_PROOF:-}" != stock ] || "$dir/run_proof.sh" || rc=1
"$dir/run_vm.sh" --no-unload || rc=1
"$dir/run_verbs.sh" "$@" || rc=1
"$dir/run_vm.sh" --unload || rc=1
exit $rc

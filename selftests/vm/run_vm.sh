#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_vm.sh [--no-unload | --unload]: inside the test VM (scripts/vm/vm-run
# --rxe): brings up rxe0 over dummy0 as ibpd's neighbour when rxe is
# loaded, then every ibpd selftest program (kselftest TAP on stdout), the
# unload test last; --no-unload: all but the unload test; --unload: the
# unload test alone. Exit status 0 when everything passed.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/vm/lib.sh
. "$dir/lib.sh"

if [ "${1:-}" = --unload ]; then
	"$build/selftests/ibpd_unload_test"
	exit
fi
"$dir/rxe_up.sh"

export IBPD_FUZZ_SECONDS="${IBPD_FUZZ_SECONDS:-20}"
for t in ibpd_test stress/ibpd_stress stress/ibpd_fuzz; do
	"$build/selftests/$t" || rc=1
done

# The rxe differential runs through libibverbs: selftests/vm/run_verbs.sh.
"$dir/../ibpd_tool_test.sh" || rc=1
run_device_tests "${1:-}"
exit $rc

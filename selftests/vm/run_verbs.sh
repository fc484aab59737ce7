#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run_verbs.sh [LIBS...]: the verbs-level tests (selftests/verbs) in the
# test VM (scripts/vm/vm-run --rxe), with each libibverbs of LIBS (default:
# "system" and the matrix's rdma-cores): "system" is the installed
# one, a version is Debian's rdma-core built in the cache
# (scripts/build/rdma-core-fetch). ibpd's provider is the one built for that
# libibverbs' provider ABI, loaded uninstalled (RDMAV_DRIVERS). Per
# libibverbs: ibv_devinfo and ibv_devices see ibpd0; seed_test (the seed
# contract, a plain libibverbs program) on ibpd0 and rxe0 and the rxe
# differential over its results; dv_test (the DV API; on rxe0: EOPNOTSUPP
# and no ioctl sent); lifecycle_test (contexts on a device renamed, moved
# to a namespace, left in a deleted namespace, deleted); contract_test
# (libibpd's commands of ibpd's methods against the raw builder's, on
# ibpd0); with a built
# rdma-core, its own tests (run_tests.py: test_pd, test_mr, test_device,
# test_shared_pd) on ibpd0 and rxe0 against the expectations in
# pyverbs.expect. Build first: make provider-all verbs-tests; the
# libibverbs builds of LIBS are fetched on the host
# (scripts/build/rdma-core-fetch VERSION), as the VM's root is read-only.
# kselftest TAP, "# Totals:" lines; exit status 0 when everything passed.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
verbs=$top/selftests/verbs
b=$top/build/provider
libs=("$@")
# shellcheck disable=SC2207 # the versions are words
[ ${#libs[@]} != 0 ] || libs=(system $("$top/scripts/build/matrix" rdma-cores))

[ -n "${IBPD_IN_VM:-}" ] ||
	{ echo "$0: run me in the test VM: scripts/vm/vm-run --rxe -- $0" >&2; exit 2; }

# use_lib LIB: the environment that runs programs on libibverbs LIB.
use_lib() {
	local abi
	rc=
	if [ "$1" = system ]; then
		abi=$("$top/scripts/build/provider-abi")
		export LD_LIBRARY_PATH=$b/abi$abi
	else
		rc=$("$top/scripts/build/rdma-core-fetch" "$1") || return 1
		abi=$(sed -n 's/^#define IBVERBS_PABI_VERSION \([0-9]*\).*/\1/p' \
			"$rc/include/config.h")
		export LD_LIBRARY_PATH=$b/abi$abi:$rc/lib PATH=$rc/bin:$PATH
	fi
	export RDMAV_DRIVERS=$b/abi$abi/libibpd
	[ -e "$RDMAV_DRIVERS-rdmav$abi.so" ] ||
		{ echo "# no provider for ABI $abi: make provider-all"; return 1; }
	echo "# libibverbs $1 (provider ABI $abi):" \
		"$(ldd "$b/seed_test" | sed -n 's/.*libibverbs.so.1 => \([^ ]*\).*/\1/p')"
}

# shellcheck source=selftests/lib/tap.sh
. "$top/selftests/lib/tap.sh"
status=0
verdict() {	# verdict STATUS NAME: one TAP line of run_verbs.sh's own
	if [ "$1" = 0 ]; then ok 0 "$2"; else ok 1 "$2 (exit $1)"; fi
}

check() {	# check NAME CMD...: a command that passes or fails
	local name=$1
	shift
	"$@" > /tmp/verbs-out 2>&1
	local rc=$?
	[ $rc = 0 ] || sed 's/^/# /' /tmp/verbs-out
	verdict $rc "$name"
}

# harness NAME CMD...: a kselftest program; its own TAP counts its cases,
# an exit without a failed case there (a crash) counts here.
harness() {
	local name=$1
	shift
	"$@" 2>&1 | tee /tmp/verbs-tap
	local rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ] && ! grep -q '^# Totals: .*fail:[1-9]' /tmp/verbs-tap; then
		verdict "$rc" "$name"
	fi
	return "$rc"
}

"$top/selftests/vm/rxe_up.sh" || exit 1
echo "TAP version 13"
for lib in "${libs[@]}"; do
	use_lib "$lib" || { verdict 1 "$lib: libibverbs and provider"; continue; }
	check "$lib ibv_devinfo -d ibpd0" ibv_devinfo -d ibpd0
	check "$lib ibv_devices lists ibpd0" sh -c 'ibv_devices | grep -qw ibpd0'
	harness "$lib seed_test" "$b/seed_test" || status=1
	cp /tmp/verbs-tap "/tmp/seed-$lib.tap"
	"$top/selftests/vm/rxe_diff.sh" "/tmp/seed-$lib.tap" ibpd0 rxe0 || status=1
	IBPD_TEST_DEV=ibpd0 harness "$lib dv_test ibpd0" "$b/dv_test" || status=1
	IBPD_TEST_DEV=rxe0 IBPD_TEST_DV=0 harness "$lib dv_test rxe0" \
		"$b/dv_test" || status=1
	harness "$lib lifecycle_test" "$b/lifecycle_test" || status=1
	IBPD_TEST_DEV=ibpd0 harness "$lib contract_test ibpd0" \
		"$b/contract_test" || status=1
	[ -n "$rc" ] || continue
	for dev in ibpd0 rxe0; do	# rdma-core's own tests, built with it
		PYTHONPATH=$rc/python /usr/bin/python3 "$verbs/pyverbs_run.py" \
			"$rc/../tests" --dev "$dev" test_pd test_mr test_device \
			test_shared_pd > "/tmp/pyverbs-$lib-$dev" \
			2> "/tmp/pyverbs-$lib-$dev.log"
		"$verbs/pyverbs_diff.py" "$verbs/pyverbs.expect" \
			"/tmp/pyverbs-$lib-$dev" "$lib" "$dev" || status=1
	done
done
tap_totals && [ "$status" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# run.sh [LIBS...]: the verbs-level tests (seed_test, dv_test) in the test
# VM, on ibpd0 and on rxe0, with each libibverbs of LIBS (default: system
# 56.1 65.0): "system" is the installed one, a version is Debian's
# rdma-core built in the cache (scripts/rdma-core-fetch). ibpd's provider
# is the one built for that libibverbs' provider ABI, loaded uninstalled
# (RDMAV_DRIVERS). Build first: make -f user/provider/provider.mk
# provider-all provider-tests. Exit status 0 when every run passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
b=$top/build/provider
libs=("$@")
[ ${#libs[@]} != 0 ] || libs=(system 56.1 65.0)

if [ -z "${IBPD_IN_VM:-}" ]; then
	for l in "${libs[@]}"; do	# fetch on the host: the VM's root is read-only
		[ "$l" = system ] || "$top/scripts/rdma-core-fetch" "$l" > /dev/null || exit 1
	done
	exec "$top/scripts/vm-run" --modules "crc32_generic? rdma_rxe dummy" \
		-- "$here/run.sh" "${libs[@]}"
fi

sys_abi() {
	objdump -T /usr/lib/x86_64-linux-gnu/libibverbs.so.1 |
		sed -n 's/.*IBVERBS_PRIVATE_\([0-9]*\).*/\1/p' | head -n 1
}

# use_lib LIB: the environment that runs programs on libibverbs LIB.
use_lib() {
	local rc abi
	if [ "$1" = system ]; then
		abi=$(sys_abi)
		export LD_LIBRARY_PATH=$b/abi$abi
	else
		rc=$(IBPD_CACHE=${IBPD_CACHE:-$HOME/.cache/ibpd} "$top/scripts/rdma-core-fetch" "$1") || return 1
		abi=$(sed -n 's/^#define IBVERBS_PABI_VERSION \([0-9]*\).*/\1/p' \
			"$rc/include/config.h")
		export LD_LIBRARY_PATH=$b/abi$abi:$rc/lib PATH=$rc/bin:$PATH
	fi
	export RDMAV_DRIVERS=$b/abi$abi/libibpd
	[ -e "$RDMAV_DRIVERS-rdmav$abi.so" ] ||
		{ echo "# no provider for ABI $abi: make -f user/provider/provider.mk provider-all"; return 1; }
	echo "# libibverbs $1 (provider ABI $abi):" \
		"$(ldd "$b/seed_test" | sed -n 's/.*libibverbs.so.1 => \([^ ]*\).*/\1/p')"
}

fails=0
run() {	# run NAME CMD...: one TAP-ish verdict line per run
	local name=$1
	shift
	if "$@"; then
		echo "ok $name"
	else
		echo "not ok $name (exit $?)"
		fails=$((fails + 1))
	fi
}

"$top/selftests/rxe_up.sh" || exit 1
for lib in "${libs[@]}"; do
	use_lib "$lib" || { fails=$((fails + 1)); continue; }
	run "$lib ibv_devinfo -d ibpd0" ibv_devinfo -d ibpd0
	run "$lib ibv_devices lists ibpd0" sh -c 'ibv_devices | grep -qw ibpd0'
	IBPD_TEST_DEV=ibpd0 run "$lib seed_test ibpd0" "$b/seed_test"
	IBPD_TEST_DEV=rxe0 IBPD_TEST_IMPORT=0 run "$lib seed_test rxe0" "$b/seed_test"
	IBPD_TEST_DEV=ibpd0 run "$lib dv_test ibpd0" "$b/dv_test"
	IBPD_TEST_DEV=rxe0 IBPD_TEST_DV=0 run "$lib dv_test rxe0" "$b/dv_test"
done
echo "# verbs runs failed: $fails"
[ "$fails" = 0 ]

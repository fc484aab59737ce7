#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The kernel's own selftest of RDMA device names across network namespaces
# (tools/testing/selftests/rdma/rxe_netns_names.sh, from the newest
# linux-source in the cache), run with "type ibpd" in place of "type rxe":
# same name in two namespaces, a move onto a taken name, move then rename,
# a rename onto a taken name, a namespace deleted with a device in it.
# The names are the core's: from 7.3 it keeps them per namespace
# (selftests/lib/rdma_netns.sh), and every
# case must pass as it does for rxe; before, a name is unique on the whole
# system (rxe cannot even move there: it cannot disassociate), and the
# three cases that need a name twice must fail with EEXIST (xfail), the
# others pass. Its copy loads and unloads no module. As root, in the test
# VM; kselftest TAP. Not part of make check (it is slow under TCG,
# Documentation/testing.rst; ibpd_lifecycle_test.sh checks the same rules
# in a fraction of the time); by hand:
#   scripts/vm/vm-run --kernel 7 --modules dummy -- selftests/vm/rdma_netns_names_test.sh
set -u
# shellcheck source=selftests/lib/rdma_netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/rdma_netns.sh"
cache=$("$(dirname "${BASH_SOURCE[0]}")/../../scripts/build/cache-dir")
src=$(printf '%s\n' "$cache"/kernels/*/source/tools/testing/selftests |
      sort -V | tail -n 1)
[ -d "$src" ] || src=
test=rdma/rxe_netns_names.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
if [ -z "$src" ] || ! [ -f "$src/$test" ]; then
	echo "1..0 # SKIP no linux-source with selftests/$test"
	exit 4
fi
mkdir "$tmp/rdma" "$tmp/kselftest"
cp "$src/kselftest/ktap_helpers.sh" "$tmp/kselftest/"

# set_netns_mode MODE: the mode changes only while no other namespace
# exists, and namespaces go away asynchronously.
set_netns_mode() {
	for _ in $(seq 100); do
		rdma system set netns "$1" 2> /dev/null && return 0
		sleep 0.2
	done
	return 1
}

echo "1..1"
sed -e 's/^MODS=.*/MODS=()/' -e "s/type rxe/type ibpd/" "$src/$test" \
	> "$tmp/$test"
set_netns_mode exclusive
bash "$tmp/$test" > "$tmp/out" 2>&1
set_netns_mode shared
sed 's/^/# /' "$tmp/out"
res=$(sed -n -e 's/^ok \([0-9]*\) .*# SKIP.*/\1:skip/p' \
	     -e 's/^ok \([0-9]*\) .*/\1:ok/p' \
	     -e 's/^not ok \([0-9]*\) .*/\1:fail/p' "$tmp/out" | tr '\n' ' ')
# case 4 needs an rdma tool that moves and renames in one command
if names_per_netns; then
	want="1:ok 2:ok 3:ok 4:(ok|skip) 5:ok 6:ok "
else
	want="1:fail 2:fail 3:ok 4:(ok|skip) 5:ok 6:fail "
fi
echo "$res" | grep -Eqx "$want" &&
	{ [ "${want#1:ok}" != "$want" ] || grep -q "File exists" "$tmp/out"; }
ok=$?
[ $ok = 0 ] || echo -n "not "
echo "ok 1 ibpd devices on $(uname -r): $res(want $want)"
echo "# Totals: pass:$((ok == 0)) fail:$((ok != 0)) xfail:0 xpass:0 skip:0 error:0"
exit $ok

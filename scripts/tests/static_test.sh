#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Static checks, kselftest-style TAP: the module builds with W=1 and sparse
# (C=1) without a warning, checkpatch --strict is clean, and each uapi
# header compiles alone in C and in C++.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kdir=$("$top/scripts/kernel-fetch" "${KERNEL:-6.1}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_out=$tmp/out
. "$here/tap.sh"

hdrs=$(cd "$top/uapi" && ls rdma/*.h)
echo "TAP version 13"
echo "1..$((2 + 2 * $(echo "$hdrs" | wc -w)))"

# Force a rebuild so that every file is compiled and checked.
make -s -C "$top" module W=1 C=1 KERNEL="${KERNEL:-6.1}" \
	KBUILD_EXTRA_WARN=1 -B > "$tmp/out" 2>&1
rc=$?
! grep -q -E -i 'warning|error' "$tmp/out" && [ $rc = 0 ]
ok $? "module: W=1 C=1 (sparse) build without warnings"

perl "$kdir/source/scripts/checkpatch.pl" --no-tree --strict --terse \
	--show-types -f "$top"/kernel/*.[ch] "$top"/uapi/rdma/*.h \
	> "$tmp/out" 2>&1
! grep -q -E 'ERROR|WARNING|CHECK' "$tmp/out"
ok $? "checkpatch --strict: 0 errors, 0 warnings, 0 checks"

for h in $hdrs; do
	echo "#include <$h>" > "$tmp/t.c"
	gcc -Wall -Werror -fsyntax-only -I"$top/uapi" "$tmp/t.c" > "$tmp/out" 2>&1
	ok $? "uapi: $h compiles alone in C"
	g++ -Wall -Werror -fsyntax-only -x c++ -I"$top/uapi" "$tmp/t.c" > "$tmp/out" 2>&1
	ok $? "uapi: $h compiles alone in C++"
done

tap_totals

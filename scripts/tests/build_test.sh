#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The top Makefile, on the host, without building anything: plain "make"
# is "make all" (the header's promise, whatever an included file's first
# rule), and a test kernel that cannot be had stops make with the fetch
# error before anything runs. kselftest-style TAP.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup 3

# -p: the rules as read; the goal FORCE has no recipe: nothing runs
make -C "$top" -q -p FORCE > "$tmp/db" 2> "$tmp/out"
grep '^\.DEFAULT_GOAL :=' "$tmp/db" > "$tmp/out"
grep -qx '\.DEFAULT_GOAL := all' "$tmp/out"
ok $? "make: the default goal is all"

# What the bug left: the per-kernel directory of an empty kernel version.
rm -rf "$top/build/kmod/kernel" "$top/build/kmod/Kbuild" "$top/build/kmod/uapi"
expect_rc 2 "make module KERNEL=nosuch: fails" \
	make --no-print-directory -C "$top" module KERNEL=nosuch
grep -q 'unknown series nosuch' "$tmp/out" &&
	grep -q "no test kernel 'nosuch'" "$tmp/out" &&
	! grep -q -e "-C /build" -e "Entering directory" "$tmp/out" &&
	[ ! -e "$top/build/kmod/Kbuild" ]
ok $? "make module KERNEL=nosuch: the fetch error, then stops; nothing built, nothing left"

tap_totals

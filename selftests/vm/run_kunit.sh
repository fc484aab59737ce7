#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM: loads ibpd_kunit.ko, whose suites run at load,
# and prints their KTAP from the kernel log under a top-level KTAP header
# (suites in a module print none), for kunit.py parse.
kunit=$(dirname "$IBPD_KO")/ibpd_kunit.ko
[ -f "$kunit" ] || { echo "no $kunit (kernel without CONFIG_KUNIT?)" >&2; exit 1; }
dmesg -C
insmod "$kunit" || exit 1
log=$(dmesg --color=never --notime)
rmmod ibpd_kunit
"$(dirname "$0")/gcov_dump.sh"
echo "KTAP version 1"
echo "1..$(echo "$log" | grep -c '^    # Subtest:')"
echo "$log" | sed -n '/^    KTAP version/,$p'

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs last inside the debug VM (CONFIG_GCOV_KERNEL, module built with
# IBPD_GCOV=1): writes ibpd's gcov counts from debugfs to the kernel
# console as one line, "IBPD-GCOV:" and a base64 tar of the .gcda files,
# for scripts/tests/ibpd_check/coverage.py to take from the console log on the host. The
# counts of unloaded module instances persist (gcov_persist).
d=/sys/kernel/debug/gcov$(dirname "${IBPD_KO:?}")
[ -d "$d" ] || { echo "# gcov: no counts under $d" >&2; exit 0; }
tmp=$(mktemp -d)
(cd "$d" && find . -name '*.gcda') | while read -r f; do
	mkdir -p "$tmp/$(dirname "$f")"
	cat "$d/$f" > "$tmp/$f"
done
printf 'IBPD-GCOV:%s\n' "$(tar -C "$tmp" -cz . | base64 -w0)" > /dev/ttyS0
rm -rf "$tmp"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# kmemleak_check.sh clear | check: forgets what kmemleak knows (before a
# run), or scans and prints one TAP case (after it). kmemleak reports
# objects older than 5 s that nothing points to. kselftest TAP; exit
# status 1 when it found leaks.
dir=$(cd "$(dirname "$0")" && pwd)
kml=/sys/kernel/debug/kmemleak

if [ "${1:-check}" = clear ]; then
	[ -w $kml ] && echo clear > $kml
	exit 0
fi
# shellcheck source=selftests/lib/tap.sh
. "$dir/../lib/tap.sh"
echo "TAP version 13"
echo "1..1"
tap_out=/tmp/kmemleak.out
if [ -w $kml ]; then
	sleep 6
	echo scan > $kml
	echo scan > $kml
	cat $kml > $tap_out
	leaks=$(grep -c '^unreferenced object' $tap_out)
	[ "$leaks" = 0 ]
	ok $? "kmemleak: $leaks suspected leaks"
	[ "$leaks" = 0 ] || sed 's/^/# /' $tap_out | head -n 120
else
	skip "kmemleak: no $kml"
fi
tap_totals

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rxe_diff.sh TAP DEV_A DEV_B: from the TAP of a kselftest program whose
# fixture has one variant per device (cases "FIXTURE.DEV.TEST"), checks
# that both devices ran the same cases with the same results. Prints a
# kselftest-style TAP block with the number of cases on each device.
tap=$1 a=$2 b=$3
res() {	# "TEST RESULT" lines of device $1
	sed -n "s/^\(not ok\|ok\) [0-9]* [^.]*\.$1\.\([^ ]*\)\( # SKIP\)\{0,1\}.*/\2 \1\3/p" "$tap" |
		sort
}
res "$a" > /tmp/diff-a
res "$b" > /tmp/diff-b
na=$(wc -l < /tmp/diff-a)
nb=$(wc -l < /tmp/diff-b)
pa=$(awk '$2 == "ok"' /tmp/diff-a | wc -l)
pb=$(awk '$2 == "ok"' /tmp/diff-b | wc -l)

echo "TAP version 13"
echo "1..1"
if [ "$na" -gt 0 ] && cmp -s /tmp/diff-a /tmp/diff-b; then
	echo "ok 1 differential $a/$b: $na cases on $a ($pa passed), $nb on $b ($pb passed), same results"
	echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
	exit 0
fi
echo "not ok 1 differential $a/$b: $na cases on $a ($pa passed), $nb on $b ($pb passed), results differ"
diff /tmp/diff-a /tmp/diff-b | sed 's/^/# /'
echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
exit 1

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rxe_diff.sh TAP DEV_A DEV_B: from the TAP of a kselftest program whose
# fixture has one variant per device (cases "FIXTURE.DEV.TEST"), checks
# that both devices ran the same cases with the same results. One
# difference is expected, import: a case that passed on DEV_A may be
# skipped on DEV_B with "import is EOPNOTSUPP" (the case checked that
# before skipping). Prints a kselftest-style TAP block with the counts.
tap=$1 a=$2 b=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "TEST RESULT" lines of device $1; RESULT: ok, not ok, skip, no-import.
# A case's name is that of its "#  RUN" line: older harnesses (6.1) print
# "ok N # SKIP reason" without it.
res() {
	awk -v dev="$1" '
	/^#  RUN / { split($3, p, "."); name = (p[2] == dev) ? p[3] : ""; next }
	/^(not )?ok [0-9]+/ && name != "" {
		r = /^not ok/ ? "not ok" : "ok"
		if (r == "ok" && /# SKIP/)
			r = /import is EOPNOTSUPP/ ? "no-import" : "skip"
		print name, r
		name = ""
	}' "$tap" | sort
}
res "$a" > "$tmp/a"
res "$b" > "$tmp/b"
na=$(wc -l < "$tmp/a")
nb=$(wc -l < "$tmp/b")
pa=$(awk '$2 == "ok"' "$tmp/a" | wc -l)
pb=$(awk '$2 == "ok"' "$tmp/b" | wc -l)
ni=$(awk '$2 == "no-import"' "$tmp/b" | wc -l)
# DEV_B's import skips stand for DEV_A's passes
sed 's/ no-import$/ ok/' "$tmp/b" > "$tmp/b-norm"

# shellcheck source=selftests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
echo "TAP version 13"
echo "1..1"
what="$na cases on $a ($pa passed), $nb on $b ($pb passed, $ni without import)"
[ "$na" -gt 0 ] && cmp -s "$tmp/a" "$tmp/b-norm" && ! grep -q ' no-import$' "$tmp/a"
st=$?
if [ $st = 0 ]; then
	ok 0 "differential $a/$b: $what, same results"
else
	ok 1 "differential $a/$b: $what, results differ"
	diff "$tmp/a" "$tmp/b-norm" | sed 's/^/# /'
fi
tap_totals

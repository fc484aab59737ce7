#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench keeps working: a short run (IBPD_BENCH_QUICK=1, 1k live PDs)
# in the test VM, into a scratch directory; kselftest-style TAP. The
# figures of a short run mean nothing: only that every part produced them.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_out=$tmp/out

echo "TAP version 13"
echo "1..4"
make -s -C "$top" module lib build/bench/ibpd_bench > "$tmp/out" 2>&1 &&
	IBPD_BENCH_QUICK=1 IBPD_BENCH_MAX_LIVE=1000 IBPD_BENCH_OUT=$tmp/bench \
	"$top/scripts/bench" >> "$tmp/out" 2>&1
ok $? "a short make bench runs in the VM and reports"

grep -q '^per-op cost' "$tmp/bench/report.txt" 2> "$tmp/out" &&
	grep -q '^targets' "$tmp/bench/report.txt"
ok $? "the report has the per-op table and the targets"

python3 - "$tmp/bench/bench.json" > "$tmp/out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = {(r["op"]) for r in d["ops"] if r["ibpd0_ns"]}
assert {"null_ioctl", "alloc_destroy_ioctl", "alloc_destroy_write", "import",
        "alloc_destroy_verbs", "reg_dereg_mr_4k", "reg_dereg_mr_4k_write"} <= ops, ops
lib = {(r["device"], r["verb"]) for r in d["library"] if r["x_bare"]}
assert {("ibpd0", "alloc_destroy_verbs"), ("ibpd0", "import"),
        ("ibpd0", "reg_dereg_mr_4k"), ("rxe0", "alloc_destroy_verbs")} <= lib, lib
assert all(r["rxe0_ns"] for r in d["ops"] if r["op"] in
           ("null_ioctl", "alloc_destroy_write", "reg_dereg_mr_4k"))
assert {r["live_pds"] for r in d["scale"]} == {1, 1000}
assert {m["device"] for m in d["memory"]} == {"ibpd0", "rxe0"}
assert {p["procs"] for p in d["procs"]} == {1, 2, 4}
assert len(d["targets"]) == 4
PY
ok $? "bench.json has every group: ops on both devices, libibverbs against bare, scale, memory, processes"

file "$tmp/bench/bench.png" > "$tmp/out" 2>&1 && grep -q 'PNG image data' "$tmp/out"
ok $? "bench.png is a PNG"

tap_totals

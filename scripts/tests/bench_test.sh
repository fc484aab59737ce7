#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench keeps working: a short run (IBPD_BENCH_QUICK=1, 1k live PDs)
# in the test VM, into a scratch directory; kselftest-style TAP. The
# figures of a short run mean nothing: only that every part produced them,
# and that ibpd0's max_pd could be raised to what the full run's 1M live
# PDs need. First, on the host, the report's judgement of its targets on
# recorded output.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup 8

# The report's judgement, on the recorded output of a short run
# (logs/bench-short.log) and on variants of it: scale figures whose worst
# growth is GROWTH, and max_pd as the bench found it (LIMIT).
variant() {	# variant GROWTH LIMIT OUT
	python3 - "$here/logs/bench-short.log" "$@" <<'PY'
import json, sys
src, growth, limit, dst = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(src) as f, open(dst, "w") as o:
    for line in f:
        if line.startswith("IBPD-BENCH "):
            r = json.loads(line[len("IBPD-BENCH "):])
            if r["group"] == "scale":
                worst = r["op"] == "import" and r["live_pds"] > 1
                r["ns"] = 100.0 * (growth if worst else 1.0)
            if r["group"] == "limits" and limit != "-":
                r["max_pd"] = int(limit)
            line = "IBPD-BENCH " + json.dumps(r) + "\n"
        o.write(line)
PY
}
judged() {	# judged OUT: every target's word agrees with its value
	python3 - "$1/bench.json" "$1/report.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
for t in d["targets"]:
    word = "met   " if t["met"] else "MISSED"
    assert f"  {word} {t['target']}: " in text, (t, text)
PY
}
variant 1.07 - "$tmp/g107.log" &&
	python3 "$top/bench/report.py" "$tmp/g107.log" "$tmp/g107" > "$tmp/out" 2>&1 &&
	grep -q '^  met    cost at 1k live PDs <= 1.5x cost at 1 (worst: import): 1.07$' "$tmp/out" &&
	judged "$tmp/g107" >> "$tmp/out" 2>&1
ok $? "report: growth 1.07 at 1k live PDs meets the 1.5x target"
variant 1.6 - "$tmp/g16.log" &&
	python3 "$top/bench/report.py" "$tmp/g16.log" "$tmp/g16" > "$tmp/out" 2>&1 &&
	grep -q '^  MISSED cost at 1k live PDs <= 1.5x cost at 1 (worst: import): 1.60$' "$tmp/out" &&
	judged "$tmp/g16" >> "$tmp/out" 2>&1
ok $? "report: growth 1.60 misses it"
variant 1.0 65536 "$tmp/lim.log" &&
	python3 "$top/bench/report.py" "$tmp/lim.log" "$tmp/lim" > "$tmp/out" 2>&1 &&
	grep -q "^  MISSED ibpd0's max_pd allows the full scale" "$tmp/out" &&
	judged "$tmp/lim" >> "$tmp/out" 2>&1
ok $? "report: a max_pd below the full scale's need is a missed target"
# No target the driver cannot meet: the import is held to the core's own
# lookup, which the recorded run shows is above the null ioctl.
python3 "$top/bench/report.py" "$here/logs/bench-short.log" "$tmp/rec" > "$tmp/out" 2>&1 &&
	! grep -q 'import <= 1.5x null ioctl' "$tmp/out" &&
	grep -q "import ioctl <= 1.5x the core's lookup alone" "$tmp/out" &&
	judged "$tmp/rec" >> "$tmp/out" 2>&1
ok $? "report: the recorded short run, every target judged by its value"
make -s -C "$top" module lib build/bench/ibpd_bench > "$tmp/out" 2>&1 &&
	IBPD_BENCH_QUICK=1 IBPD_BENCH_MAX_LIVE=1000 IBPD_BENCH_OUT=$tmp/bench \
	"$top/scripts/tests/bench" >> "$tmp/out" 2>&1
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
assert len(d["targets"]) == 5
lim, = d["limits"]
assert lim["device"] == "ibpd0" and lim["max_pd"] >= lim["max_pd_needed"] > 1000000, lim
assert any(t["met"] and "max_pd allows the full scale" in t["target"]
           for t in d["targets"]), d["targets"]
PY
ok $? "bench.json has every group: ops on both devices, libibverbs against bare, scale, memory, processes, and the limit raised for the full scale"

file "$tmp/bench/bench.png" > "$tmp/out" 2>&1 && grep -q 'PNG image data' "$tmp/out"
ok $? "bench.png is a PNG"

tap_totals

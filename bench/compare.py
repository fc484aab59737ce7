#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# compare.py BENCH_JSON... : the ratios of make bench runs side by side
# (out/bench/bench.json of each; copy it away between runs).
#
# Two runs, say before and after a patch: each ratio of both, the change,
# and "changed" when their 95% intervals do not overlap and it is at least
# IBPD_BENCH_MIN_CHANGE (default 1%): under -icount an op's cost is nearly
# exact, and a few instructions more are apart without mattering. Three
# or more, say to see that the bench repeats: each ratio's deviation from the
# median of the runs, flagged beyond IBPD_BENCH_TOLERANCE (default 5%).
# Exit status 1 when a ratio changed (two runs) or is off (more).
# Runs made on other machines (kernel, clock, vCPU model: bench.json's
# "run"; a run made before the vCPU was recorded has it "unrecorded")
# are compared all the same, with a warning on stderr that names what
# differs: their ratios differ by the machine too.
"""Compare the ratios of make bench runs."""

import json
import os
import sys


# what of a run's machine its figures depend on (bench.json's "run")
MACHINE = ("kernel", "clock", "vcpu")


def ratios(doc):
    """Every ratio of a report, by a name that is the same in each run."""
    out = {}
    for r in doc["ops"]:
        for k in ("ibpd0_x_null", "rxe0_x_null", "ibpd0_x_rxe0"):
            if r[k]:
                out[f"{r['op']} {k}"] = r[k]
    for r in doc["library"]:
        if r["x_bare"]:
            out[f"{r['device']} {r['verb']} x {r['bare']}"] = r["x_bare"]
    for r in doc["scale"]:
        if r["op"] != "null_ioctl":
            out[f"scale {r['op']} {r['live_pds']} x_null"] = r["x_null"]
        if r["live_pds"] != 1:
            out[f"scale {r['op']} {r['live_pds']} x_at_1"] = r["x_at_1"]
    for g in doc["growth"]:
        out[f"growth {g['op']}"] = g["x"]
    for m in doc["memory"]:
        out[f"memory {m['device']} bytes_per_pd"] = m["bytes_per_pd"]
    if doc.get("memory_ibpd0_x_rxe0"):
        out["memory ibpd0 x rxe0"] = doc["memory_ibpd0_x_rxe0"]
    for r in doc["procs"]:
        if r["procs"] != 1:
            out[f"procs {r['device']} {r['op']} {r['procs']} x_1"] = r["x_1"]
    return out


def fmt(f):
    hi = "inf" if f["hi"] is None else f"{f['hi']:.2f}"
    return f"{f['value']:.2f} [{f['lo']:.2f},{hi}]"


def main():
    paths = sys.argv[1:]
    if not paths:
        print(__doc__.strip(), "\nusage: compare.py BENCH_JSON...",
              file=sys.stderr)
        return 2
    tol = float(os.environ.get("IBPD_BENCH_TOLERANCE", "5")) / 100
    floor = float(os.environ.get("IBPD_BENCH_MIN_CHANGE", "1")) / 100
    runs = []
    machines = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        runs.append(ratios(doc))
        machines.append({k: doc["run"].get(k, "unrecorded") for k in MACHINE})
    for k in MACHINE:
        seen = [m[k] for m in machines]
        if len(set(seen)) > 1:
            print(f"compare.py: warning: the runs' {k} differ: "
                  f"{' | '.join(str(v) for v in seen)}; their ratios differ "
                  "by it too", file=sys.stderr)
    names = [n for n in runs[0] if all(n in r for r in runs)]
    width = max(len(n) for n in names)
    bad = 0
    worst = 0.0
    for n in names:
        figs = [r[n] for r in runs]
        vals = sorted(f["value"] for f in figs)
        cells = "  ".join(f"{fmt(f):>20}" for f in figs)
        if len(runs) == 2:
            a, b = figs
            change = b["value"] / a["value"] - 1
            apart = ((b["lo"] > a["hi"] if a["hi"] is not None else False) or
                     (b["hi"] is not None and b["hi"] < a["lo"])) and \
                abs(change) >= floor
            bad += apart
            worst = max(worst, abs(change))
            note = "changed" if apart else ""
            print(f"{n:<{width}}  {cells}  {change:+6.1%} {note}")
        else:
            mid = vals[len(vals) // 2] if len(vals) % 2 else \
                (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
            dev = max(abs(v / mid - 1) for v in vals)
            off = dev > tol
            bad += off
            worst = max(worst, dev)
            print(f"{n:<{width}}  {cells}  {dev:6.1%}{' off' if off else ''}")
    what = f"changed (intervals apart, by {floor:.0%} or more)" \
        if len(runs) == 2 else \
        f"off by more than {tol:.0%} from the median"
    print(f"\n{len(names)} ratios, {bad} {what}; the largest change "
          f"{worst:.1%}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

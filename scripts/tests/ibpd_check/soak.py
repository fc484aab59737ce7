#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# soak-report RAW_LOG OUT_DIR VM_STATUS SPLAT_STATUS TARGETS: turns the
# "IBPD-SOAK {json}" and "IBPD-SOAK-SAMPLE {json}" lines of a soak run into
# OUT_DIR/soak.json (the figures, the kmemleak and splat verdicts, and with
# TARGETS=1 the targets and whether they were met) and
# OUT_DIR/soak.png (gnuplot), prints a summary, and exits 1 when the run
# failed or missed a target.
"""Report of an ibpd soak run."""

import json
import os
import re
import shutil
import subprocess
import sys

TARGETS = {"ops_total": 1_000_000, "fuzz_calls": 1_000_000, "events": 100}


def load(path):
    final, samples, leaks = None, [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("IBPD-SOAK-SAMPLE "):
                samples.append(json.loads(line[len("IBPD-SOAK-SAMPLE "):]))
            elif line.startswith("IBPD-SOAK "):
                final = json.loads(line[len("IBPD-SOAK "):])
            m = re.search(r"kmemleak: (\d+) suspected leaks", line)
            if m:
                leaks = int(m.group(1))
    return final, samples, leaks


def plot(samples, outdir):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("soak-report: gnuplot is missing (scripts/build/install-deps)",
              file=sys.stderr)
        return False
    with open(os.path.join(outdir, "samples.dat"), "w",
              encoding="utf-8") as f:
        f.write("# t ops fuzz_calls events pds mrs\n")
        for s in samples:
            f.write(f"{s['t'] / 60:.2f} {s['ops']} {s['fuzz_calls']} "
                    f"{s['events']} {s['pds']} {s['mrs']}\n")
    script = """
set terminal pngcairo size 1200,800 noenhanced
set output 'soak.png'
set multiplot layout 2,1 title 'ibpd soak on the debug kernel'
set xlabel 'minutes'
set ylabel 'calls'
set y2label 'lifecycle events'
set y2tics
set key top left
plot 'samples.dat' using 1:2 with lines title 'verbs ops', \\
     'samples.dat' using 1:3 with lines title 'fuzzed calls', \\
     'samples.dat' using 1:4 axes x1y2 with lines title 'lifecycle events'
unset y2label
unset y2tics
set ylabel 'live objects'
plot 'samples.dat' using 1:5 with lines title 'PDs', \\
     'samples.dat' using 1:6 with lines title 'MRs'
unset multiplot
"""
    r = subprocess.run([gnuplot], input=script, text=True, cwd=outdir,
                       check=False)
    return r.returncode == 0


def main():
    raw, outdir, vm_rc, splat_rc, targets = sys.argv[1:6]
    final, samples, leaks = load(raw)
    if final is None:
        print("soak-report: the run printed no figures (it did not finish)",
              file=sys.stderr)
        return 1
    rep = dict(final)
    rep["kmemleak_suspected_leaks"] = leaks
    rep["splats"] = int(splat_rc) != 0
    rep["vm_status"] = int(vm_rc)
    rep["samples"] = samples
    failed = []
    if int(vm_rc):
        failed.append(f"the run failed (status {vm_rc})")
    if rep["splats"]:
        failed.append("kernel splats in the console log")
    if leaks != 0:
        failed.append(f"kmemleak: {leaks} suspected leaks")
    if final["left"]["pds"] or final["left"]["mrs"]:
        failed.append(f"objects left: {final['left']}")
    if targets == "1":
        met = {
            "ops_total": final["ops_total"] >= TARGETS["ops_total"],
            "fuzz_calls": final["fuzz_calls"] >= TARGETS["fuzz_calls"],
        }
        for ev, n in final["events"].items():
            met[f"events.{ev}"] = n >= TARGETS["events"]
        rep["targets"] = TARGETS
        rep["targets_met"] = met
        failed += [f"target missed: {k}" for k, ok in met.items() if not ok]
    rep["failed"] = failed
    with open(os.path.join(outdir, "soak.json"), "w", encoding="utf-8") as f:
        json.dump(rep, f, indent=1)
        f.write("\n")
    if not plot(samples, outdir):
        failed.append("no plot")

    print(f"soak: {final['seconds']:.0f} s, {final['procs']} processes x "
          f"{final['threads']} threads, {final['fuzzers']} fuzzers")
    print(f"soak: {final['ops_total']} verbs ops, {final['fuzz_calls']} "
          f"fuzzed calls, {final['processes_killed']} processes killed, "
          f"{final['files_passed']} files passed")
    print("soak: events " + ", ".join(
        f"{k} {v}" for k, v in final["events"].items()))
    print(f"soak: peak {final['peak']['pds']} PDs, {final['peak']['mrs']} "
          f"MRs; left {final['left']['pds']} PDs, {final['left']['mrs']} MRs;"
          f" kmemleak {leaks}; splats {'yes' if rep['splats'] else 'none'}")
    print(f"soak: {os.path.join(outdir, 'soak.json')}, "
          f"{os.path.join(outdir, 'soak.png')}")
    for f in failed:
        print(f"soak: FAILED: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make soak: selftests/stress/ibpd_soak for SOAK_MINUTES (default 60)
on the debug kernel (KASAN, lockdep, kmemleak; panic_on_warn), then a
kmemleak scan (selftests/vm/run_soak.sh). Progress streams as it runs;
at the end IBPD_SOAK_OUT (out/soak/) holds soak.json (the figures: ops
by kind, errnos, fuzzed calls, lifecycle events, peaks, the kmemleak and
splat verdicts), soak.png (ops, fuzzed calls, events and live objects
over time) and the console log. With SOAK_MINUTES >= 60 the run must
also reach its targets: 1M verbs ops, 1M fuzzed calls, 100 of each
lifecycle event (IBPD_SOAK_TARGETS=0 drops them, =1 forces them).
"""

import json
import os
import re
import shutil
import subprocess
import sys

from . import tap
from . import vm

VM_ = vm.debug(mem="3G")
GUEST = ["selftests/vm/run_soak.sh"]

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
        print("soak: gnuplot is missing (scripts/build/install-deps)",
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


def report(w, raw, outdir, vm_rc, splat_rc, targets):
    """soak.json and soak.png of the run in outdir from its raw log, a
    summary (diagnostics of the TAP writer w), and the verdict: one case
    (the run passed, no splat, no leak, no object left, the targets met
    when targets)."""
    final, samples, leaks = load(raw)
    if final is None:
        return w.ok(False, "make soak: the run printed no figures (it did "
                    "not finish)")
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
    if targets:
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

    w.diag(f"soak: {final['seconds']:.0f} s, {final['procs']} processes x "
           f"{final['threads']} threads, {final['fuzzers']} fuzzers")
    w.diag(f"soak: {final['ops_total']} verbs ops, {final['fuzz_calls']} "
           f"fuzzed calls, {final['processes_killed']} processes killed, "
           f"{final['files_passed']} files passed")
    w.diag("soak: events " + ", ".join(
        f"{k} {v}" for k, v in final["events"].items()))
    w.diag(f"soak: peak {final['peak']['pds']} PDs, {final['peak']['mrs']} "
           f"MRs; left {final['left']['pds']} PDs, {final['left']['mrs']} "
           f"MRs; kmemleak {leaks}; splats "
           f"{'yes' if rep['splats'] else 'none'}")
    w.diag(f"soak: {os.path.join(outdir, 'soak.json')}, "
           f"{os.path.join(outdir, 'soak.png')}")
    return w.ok(not failed, "make soak's verdict: targets, kmemleak, "
                "splats; %s" % os.path.join(outdir, "soak.json"),
                "\n".join("FAILED: " + f for f in failed))


def run(ctx):
    minutes = int(os.environ.get("SOAK_MINUTES", "60"))
    out = os.environ.get("IBPD_SOAK_OUT") or ctx.path("out/soak")
    t = os.environ.get("IBPD_SOAK_TARGETS")
    targets = (t == "1") if t in ("0", "1") else minutes >= 60
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ctx.lane.print("# soak: %d minutes on the debug kernel; figures in %s"
                   % (minutes, out))
    raw = os.path.join(out, "raw.log")
    console = os.path.join(out, "console.log")
    vm_rc = 0 if ctx.boot(env={"IBPD_SOAK_SECONDS": str(minutes * 60)},
                          log=console, timeout=minutes * 60 + 1800,
                          divert=("IBPD-SOAK", raw)) else 1
    with open(os.path.join(out, "splats.txt"), "w") as f:
        splat = subprocess.run([ctx.path("scripts/vm/splat-check"), console],
                               stdout=f, stderr=subprocess.STDOUT).returncode
    with ctx.writer("soak-report") as w:
        report(w, raw, out, vm_rc, splat, targets)


def main(argv):
    """python3 -m ibpd_check.soak RAW_LOG OUT_DIR VM_STATUS SPLAT_STATUS
    TARGETS: the report of a run's raw log (the tooling's tests, on
    recorded logs); exit status 1 when it failed."""
    raw, outdir, vm_rc, splat_rc, targets = argv
    w = tap.Writer()
    report(w, raw, outdir, int(vm_rc), int(splat_rc), targets == "1")
    return 0 if w.totals() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

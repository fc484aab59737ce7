#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# report.py RAW_LOG OUT_DIR: turns the "IBPD-BENCH {json}" lines of
# ibpd_bench into a table of ratios (stdout and OUT_DIR/report.txt),
# OUT_DIR/bench.json (the figures, the ratios and the targets) and
# OUT_DIR/bench.png (gnuplot: cost against live PDs, ops/s against
# processes). Exit status 1 when the run is incomplete.
"""Report of an ibpd_bench run."""

import json
import os
import shutil
import subprocess
import sys

OPS = [
    ("null_ioctl", "null ioctl (unknown method: core dispatch only)"),
    ("alloc_destroy_ioctl", "alloc+destroy, bare ioctl path"),
    ("alloc_destroy_write", "alloc+destroy, bare write path"),
    ("alloc_destroy_verbs", "ibv_alloc_pd+ibv_dealloc_pd (libibverbs)"),
    ("import", "ibv_import_pd+ibv_unimport_pd (libibverbs)"),
    ("import_ioctl", "  of which the bare import ioctl"),
    ("import_ioctl_enoent", "  of which the core, before the driver (ENOENT)"),
    ("syscall", "a system call (getppid): below the uverbs floor"),
    ("reg_dereg_mr_4k", "ibv_reg_mr+ibv_dereg_mr 4 KiB (libibverbs)"),
    ("reg_dereg_mr_4k_write", "reg+dereg 4 KiB MR, bare write path"),
]
# Each verb through libibverbs and the device's provider, against the same
# verb sent bare on the command fd: (label, verbs op, bare op per device).
LIBRARY = [
    ("alloc+dealloc PD", "alloc_destroy_verbs",
     {"ibpd0": "alloc_destroy_ioctl", "rxe0": "alloc_destroy_write"}),
    ("import+unimport PD", "import", {"ibpd0": "import_ioctl"}),
    ("reg+dereg 4 KiB MR", "reg_dereg_mr_4k",
     {"ibpd0": "reg_dereg_mr_4k_write", "rxe0": "reg_dereg_mr_4k_write"}),
]
SCALE_OPS = ["alloc_destroy_ioctl", "import", "import_same",
             "alloc_destroy_write"]


def load(path):
    recs = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("IBPD-BENCH "):
                recs.append(json.loads(line[len("IBPD-BENCH "):]))
    return recs


def fmt_ns(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}"


def live_label(n):
    return {1: "1", 1000: "1k", 100000: "100k", 1000000: "1M"}.get(n, str(n))


def main():
    raw, outdir = sys.argv[1], sys.argv[2]
    recs = load(raw)
    run = next((r for r in recs if r["group"] == "run"), None)
    ops = {(r["device"], r["op"]): r for r in recs if r["group"] == "ops"}
    scale = [r for r in recs if r["group"] == "scale"]
    memory = {r["device"]: r for r in recs if r["group"] == "memory"}
    procs = [r for r in recs if r["group"] == "procs"]
    close = [r for r in recs if r["group"] == "close"]
    limits = {r["device"]: r for r in recs if r["group"] == "limits"}
    if not run or not ops or not scale or not procs:
        print("report: the benchmark did not complete (see raw.log)",
              file=sys.stderr)
        return 1

    lines = []
    out = lines.append
    out(f"ibpd bench: kernel {run['kernel']}, {run['cpus']} vCPUs under qemu "
        f"TCG; median of {run['rounds']} batches of ~{run['batch_ms']} ms, "
        "ops measured round-robin")
    out("")

    def ns(dev, op):
        r = ops.get((dev, op))
        return r["ns"] if r else None

    null = {d: ns(d, "null_ioctl") for d in ("ibpd0", "rxe0")}
    table = []
    out(f"{'per-op cost':<50} {'ibpd0 ns':>9} {'x null':>7} "
        f"{'rxe0 ns':>9} {'x null':>7} {'ibpd/rxe':>9}")
    for op, label in OPS:
        a, b = ns("ibpd0", op), ns("rxe0", op)
        row = {
            "op": op,
            "ibpd0_ns": a,
            "ibpd0_x_null": a / null["ibpd0"] if a else None,
            "rxe0_ns": b,
            "rxe0_x_null": b / null["rxe0"] if b else None,
            "ibpd0_x_rxe0": a / b if a and b else None,
        }
        table.append(row)
        out(f"{label:<50} {fmt_ns(a):>9} {fmt_x(row['ibpd0_x_null']):>7} "
            f"{fmt_ns(b):>9} {fmt_x(row['rxe0_x_null']):>7} "
            f"{fmt_x(row['ibpd0_x_rxe0']):>9}")
    out("(rxe has no ioctl-path alloc and no import: its provider "
        "allocates by the write path, import fails with EOPNOTSUPP)")
    out("")

    out("libibverbs + provider against the bare verb (ns; x the bare "
        "ioctl or write)")
    library = []
    for label, vop, bare in LIBRARY:
        cells = []
        for dev in ("ibpd0", "rxe0"):
            v, b = ns(dev, vop), ns(dev, bare.get(dev, ""))
            x = v / b if v and b else None
            if v:
                library.append({"device": dev, "verb": vop,
                                "bare": bare.get(dev), "ns": v,
                                "bare_ns": b, "x_bare": x})
            cells.append(f"{dev} {fmt_ns(v):>9} {fmt_x(x):>6}x")
        out(f"  {label:<24} " + "   ".join(cells))
    out("")

    lives = sorted({r["live_pds"] for r in scale})
    sc = {(r["op"], r["live_pds"]): r["ns"] for r in scale}
    out("cost with N live PDs in the file (ns; x null ioctl at that N; "
        "x the cost at 1 live PD)")
    out(f"{'op':<22}" + "".join(f"{live_label(n):>22}" for n in lives))
    out("(import: of a random live PD; import_same: of one PD again and again)")
    scale_rows = []
    for op in ["null_ioctl"] + SCALE_OPS:
        cells = []
        for n in lives:
            v = sc.get((op, n))
            x_null = v / sc[("null_ioctl", n)] if v else None
            x_one = v / sc[(op, lives[0])] if v else None
            scale_rows.append({"op": op, "live_pds": n, "ns": v,
                               "x_null": x_null, "x_at_1": x_one})
            cells.append(f"{fmt_ns(v)} {fmt_x(x_null)}x {fmt_x(x_one)}x")
        out(f"{op:<22}" + "".join(f"{c:>22}" for c in cells))
    for r in close:
        out(f"closing the file with {r['live_pds']:,} PDs: "
            f"{r['ns_per_pd']:,.0f} ns per PD")
    out("")

    out("kernel memory per live PD (Slab of /proc/meminfo, before and after "
        "filling a file)")
    for dev, r in sorted(memory.items()):
        out(f"  {dev:<6} {r['bytes_per_pd']:8.0f} bytes per PD over "
            f"{r['live_pds']:,} PDs")
    if "ibpd0" in memory and "rxe0" in memory:
        out(f"  ibpd0/rxe0: {memory['ibpd0']['bytes_per_pd'] / memory['rxe0']['bytes_per_pd']:.2f}")
    out("")

    out("throughput of processes sharing one file (ops/s; x 1 process)")
    keys = sorted({(r["device"], r["op"]) for r in procs})
    nps = sorted({r["procs"] for r in procs})
    pr = {(r["device"], r["op"], r["procs"]): r["ops_per_s"] for r in procs}
    out(f"{'':<34}" + "".join(f"{str(n) + ' proc':>20}" for n in nps))
    for dev, op in keys:
        one = pr[(dev, op, nps[0])]
        out(f"{dev + ' ' + op:<34}" + "".join(
            f"{pr[(dev, op, n)]:>12,.0f} {pr[(dev, op, n)] / one:5.2f}x"
            for n in nps))
    out("")

    # The targets of the benchmark issue, each one the driver can meet:
    # an import cannot cost less than the core's own lookup of the handle,
    # so it is held to that, not to the null ioctl. Growth with live PDs
    # is taken relative to the null ioctl measured at the same moment,
    # which takes the host's drift out.
    imp = ns("ibpd0", "import_ioctl") / ns("ibpd0", "import_ioctl_enoent")
    alloc = ns("ibpd0", "alloc_destroy_ioctl") / ns("rxe0", "alloc_destroy_write")
    top = lives[-1]

    def norm(op, n):
        return sc[(op, n)] / sc[("null_ioctl", n)]

    growth = {op: norm(op, top) / norm(op, lives[0]) for op in SCALE_OPS}
    out(f"growth from 1 to {live_label(top)} live PDs, relative to the null "
        "ioctl: " + ", ".join(f"{op} {g:.2f}x" for op, g in growth.items()))
    out("")
    lim = limits.get("ibpd0", {})
    targets = [
        {"target": "import ioctl <= 1.5x the core's lookup alone "
         "(the same ioctl on a handle it does not find)", "value": imp,
         "met": imp <= 1.5},
        {"target": "ioctl alloc+destroy <= rxe write-path alloc+destroy",
         "value": alloc, "met": alloc <= 1.0},
        {"target": f"cost at {live_label(top)} live PDs <= 1.5x cost at 1 "
         f"(worst: {max(growth, key=growth.get)})",
         "value": max(growth.values()), "met": max(growth.values()) <= 1.5},
        {"target": f"ibpd0's max_pd allows the full scale "
         f"({lim.get('max_pd_needed', '-')}: 1M live PDs and the "
         "measuring ones)", "value": lim.get("max_pd"),
         "met": bool(lim) and lim["max_pd"] >= lim["max_pd_needed"]},
        {"target": "kernel memory per PD reported",
         "value": memory.get("ibpd0", {}).get("bytes_per_pd"),
         "met": "ibpd0" in memory},
    ]
    out("targets")
    for t in targets:
        v = t["value"]
        out(f"  {'met   ' if t['met'] else 'MISSED'} {t['target']}: "
            f"{'-' if v is None else f'{v:.2f}'}")
    if top < 1000000:
        out(f"  (the scale stopped at {live_label(top)} live PDs: "
            "IBPD_BENCH_MAX_LIVE)")

    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "report.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    doc = {"run": run, "ops": table, "library": library,
           "scale": scale_rows,
           "memory": list(memory.values()), "close": close,
           "limits": list(limits.values()),
           "procs": procs, "targets": targets, "raw": recs}
    with open(os.path.join(outdir, "bench.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    plot(outdir, lives, sc, keys, nps, pr, run)
    print(f"\nwrote {outdir}/report.txt, bench.json, bench.png")
    return 0


def plot(outdir, lives, sc, keys, nps, pr, run):
    """Two panels with gnuplot: ns per op vs live PDs, ops/s vs processes."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("report: gnuplot is missing (scripts/build/install-deps)",
              file=sys.stderr)
        sys.exit(1)
    with open(os.path.join(outdir, "scale.dat"), "w", encoding="utf-8") as f:
        for op in ["null_ioctl"] + SCALE_OPS:
            f.write(f"# {op}: ns, and x the null ioctl at the same N\n")
            for n in lives:
                f.write(f"{n} {sc[(op, n)]:.1f} "
                        f"{sc[(op, n)] / sc[('null_ioctl', n)]:.3f}\n")
            f.write("\n\n")
    with open(os.path.join(outdir, "procs.dat"), "w", encoding="utf-8") as f:
        for dev, op in keys:
            f.write(f"# {dev} {op}\n")
            for n in nps:
                f.write(f"{n} {pr[(dev, op, n)]:.1f}\n")
            f.write("\n\n")
    titles = ["null ioctl"] + [o.replace("_", " ") for o in SCALE_OPS]
    titles = [t.replace("import", "import (random PD)", 1)
              if t == "import" else t for t in titles]
    scale_plot = ", ".join(
        f"'scale.dat' index {i} using 1:3 with linespoints title '{t}'"
        for i, t in enumerate(titles))
    procs_plot = ", ".join(
        f"'procs.dat' index {i} using 1:2 with linespoints "
        f"title '{d} {o.replace('_', ' ')}'"
        for i, (d, o) in enumerate(keys))
    script = f"""
set terminal pngcairo size 1200,500 font ',10'
set output 'bench.png'
set multiplot layout 1,2 title 'ibpd bench, kernel {run['kernel']}, qemu TCG'
set title 'cost per op vs live PDs in the file (ibpd0)'
set logscale x
set logscale y
set xlabel 'live PDs'
set ylabel 'x the null ioctl at the same number of PDs'
set yrange [0.8:*]
set key top left
set grid
plot {scale_plot}
unset logscale x
set title 'throughput of processes sharing one file'
set xlabel 'processes'
set ylabel 'ops/s'
set logscale y
set key bottom right
set xtics ({', '.join(str(n) for n in nps)})
plot {procs_plot}
unset multiplot
"""
    subprocess.run([gnuplot], input=script, text=True, cwd=outdir,
                   check=True)


if __name__ == "__main__":
    sys.exit(main())

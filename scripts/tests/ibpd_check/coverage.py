# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The coverage section: ibpd's kernel line coverage on the debug kernel.
Takes the gcov counts that selftests/vm/gcov_dump.sh wrote to the debug
boot's console log (KUnit, the kselftest and robustness campaign), merges
them with lcov over the .gcno files of build/kmod/KVER, writes the HTML
report (genhtml) to out/coverage/ and says, as kselftest TAP, the
coverage per file and function, the lines never reached, and whether the
total reaches IBPD_COVERAGE_GOAL percent (default 95).
"""

import base64
import glob
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

from .vm import kernel_dir

LCOV = ["--gcov-tool", "gcov-12", "--rc", "lcov_branch_coverage=0"]


def counts(text):
    """The last IBPD-GCOV line's tarball of a console log."""
    found = re.findall(rb"IBPD-GCOV:([A-Za-z0-9+/=]*)", text)
    return base64.b64decode(found[-1]) if found else None


def lcov(*args):
    r = subprocess.run(["lcov", "-q"] + list(args), capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError("lcov %s: %s" % (" ".join(args), r.stdout +
                                             r.stderr))


def read_info(path):
    """An lcov tracefile: per source file, its lines' and functions'
    counts."""
    files, cur = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("SF:"):
                cur = files.setdefault(os.path.basename(line[3:]), {
                    "path": line[3:], "lines": {}, "fns": {}, "fnline": {}})
            elif line.startswith("FN:") and cur:
                ln, name = line[3:].split(",", 1)
                cur["fnline"][name] = int(ln)
            elif line.startswith("FNDA:") and cur:
                cnt, name = line[5:].split(",", 1)
                cur["fns"][name] = cur["fns"].get(name, 0) + int(cnt)
            elif line.startswith("DA:") and cur:
                ln, cnt = line[3:].split(",")[:2]
                cur["lines"][int(ln)] = (cur["lines"].get(int(ln), 0) +
                                         int(cnt))
    return files


def summary(files):
    """Lines of the summary (per file, the functions never called, the
    lines never reached) and the total percentage."""
    out, th, tl = [], 0, 0
    for name in sorted(files):
        f = files[name]
        hit = sum(1 for c in f["lines"].values() if c)
        th += hit
        tl += len(f["lines"])
        out.append("%-16s %4d/%4d lines %5.1f%%" % (
            name, hit, len(f["lines"]),
            100.0 * hit / max(1, len(f["lines"]))))
        for fn in sorted(f["fns"], key=lambda n: f["fnline"].get(n, 0)):
            if not f["fns"][fn]:
                out.append("  function never called: %s (line %s)"
                           % (fn, f["fnline"].get(fn)))
        src = []
        if os.path.exists(f["path"]):
            with open(f["path"]) as s:
                src = s.read().split("\n")
        for ln in sorted(n for n, c in f["lines"].items() if not c):
            text = src[ln - 1].strip() if ln <= len(src) else ""
            out.append("  not reached: %s:%d: %s" % (name, ln, text))
    pct = 100.0 * th / max(1, tl)
    out.append("total            %4d/%4d lines %5.1f%%" % (th, tl, pct))
    return out, pct


def run(ctx):
    kd = kernel_dir(ctx.top, "debug")
    with open(os.path.join(kd, "kver")) as f:
        kver = f.read().strip()
    goal = float(os.environ.get("IBPD_COVERAGE_GOAL", "95"))
    kmod = ctx.path("build/kmod", kver)
    out = ctx.path("out/coverage")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with ctx.writer() as w, tempfile.TemporaryDirectory() as tmp:
        with open(ctx.console("debug"), "rb") as f:
            tgz = counts(f.read())
        gcda = []
        if tgz:
            with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as t:
                t.extractall(os.path.join(tmp, "gcda"))
            # the counts beside the .gcno files of the same build
            gcda = glob.glob(os.path.join(tmp, "gcda", "**", "main.gcda"),
                             recursive=True)
        if not w.ok(gcda, "gcov counts from the debug VM's run"):
            return
        src = os.path.dirname(gcda[0])
        copied = []
        for p in glob.glob(os.path.join(src, "*.gcda")):
            shutil.copy(p, kmod)
            copied.append(os.path.join(kmod, os.path.basename(p)))
        try:
            lcov("--capture", "--directory", kmod, *LCOV,
                 "-o", os.path.join(tmp, "all.info"))
        finally:
            for p in copied:
                os.unlink(p)
        # only the driver's own sources, not the headers they include
        lcov("--extract", os.path.join(tmp, "all.info"), kmod + "/*.c",
             "*/kernel/*.c", "-o", os.path.join(tmp, "driver.info"))
        info = os.path.join(out, "ibpd.info")
        lcov("--remove", os.path.join(tmp, "driver.info"), "*/ibpd_kunit.c",
             "-o", info)
        subprocess.run(["genhtml", "-q", "--legend", "--title",
                        "ibpd kernel line coverage (%s)" % kver, "-o",
                        os.path.join(out, "html"), info], check=True,
                       capture_output=True)
        lines, pct = summary(read_info(info))
        with open(os.path.join(out, "summary.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        w.diag("\n".join(lines))
        w.ok(pct >= goal, "kernel line coverage of ibpd: %.1f%% of the lines "
             "of kernel/*.c (goal %.0f%%; report: out/coverage/html/"
             "index.html)" % (pct, goal))

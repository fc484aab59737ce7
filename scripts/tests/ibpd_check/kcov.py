# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The kcov section: the coverage-guided fuzzer (selftests/stress/
ibpd_kcov_fuzz) against the blind one on the debug kernel (CONFIG_KCOV),
IBPD_KCOV_SECONDS each (default 45), then on from the corpus earlier runs
kept (selftests/vm/run_kcov.sh). The corpus lives in the cache's kcov/,
keyed by the kernel and the call format (selftests/stress/ibpd_fuzz.h),
and grows with each run.
"""

import collections
import hashlib
import os
import subprocess

from .vm import VM, cache_dir, kernel_dir

VM_ = VM("debug", console=True)
GUEST = ["selftests/vm/run_kcov.sh"]
CORPUS = "IBPD-KCOV-CORPUS "


def core_ranges(kd):
    """The text of ib_core and ib_uverbs (drivers/infiniband/core, built
    in): each function's address (System.map: the kernel is not
    relocatable) and size (nm of its object), for the names defined once,
    merged into at most 12 ranges "START-END,..." (hex); "" when the
    kernel is relocatable."""
    with open(os.path.join(kd, "build/.config")) as f:
        if "CONFIG_RELOCATABLE=y\n" in f:
            return ""
    nm = subprocess.run(["nm", "-S", "--defined-only", os.path.join(
        kd, "build/drivers/infiniband/core/built-in.a")],
        capture_output=True, text=True, check=True).stdout
    size, seen = {}, collections.Counter()
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT" and not f[3].startswith("__"):
            size[f[3]] = int(f[1], 16)
            seen[f[3]] += 1
    addr, count, etext = {}, collections.Counter(), 0
    with open(os.path.join(kd, "build/System.map"), encoding="utf-8") as f:
        for line in f:
            a, t, n = line.split()[:3]
            if n == "_etext":
                etext = int(a, 16)
            if t in "tT":
                addr[n] = int(a, 16)
                count[n] += 1
    ranges = sorted((addr[n], addr[n] + s) for n, s in size.items()
                    if seen[n] == 1 and count[n] == 1 and addr[n] < etext)
    merged = []
    for s, e in ranges:
        if merged and s - merged[-1][1] <= 4096:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return ",".join("%x-%x" % (s, e) for s, e in merged[:12])


def run(ctx):
    kd = kernel_dir(ctx.top, "debug")
    h = hashlib.sha256()
    for p in (os.path.join(kd, "kver"),
              ctx.path("selftests/stress/ibpd_fuzz.h")):
        with open(p, "rb") as f:
            h.update(f.read())
    cache = cache_dir(ctx.top)
    os.makedirs(os.path.join(cache, "kcov"), exist_ok=True)
    corpus = os.path.join(cache, "kcov",
                          "corpus-%s.bin" % h.hexdigest()[:12])
    raw = os.path.join(ctx.out, "kcov-raw.log")
    if os.path.exists(raw):
        os.unlink(raw)
    if not ctx.boot(env={"IBPD_KCOV_CORE": core_ranges(kd),
                         "IBPD_KCOV_CORPUS": corpus},
                    divert=(CORPUS, raw)):
        return
    # the corpus of the last guided run, in place of the kept one
    with open(raw, errors="replace") as f:
        calls = [bytes.fromhex(line.split()[1]) for line in f
                 if line.startswith(CORPUS)]
    if calls:
        with open(corpus + ".new", "wb") as f:
            f.write(b"".join(calls))
        os.replace(corpus + ".new", corpus)
        ctx.lane.print("# kcov: a corpus of %d calls kept in %s"
                       % (len(calls), corpus))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make bench: bench/ibpd_bench in the test kernel's VM with ibpd0 and
rxe0 (selftests/vm/run_bench.sh), its figures turned into a table of
ratios (out/bench/report.txt), out/bench/bench.json and bench.png by
bench/report.py.

The environment: KERNEL (default: the matrix's default-kernel);
IBPD_BENCH_MAX_LIVE caps the live-PD scale (default 1000000),
IBPD_BENCH_QUICK=1 makes every measurement short, IBPD_BENCH_OUT sets
the output directory. IBPD_BENCH_CLOCK: "icount" (default) times in
guest instructions, the same in every run whatever else the host runs;
"host" in the host's time with two vCPUs, as the processes test's
parallelism needs, at the cost of the host's noise.

The data path through imported objects on rxe0 needs an rxe that
imports: that group runs again, alone, in a second VM, the patched
modules' (the upstream proof's builds, made on first use, then cached);
IBPD_BENCH_IMPORT=0 leaves that run out, and the group says why it was
skipped on the stock kernel.

rxe's send doorbell costs what the kernel's rxe does with it (6.1's
sends in the system call, later ones only schedule the work): that
group runs again, alone, in a last VM of the same machine, the stock
kernel of the newest of the matrix's kernels, without ibpd (the group
needs rxe0 alone: no module is built for that kernel); not when the
first VM's kernel is that one already.

Each VM's figures are appended to one raw log (raw.log in the output
directory), each boot's starting with its "run" record, which names
its kernel.
"""

import os

from . import proof, tap
from .vm import VM, Kernel, Newest, ICOUNT, HOST, TCG

GUEST = ["selftests/vm/run_bench.sh"]
RAW = "IBPD-BENCH "


def machine(kernel, clock, ibpd=True):
    """1M live PDs hold ~300 MiB of slab and the library's objects: the
    VM gets room to spare. The kernel at the same addresses in every run
    (nokaslr), as the bench (run_bench.sh). TCG with either clock: the
    host's clock under KVM would not compare with a machine without it.
    ibpd: load ibpd.ko (a group alone on rxe0 needs none)."""
    return VM(kernel, rxe=True, ibpd=ibpd, mem="6G", clock=clock,
              accel=TCG, append=["nokaslr"], idle=3000)


CLOCKS = (ICOUNT, HOST)
VMS = {clock: machine(Kernel("default-kernel"), clock) for clock in CLOCKS}
NEWEST = {clock: machine(Newest(), clock, ibpd=False) for clock in CLOCKS}
PATCHED = {clock: machine("upstream", clock) for clock in CLOCKS}


def run(ctx):
    out = os.environ.get("IBPD_BENCH_OUT") or ctx.path("out/bench")
    clock = os.environ.get("IBPD_BENCH_CLOCK", ICOUNT)
    if clock not in VMS:
        ctx.fail("bench", "IBPD_BENCH_CLOCK is %s or %s, not %s"
                 % (ICOUNT, HOST, clock))
        return
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "raw.log")
    if os.path.exists(raw):
        os.unlink(raw)
    # the guest's bench reads the clock it runs on (bench.json's "run")
    env = {"IBPD_BENCH_CLOCK": clock}
    ctx.lane.print("# bench: clock %s; the raw figures in %s" % (clock, raw))
    if not ctx.boot(vm=VMS[clock], env=env, divert=(RAW, raw)):
        return

    def skip_datapath(why):
        with open(raw, "a") as f:
            f.write('%s{"group": "datapath", "device": "rxe0", '
                    '"skipped": "%s"}\n' % (RAW, why))
        ctx.lane.print("# bench: the data path through imported objects: "
                       "skipped: " + why)

    if os.environ.get("IBPD_BENCH_IMPORT", "1") == "0":
        skip_datapath("IBPD_BENCH_IMPORT=0: no run on the patched kernel")
    else:
        log = os.path.join(out, "import-build.log")
        penv = proof.patched_env(ctx, log)
        if penv is None:
            skip_datapath("the patched kernel or rdma-core could not be "
                          "built (%s)" % log)
        else:
            ctx.lane.print("# bench: the data path through imported "
                           "objects, on the patched kernel with the staged "
                           "rdma-core")
            penv = dict(penv, IBPD_BENCH_GROUPS="datapath", **env)
            if not ctx.boot(name="bench-import", vm=PATCHED[clock],
                            ko=penv.pop("IBPD_KO"), env=penv,
                            divert=(RAW, raw)):
                return
    newest = NEWEST[clock].kernel_name(ctx.top)
    if newest == VMS[clock].kernel_name(ctx.top):
        ctx.lane.print("# bench: rxe's doorbell: kernel %s is the matrix's "
                       "newest, measured already" % newest)
    else:
        ctx.lane.print("# bench: rxe's doorbell on the matrix's newest "
                       "kernel, %s" % newest)
        if not ctx.boot(name="bench-doorbell", vm=NEWEST[clock],
                        env=dict(env, IBPD_BENCH_GROUPS="doorbell"),
                        divert=(RAW, raw)):
            return
    # the report is the result: one case, that it was made
    if ctx.step("bench-report", ["/usr/bin/python3",
                                 ctx.path("bench/report.py"), raw, out]):
        ctx.record("bench-report", tap.Counts(passed=1).totals(
            "make bench: its report in %s/report.txt" % out), append=True)

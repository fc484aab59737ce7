# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The registry of make check's sections: each whole in one place, its
host half here (or the script it starts), its guest half named.

A Section's run(ctx) runs its steps (runner.Context.step), each a
command whose kselftest TAP goes to out/check/STEP.tap. Lanes: "main"
(in order, printed as it runs), "debug" (beside it), "any" (the lane
that is free first). quick: in make check-quick too (there with the
system libibverbs only). on_demand: not in make check, run when named
(make vm-test, verbs-check, bench and soak; their KERNEL and TEST come
from the environment, as make passes them).
"""

import os
import shlex
import subprocess

from . import bridge, tap
from .runner import MAIN, DEBUG, ANY


class Section:
    def __init__(self, name, title, lane, run, guest=None, quick=False,
                 debug=False, requires=(), on_demand=False):
        self.name = name
        self.title = title
        self.lane = lane
        self.run = run
        self.guest = guest
        self.quick = quick
        self.debug = debug
        self.requires = requires
        self.on_demand = on_demand

    def wanted(self, quick, debug):
        if quick and not self.quick:
            return False
        return debug or not self.debug


def matrix(top, name):
    return subprocess.run([os.path.join(top, "scripts/build/matrix"), name],
                          check=True, capture_output=True,
                          text=True).stdout.strip()


def vm_run(ctx, *args):
    return [ctx.path("scripts/vm/vm-run")] + list(args)


# The series are signed off by whoever stages them: here, make check.
def gitconfig(ctx):
    p = os.path.join(ctx.out, "gitconfig")
    with open(p, "w") as f:
        f.write("[user]\n\tname = ibpd make check\n"
                "\temail = check@ibpd.invalid\n")
    return {"GIT_CONFIG_GLOBAL": p}


def static(ctx):
    ctx.step("static", [ctx.path("scripts/tests/static_test.sh")],
             env={"KERNELS": " ".join(ctx.kernels)})


def staging(ctx):
    ctx.step("staging", [ctx.path("scripts/upstream/stage-upstream"),
                         "--check"], env=gitconfig(ctx))


def proof(ctx):
    """The patched kernel's boot here; the stock kernels' runs in their
    own sections' boots (run_kernel.sh) when this run has those."""
    # make upstream-proof alone stages with the caller's identity, as
    # scripts/upstream/upstream-proof says (make check's when the caller
    # has none); make check always with its own
    mine = not ctx.selected("staging") and all(subprocess.run(
        ["git", "config", k], cwd=ctx.top, capture_output=True).returncode
        == 0 for k in ("user.name", "user.email"))
    env = {} if mine else gitconfig(ctx)
    env["KERNELS"] = " ".join(ctx.kernels)
    argv = [ctx.path("scripts/upstream/upstream-proof")]
    if all(ctx.selected("kernel-" + k) for k in ctx.kernels):
        argv.append("--no-stock")
    ctx.step("upstream-proof", argv, env=env)


def proof_env(ctx, k):
    """The environment of run_proof.sh's stock run on kernel k, as
    upstream-proof left it (IBPD_PROOF_MODULES: vm-run's --modules), when
    this run's proof section ran with --no-stock and passed (else None)."""
    p = ctx.path("out/upstream-proof/stock-%s.env" % k)
    if not ctx.passed("upstream-proof") or not os.path.exists(p):
        return None
    with open(p) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f)


def deb(ctx):
    ctx.step("deb", [ctx.path("scripts/tests/deb_test.sh")])


def make(ctx, *args, log=None):
    """make -s in the checkout; its output to LOG (tail shown on failure)."""
    with open(log or os.devnull, "w") as f:
        rc = subprocess.run(["make", "-s", "-C", ctx.top] + list(args),
                            stdout=f, stderr=subprocess.STDOUT).returncode
    if rc and log:
        with open(log) as f:
            for line in f.readlines()[-20:]:
                ctx.lane.print(line.rstrip("\n"))
    return rc == 0


def kernel_section(k):
    """One boot of kernel k: its kselftests, then the verbs tests with
    each libibverbs, then the unload test."""
    def run(ctx):
        if not make(ctx, "module", "KERNEL=" + k,
                    log=os.path.join(ctx.out, "build-%s.log" % k)):
            ctx.fail("kernel-" + k, "module build for " + k)
            return
        libs = ["system"]
        if not ctx.quick:
            libs += matrix(ctx.top, "rdma-cores").split()
        for lib in libs[1:]:	# on the host: the VM's root is read-only
            subprocess.run([ctx.path("scripts/build/rdma-core-fetch"), lib],
                           stdout=subprocess.DEVNULL)
        ctx.lane.print("# libibverbs: " + " ".join(libs))
        env = proof_env(ctx, k)
        if env:
            ctx.lane.print("# with the upstream proof's stock run")
            args = ["--modules", env["IBPD_PROOF_MODULES"]]
        else:
            args = []
            if ctx.selected("upstream-proof"):
                ctx.lane.print("# the upstream proof's stock run: not run "
                               "(upstream-proof failed)")
        ctx.step("kernel-" + k, vm_run(
            ctx, "--kernel", k, "--rxe", *args, "--",
            ctx.path("selftests/vm/run_kernel.sh")) + libs, env=env,
            nested=True)
        if env and env["IBPD_PROOF_KSFT"] == "1":
            ctx.step("upstream-proof-compare", [
                ctx.path("scripts/upstream/upstream-proof"), "--compare",
                ctx.tap_path("kernel-" + k)])
    return Section("kernel-" + k,
                   "kselftests and verbs tests on kernel %s (one boot)" % k,
                   MAIN, run, guest="selftests/vm/run_kernel.sh", quick=True)


def debug_build(ctx):
    # ibpd's objects with gcov (IBPD_GCOV=1), for the coverage report;
    # the selftests are make all's (the same linux-source-6.1 harness)
    # (its progress, on a cold cache a kernel build, to the lane's log)
    ctx.lane.stream.flush()
    kd = subprocess.run([ctx.path("scripts/build/kernel-dir"), "debug"],
                        stdout=subprocess.PIPE, stderr=ctx.lane.stream,
                        text=True)
    if kd.returncode or not make(ctx, "module", "KERNEL=debug",
                                 "IBPD_GCOV=1", log=os.path.join(
                                     ctx.out, "build-debug.log")):
        ctx.fail("debug-build", "debug kernel build")


def debug_dir(ctx):
    return subprocess.run([ctx.path("scripts/build/kernel-dir"), "debug"],
                          check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


KUNIT_TAG = "IBPD-KUNIT: "
KUNIT_KTAP = "kunit.ktap"	# not .tap: kunit.py's summary of it is


def debug(ctx):
    """KUnit, then the robustness campaign, in one boot; the KUnit
    suites' KTAP (tagged by run_debug.sh) is parsed by kunit.py."""
    ctx.step("debug", vm_run(
        ctx, "--kernel", "debug", "--log",
        os.path.join(ctx.out, "debug-console.log"), "--",
        ctx.path("selftests/vm/run_debug.sh")),
        env={"IBPD_VM_APPEND": "panic_on_warn=1"}, nested=True)
    raw = os.path.join(ctx.out, KUNIT_KTAP)
    with open(ctx.tap_path("debug"), errors="replace") as f, \
            open(raw, "w") as k:
        for line in f:
            if line.startswith(KUNIT_TAG):
                k.write(line[len(KUNIT_TAG):])
    ctx.step("kunit", [ctx.path("scripts/tests/kunit-parse"),
                       os.path.join(debug_dir(ctx), "source"), raw])


def kcov(ctx):
    ctx.step("kcov", [ctx.path("scripts/tests/kcov-fuzz")])


def coverage(ctx):
    with open(os.path.join(debug_dir(ctx), "kver")) as f:
        kver = f.read().strip()
    ctx.step("coverage", [ctx.path("scripts/tests/coverage"), kver,
                          os.environ.get("IBPD_COVERAGE_GOAL", "95"),
                          os.path.join(ctx.out, "debug-console.log")])


def install(ctx):
    ctx.step("install", [ctx.path("scripts/tests/install_test.sh")])


def tooling(ctx):
    ctx.step("tooling", [ctx.path("scripts/tests/scripts_test.sh")])
    ctx.step("build", [ctx.path("scripts/tests/build_test.sh")])
    ctx.step("ibpd-check", ["/usr/bin/python3", "-m",
                            "ibpd_check.test_check"],
             env={"PYTHONPATH": ctx.path("scripts/tests")})


def bench_smoke(ctx):
    ctx.step("bench-smoke", [ctx.path("scripts/tests/bench_test.sh")])


def one_case(ctx, name, argv, desc, env=None):
    """A step whose exit status is a verdict no TAP line of its output
    carries (the bench's report made, soak-report's): one case more,
    passed when it exits 0 (failed, as any step, when it does not)."""
    if ctx.step(name, argv, env=env):
        ctx.record(name, tap.Counts(passed=1).totals(desc), append=True)


def kernel_of(ctx, purpose):
    """KERNEL, or the matrix's kernel for purpose (default-kernel,
    vm-test-kernel)."""
    return os.environ.get("KERNEL") or matrix(ctx.top, purpose)


def vm_test(ctx):
    """make vm-test: one test program in the VM (run_one.sh PROG ARGS,
    TEST split as sh would); its own TAP, or one case if it has none.
    PACKAGES=1: with the bridge's packages installed (bridge.vm_test)."""
    test = shlex.split(os.environ.get("TEST", ""))
    if not test:
        ctx.fail("vm-test", 'no TEST: make vm-test TEST="PROG [ARGS]"')
        return
    if os.environ.get("PACKAGES") == "1":
        bridge.vm_test(ctx, kernel_of(ctx, "vm-test-kernel"), test)
        return
    argv = vm_run(ctx, "--kernel", kernel_of(ctx, "vm-test-kernel"),
                  "--rxe", "--", ctx.path("selftests/vm/run_one.sh")) + test
    if not ctx.step("vm-test", argv):
        return
    with open(ctx.tap_path("vm-test"), errors="replace") as f:
        if tap.parse(f).counts == tap.Counts():
            ctx.record("vm-test", tap.Counts(passed=1).totals(
                "%s exited 0" % test[0]), append=True)


def verbs(ctx):
    """make verbs-check: the verbs tests with every libibverbs of the
    matrix on one kernel (built first: make provider-all verbs-tests)."""
    ctx.step("verbs", vm_run(ctx, "--kernel",
                             kernel_of(ctx, "default-kernel"), "--rxe", "--",
                             ctx.path("selftests/vm/run_verbs.sh")))


def bench(ctx):
    """make bench: the report is the result; one case, that it ran."""
    one_case(ctx, "bench", [ctx.path("scripts/tests/bench")],
             "make bench: its report in out/bench/report.txt")


def soak(ctx):
    """make soak: SOAK_MINUTES on the debug kernel; soak-report's
    verdict (targets, kmemleak, splats) is the case."""
    one_case(ctx, "soak", [ctx.path("scripts/tests/soak")],
             "make soak's verdict: targets, kmemleak, splats; "
             "out/soak/soak.json")


def bridge_section(kernel, kernels):
    """The bridge's packages on kernel (bridge.section): in the lane free
    first, a section a kernel so that both lanes take them; the first
    kernel's boot also installs a later kernel's headers (of the others,
    the first whose packaged headers build on this machine)."""
    later = kernels[1:] if kernel == kernels[0] else ()
    return Section("bridge-" + kernel, "the bridge's packages on kernel %s "
                   "(apt install, DKMS rdma_rxe and siw, import and QPs on "
                   "rxe0 and siw0%s, the way back)" % (
                       kernel, ", DKMS for a kernel installed later"
                       if later else ""), ANY, bridge.section(kernel, later),
                   guest="selftests/vm/bridge_vm.sh")


def select(reg, names):
    """The sections of a run: those named (each one's requirements
    narrowed to the named), else make check's (all but the on-demand
    ones). A name not in reg: ValueError."""
    if not names:
        return [s for s in reg if not s.on_demand]
    bad = [n for n in names if n not in {s.name for s in reg}]
    if bad:
        raise ValueError("no section %s (--list)" % ", ".join(bad))
    reg = [s for s in reg if s.name in names]
    for s in reg:
        s.requires = tuple(r for r in s.requires if r in names)
    return reg


def registry(kernels):
    """The sections, in make check's order; the on-demand ones last."""
    return [
        Section("static", "static checks (W=1, sparse, checkpatch, uapi "
                "headers)", MAIN, static, quick=True),
        Section("staging", "upstream staging (patch series on the newest "
                "kernel source)", MAIN, staging),
        Section("upstream-proof", "booted proof of the upstream series (the "
                "patched kernel; the stock kernels' runs in their sections)",
                MAIN, proof,
                guest="selftests/vm/run_proof.sh"),
        Section("deb", "Debian packages (make deb, lintian; apt-get, dkms, "
                "upgrade, purge in the VM)", MAIN, deb,
                guest="selftests/vm/deb_vm.sh"),
    ] + [kernel_section(k) for k in kernels] + [
        Section("debug-build", "debug kernel (KASAN, lockdep, kmemleak, "
                "failslab, KUnit)", DEBUG, debug_build, debug=True),
        Section("debug", "KUnit and robustness on the debug kernel (one "
                "boot)", DEBUG, debug, guest="selftests/vm/run_debug.sh",
                debug=True, requires=("debug-build",)),
        Section("kcov", "coverage-guided fuzzing on the debug kernel (KCOV: "
                "guided against blind)", DEBUG, kcov,
                guest="selftests/vm/run_kcov.sh", debug=True,
                requires=("debug-build",)),
        Section("coverage", "kernel line coverage of ibpd (gcov, lcov)",
                DEBUG, coverage, debug=True, requires=("debug-build",)),
    ] + [bridge_section(k, kernels) for k in kernels] + [
        Section("install", "install (make install DESTDIR, pkg-config, man "
                "pages, modinfo)", ANY, install),
        Section("tooling", "tooling tests (splat detector, vm-run, the "
                "Makefile, the runner's TAP)", ANY, tooling),
        Section("bench-smoke", "benchmark smoke test (a short make bench)",
                ANY, bench_smoke),
        Section("vm-test", "one test program in the VM (make vm-test)", MAIN,
                vm_test, guest="selftests/vm/run_one.sh", on_demand=True),
        Section("verbs", "the verbs tests on one kernel (make verbs-check)",
                MAIN, verbs, guest="selftests/vm/run_verbs.sh",
                on_demand=True),
        Section("bench", "benchmarks (make bench)", MAIN, bench,
                guest="bench/ibpd_bench.c", on_demand=True),
        Section("soak", "the long soak on the debug kernel (make soak)",
                DEBUG, soak, guest="selftests/vm/run_soak.sh", debug=True,
                on_demand=True),
    ]

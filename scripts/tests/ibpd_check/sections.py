# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The registry of make check's sections: each whole in one place, as
data plus a function: its VM (vm.VM: the kernel, modules, command line,
memory, vCPUs, clock) and guest command, and its host half, run(ctx),
here or in a module of its own (bench, soak, kcov, coverage, bridge).

A Section's run(ctx) runs its steps (runner.Context.step; boot() starts
vm-run from the section's VM and guest command), each a command whose
kselftest TAP goes to out/check/STEP.tap; without a run(), a section
with a VM is its boot. Lanes: "main"
(in order, printed as it runs), "debug" (beside it), "any" (the lane
that is free first). quick: in make check-quick too (there with the
system libibverbs only). on_demand: not in make check, run when named
(make vm-test, verbs-check, bench and soak; their KERNEL and TEST come
from the environment, as make passes them).
"""

import os
import shlex
import subprocess

from . import bench, bridge, coverage, deb, kcov, proof, soak, tap
from .runner import MAIN, DEBUG, ANY
from . import vm
from .vm import VM, Kernel, kernel_dir, matrix


class Section:
    """name, title, lane; run(ctx): the host half (None: the boot of vm
    alone); vm: a vm.VM; guest: the guest command, a list (its program
    a path in the checkout, then arguments); quick: in make check-quick;
    debug: needs the debug kernel; requires: the sections that must have
    passed first; on_demand: only when named."""

    def __init__(self, name, title, lane, run=None, vm=None, guest=None,
                 quick=False, debug=False, requires=(), on_demand=False):
        if (vm is None) != (guest is None):
            raise ValueError("%s: a VM and a guest command go together"
                             % name)
        if run is None and vm is None:
            raise ValueError("%s: nothing to run" % name)
        self.name = name
        self.title = title
        self.lane = lane
        self.run = run or (lambda ctx: ctx.boot())
        self.vm = vm
        self.guest = guest
        self.quick = quick
        self.debug = debug
        self.requires = requires
        self.on_demand = on_demand

    def wanted(self, quick, debug):
        if quick and not self.quick:
            return False
        return debug or not self.debug


def static(ctx):
    ctx.step("static", [ctx.path("scripts/tests/static_test.sh")],
             env={"KERNELS": " ".join(ctx.kernels)})


def staging(ctx):
    # the series are signed off by whoever stages them: here, make check;
    # the proof takes what this stages (proof.build)
    proof.unstage(ctx)
    ctx.step("staging", [ctx.path("scripts/upstream/stage-upstream"),
                         "--check"], env=proof.gitconfig(ctx))


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
        # W=1, as the static section builds it (C=2 changes no object):
        # that build's objects, not a second one
        if not make(ctx, "module", "W=1", "KERNEL=" + k,
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
        st = proof.stock(ctx, k)
        env, mods = st or (None, ())
        if st:
            ctx.lane.print("# with the upstream proof's stock run")
        elif ctx.selected("upstream-proof"):
            ctx.lane.print("# the upstream proof's stock run: not run "
                           "(upstream-proof failed)")
        ctx.boot(libs, env=env, modules=mods, nested=True)
        if st and env["IBPD_PROOF_KSFT"] == "1":
            proof.compare(ctx, ctx.tap_path("kernel-" + k))
    return Section("kernel-" + k,
                   "kselftests and verbs tests on kernel %s (one boot)" % k,
                   MAIN, run, vm=VM(k, rxe=True),
                   guest=["selftests/vm/run_kernel.sh"], quick=True)


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


KUNIT_TAG = "IBPD-KUNIT: "
KUNIT_KTAP = "kunit.ktap"	# not .tap: kunit.py's summary of it is


def debug(ctx):
    """KUnit, then the robustness campaign, in one boot; the KUnit
    suites' KTAP (tagged by run_debug.sh) is parsed by kunit.py."""
    ctx.boot(nested=True)
    raw = os.path.join(ctx.out, KUNIT_KTAP)
    with open(ctx.tap_path("debug"), errors="replace") as f, \
            open(raw, "w") as k:
        for line in f:
            if line.startswith(KUNIT_TAG):
                k.write(line[len(KUNIT_TAG):])
    ctx.step("kunit", ["/usr/bin/python3", "-m", "ibpd_check.kunit",
                       os.path.join(kernel_dir(ctx.top, "debug"),
                                    "source"), raw],
             env={"PYTHONPATH": ctx.path("scripts/tests")})


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


def vm_test(ctx):
    """make vm-test: one test program in the VM (run_one.sh PROG ARGS,
    TEST split as sh would); its own TAP, or one case if it has none.
    PACKAGES=1: with the bridge's packages installed (bridge.vm_test)."""
    test = shlex.split(os.environ.get("TEST", ""))
    if not test:
        ctx.fail("vm-test", 'no TEST: make vm-test TEST="PROG [ARGS]"')
        return
    if os.environ.get("PACKAGES") == "1":
        if ctx.section.vm.dist_name(ctx.top):
            ctx.fail("vm-test", "PACKAGES=1 installs the bridge's packages "
                     "for the host's Debian 12, not with DIST")
            return
        bridge.vm_test(ctx, ctx.section.vm.kernel_name(ctx.top), test)
        return
    if not ctx.boot(test):
        return
    with open(ctx.tap_path("vm-test"), errors="replace") as f:
        if tap.parse(f).counts == tap.Counts():
            ctx.record("vm-test", tap.Counts(passed=1).totals(
                "%s exited 0" % test[0]), append=True)


def bridge_section(kernel, kernels):
    """The bridge's packages on kernel (bridge.section): in the lane free
    first, a section a kernel so that both lanes take them; the first
    kernel's boot also installs a kernel of another series, and a later
    kernel's headers (of the others, the first whose packaged headers
    build on this machine)."""
    first = kernel == kernels[0]
    later = kernels[1:] if first else ()
    return Section("bridge-" + kernel, "the bridge's packages on kernel %s "
                   "(apt install, DKMS rdma_rxe and siw, import and QPs on "
                   "rxe0 and siw0%s%s, the way back)" % (
                       kernel, ", a kernel of another series installed "
                       "later" if first else "",
                       ", DKMS's hook for a kernel installed later"
                       if later else ""), ANY,
                   bridge.section(kernel, later, first),
                   vm=bridge.machine(kernel), guest=bridge.GUEST)


def deb_dist_section(dist, kernel):
    """ibpd's packages for another Debian of the matrix, built in its
    build root and installed with apt in a VM of its userland on kernel
    (deb.host with dist)."""
    return Section("deb-%s-%s" % (dist, kernel), "Debian packages for %s "
                   "(built in its build root, lintian; apt-get, dkms, "
                   "upgrade, purge in a VM of %s on kernel %s)"
                   % (dist, dist, kernel), ANY, deb.run,
                   vm=deb.machine(kernel, dist), guest=deb.GUEST)


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


def registry(kernels, dist_kernels=()):
    """The sections, in make check's order; the on-demand ones last.
    dist_kernels: (userland, kernel) pairs, the matrix's other Debians and
    the kernels each boots (dists, dist-NAME-kernels: deb.dist_kernels)
    of which those of kernels have a deb section."""
    return [
        Section("static", "static checks (W=1, sparse, checkpatch, uapi "
                "headers)", MAIN, static, quick=True),
        Section("staging", "upstream staging (patch series on the newest "
                "kernel source)", MAIN, staging),
        Section("upstream-proof", "booted proof of the upstream series (the "
                "patched kernel; the stock kernels' runs in their sections)",
                MAIN, proof.section, vm=proof.PATCHED, guest=proof.GUEST),
        Section("deb", "Debian packages (make deb, lintian; apt-get, dkms, "
                "upgrade, purge in the VM)", MAIN, deb.run,
                vm=deb.machine(Kernel("default-kernel", "IBPD_DEB_KERNEL")),
                guest=deb.GUEST),
    ] + [deb_dist_section(d, k) for d, k in dist_kernels
         if k in kernels] + [kernel_section(k) for k in kernels] + [
        Section("debug-build", "debug kernel (KASAN, lockdep, kmemleak, "
                "failslab, KUnit)", DEBUG, debug_build, debug=True),
        Section("debug", "KUnit and robustness on the debug kernel (one "
                "boot)", DEBUG, debug, vm=vm.debug(console=True),
                guest=["selftests/vm/run_debug.sh"], debug=True,
                requires=("debug-build",)),
        Section("kcov", "coverage-guided fuzzing on the debug kernel (KCOV: "
                "guided against blind)", DEBUG, kcov.run, vm=kcov.VM_,
                guest=kcov.GUEST, debug=True, requires=("debug-build",)),
        Section("coverage", "kernel line coverage of ibpd (gcov, lcov)",
                DEBUG, coverage.run, debug=True,
                requires=("debug-build",)),
    ] + [bridge_section(k, kernels) for k in kernels] + [
        Section("install", "install (make install DESTDIR, pkg-config, man "
                "pages, modinfo)", ANY, install),
        Section("tooling", "tooling tests (splat detector, vm-run, the "
                "Makefile, the runner's TAP)", ANY, tooling),
        Section("bench-smoke", "benchmark smoke test (a short make bench)",
                ANY, bench_smoke),
        Section("vm-test", "one test program in the VM (make vm-test)", MAIN,
                vm_test, vm=VM(Kernel("vm-test-kernel"), rxe=True,
                               dist=vm.Dist()),
                guest=["selftests/vm/run_one.sh"], on_demand=True),
        Section("verbs", "the verbs tests on one kernel (make verbs-check)",
                MAIN, vm=VM(Kernel("default-kernel"), rxe=True),
                guest=["selftests/vm/run_verbs.sh"], on_demand=True),
        Section("bench", "benchmarks (make bench)", MAIN, bench.run,
                vm=bench.VMS[bench.ICOUNT], guest=bench.GUEST,
                on_demand=True),
        Section("soak", "the long soak on the debug kernel (make soak)",
                DEBUG, soak.run, vm=soak.VM_, guest=soak.GUEST, debug=True,
                on_demand=True),
    ]

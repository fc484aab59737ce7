# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The registry of make check's sections: each whole in one place, as
data plus a function: its VM (vm.VM: the kernel, modules, command line,
memory, vCPUs, clock) and guest command, what it needs built (builds.py:
ibpd.ko for its VM's kernel, the tests, ...), and its host half,
run(ctx), here or in a module of its own (bench, soak, kcov, coverage,
bridge). The runner builds what a section declares before its run(),
once a run: scripts/tests/check SECTION alone runs on a clean checkout.

A Section's run(ctx) runs its steps (runner.Context.step; boot() starts
vm-run from the section's VM and guest command), each a command whose
kselftest TAP goes to out/check/STEP.tap; without a run(), a section
with a VM is its boot, one without its builds. Lanes: "main"
(in order, printed as it runs), "debug" (beside it), "any" (the lane
that is free first). quick: in make check-quick too (there with the
system libibverbs only). on_demand: not in make check, run when named
(make vm-test, verbs-check, bench and soak; their KERNEL and TEST come
from the environment, as make passes them).
"""

import os
import shlex

from . import bench, bridge, coverage, deb, kcov, proof, soak, tap
from .builds import Module, Tests, RDMA_CORES, BENCH
from .runner import MAIN, DEBUG, ANY
from . import vm
from .vm import VM, Kernel, kernel_dir, matrix

# the tests as plain make builds them (the default-kernel's harness, or
# KERNEL's as make passes it); the debug sections' ibpd.ko, with gcov
TESTS = Tests(Kernel("default-kernel"))
DEBUG_MODULE = Module("debug", gcov=True)


class Section:
    """name, title, lane; run(ctx): the host half (None: the boot of vm
    alone, or without vm nothing but the builds); vm: a vm.VM; guest:
    the guest command, a list (its program a path in the checkout, then
    arguments); builds: what it needs built (builds.Need: the runner
    builds them first); quick: in make check-quick; debug: needs the
    debug kernel; after: the sections of its lane whose output it reads
    (named alone, it brings them into the run, before it); on_demand:
    only when named."""

    def __init__(self, name, title, lane, run=None, vm=None, guest=None,
                 builds=(), quick=False, debug=False, after=(),
                 on_demand=False):
        if (vm is None) != (guest is None):
            raise ValueError("%s: a VM and a guest command go together"
                             % name)
        if run is None and vm is None and not builds:
            raise ValueError("%s: nothing to run" % name)
        self.name = name
        self.title = title
        self.lane = lane
        self.run = run or (lambda ctx: ctx.boot() if vm else None)
        self.vm = vm
        self.guest = guest
        self.builds = tuple(builds)
        self.quick = quick
        self.debug = debug
        self.after = tuple(after)
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


def kernel_section(k):
    """One boot of kernel k: its kselftests, then the verbs tests with
    each libibverbs, then the unload test."""
    def run(ctx):
        libs = ["system"]
        if not ctx.quick:	# built on the host (RDMA_CORES)
            libs += matrix(ctx.top, "rdma-cores").split()
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
                   guest=["selftests/vm/run_kernel.sh"],
                   builds=(Module(k), TESTS, RDMA_CORES), quick=True)


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
    if os.environ.get("PACKAGES") == "1":	# the same builds serve
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
                   vm=bridge.machine(kernel), guest=bridge.GUEST,
                   builds=(Module(kernel), TESTS))


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
    """The sections of a run: those named and the ones whose output they
    read (Section.after, theirs too), in reg's order, else make check's
    (all but the on-demand ones). A name not in reg: ValueError."""
    if not names:
        return [s for s in reg if not s.on_demand]
    bad = [n for n in names if n not in {s.name for s in reg}]
    if bad:
        raise ValueError("no section %s (--list)" % ", ".join(bad))
    want = set(names)
    for s in reversed(reg):	# what a section reads comes before it
        if s.name in want:
            want.update(s.after)
    return [s for s in reg if s.name in want]


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
                MAIN, proof.section, vm=proof.PATCHED, guest=proof.GUEST,
                # its own ibpd.ko for the patched modules (proof.build);
                # the stock kernels' for their runs, here when their
                # sections are not in the run; the demo, the bench
                builds=[Module(k) for k in kernels] + [BENCH]),
        Section("deb", "Debian packages (make deb, lintian; apt-get, dkms, "
                "upgrade, purge in the VM)", MAIN, deb.run,
                vm=deb.machine(Kernel("default-kernel", "IBPD_DEB_KERNEL")),
                guest=deb.GUEST),
    ] + [deb_dist_section(d, k) for d, k in dist_kernels
         if k in kernels] + [kernel_section(k) for k in kernels] + [
        # the debug kernel (on a cold cache, built) and ibpd.ko for it,
        # alone: its time apart from the boots'
        Section("debug-build", "debug kernel (KASAN, lockdep, kmemleak, "
                "failslab, KUnit)", DEBUG, builds=(DEBUG_MODULE,),
                debug=True),
        Section("debug", "KUnit and robustness on the debug kernel (one "
                "boot)", DEBUG, debug, vm=vm.debug(console=True),
                guest=["selftests/vm/run_debug.sh"],
                builds=(DEBUG_MODULE, TESTS), debug=True),
        Section("kcov", "coverage-guided fuzzing on the debug kernel (KCOV: "
                "guided against blind)", DEBUG, kcov.run, vm=kcov.VM_,
                guest=kcov.GUEST, builds=(DEBUG_MODULE, TESTS), debug=True),
        # the gcov counts of the debug boot, over that build's .gcno files
        Section("coverage", "kernel line coverage of ibpd (gcov, lcov)",
                DEBUG, coverage.run, builds=(DEBUG_MODULE,), debug=True,
                after=("debug",)),
    ] + [bridge_section(k, kernels) for k in kernels] + [
        # the module make install installs: the test kernel's where the
        # host has no kernel build tree of its own (install_test.sh)
        Section("install", "install (make install DESTDIR, pkg-config, man "
                "pages, modinfo)", ANY, install,
                builds=(Module(Kernel("default-kernel")),)),
        Section("tooling", "tooling tests (splat detector, vm-run, the "
                "Makefile, the runner's TAP)", ANY, tooling),
        Section("bench-smoke", "benchmark smoke test (a short make bench)",
                ANY, bench_smoke),
        # the tests with the harness of the kernel they run on (6.1's has
        # no test selection), as make vm-test builds them
        Section("vm-test", "one test program in the VM (make vm-test)", MAIN,
                vm_test, vm=VM(Kernel("vm-test-kernel"), rxe=True,
                               dist=vm.Dist()),
                guest=["selftests/vm/run_one.sh"],
                builds=(Module(Kernel("vm-test-kernel")),
                        Tests(Kernel("vm-test-kernel"))), on_demand=True),
        Section("verbs", "the verbs tests on one kernel (make verbs-check)",
                MAIN, vm=VM(Kernel("default-kernel"), rxe=True),
                guest=["selftests/vm/run_verbs.sh"],
                builds=(Module(Kernel("default-kernel")), TESTS, RDMA_CORES),
                on_demand=True),
        # the patched kernel's ibpd.ko is the proof's (proof.patched_env)
        Section("bench", "benchmarks (make bench)", MAIN, bench.run,
                vm=bench.VMS[bench.ICOUNT], guest=bench.GUEST,
                builds=(Module(Kernel("default-kernel")), BENCH),
                on_demand=True),
        # ibpd.ko without gcov: not with the debug sections in one run
        Section("soak", "the long soak on the debug kernel (make soak)",
                DEBUG, soak.run, vm=soak.VM_, guest=soak.GUEST,
                builds=(Module("debug"), TESTS), debug=True,
                on_demand=True),
    ]

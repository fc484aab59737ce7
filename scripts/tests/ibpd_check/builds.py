# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""What a section needs built, as data (Section.builds), and the one way
each is built, as kunit.py's build step comes before its run, whatever
the run: a section declares its builds as it declares its VM, and
scripts/tests/check SECTION alone builds them on a clean checkout.

The builds:
- Module(KERNEL): ibpd.ko for the kernel KERNEL (a name of
  scripts/build/kernel-dir or a vm.Kernel), module(): make module W=1,
  the flags of the static section's build, so that a section takes that
  build's objects, not a second build; gcov=True: with IBPD_GCOV=1 (the
  coverage report's .gcno files; the debug kernel's in make check).
- Tests(KERNEL): the tool, the provider of the system's libibverbs, the
  kselftests and the verbs tests, with the kselftest harness of
  KERNEL's source (make lib selftests KERNEL=...: as plain make does).
- RDMA_CORES: the matrix's released rdma-cores, fetched and built on the
  host (the VM's root is read-only), and ibpd's provider for each
  (make provider-all); not in make check-quick (quick=False), whose
  verbs tests take the system's libibverbs only.
- BENCH: make bench's program (build/bench/ibpd_bench) and the tool.

The runner builds each once a run (Builds), in the section that first
declares it, before that section's run(); a build that failed fails
every section that declares it, each with a case that names it and its
log (out/check/build-NAME.log), and none of them runs.
"""

import os
import subprocess
import threading

from .vm import Kernel, matrix


def module(ctx, kernel, log, gcov=False, b=None, env=None):
    """The one way ibpd.ko is built for a kernel: make module W=1
    KERNEL=kernel (IBPD_GCOV=1 if gcov; B=b: into b/kmod, not build/kmod),
    its output appended to log. True if it built."""
    args = ["module", "W=1", "KERNEL=" + kernel]
    if gcov:
        args.append("IBPD_GCOV=1")
    if b:
        args.append("B=" + b)
    return make(ctx, log, *args, env=env)


def make(ctx, log, *args, env=None):
    """make -s ARGS in the checkout (env on top of the environment), its
    output appended to log. True if it passed."""
    argv = ["make", "-s", "-C", ctx.top] + list(args)
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(argv))
        f.flush()
        return subprocess.run(argv, env=dict(os.environ, **(env or {})),
                              stdout=f, stderr=subprocess.STDOUT
                              ).returncode == 0


def name(top, kernel):
    """A kernel's name: kernel itself, or a vm.Kernel's now."""
    return kernel.name(top) if isinstance(kernel, Kernel) else kernel


class Need:
    """A build a section needs. key(top): what it builds (two needs of
    the same key are one build); what(top): its words; log(top): the name
    of its log; build(ctx, log): build it, True if it built. quick: wanted
    in make check-quick too; checkout: writes the checkout's shared build/
    (its make waits for another lane's: one at a time)."""

    quick = True
    checkout = True

    def key(self, top):
        raise NotImplementedError

    def what(self, top):
        raise NotImplementedError

    def log(self, top):
        return "-".join(str(k) for k in self.key(top))

    def build(self, ctx, log):
        raise NotImplementedError

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, self.what(None))


class Module(Need):
    checkout = False	# build/kmod/KVER, under make module's own lock

    def __init__(self, kernel, gcov=False):
        self.kernel = kernel
        self.gcov = gcov

    def key(self, top):
        return ("module", name(top, self.kernel)) + (
            ("gcov",) if self.gcov else ())

    def log(self, top):
        return name(top, self.kernel)

    def what(self, top):
        k = self.kernel if top is None else name(top, self.kernel)
        return "ibpd.ko for kernel %s%s" % (k, " with gcov"
                                            if self.gcov else "")

    def build(self, ctx, log):
        # the kernel first, fetched or (debug) built: its progress to the
        # lane, as it may take long
        k = name(ctx.top, self.kernel)
        ctx.lane.stream.flush()
        if subprocess.run([ctx.path("scripts/build/kernel-dir"), k],
                          stdout=subprocess.DEVNULL,
                          stderr=ctx.lane.stream).returncode:
            with open(log, "a") as f:
                f.write("scripts/build/kernel-dir %s failed (its error "
                        "in the section's output)\n" % k)
            return False
        return module(ctx, k, log, gcov=self.gcov)


class Tests(Need):
    def __init__(self, kernel):
        self.kernel = kernel

    def key(self, top):
        return ("tests", name(top, self.kernel))

    def what(self, top):
        k = self.kernel if top is None else name(top, self.kernel)
        return ("the tool, the provider, the kselftests and the verbs "
                "tests (kernel %s's kselftest harness)" % k)

    def build(self, ctx, log):
        return make(ctx, log, "lib", "selftests",
                    "KERNEL=" + name(ctx.top, self.kernel))


class RdmaCores(Need):
    quick = False

    def key(self, top):
        return ("rdma-cores",)

    def what(self, top):
        return "the matrix's rdma-cores and ibpd's provider for each"

    def build(self, ctx, log):
        for v in matrix(ctx.top, "rdma-cores").split():
            with open(log, "a") as f:
                if subprocess.run([ctx.path("scripts/build/rdma-core-fetch"),
                                   v], stdout=subprocess.DEVNULL,
                                  stderr=f).returncode:
                    return False
        return make(ctx, log, "provider-all")


class Make(Need):
    """make TARGETS in the checkout, named NAME."""

    def __init__(self, name, *targets):
        self.name = name
        self.targets = targets

    def key(self, top):
        return ("make",) + self.targets

    def log(self, top):
        return self.name

    def what(self, top):
        return "make " + " ".join(self.targets)

    def build(self, ctx, log):
        return make(ctx, log, *self.targets)


RDMA_CORES = RdmaCores()
BENCH = Make("bench", "lib", "build/bench/ibpd_bench")


def wanted(needs, quick):
    return [n for n in needs if n.quick or not quick]


def clashes(sections, top, quick):
    """The kernels whose ibpd.ko the sections of a run want built two
    ways (with gcov and without: one build directory), as words; []
    when none."""
    ways = {}
    for s in sections:
        for n in wanted(s.builds, quick):
            if isinstance(n, Module):
                ways.setdefault(name(top, n.kernel), set()).add(n.gcov)
    return ["ibpd.ko for kernel %s with gcov and without" % k
            for k, g in sorted(ways.items()) if len(g) > 1]


class Built:
    """A need's build in a run: made by the section named by, ok or not,
    its log."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by = None
        self.ok = None
        self.log = None


class Builds:
    """The builds of a run, each made once whichever lane asks first (the
    other waits for it); the checkout's makes one at a time."""

    def __init__(self, out):
        self.out = out
        self.lock = threading.Lock()
        self.checkout = threading.Lock()
        self.made = {}

    def get(self, key):
        with self.lock:
            return self.made.setdefault(key, Built())

    def need(self, ctx, n):
        """Builds n for ctx's section unless this run has: True if it is
        built; else a failed case of the section, naming it."""
        top = ctx.top
        b = self.get(n.key(top))
        with b.lock:
            if b.ok is None:
                b.by = ctx.section.name
                b.log = os.path.join(self.out, "build-%s.log" % n.log(top))
                open(b.log, "w").close()
                ctx.lane.print("# build: %s" % n.what(top))
                if n.checkout:
                    with self.checkout:
                        b.ok = n.build(ctx, b.log)
                else:
                    b.ok = n.build(ctx, b.log)
                if not b.ok:
                    with open(b.log, errors="replace") as f:
                        for line in f.readlines()[-20:]:
                            ctx.lane.print(line.rstrip("\n"))
                    ctx.fail(ctx.section.name + "-build", "%s needs %s: "
                             "it did not build (log: %s)" % (
                                 ctx.section.name, n.what(top), b.log))
                return b.ok
        if not b.ok:
            ctx.fail(ctx.section.name + "-build", "%s needs %s: it did "
                     "not build, in section %s (log: %s)" % (
                         ctx.section.name, n.what(top), b.by, b.log))
        return b.ok

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The booted proof of the upstream series (make upstream-proof; in make
check, the upstream-proof section and a step of each kernel's).

The builds, cached (build()): ib_core, uverbs, rxe and siw of the
matrix's upstream-kernel's stock source with the staged fixes and
for-next series, as modules for that stock kernel (scripts/build/
kernel-build --upstream: no kernel is built); the out-of-tree ibpd.ko
against the patched headers; the matrix's upstream-rdma-core with the
staged rdma-core series (and the same less rxe's and siw's doorbell
patches), and ibpd's provider for its provider ABI (the series bumps
it); the kernel's rdma kselftests of the patched source, installed with
their runner.

The boots (selftests/vm/run_proof.sh, the guest half):
- the stock image with the patched modules (PATCHED): the seed contract
  (selftests/verbs/seed_test) on ibpd0, rxe0 and siw0 with import
  expected on all, rxe0 and siw0 against ibpd0 case for case; ibpd's
  demo on libibverbs alone (build/ibpd-demo) on rxe0, RC traffic through
  a PD and MR another process imported; the rdma kselftests through
  their runner, the series' new ones (new_kselftests()) among them;
  rdma-core's own tests against selftests/verbs/pyverbs.expect (version
  "staged"), and test_shared_pd on rxe0 with the series less the
  doorbell patches, where traffic from another process must fail
  (EACCES);
- each stock kernel with the out-of-tree ibpd.ko (stock()): the same
  libibverbs, where the context import on rxe0 (and siw0, where the
  kernel has siw) fails with EOPNOTSUPP and ibpd0 keeps working; on the
  upstream-kernel, the same rdma kselftests, where the new ones must
  skip. make check runs these at the start of each kernel's section's
  own boot (selftests/vm/run_kernel.sh) with what stock() passes it;
  make upstream-proof boots them here;
- then compare(): the rdma kselftests' results on the stock
  upstream-kernel and on its patched modules must be the same but for
  the series' new tests (the same image and configuration: only the
  series differs).
The staging signs the series with the caller's git identity, or make
check's own (identity()). In a run with the staging section, that
section stages them and the proof takes its series: staged once a run.
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess

from . import builds
from .vm import VM, matrix

OUT = "out/upstream-proof"
# what stage-upstream writes last: the series are staged
STAGED = "out/upstream/SENDING"
PATCHED = VM("upstream", rxe=True, modules=["siw", "rdma_ucm?"])
GUEST = ["selftests/vm/run_proof.sh"]
# the stock kernels' runs: the rdma kselftests want rdma_ucm (rping's
# /dev/infiniband/rdma_cm: an installed system's rdma-core loads it at
# boot), and siw where the kernel has it; tun they load by opening
# /dev/net/tun (run_proof.sh makes the static nodes), veth by asking for
# one (vm-init: the kernel's module autoload)
STOCK_MODULES = ["siw?", "rdma_ucm?"]
KSFT_RESULT = "# ksft-rdma: "


class Patched:
    """What the builds made: ibpd.ko for the patched modules, the
    rdma-core build trees, the provider, the installed kselftests."""

    def __init__(self, ko, rdma_core, provider, nodb=None, ksft=None):
        self.ko = ko
        self.rdma_core = rdma_core
        self.provider = provider
        self.nodb = nodb
        self.ksft = ksft

    def env(self):
        """What a program in the VM needs to use them (run_proof.sh)."""
        e = {"IBPD_UPSTREAM_STAGED": "1", "IBPD_RDMA_CORE": self.rdma_core,
             "IBPD_PROVIDER": self.provider}
        if self.nodb:
            e["IBPD_RDMA_CORE_NODB"] = self.nodb
        if self.ksft:
            e["IBPD_KSFT"] = self.ksft
        return e


def new_kselftests(top):
    """The series' own rdma kselftests: the scripts under
    tools/testing/selftests/rdma that its for-next patches create and
    add to the Makefile's TEST_PROGS (not a TEST_FILES helper)."""
    new, progs = set(), set()
    for p in sorted(glob.glob(os.path.join(top, "patches/core/next",
                                           "*.patch"))):
        with open(p, errors="replace") as f:
            text = f.read()
        new.update(re.findall(
            r"^diff --git a/tools/testing/selftests/rdma/(\S+\.sh) \S+\n"
            r"new file mode", text, re.M))
        for d in re.split(r"(?m)^(?=diff --git )", text):
            if d.startswith("diff --git a/tools/testing/selftests/rdma/"
                            "Makefile "):
                var = None
                for line in d.splitlines():
                    # a variable's line, or a hunk's that names it
                    m = re.match(r"^(?:[ +]|@@ .* @@ )(\w+)\s*:?=", line)
                    if m:
                        var = m.group(1)
                    if line.startswith("+") and var == "TEST_PROGS":
                        progs.update(re.findall(r"(\S+\.sh)\b", line))
    return sorted(new & progs)


def gitconfig(ctx):
    """make check's own identity (the series are signed off by whoever
    stages them: here, make check)."""
    p = os.path.join(ctx.out, "gitconfig")
    with open(p, "w") as f:
        f.write("[user]\n\tname = ibpd make check\n"
                "\temail = check@ibpd.invalid\n")
    return {"GIT_CONFIG_GLOBAL": p}


def unstage(ctx):
    """Before the staging section stages: no series of an earlier run
    stands for this run's (build())."""
    if os.path.isfile(ctx.path(STAGED)):
        os.unlink(ctx.path(STAGED))


def identity(ctx):
    """The staging's identity: make upstream-proof alone keeps the
    caller's (make check's when the caller has none); make check, whose
    staging section signs with its own, always its own."""
    mine = not ctx.selected("staging") and all(subprocess.run(
        ["git", "config", k], cwd=ctx.top, capture_output=True).returncode
        == 0 for k in ("user.name", "user.email"))
    return {} if mine else gitconfig(ctx)


class BuildError(Exception):
    pass


def run(ctx, log, argv, env=None, **kw):
    """argv in the checkout, its output to log (appended); its stdout's
    text when it passed, else BuildError naming the log."""
    e = dict(os.environ, **(env or {}))
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(argv))
        f.flush()
        r = subprocess.run(argv, cwd=ctx.top, env=e, stdout=subprocess.PIPE,
                           stderr=f, text=True, **kw)
        f.write(r.stdout)
    if r.returncode:
        raise BuildError("%s failed (%s)" % (" ".join(argv[:3]), log))
    return r.stdout.strip()


def say(ctx, what):
    ctx.lane.print("# upstream-proof: " + what)


def rdma_core(ctx, log, env, without=None):
    """rdma-core with the staged series (less the patches whose subject
    has without), built and cached: its build tree."""
    argv = [ctx.path("scripts/upstream/stage"),
            "rdma-core-build", ctx.path("out/upstream/rdma-core")]
    d = run(ctx, log, argv + (["--without", without] if without else []),
            env)
    with open(os.path.join(d, "build.rc")) as f:
        if f.read().strip() != "0":
            raise BuildError("rdma-core%s does not build: %s/build.log" % (
                " less %r" % without if without else "", d))
    return os.path.join(d, "src/build")


def kselftests(ctx, log, kd, env):
    """The rdma kselftests of the patched source, installed with their
    runner (their lib.mk copies with rsync: cp -a where there is none),
    cached beside the patched modules (whose directory the series' diffs
    name) under the hash of the recipe."""
    up = matrix(ctx.top, "upstream-kernel")
    b = ctx.path(OUT)
    recipe = "make TARGETS=rdma O KHDR_INCLUDES=-isystem INSTALL_PATH install"
    ksft = os.path.join(kd, "ksft-rdma-" + hashlib.sha256(
        recipe.encode()).hexdigest()[:12])
    if os.access(os.path.join(ksft, "run_kselftest.sh"), os.X_OK):
        return ksft
    say(ctx, "tools/testing/selftests TARGETS=rdma install (into %s)" % ksft)
    khdr = run(ctx, log, [ctx.path("scripts/build/kernel-build"),
                          "--upstream", "--headers", up], env)
    e = dict(env)
    if not shutil.which("rsync"):
        e["PATH"] = ctx.path("scripts/build/no-rsync") + ":" + os.environ[
            "PATH"]
    tmp = "%s.%d" % (ksft, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(os.path.join(b, "ksft-build"), ignore_errors=True)
    run(ctx, log, ["make", "-s", "-C", os.path.join(
        kd, "source/tools/testing/selftests"), "TARGETS=rdma",
        "O=" + os.path.join(b, "ksft-build"), "KHDR_INCLUDES=-isystem " + khdr,
        "INSTALL_PATH=" + tmp, "install"], e)
    try:	# a run beside this one may have installed it first
        os.rename(tmp, ksft)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return ksft


def build(ctx, full=True):
    """The builds (cached): a Patched, or None when one failed (a failed
    case of the section's, naming its log). full=False: only what a boot
    of the patched modules with the staged rdma-core needs (make bench's
    data path group): no doorbell-less rdma-core, tests or kselftests."""
    b = ctx.path(OUT)
    os.makedirs(b, exist_ok=True)
    log = os.path.join(b, "build.log")
    open(log, "w").close()
    env = identity(ctx)
    try:
        if ctx.selected("staging"):
            # make check: the series are staged once, by the staging
            # section (before this one, with the same identity:
            # identity()), whether or not its checks passed
            if not os.path.isfile(ctx.path(STAGED)):
                raise BuildError("the staging section staged no series "
                                 "(out/check/staging.tap)")
            say(ctx, "the series as the staging section staged it")
        else:
            say(ctx, "staging the series")
            run(ctx, log, [ctx.path("scripts/upstream/stage-upstream")],
                env)
        # kernel-build and vm-run's kernel-dir: the series is staged
        env["IBPD_UPSTREAM_STAGED"] = "1"
        say(ctx, "the patched modules (kernel-build --upstream) and ibpd.ko "
            "for them")
        kd = run(ctx, log, [ctx.path("scripts/build/kernel-dir"),
                            "upstream"], env)
        # its own build of ibpd.ko, against the patched headers: build/kmod
        # keeps the stock kernel's (the same release)
        if not builds.module(ctx, "upstream", log, b=OUT, env=env):
            raise BuildError("ibpd.ko for the patched modules (%s)" % log)
        with open(os.path.join(kd, "kver")) as f:
            ko = os.path.join(b, "kmod", f.read().strip(), "ibpd.ko")
        say(ctx, "rdma-core with the staged series")
        core = rdma_core(ctx, log, env)
        nodb = None
        if full:
            say(ctx, "rdma-core with the staged series less its doorbell "
                "patches")
            nodb = rdma_core(ctx, log, env, "Ring the doorbell")
        # the out-of-tree provider, for that libibverbs' provider ABI
        abi = run(ctx, log, [ctx.path("scripts/build/provider-abi"),
                             os.path.join(core, "lib/libibverbs.so.1")])
        p = os.path.join(b, "provider", "abi" + abi)
        os.makedirs(p, exist_ok=True)
        run(ctx, log, ["make", "-s", "-f", ctx.path("user/provider/"
                                                    "provider.mk"),
                       "-C", ctx.top, "B=" + b, "provider-abis=" + abi,
                       os.path.join(p, "libibpd.so.1")],
            dict(env, **{"IBPD_RDMA_CORE_" + abi: core}))
        patched = Patched(ko, core, os.path.join(p, "libibpd"), nodb)
        if not full:
            return patched
        # seed_test as the verbs tests build it (their kselftest harness);
        # the demo on libibverbs alone and make bench's data path group
        # are the section's builds (builds.BENCH)
        run(ctx, log, ["make", "-s", "-C", ctx.path("selftests/verbs"),
                       "OUTPUT=" + os.path.join(b, "provider"),
                       os.path.join(b, "provider", "seed_test")], env)
        patched.ksft = kselftests(ctx, log, kd, env)
        return patched
    except BuildError as e:
        ctx.fail("upstream-proof-build", str(e))
        return None


def patched_env(ctx, log):
    """The environment of a boot of the patched modules with the staged
    rdma-core and the provider for it (IBPD_KO: the ibpd.ko for them),
    built on first use, then cached; None if the builds failed (log: a
    copy of their output)."""
    p = build(ctx, full=False)
    shutil.copy(ctx.path(OUT, "build.log"), log)
    if not p:
        return None
    return dict(p.env(), IBPD_KO=p.ko)


def stock_env(ctx, p, k):
    """run_proof.sh's environment for its stock run on kernel k with the
    builds p: on the upstream-kernel, the rdma kselftests too."""
    up = matrix(ctx.top, "upstream-kernel")
    return dict(p.env(), IBPD_PROOF="stock", IBPD_PROOF_KSFT="1" if k == up
                else "0", IBPD_PROOF_NEW_KSFT=" ".join(
                    new_kselftests(ctx.top)))


def stock(ctx, k):
    """What a kernel section's boot of kernel k needs for the proof's
    stock run at its start (run_kernel.sh): (env, modules), or None when
    this run's proof section did not pass or booted the stock kernels
    itself."""
    p = ctx.result("upstream-proof")
    return (stock_env(ctx, p, k), STOCK_MODULES) if p else None


def results(path, new):
    """The rdma kselftests' results that run_proof.sh printed in path,
    the series' new ones aside, sorted."""
    with open(path, errors="replace") as f:
        return sorted(line[len(KSFT_RESULT):].rstrip("\n") for line in f
                      if line.startswith(KSFT_RESULT) and
                      line[len(KSFT_RESULT):].split(" ")[0] not in new)


def compare(ctx, stock_log, name="upstream-proof-compare"):
    """The rdma kselftests' results on the stock upstream-kernel
    (stock_log, its run_proof.sh output; None: not run) and on its
    patched modules (OUT/upstream.log): the same, the series' new tests
    aside. One case, as the step name."""
    up = matrix(ctx.top, "upstream-kernel")
    new = new_kselftests(ctx.top)
    what = ("upstream: the rdma kselftests pass, fail and skip as on the "
            "stock %s (but %s)" % (up, " and ".join(new)))
    with ctx.writer(name) as w:
        if not stock_log:
            w.skip(what, "no stock %s run (KERNELS=%s)"
                   % (up, " ".join(ctx.kernels)))
            return
        stock_r = results(stock_log, new)
        patched = results(ctx.path(OUT, "upstream.log"), new)
        if stock_r and stock_r == patched:
            w.diag("\n".join(patched))
            w.ok(True, what)
            return
        if not stock_r:
            w.diag("no rdma kselftest results in " + stock_log)
        w.diag("stock %s: %s\npatched: %s" % (up, ", ".join(stock_r),
                                              ", ".join(patched)))
        w.ok(False, what)


def section(ctx):
    """The proof section: the builds, the patched modules' boot, then the
    stock kernels' runs here unless each kernel's section of this run
    does them (stock()), and the comparison unless the upstream-kernel's
    section does it."""
    p = build(ctx)
    if not p:
        return
    say(ctx, "the patched modules on the stock image")
    b = ctx.path(OUT)
    for f in glob.glob(os.path.join(b, "upstream.log")) + glob.glob(
            os.path.join(b, "stock-*.log")):
        os.unlink(f)
    new = " ".join(new_kselftests(ctx.top))
    if not ctx.boot(env=dict(p.env(), IBPD_PROOF="upstream",
                             IBPD_PROOF_NEW_KSFT=new), ko=p.ko,
                    divert=(None, os.path.join(b, "upstream.log"))):
        return
    up = matrix(ctx.top, "upstream-kernel")
    if all(ctx.selected("kernel-" + k) for k in ctx.kernels):
        ctx.keep(p)	# for their boots (stock())
        if up not in ctx.kernels:	# else the upstream-kernel's section's
            compare(ctx, None)
        return
    stock_log = None
    for k in ctx.kernels:	# ibpd.ko for each: the section's builds
        say(ctx, "the stock kernel %s, the out-of-tree module" % k)
        log = os.path.join(b, "stock-%s.log" % k)
        ctx.boot(name="upstream-proof-" + k, vm=VM(k, rxe=True),
                 env=stock_env(ctx, p, k), modules=STOCK_MODULES,
                 divert=(None, log))
        if k == up:
            stock_log = log
    compare(ctx, stock_log)

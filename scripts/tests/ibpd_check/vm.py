# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""A section's VM, as data: what scripts/vm/vm-run boots for it.

A section declares its VM (the kernel, the modules beside ib_core,
ib_uverbs and ibpd, the kernel's command line, memory, vCPUs, the
clock, how long it may stay silent) and its guest command; the runner
turns the two into vm-run's command line (Context.boot). What a VM
does not say is vm-run's default (2 vCPUs, 2G, the host's clock).
"""

import os
import re
import subprocess

# The clocks: the host's time, or the guest's instructions (qemu
# -icount, 2^SHIFT ns of the guest's clocks each, one vCPU: the same
# figures whatever else the host runs).
HOST, ICOUNT = "host", "icount"
# qemu's accelerator where a VM must not take KVM (vm-run: --accel)
TCG = "tcg"


def matrix(top, name):
    """A value of scripts/matrix.conf (scripts/build/matrix NAME)."""
    return subprocess.run([os.path.join(top, "scripts/build/matrix"), name],
                          check=True, capture_output=True,
                          text=True).stdout.strip()


def kernel_dir(top, name):
    """The cache directory of the kernel NAME (scripts/build/kernel-dir:
    fetched or built on first use)."""
    return subprocess.run([os.path.join(top, "scripts/build/kernel-dir"),
                           name], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def cache_dir(top):
    """The cache's directory (scripts/build/cache-dir)."""
    return subprocess.run([os.path.join(top, "scripts/build/cache-dir")],
                          check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


class Kernel:
    """A kernel named when the section runs: the environment's VAR (as
    make passes KERNEL), else the matrix's PURPOSE (default-kernel,
    vm-test-kernel)."""

    def __init__(self, purpose, var="KERNEL"):
        self.purpose = purpose
        self.var = var

    def name(self, top):
        return os.environ.get(self.var) or matrix(top, self.purpose)

    def __str__(self):
        return "$%s or the matrix's %s" % (self.var, self.purpose)


def version(series):
    """A kernel series' name (6.1, 6.12, 7) as a key that sorts by
    version: its numbers."""
    return tuple(int(n) for n in re.findall(r"[0-9]+", series))


class Newest(Kernel):
    """The newest of the matrix's kernels (make check's stock series, by
    version), whatever the environment names."""

    def __init__(self):
        super().__init__("kernels", var=None)

    def name(self, top):
        return max(matrix(top, self.purpose).split(), key=version)

    def __str__(self):
        return "the matrix's newest kernel"


class Dist:
    """A userland named when the section runs: the environment's VAR (as
    make passes DIST), else the host's (None)."""

    def __init__(self, var="DIST"):
        self.var = var

    def name(self, top):
        return os.environ.get(self.var) or None

    def __str__(self):
        return "$%s or the host's" % self.var


class VM:
    """kernel: a name of scripts/build/kernel-dir (6.1, debug, upstream,
    ...) or a Kernel; dist: the job's root, a userland of the matrix's
    dists (vm-run --dist: trixie) or a Dist, None for the host's;
    rxe: the matrix's vm-modules (rxe0 over dummy0);
    modules: more ("MOD?": where the kernel has it); ibpd: load ibpd.ko;
    append: words for the kernel's command line; mem, smp: qemu's -m
    and -smp; clock: HOST or ICOUNT; accel: TCG for figures comparable
    from one machine to another (ICOUNT is TCG's anyway), else vm-run's
    choice (KVM where it runs a kernel); idle, timeout: vm-run's limits in
    seconds; console: keep the console log as out/check/NAME-console.log
    (the section's sections read it after the boot)."""

    def __init__(self, kernel, rxe=False, modules=(), ibpd=True, append=(),
                 mem=None, smp=None, clock=HOST, accel=None, idle=None,
                 timeout=None, console=False, dist=None):
        if clock not in (HOST, ICOUNT):
            raise ValueError("clock: %s or %s, not %s" % (HOST, ICOUNT,
                                                        clock))
        if clock == ICOUNT and smp not in (None, 1):
            raise ValueError("clock icount runs one vCPU, not %s" % smp)
        if accel not in (None, TCG):
            raise ValueError("accel: %s or vm-run's choice, not %s"
                             % (TCG, accel))
        self.kernel = kernel
        self.rxe = rxe
        self.modules = tuple(modules)
        self.ibpd = ibpd
        self.append = tuple(append)
        self.mem = mem
        self.smp = 1 if clock == ICOUNT else smp
        self.clock = clock
        self.accel = accel
        self.idle = idle
        self.timeout = timeout
        self.console = console
        self.dist = dist

    def dist_name(self, top):
        d = self.dist
        return d.name(top) if isinstance(d, Dist) else d

    def kernel_name(self, top):
        k = self.kernel
        return k.name(top) if isinstance(k, Kernel) else k

    def argv(self, top, cmd, modules=(), ko=None, log=None, timeout=None):
        """vm-run's command line that runs cmd (a list) in this VM; more
        modules, another ibpd.ko, the console log's path and a longer
        timeout (one a run computes) on top of the declaration."""
        a = [os.path.join(top, "scripts/vm/vm-run"),
             "--kernel", self.kernel_name(top)]
        dist = self.dist_name(top)
        if dist:
            a += ["--dist", dist]
        if self.rxe:
            a.append("--rxe")
        mods = self.modules + tuple(modules)
        if mods:
            a += ["--modules", " ".join(mods)]
        if not self.ibpd:
            a.append("--no-ibpd")
        if ko:
            a += ["--ko", ko]
        if self.mem:
            a += ["--mem", self.mem]
        if self.smp:
            a += ["--smp", str(self.smp)]
        if self.clock == ICOUNT:
            a += ["--icount", "0"]
        if self.accel and self.clock != ICOUNT:
            a += ["--accel", self.accel]
        if self.append:
            a += ["--append", " ".join(self.append)]
        if self.idle:
            a += ["--idle", str(self.idle)]
        if timeout or self.timeout:
            a += ["--timeout", str(timeout or self.timeout)]
        if log:
            a += ["--log", log]
        return a + ["--"] + list(cmd)

    def describe(self):
        """The VM in a line, for --list."""
        words = ["kernel %s" % self.kernel]
        if self.dist:
            words.append("root %s" % self.dist)
        if self.rxe:
            words.append("rxe")
        if self.modules:
            words.append("+" + ",".join(self.modules))
        if not self.ibpd:
            words.append("no ibpd")
        if self.mem:
            words.append(self.mem)
        if self.smp:
            words.append("%d vCPU" % self.smp)
        if self.clock == ICOUNT:
            words.append("icount")
        elif self.accel:
            words.append(self.accel)
        if self.append:
            words.append("'%s'" % " ".join(self.append))
        if self.console:
            words.append("console kept")
        return ", ".join(words)


def debug(**kw):
    """A VM of the debug kernel (KASAN, lockdep, kmemleak, failslab,
    KUnit) that panics on a WARN: a splat stops the run where it is."""
    return VM("debug", append=["panic_on_warn=1"], **kw)

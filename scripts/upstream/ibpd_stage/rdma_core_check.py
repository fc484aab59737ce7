# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""stage-upstream --check's cases of the rdma-core series, on its build
(rdma_core.build(): cached): it applies to the base, builds with
-DENABLE_WERROR=1 and no warning; the new private ABI exports the generic
import, which rxe and siw use; rdma-core's own buildlib/check-build
(check_build.py); the ABI of the libraries the series can change against
the pristine release's build (abi-compliance-checker), and that check's
control; and that a provider built for one private ABI is never loaded by
a libibverbs of the other.
"""

import glob
import os
import re
import shutil
import subprocess

from . import rdma_core
from .common import (HERE, PABI, PABI_NODE, PABI_RELEASED, RDMA_CORE_VERSION,
                     TOP, diff_lines, grep, ok, patches, read, run, touched,
                     write)


class RdmaCoreCheck:
    """The cases of the rdma-core series in out (run()), on the TAP
    writer tap; their logs beside work/rdma-core-check."""

    def __init__(self, out, work, tap):
        self.series, self.tap = out, tap
        self.w = os.path.join(work, "rdma-core-check")
        self.dir = None

    def status(self, name):
        """The exit status a step of the build recorded ("0"), or None."""
        try:
            return read(os.path.join(self.dir, name)).strip()
        except OSError:
            return None

    def comments(self, text):
        """Lines of a log that are TAP comments already ("# ..."), shown
        as they are."""
        for line in text.splitlines():
            self.tap.print(line)

    def case(self, log_name, fn, desc):
        """A case whose fn writes to the log log_name (shown if it
        fails)."""
        path = self.w + log_name
        with open(path, "w") as f:
            good = fn(f)
        ok(self.tap, good, desc, path)

    def run(self):
        self.dir = d = rdma_core.build(self.series)
        v = RDMA_CORE_VERSION
        ok(self.tap, self.status("apply.rc") == "0",
           f"the {len(patches(self.series))} rdma-core patches apply to "
           f"rdma-core {v}", os.path.join(d, "apply.log"))
        blog = os.path.join(d, "build.log")
        built = self.status("build.rc") == "0"
        ok(self.tap, built and not grep("(warning|error):", blog, re.I),
           f"rdma-core {v} builds with the series "
           "(-DENABLE_WERROR=1, no warnings)", blog)
        build = os.path.join(d, "src/build")
        # what the series promises: the new private ABI with the generic
        # import, rxe and siw linking to it
        self.case(".log", lambda f: self.exports(build, f),
                  f"the generic import (context, PD, MR) in the private ABI "
                  f"{PABI} (bumped from the release's {PABI_RELEASED}), "
                  "which rxe and siw use")
        self.case(".check-build.log",
                  lambda f: built and run([
                      "/usr/bin/python3", os.path.join(HERE, "check_build.py"),
                      os.path.join(d, "src/buildlib/check-build"),
                      "--src", "..", "--cc", "gcc"],
                      out=f.name, cwd=build) == 0,
                  "rdma-core's buildlib/check-build (private ABI, library "
                  "names, headers alone in C and C++)")
        abi_log = self.w + ".abi.log"
        with open(abi_log, "w") as f:
            good = built and self.abi(os.path.join(d, "src"),
                                      rdma_core.fetch(), self.w + "-abi", f)
        self.comments(read(abi_log))
        self.tap.ok(good, f"ABI: the libraries the series can change as in "
                    f"{v} (abi-compliance-checker; libibverbs' private "
                    "symbols aside)")
        self.case(".abi-control.log",
                  lambda f: self.abi_control(self.w + "-abi", f),
                  "ABI check's control: a libibverbs without ibv_import_pd is "
                  "found incompatible")
        self.case(".contract.log",
                  lambda f: built and self.contract(
                      build, rdma_core.fetch(), self.w + "-provider", f),
                  f"a provider built for one import_context contract is "
                  f"never loaded by the other's libibverbs (libibpd for "
                  f"{PABI_RELEASED} and {PABI}, each against both)")

    # loads libibverbs.so.1 of LD_LIBRARY_PATH, then the provider argv[1],
    # as libibverbs' dlopen() of a provider would
    LOAD = ("import ctypes, os, sys\n"
            "ctypes.CDLL('libibverbs.so.1', mode=ctypes.RTLD_GLOBAL)\n"
            "ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)\n")

    def contract(self, build, pristine, w, f):
        """libibpd (user/provider) built against the released rdma-core
        (its private ABI, the old import_context contract) and against the
        series' (the bumped one, the new contract); each libibverbs looks for
        lib<name>-rdmav<its ABI>.so only, and the dynamic linker refuses
        the provider of the other ABI (its private version node is not
        there), while the matched pairs load."""
        if not pristine:
            f.write("# no pristine rdma-core build\n")
            return False
        trees = {PABI_RELEASED: pristine, PABI: build}
        shutil.rmtree(os.path.join(w, "provider"), ignore_errors=True)
        good = True
        for abi, tree in trees.items():
            if run(["make", "-s", "-f", "user/provider/provider.mk", "-C",
                    TOP, f"B={w}", f"provider-abi{abi}"],
                   out=f"{w}.make-{abi}.log",
                   env=dict(os.environ, **{f"IBPD_RDMA_CORE_{abi}": tree})):
                f.write(f"# libibpd does not build for {abi}: "
                        f"{w}.make-{abi}.log\n")
                return False
            suffix = grep(r"^#define VERBS_PROVIDER_SUFFIX ",
                          os.path.join(tree, "include/config.h"))
            f.write(f"# libibverbs of ABI {abi}: {' '.join(suffix)}\n")
            good &= suffix == [f'#define VERBS_PROVIDER_SUFFIX '
                               f'"-rdmav{abi}.so"']
        f.flush()
        for lib_abi, tree in trees.items():
            for prov_abi in trees:
                so = os.path.join(w, "provider", f"abi{prov_abi}",
                                  f"libibpd-rdmav{prov_abi}.so")
                r = subprocess.run(
                    ["/usr/bin/python3", "-c", self.LOAD, so],
                    env=dict(os.environ,
                             LD_LIBRARY_PATH=os.path.join(tree, "lib")),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True)
                said = r.stdout.strip().splitlines()[-1:] or ["loaded"]
                want = lib_abi == prov_abi
                f.write(f"# libibverbs {lib_abi}, libibpd {prov_abi}: "
                        f"{said[0] if r.returncode else 'loaded'}\n")
                good &= (r.returncode == 0) == want
                if not want:
                    good &= f"{PABI_NODE}{prov_abi}' not found" in \
                        r.stdout
        f.flush()
        self.comments(read(f.name))
        return good

    @staticmethod
    def exports(build, f):
        """The new private ABI with the generic import, rxe and siw using
        it."""
        lib = os.path.join(build, "lib")
        imports = ["verbs_import_pd", "verbs_unimport_pd", "verbs_import_mr",
                   "verbs_unimport_mr", "_verbs_import_and_alloc_context"]
        wanted = [("ibverbs", "libibverbs.so.1", f"{PABI_NODE}{PABI} +",
                   imports)]
        wanted += [(drv, f"lib{drv}-rdmav{PABI}.so", " ", imports)
                   for drv in ("rxe", "siw")]
        for name, so, before, syms in wanted:
            dump = os.path.join(build, f"{name}.syms")
            if run(["objdump", "-T", os.path.join(lib, so)], out=dump):
                return False
            for sym in syms:
                hits = grep(f"{before}{re.escape(sym)}$", dump)
                f.write("".join(l + "\n" for l in hits))
                if not hits:
                    return False
        return True

    @staticmethod
    def dump(lib, out):
        """The ABI dump of a shared library as check-build's check_abi()
        makes it: abi-dumper with the version of the library's file name."""
        ver = re.sub(r"^lib[^.]+\.so\.", "", os.path.basename(lib))
        return run(["abi-dumper", "-lver", ver, lib, "-o", out],
                   out=out + ".log") == 0

    @staticmethod
    def acc(name, old, new, f, skip=None):
        """abi-compliance-checker as check_abi() runs it, and what it
        found."""
        cmd = ["abi-compliance-checker", "-l", name, "-old", old, "-new", new]
        if skip:
            cmd += ["-skip-symbols", skip]
        rc = run(cmd, out=new + ".acc", cwd=os.path.dirname(new))
        found = " ".join(grep("^(Binary|Source) compatibility:", new + ".acc"))
        tail = "" if rc == 0 else \
            f" (exit {rc}; {os.path.dirname(new)}/compat_reports/{name})"
        f.write(f"# {name}: {found}{tail}\n")
        f.flush()
        return rc == 0

    # What the series may write to, by path prefix, and the public
    # libraries (lib*.so.N) whose ABI that can change: libibverbs. rxe and
    # siw are provider modules with the private ABI only (set aside
    # below); tests and packaging are built into no library; the top
    # CMakeLists.txt may only move the private ABI on (IBVERBS_PABI_VERSION,
    # checked; the series leaves it alone). The headers it may change beyond
    # libibverbs' own, libibverbs/driver.h and the kernel headers, are
    # internal ones (publish_internal_headers: not installed), so they are
    # in no library's public interface: librdmacm, libibumad, libibmad,
    # libibnetdisc and the DV libraries (libmlx5, libefa, ...) keep their
    # ABI, and the pristine base (scripts/build/rdma-core-fetch) does not
    # build them. A path outside this list fails the check until it is
    # placed here.
    ABI_SCOPE = {
        "libibverbs/": ("ibverbs",),
        "providers/rxe/": (),
        "providers/siw/": (),
        "tests/": (),
        "debian/": (),
        "kernel-headers/rdma/ib_user_ioctl_cmds.h": ("ibverbs",),
        "CMakeLists.txt": ("ibverbs",),
    }

    def abi_scope(self, f):
        """The libraries the series can change (ABI_SCOPE), and whether
        every path it writes to is placed there."""
        series = patches(self.series)
        libs, good = [], True
        for path in touched(series):
            keys = [k for k in self.ABI_SCOPE
                    if path == k or k.endswith("/") and path.startswith(k)]
            if not keys:
                f.write(f"# the series writes to {path}: which libraries' "
                        "ABI can that change? (RdmaCoreCheck.ABI_SCOPE)\n")
                good = False
                continue
            libs += [l for l in self.ABI_SCOPE[keys[0]] if l not in libs]
        # the top CMakeLists.txt: the private ABI's version, nothing else
        top = [l for l in diff_lines(series, "CMakeLists.txt")
               if "IBVERBS_PABI_VERSION" not in l]
        if top:
            f.write("# the series changes CMakeLists.txt beyond "
                    f"IBVERBS_PABI_VERSION: {top[0]}\n")
            good = False
        return libs, good

    @staticmethod
    def library(d, name):
        """The file of lib<name>.so.X.Y.Z in d (not a link), or None when
        there is not exactly one."""
        found = [l for l in glob.glob(os.path.join(d, f"lib{name}.so.*.*.*"))
                 if not os.path.islink(l)]
        return found[0] if len(found) == 1 else None

    def abi(self, src, pristine, w, f):
        """The ABI check of rdma-core's stable branches (check-build's
        test_verbs_uapi: each shared library dumped with abi-dumper and
        compared by abi-compliance-checker with ABI/<name>.dump), for the
        libraries the series can change (ABI_SCOPE: libibverbs), against
        the pristine release's build (what a stable branch's ABI files
        would hold, which the release tarball lacks), less libibverbs'
        private symbols (the private version node: the series adds to
        them; they bind only rdma-core's own providers, built with it)."""
        new = os.path.join(src, "build/lib")
        old = os.path.join(pristine, "lib")
        if not pristine or not os.path.isdir(old):
            f.write(f"# no pristine rdma-core {RDMA_CORE_VERSION} build\n")
            return False
        libs, good = self.abi_scope(f)
        shutil.rmtree(w, ignore_errors=True)
        os.makedirs(w)
        n = 0
        for name in libs:
            # the library of the pristine build, and the same of the
            # series' (its file name has the series' PACKAGE_VERSION)
            found = [self.library(d, name) for d in (old, new)]
            if not found[0]:
                f.write(f"# lib{name}: not in the pristine build ({old})\n")
            elif not found[1]:
                f.write(f"# lib{name}: not built with the series\n")
            if None in found:
                good = False
                continue
            lib, built = found
            syms = subprocess.run(["objdump", "-T", lib],
                                  stdout=subprocess.PIPE, text=True).stdout
            skip = os.path.join(w, f"skip-{name}")
            with open(skip, "w") as s:
                for l in syms.splitlines():
                    t = l.split()
                    if len(t) >= 2 and "_PRIVATE_" in t[-2]:
                        s.write(f"{t[-1]}\n{t[-1]}@@{t[-2]}\n")
            ref = os.path.join(w, f"ref-{name}.dump")
            cur = os.path.join(w, f"current-{name}.dump")
            good &= (self.dump(lib, ref) and
                     self.dump(built, cur) and
                     self.acc(name, ref, cur, f, skip))
            n += 1
        f.write(f"# {n} of rdma-core {RDMA_CORE_VERSION}'s libraries compared "
                "with the pristine build: the ones the series can change ("
                + ", ".join(f"lib{l}" for l in libs) + ")\n")
        return good and n == len(libs) and "ibverbs" in libs

    def abi_control(self, w, f):
        """The check's control: a libibverbs that lost ibv_import_pd must be
        found incompatible with the pristine one."""
        cur = os.path.join(w, "current-ibverbs.dump")
        try:
            text = read(cur)
        except OSError:
            text = ""
        syms = re.findall(r"'ibv_import_pd@@IBVERBS_[0-9.]*' => 1", text)
        if not syms:
            f.write(f"# no ibv_import_pd in {cur}\n")
            return False
        control = os.path.join(w, "control", "current-ibverbs.dump")
        os.makedirs(os.path.dirname(control), exist_ok=True)
        write(control, "".join(l for l in text.splitlines(keepends=True)
                               if not any(s in l for s in syms)))
        return (not self.acc("ibverbs", os.path.join(w, "ref-ibverbs.dump"),
                             control, f) and
                bool(grep("Total binary compatibility problems: [1-9]",
                          control + ".acc")))

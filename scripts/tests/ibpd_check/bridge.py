# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The bridge's proof: the packages of make bridge (rdma-core with the
series, libibpd1 for its provider ABI, ibpd-tools, ibpd-rxe-dkms)
installed with apt on Debian's stock kernels, in the test VM
(selftests/vm/bridge_vm.sh, the guest half); make vm-test PACKAGES=1.

The host half, here: make bridge; DKMS's builds of the DKMS packages'
modules for each kernel, at native speed (scripts/build/dkms-prebuild),
which the packages' postinst loads in the VM instead of compiling under
TCG; an apt repository of the distribution's own rdma-core packages,
the ones the bridge replaces (apt-get download, cached by version), for
the way back.
"""

import glob
import hashlib
import io
import os
import re
import shutil
import subprocess
import threading

from . import tap
from .vm import VM, kernel_dir

OUT = "out/bridge"
# make bridge's directories of packages, under OUT
BUILT = ("rdma-core", "ibpd", "rxe")


def cache(ctx, *parts):
    return os.path.join(subprocess.run(
        [ctx.path("scripts/build/cache-dir")], check=True,
        capture_output=True, text=True).stdout.strip(), *parts)


def build(ctx, lint=True):
    """make bridge; the .debs a user installs (every package built but the
    debug symbols), or None when it failed (a failed case, its log's
    tail shown). lint: lintian on what it built too (lintian())."""
    log = os.path.join(ctx.out, "bridge-build.log")
    with open(log, "w") as f:
        rc = subprocess.run(["make", "-s", "-C", ctx.top, "bridge"],
                            stdout=f, stderr=subprocess.STDOUT).returncode
    if rc:
        with open(log) as f:
            for line in f.readlines()[-30:]:
                ctx.lane.print(line.rstrip("\n"))
        ctx.fail("bridge", "make bridge (log: %s)" % log)
        return None
    debs = sorted(d for b in BUILT
                  for d in glob.glob(ctx.path(OUT, b, "*.deb"))
                  if "-dbgsym_" not in d)
    ctx.lane.print("# make bridge: %d packages in %s" % (len(debs), OUT))
    for b in BUILT:
        if not any(os.path.dirname(d) == ctx.path(OUT, b) for d in debs):
            ctx.fail("bridge", "make bridge: no package in %s/%s" % (OUT, b))
            return None
    if lint:
        lintian(ctx)
    return debs


def lintian(ctx):
    """lintian --fail-on error,warning on each build's .changes (what it
    built, the debug symbols too), a case each in bridge-lintian.tap
    (lintian's output shown when it failed)."""
    cases = []
    for b in BUILT:
        changes = sorted(glob.glob(ctx.path(OUT, b, "*.changes")))
        if not changes:
            cases.append((False, "lintian: no .changes in %s/%s" % (OUT, b),
                          None, None))
        for ch in changes:
            ok, out, kept = lint(ctx, ch)
            tags = sum(1 for line in out.splitlines()
                       if line[:2] in ("E:", "W:", "I:", "P:"))
            cases.append((ok, "lintian %s: no error, no "
                          "warning (%d tags)" % (os.path.basename(ch), tags),
                          out, kept))
    out = io.StringIO()
    w = tap.Writer(out=out)
    for ok, desc, diag, kept in cases:
        if kept:
            w.diag("lintian's verdict on these bytes, kept from an earlier "
                   "run: " + kept)
        w.ok(ok, desc, diag)
    if not w.totals():
        ctx.ok = False
    ctx.record("bridge-lintian", out.getvalue().rstrip("\n"))


LINTIAN = ["lintian", "--fail-on", "error,warning"]


def lint(ctx, changes):
    """LINTIAN on changes: (passed, its output, the cache's directory when
    the verdict is an earlier run's). lintian's verdict is a function of
    the bytes of the .changes and of the files it lists, of lintian (its
    version) and of its configuration files: a pass is kept in the cache
    under a hash of them all, so that the builds make bridge takes from
    its cache (rdma-core's, with its debug symbols, and the DKMS
    packages') are not read again each run (one to five minutes of the
    section; ibpd's own packages are built each run, and checked each
    run). A failure is never kept."""
    h = hashlib.sha256()
    h.update(" ".join(LINTIAN).encode())
    h.update(subprocess.run(["lintian", "--version"],
                            capture_output=True).stdout)
    for rc in ("/etc/lintianrc", os.path.expanduser("~/.lintianrc"),
               os.path.expanduser("~/.config/lintian/lintianrc")):
        if os.path.exists(rc):
            with open(rc, "rb") as f:
                h.update(rc.encode() + f.read())
    with open(changes) as f:
        text = f.read()
    # the files of Checksums-Sha256, beside the .changes
    m = re.search(r"^Checksums-Sha256:\n((?: .*\n?)*)", text, re.M)
    names = [line.split()[-1] for line in
             (m.group(1).splitlines() if m else []) if line.strip()]
    for f in [os.path.basename(changes)] + names:
        h.update(f.encode() + b"\0")
        try:
            with open(os.path.join(os.path.dirname(changes), f), "rb") as fd:
                for chunk in iter(lambda: fd.read(1 << 20), b""):
                    h.update(chunk)
        except OSError:
            h.update(b"missing")
    c = cache(ctx, "bridge", "lintian", h.hexdigest()[:16])
    kept = os.path.join(c, "output")
    if os.path.exists(kept):
        with open(kept, errors="replace") as f:
            return True, f.read(), c
    r = subprocess.run(LINTIAN + [changes], capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode == 0:
        os.makedirs(c, exist_ok=True)
        with open(kept + ".tmp", "w") as f:
            f.write(out)
        os.rename(kept + ".tmp", kept)
    return r.returncode == 0, out, None


def package(deb, field):
    return subprocess.run(["dpkg-deb", "-f", deb, field], check=True,
                          capture_output=True, text=True).stdout.strip()


def kernel_source(ctx, kernel):
    """(series, Debian version, kernel release, source tree) of the
    kernel cached for kernel: the version its headers name
    (include/generated/package.h, as dkms/ibpd-source reads it), the
    series of its release, the linux-source tree kernel-fetch unpacked."""
    kdir = kernel_dir(ctx.top, kernel)
    with open(os.path.join(kdir, "kver")) as f:
        kver = f.read().strip()
    with open(os.path.join(kdir, "root", "usr", "src", "linux-headers-" + kver,
                           "include", "generated", "package.h")) as f:
        version = re.search(r'" Debian ([^ "]+)"', f.read()).group(1)
    series = ".".join(kver.split("-")[0].split(".")[:2])
    return series, version, kver, os.path.realpath(os.path.join(kdir,
                                                                "source"))


def source_deb(ctx, kernel):
    """Debian's linux-source package of kernel's version, which
    kernel-fetch downloaded into the cache."""
    series, version, _, _ = kernel_source(ctx, kernel)
    return cache(ctx, "debs", "linux-source-%s_%s_all.deb"
                 % (series, version))


def source_standin(ctx, kernel, changed=False):
    """linux-source-SERIES at kernel's version, a stand-in made here:
    /usr/src/linux-source-SERIES.tar.xz as Debian's (its top directory
    linux-source-SERIES) but holding only drivers/infiniband/sw/rxe and
    siw, all of it the DKMS packages read, unchanged from the kernel's
    source (Debian's is 139 to 167 MB: minutes to unpack and decompress
    under TCG). changed: siw as a stable update that changed it would be,
    a line added to siw_main.c (modinfo's ibpd_stand_in field), so that
    a module built from it shows whose code it has. Its path, or None (a
    failed case)."""
    series, version, _, tree = kernel_source(ctx, kernel)
    d = ctx.path(OUT, "source-%s%s" % (kernel, "-changed" if changed else ""))
    shutil.rmtree(d, ignore_errors=True)
    top = "linux-source-" + series
    sw = os.path.join(d, "tree", top, "drivers", "infiniband", "sw")
    for drv in ("rxe", "siw"):
        shutil.copytree(os.path.join(tree, "drivers", "infiniband", "sw", drv),
                        os.path.join(sw, drv), symlinks=True)
    if changed:
        with open(os.path.join(sw, "siw", "siw_main.c"), "a") as f:
            f.write('MODULE_INFO(ibpd_stand_in, "linux-source-%s %s, '
                    'changed");\n' % (series, version))
    pkg = os.path.join(d, "pkg")
    os.makedirs(os.path.join(pkg, "DEBIAN"))
    os.makedirs(os.path.join(pkg, "usr", "src"))
    r = subprocess.run(["tar", "-cJf", os.path.join(pkg, "usr", "src",
                                                    top + ".tar.xz"),
                        "-C", os.path.join(d, "tree"), "--owner=0",
                        "--group=0", top], capture_output=True, text=True)
    with open(os.path.join(pkg, "DEBIAN", "control"), "w") as f:
        f.write("Package: %s\nVersion: %s\nArchitecture: all\n"
                "Maintainer: ibpd <ibpd@invalid>\nDescription: Linux "
                "%s's drivers/infiniband/sw, a stand-in (ibpd's bridge "
                "test)\n" % (top, version, series))
    deb = os.path.join(d, "%s_%s_all.deb" % (top, version))
    if not r.returncode:
        r = subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip",
                            "-b", pkg, deb], capture_output=True, text=True)
    if r.returncode:
        ctx.lane.print(r.stdout + r.stderr)
        ctx.fail("bridge-" + kernel, "the stand-in of " + top)
        return None
    shutil.rmtree(os.path.join(d, "tree"))
    shutil.rmtree(pkg)
    return deb


def prebuild(ctx, kernel, debs, name="built-"):
    """DKMS's build of each DKMS package's module for kernel, on the host:
    the directory of their NAME-VERSION.dkms.tar.gz, or None. The
    packages that build from the kernel's linux-source (ibpd-rxe-dkms,
    ibpd-siw-dkms) get Debian's, as users do (source_deb()). Cached
    under a hash of the package, the kernel's directory, that source's
    name and dkms-prebuild (make bridge-rxe's packages are the cache's:
    the same bytes while their inputs are). name: the directory's, before
    kernel, under OUT."""
    out = ctx.path(OUT, name + kernel)
    os.makedirs(out, exist_ok=True)
    for f in glob.glob(os.path.join(out, "*")):
        os.unlink(f)
    tool = ctx.path("scripts/build/dkms-prebuild")
    kdir = kernel_dir(ctx.top, kernel)
    for deb in debs:
        if not package(deb, "Package").endswith("-dkms"):
            continue
        h = hashlib.sha256()
        for f in (deb, tool):
            with open(f, "rb") as fd:
                h.update(fd.read())
        # the kernel (its cache's directory names its version, its
        # build tree where it builds), the tools that build
        h.update(kdir.encode())
        h.update(os.path.realpath(os.path.join(kdir, "build")).encode())
        src = []
        if package(deb, "Package") != "ibpd-dkms":
            src = ["--source", source_deb(ctx, kernel)]
            h.update(src[1].encode())
        for tool_version in (["dkms", "--version"], ["gcc", "--version"]):
            h.update(subprocess.run(tool_version, capture_output=True)
                     .stdout)
        c = cache(ctx, "bridge", "prebuilt", h.hexdigest()[:16])
        if not glob.glob(os.path.join(c, "*.dkms.tar.gz")):
            tmp = c + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            log = os.path.join(ctx.out, "bridge-prebuild-%s.log" % kernel)
            with open(log, "a") as f:
                rc = subprocess.run([tool, "--kernel", kernel] + src +
                                    [deb, tmp],
                                    stdout=f,
                                    stderr=subprocess.STDOUT).returncode
            if rc:
                ctx.fail("bridge-" + kernel, "DKMS's build of %s for %s "
                         "(log: %s)" % (os.path.basename(deb), kernel, log))
                return None
            shutil.rmtree(c, ignore_errors=True)
            os.rename(tmp, c)
        for t in glob.glob(os.path.join(c, "*.dkms.tar.gz")):
            shutil.copy(t, out)
    return out


# The version of rebuilt(): make bridge-rxe's, and this after it.
REBUILD = "+ibpdtest1"


def rebuilt(ctx, kernel):
    """The DKMS packages of make bridge-rxe rebuilt with a new version
    (REBUILD after theirs, a changelog entry of the same date: the same
    bytes each run) and nothing else changed, as a new make bridge-rxe
    would be, and DKMS's builds of them for kernel (prebuild()): the
    directory of both, or None (a failed case)."""
    dsc = glob.glob(ctx.path(OUT, "rxe", "*.dsc"))
    d = ctx.path(OUT, "rebuilt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    tree = os.path.join(d, "src")
    log = os.path.join(ctx.out, "bridge-rebuilt.log")
    with open(log, "w") as f:
        def run(cmd, cwd=d, env=None):
            return subprocess.run(cmd, cwd=cwd, stdout=f, env=env,
                                  stderr=subprocess.STDOUT).returncode == 0
        ok = len(dsc) == 1 and run(["dpkg-source", "-x", dsc[0], tree])
        if ok:
            chl = os.path.join(tree, "debian", "changelog")
            v = subprocess.run(["dpkg-parsechangelog", "-l", chl, "-S",
                                "Version"], capture_output=True,
                               text=True).stdout.strip()
            date = subprocess.run(["dpkg-parsechangelog", "-l", chl, "-S",
                                   "Date"], capture_output=True,
                                  text=True).stdout.strip()
            env = dict(os.environ, DEBFULLNAME="ibpd's bridge test",
                       DEBEMAIL="ibpd@invalid")
            ok = (run(["dch", "-c", chl, "-v", v + REBUILD, "-D",
                       "bookworm", "--force-distribution",
                       "A rebuild, nothing else changed (ibpd's bridge "
                       "test)."], cwd=tree, env=env) and
                  run(["sed", "-i", "5s/>  .*/>  %s/" % date, chl]) and
                  run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree))
    debs = sorted(glob.glob(os.path.join(d, "*.deb")))
    if not ok or not debs:
        ctx.fail("bridge-" + kernel, "a rebuild of make bridge-rxe's "
                 "packages (log: %s)" % log)
        return None
    built = prebuild(ctx, kernel, debs, name="rebuilt-")
    if not built:
        return None
    for deb in debs:
        shutil.copy(deb, built)
    return built


# What installing a kernel runs besides DKMS, where this machine lacks it
# (bridge_vm.sh installs a kernel of another series: its initramfs made
# after DKMS's hook), and takes away again.
KERNEL_HOOKS = ["initramfs-tools"]


def hook_packages():
    """The packages, PKG=VERSION, that apt would install here for
    KERNEL_HOOKS, as the VM's apt does (no recommends)."""
    out = subprocess.run(["apt-get", "-s", "-q", "--no-install-recommends",
                          "install"] + KERNEL_HOOKS,
                         capture_output=True, text=True).stdout
    return ["%s=%s" % (m.group(1), m.group(2)) for m in
            re.finditer(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) ", out, re.M)]


def distro_repo(ctx, debs):
    """An apt repository of the distribution's packages that the bridge
    replaces, at the versions installed here (the machine's Debian): the
    way back, as apt install PKG=VERSION takes it; and those of
    KERNEL_HOOKS that the machine lacks. Its directory."""
    names = {package(d, "Package") for d in debs}
    q = subprocess.run(["dpkg-query", "-W", "-f",
                        "${db:Status-Abbrev} ${Package} ${Version}\n"],
                       capture_output=True, text=True).stdout
    want = sorted(["%s=%s" % (p, v) for s, p, v in
                   (line.split() for line in q.splitlines()
                    if len(line.split()) == 3)
                   if s.startswith("ii") and p in names] + hook_packages())
    d = cache(ctx, "bridge", "distro")
    os.makedirs(d, exist_ok=True)
    have = {os.path.basename(f).split("_")[0] + "=" +
            os.path.basename(f).split("_")[1].replace("%3a", ":")
            for f in glob.glob(os.path.join(d, "*.deb"))}
    missing = [w for w in want if w not in have]
    if missing:
        ctx.lane.print("# the distribution's packages, for the way back: "
                       "apt-get download " + " ".join(missing))
        # as root into the cache (apt's _apt cannot write there)
        subprocess.run(["apt-get", "download", "-q", "-o",
                        "APT::Sandbox::User=root"] + missing, cwd=d,
                       check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "Packages"), "w") as f:
        subprocess.run(["dpkg-scanpackages", "-m", "."], cwd=d, check=True,
                       stdout=f, stderr=subprocess.DEVNULL)
    return d


# A kernel of a series the packages carry no source of, which
# bridge_vm.sh installs with apt after them on the run's first kernel: a
# stand-in for a Debian kernel the matrix lacks.
OTHER = "6.99.0-1-ibpdtest"


def other_kernel(ctx, kernel):
    """linux-image-OTHER and linux-headers-OTHER, made here, not under TCG
    in the VM (dpkg-deb compresses the image's 8 MB): laid out as
    linux-image-KVER and linux-headers-KVER are, with kernel's vmlinuz,
    config and module lists, its headers under OTHER's name (the guest
    lays out kernel's headers where this link points), and maintainer
    scripts that run the kernel's hooks as Debian's do (run-parts
    --exit-on-error /etc/kernel/header_postinst.d, /etc/kernel/postinst.d;
    the image's postrm /etc/kernel/postrm.d). Their directory, or None (a
    failed case)."""
    v = OTHER
    kdir = kernel_dir(ctx.top, kernel)
    with open(os.path.join(kdir, "kver")) as f:
        kver = f.read().strip()
    d = ctx.path(OUT, "other-" + kernel)
    shutil.rmtree(d, ignore_errors=True)

    def write(path, lines, mode=0o644):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        os.chmod(path, mode)

    def hooks(when, arg):
        return ('[ ! -d /etc/kernel/%s ] || run-parts --report '
                '--exit-on-error --arg=%s %s/etc/kernel/%s'
                % (when, v, arg, when))

    for p in ("image", "headers"):
        write(os.path.join(d, p, "DEBIAN", "control"), [
            "Package: linux-%s-%s" % (p, v), "Version: 1",
            "Architecture: amd64", "Maintainer: ibpd <ibpd@invalid>",
            "Description: Linux %s %s, a stand-in (ibpd's bridge test)"
            % (v, p)])
    img = os.path.join(d, "image")
    mods = os.path.join(kdir, "root", "lib", "modules", kver)
    os.makedirs(os.path.join(img, "boot"))
    os.makedirs(os.path.join(img, "lib", "modules", v))
    for f in ("vmlinuz", "config"):
        shutil.copy(os.path.join(kdir, "root", "boot", f + "-" + kver),
                    os.path.join(img, "boot", f + "-" + v))
    for f in ["modules.order"] + sorted(
            os.path.basename(b) for b in
            glob.glob(os.path.join(mods, "modules.builtin*"))):
        shutil.copy(os.path.join(mods, f),
                    os.path.join(img, "lib", "modules", v, f))
    boot = "--arg=/boot/vmlinuz-%s " % v
    write(os.path.join(img, "DEBIAN", "postinst"), [
        "#!/bin/sh", "set -e", '[ "$1" = configure ] || exit 0',
        "depmod " + v, hooks("postinst.d", boot)], 0o755)
    write(os.path.join(img, "DEBIAN", "postrm"), [
        "#!/bin/sh", "set -e", '[ "$1" = remove ] || exit 0',
        hooks("postrm.d", boot), "rm -f /lib/modules/%s/modules.*" % v],
        0o755)
    hdr = os.path.join(d, "headers")
    os.makedirs(os.path.join(hdr, "usr", "src"))
    os.makedirs(os.path.join(hdr, "lib", "modules", v))
    os.symlink("linux-headers-" + kver,
               os.path.join(hdr, "usr", "src", "linux-headers-" + v))
    os.symlink("/usr/src/linux-headers-" + v,
               os.path.join(hdr, "lib", "modules", v, "build"))
    write(os.path.join(hdr, "DEBIAN", "postinst"), [
        "#!/bin/sh", "set -e", '[ "$1" = configure ] || exit 0',
        hooks("header_postinst.d", "")], 0o755)
    for p in ("image", "headers"):
        r = subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-b",
                            os.path.join(d, p),
                            os.path.join(d, "linux-%s-%s.deb" % (p, v))],
                           capture_output=True, text=True)
        if r.returncode:
            ctx.lane.print(r.stdout + r.stderr)
            ctx.fail("bridge-" + kernel, "dpkg-deb of linux-%s-%s" % (p, v))
            return None
        shutil.rmtree(os.path.join(d, p))
    return d


GUEST = ["selftests/vm/bridge_vm.sh"]


def machine(kernel):
    """The VM of kernel: ibpd.ko loaded, rdma_rxe not (the packages bring
    theirs)."""
    return VM(kernel)


_lock = threading.Lock()
_packages = {}


def packages(ctx, kernel, lint=True):
    """make bridge, the distribution's repository and the staged .debs,
    once a run whichever kernel's section comes first (the two lanes
    take them side by side; the second waits): (debs, distro), or None
    when the build failed (failed in the section that ran it, and in
    each that finds it so)."""
    with _lock:
        if ctx.out not in _packages:
            _packages[ctx.out] = None	# failed, unless it gets through
            debs = build(ctx, lint)
            if debs:
                distro = distro_repo(ctx, debs)
                stage(ctx, debs)
                _packages[ctx.out] = (debs, distro)
        elif not _packages[ctx.out]:
            ctx.fail("bridge-" + kernel, "make bridge failed (an earlier "
                     "section)")
        return _packages[ctx.out]


def headers_run_here(kdir):
    """Whether the packaged headers of the kernel cached in kdir build
    here: kernel-fetch points its build at them, else (7.x's kbuild
    tools, built for trixie, on bookworm) at a prepared linux-source."""
    root = os.path.realpath(os.path.join(kdir, "root"))
    return os.path.realpath(os.path.join(kdir, "build")).startswith(
        root + os.sep)


def section(kernel, later=(), first=False):
    """make check's bridge section of kernel: the packages (packages()),
    DKMS's builds for the kernel, one boot (ibpd.ko and the tests: the
    section's builds); with later (kernels
    of the matrix), a kernel installed after the packages, the first of
    them whose packaged headers build here, gets the module from DKMS
    in the boot (that kernel's headers only); first (the run's first
    kernel): a kernel of a series the packages do not carry is installed
    after them with apt, in the boot (bridge_vm.sh)."""
    def run(ctx):
        pk = packages(ctx, kernel)
        if not pk:
            return
        debs, distro = pk
        built = prebuild(ctx, kernel, debs)
        if not built:
            return
        source = source_standin(ctx, kernel)
        if not source:
            return
        env = {"IBPD_BRIDGE_BUILT": built,
               "IBPD_BRIDGE_DISTRO": distro,
               "IBPD_BRIDGE_SOURCE": source,
               "IBPD_BRIDGE_DEBS": ctx.path(OUT, "install")}
        if first:
            other = other_kernel(ctx, kernel)
            if not other:
                return
            env["IBPD_BRIDGE_OTHER_SERIES"] = other
            again = rebuilt(ctx, kernel)
            if not again:
                return
            env["IBPD_BRIDGE_REBUILT"] = again
        for k in later:
            d = kernel_dir(ctx.top, k)
            if headers_run_here(d):
                env["IBPD_BRIDGE_NEXT"] = d
                env["IBPD_BRIDGE_NEXT_SOURCE"] = source_standin(
                    ctx, k, changed=True)
                if not env["IBPD_BRIDGE_NEXT_SOURCE"]:
                    return
                break
        ctx.boot(env=env)
    return run


def stage(ctx, debs):
    """The .debs of make bridge, in one directory, of which bridge_vm.sh
    installs what scripts/build/bridge-debs names, as README does."""
    d = ctx.path(OUT, "install")
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "*.deb")):
        os.unlink(f)
    for deb in debs:
        os.link(deb, os.path.join(d, os.path.basename(deb)))


def vm_test(ctx, kernel, test):
    """make vm-test PACKAGES=1: TEST on kernel with the packages installed
    and rxe0 up (bridge_vm.sh --run), ibpd.ko and the tests the vm-test
    section's builds; one case if TEST prints no TAP."""
    pk = packages(ctx, kernel, lint=False)
    if not pk:
        return
    built = prebuild(ctx, kernel, pk[0])
    source = built and source_standin(ctx, kernel)
    if not source:
        return
    if not ctx.boot(["--run"] + test, vm=machine(kernel), guest=GUEST, env={
            "IBPD_BRIDGE_BUILT": built,
            "IBPD_BRIDGE_SOURCE": source,
            "IBPD_BRIDGE_DEBS": ctx.path(OUT, "install")}):
        return
    # bridge_vm.sh's setup prints no TAP of its own: TEST's is all there is
    with open(ctx.tap_path("vm-test"), errors="replace") as f:
        counts = tap.parse(f).counts
    if counts == tap.Counts():
        ctx.record("vm-test", tap.Counts(passed=1).totals(
            "%s exited 0 with the bridge's packages" % test[0]), append=True)

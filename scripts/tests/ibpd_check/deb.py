# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The deb section: the Debian packages of make deb.

On the host: make deb builds the four packages with dpkg-buildpackage,
lintian-clean, with the dependencies and files Debian expects, each
package shipping what debian/contents records for the version; a
changelog that disagrees with the Makefile's VERSION stops the build.
DKMS builds the module of a second version (deb-build --version), with
its package's dkms.conf, for the stock kernel's headers, at native speed
(scripts/build/dkms-prebuild: a throw-away root; under qemu TCG that
compile was most of the test). The last version whose ibpd.driver was a
conffile (2.0.0) is built from git history.

In the VM (selftests/vm/deb_vm.sh, on IBPD_DEB_KERNEL or the matrix's
default-kernel, ibpd.ko not loaded): apt-get installs that old libibpd1,
then the packages before the kernel's headers (DKMS adds the module,
builds nothing); with the headers there, the upgrade to the second
version has DKMS install the host's build; modprobe loads it, libibverbs
finds ibpd0 through the packaged provider, the packaged tool's demo
runs; removing libibpd1 takes ibpd.driver along; remove and purge leave
no file. deb_vm.sh says each case in a line "deb-vm: pass|fail|skip
DESC" after its output, which this turns into TAP.

The same for another Debian of the matrix's userlands (deb-DIST:
dist-section): the packages built in its build root (deb-build --dist,
version VERSION+debNN), lintian's verdict that Debian's, DKMS's build
in its userland, and the VM booted with it as its root, on the kernels
the matrix gives it (dist-DIST-kernels). The checks of the packaging's rules
(a changelog that disagrees stops the build; the 2.0.0 conffile's
upgrade, of a version that was never built for that Debian) are the
project's Debian's.
"""

import os
import re
import subprocess
import tarfile
import tempfile
import time

from .vm import VM, kernel_dir, matrix

GUEST = ["selftests/vm/deb_vm.sh"]
PACKAGES = ("ibpd-dkms", "libibpd1", "libibpd-dev", "ibpd-tools")
VM_CASES = 10	# deb_vm.sh's


def machine(kernel, dist=None):
    """deb_vm.sh's VM: no ibpd.ko loaded (the packages bring theirs);
    dist: the userland it boots as its root (None: the host's)."""
    return VM(kernel, ibpd=False, dist=dist)


def dist_kernels(top, dist):
    """The kernels the matrix boots dist's packages with
    (dist-DIST-kernels)."""
    return matrix(top, "dist-%s-kernels" % dist).split()


def sh(argv, cwd=None, env=None):
    """(exit status, output with stderr)."""
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    return r.returncode, r.stdout


def out(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                          text=True, **kw).stdout.strip()


def listing(deb):
    """dpkg-deb -c's lines, "PATH" or "PATH -> TARGET", without ./"""
    lines = out(["dpkg-deb", "-c", deb]).splitlines()
    return [re.sub(r"^(\S+\s+){5}\./", "", line) for line in lines]


def member(deb, path):
    """A file's text in a package."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True,
                          stdout=subprocess.PIPE).stdout
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        with tarfile.open(fileobj=f) as t:
            return t.extractfile("./" + path).read().decode()


def field(deb, name):
    return out(["dpkg-deb", "-f", deb, name])


def recorded(text, version):
    """debian/contents' list for version, sorted."""
    on, lines = False, []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if re.fullmatch(r"[^ ]+:", line):
            on = line == version + ":"
            continue
        if on:
            lines.append(line)
    return sorted(lines)


def contents(d, pv, ma, version=None):
    """What the packages of d, of version pv, ship, as debian/contents
    writes it (version, the sources', as @VERSION@: pv unless given)."""
    version = version or pv
    rows = []
    for p in PACKAGES:
        deb, = [f for f in os.listdir(d) if f.startswith(
            "%s_%s_" % (p, pv)) and f.endswith(".deb")]
        for line in out(["sh", "-c", 'dpkg-deb --fsys-tarfile "$1" | '
                         'tar -tvf -', "sh", os.path.join(d, deb)]
                        ).splitlines():
            rest = line.split(None, 5)[5]
            rows.append("%s %s" % (p, rest.replace(version, "@VERSION@")
                                   .replace(ma, "@MA@")))
    return sorted(rows)


def run(ctx):
    kernel = ctx.section.vm.kernel_name(ctx.top)
    dist = ctx.section.vm.dist_name(ctx.top)
    # a VM of another userland sees the host's files in the checkout only
    # (vm-run --dist); out of it, else: git history is built there
    # (previous), away from the checkout's git
    where = None
    if dist:
        where = ctx.path("out")
        os.makedirs(where, exist_ok=True)
    with ctx.writer() as w, tempfile.TemporaryDirectory(
            dir=where, prefix="deb-") as tmp:
        host(ctx, w, kernel, tmp, dist)


def in_root(ctx, root, argv, binds=()):
    """argv run in a throw-away root of the build root root."""
    b = [a for d in binds for a in ("--bind", d)]
    return [ctx.path("scripts/build/throwaway-root")] + b + [
        "--chroot", root] + argv


def suffix(root):
    """The version suffix of the packages built in the build root root:
    +debNN, its Debian's release (deb-build --dist)."""
    with open(os.path.join(root, "etc/debian_version")) as f:
        return "+deb" + f.read().split(".")[0]


def host(ctx, w, kernel, tmp, dist=None):
    """dist: the packages for that userland of the matrix (deb-build
    --dist), None: the project's Debian's (make deb)."""
    new = os.path.join(tmp, "new")
    t = time.monotonic()
    if dist:
        old = ctx.path("out/deb-" + dist)
        rc, o = sh(["make", "-s", "-C", ctx.top, "deb", "DIST=" + dist])
        w.ok(rc == 0, "make deb DIST=%s: the packages built in Debian %s's "
             "build root (%d s)" % (dist, matrix(ctx.top, "dist-"
                                                 + dist).split()[0],
                                    time.monotonic() - t), o)
    else:
        old = ctx.path("out/deb")
        rc, o = sh(["make", "-s", "-C", ctx.top, "deb"])
        w.ok(rc == 0, "make deb (%d s)" % (time.monotonic() - t), o)

    with open(ctx.path("Makefile")) as f:
        version = re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M)[1]
    # dist's build root (made by make deb DIST=dist: here, its directory)
    broot = out([ctx.path("scripts/build/dist-root"), "--build",
                 dist]) if dist else ""
    # the packages' version; version is the module's and the sources'
    pv = version + (suffix(broot) if dist else "")
    arch = out(["dpkg", "--print-architecture"])
    ma = out(["gcc", "-print-multiarch"])
    archs = {"ibpd-dkms": "all"}

    def deb(p):
        return os.path.join(old, "%s_%s_%s.deb" % (p, pv,
                                                   archs.get(p, arch)))
    missing = [deb(p) for p in PACKAGES if not os.path.isfile(deb(p))]
    w.ok(not missing, "%s: %s %s" % (os.path.relpath(old, ctx.top),
                                     ", ".join(PACKAGES), pv),
         "no " + " ".join(missing))
    if missing:
        return

    lintian = ["lintian", "--fail-on", "error,warning",
               os.path.join(old, "ibpd_%s_%s.changes" % (pv, arch))]
    if dist:	# that Debian's lintian, in its build root
        lintian = in_root(ctx, broot, lintian, [old])
    rc, o = sh(lintian)
    w.ok(rc == 0, "lintian%s: no error, no warning (%d tags)" % (
        " (%s's)" % dist if dist else "",
        len(re.findall(r"^[EWIP]:", o, re.M))), o)

    # dkms.conf of the one version; the provider's private ABI pinned
    src = "usr/src/ibpd-%s/" % version
    conf = member(deb("ibpd-dkms"), src + "dkms.conf").splitlines()
    files = listing(deb("ibpd-dkms"))
    w.ok('PACKAGE_VERSION="%s"' % version in conf and
         'AUTOINSTALL="yes"' in conf and
         all(src + f in files for f in ("main.c", "Makefile",
                                         "compat/compat.h",
                                         "compat/Kbuild.include")) and
         field(deb("ibpd-dkms"), "Depends").startswith("dkms") and
         "linux-headers" not in field(deb("ibpd-dkms"), "Recommends"),
         "ibpd-dkms: /usr/src/ibpd-%s with dkms.conf (PACKAGE_VERSION %s, "
         "AUTOINSTALL); Depends dkms, which recommends the headers "
         "(no headers of its own: Debian's names are the architecture's)"
         % (version, version), "\n".join(conf + files))

    lib = broot + "/usr/lib/%s/libibverbs.so.1" % ma
    abi = out([ctx.path("scripts/build/provider-abi"), lib])
    dep = field(deb("libibpd1"), "Depends")
    files = listing(deb("libibpd1"))
    ctrl = out(["sh", "-c", 'dpkg-deb --ctrl-tarfile "$1" | tar -t', "sh",
                deb("libibpd1")])
    # the upper bound: the first release of the next provider ABI
    nxt = subprocess.run([ctx.path("scripts/build/provider-abi"), "--next",
                          abi], capture_output=True, text=True).stdout.strip()
    w.ok(re.search(r"libibverbs1 \(>= [0-9.]+\)", dep) and
         (not nxt or "libibverbs1 (<< %s~)" % nxt in dep) and
         re.search(r"libibverbs1 \(<< [0-9]+~\)", dep) and
         "usr/lib/%s/libibverbs/libibpd-rdmav%s.so -> ../libibpd.so.1"
         % (ma, abi) in files and
         "etc/libibverbs.d/ibpd.driver -> /usr/share/libibpd1/ibpd.driver"
         in files and
         member(deb("libibpd1"), "usr/share/libibpd1/ibpd.driver").strip()
         == "driver ibpd" and "conffiles" not in ctrl,
         "libibpd1: provider link libibpd-rdmav%s.so, ibpd.driver a link "
         "to /usr/share/libibpd1 (no conffile); %s (the next provider "
         "ABI: %s)" % (abi, dep, nxt or "not known"),
         "Depends: %s\n%s" % (dep, "\n".join(files)))

    want = {"libibpd-dev": [
        "usr/include/infiniband/ibpddv.h", "usr/include/rdma/ibpd-abi.h",
        "usr/lib/%s/libibpd.so -> libibpd.so.1" % ma,
        "usr/lib/%s/pkgconfig/libibpd.pc" % ma,
        "usr/share/man/man3/ibpddv_import_pd.3.gz"],
        "ibpd-tools": ["usr/bin/ibpd", "usr/share/man/man1/ibpd.1.gz"]}
    missing = ["%s: no %s" % (p, f) for p, fs in want.items()
               for f in fs if f not in listing(deb(p))]
    w.ok(not missing, "libibpd-dev: ibpddv.h, uapi headers, libibpd.so, "
         "libibpd.pc, man3; ibpd-tools: ibpd, ibpd(1)", "\n".join(missing))

    contents_case(ctx, w, old, version, ma, pv)
    if not dist:
        rules_case(ctx, w, tmp, version)

    # the second version, for the upgrade: the last number plus 1
    parts = version.split(".")
    nxt = ".".join(parts[:-1] + [str(int(parts[-1]) + 1)])
    rc, o = sh([ctx.path("scripts/build/deb-build"), "--version", nxt,
                "--out", new] + (["--dist", dist] if dist else []))
    w.ok(rc == 0, "deb-build --version %s%s (the upgrade's packages)"
         % (nxt, " --dist " + dist if dist else ""), o)

    if dist:
        prev = "-"
        w.print("# the 2.0.0 conffile's upgrade: %s had no such version"
                % dist)
    else:
        prev = previous(ctx, w, tmp)

    # DKMS's build of the upgrade's module, the package's dkms.conf for
    # the test kernel's headers, at native speed (in dist's userland, its
    # DKMS and compiler); the VM installs it. A dkms.conf that builds
    # nothing (or a BUILD_EXCLUSIVE that excludes the kernel) fails here,
    # and the VM does not boot.
    kcache = kernel_dir(ctx.top, kernel)
    with open(os.path.join(kcache, "kver")) as f:
        kver = f.read().strip()
    built = os.path.join(tmp, "built")
    newdkms = [os.path.join(new, f) for f in os.listdir(new)
               if f.startswith("ibpd-dkms_")] if os.path.isdir(new) else []
    t = time.monotonic()
    rc, o = sh([ctx.path("scripts/build/dkms-prebuild"), "--kernel",
                kernel] + (["--dist", dist] if dist else []) +
               newdkms[:1] + [built])
    w.ok(rc == 0 and newdkms, "ibpd-dkms %s: DKMS%s builds ibpd/%s for %s "
         "with the package's dkms.conf (on the host, a throw-away root: "
         "%d s)" % (nxt, " of " + dist if dist else "", nxt, kver,
                    time.monotonic() - t), o)
    if rc or not newdkms:
        w.ok(False, "VM: all %d cases ran, no kernel splat (DKMS built no "
             "module: no VM)" % VM_CASES)
        return
    vm(ctx, w, [kcache, old, new, prev, built])


def rules_case(ctx, w, tmp, version):
    """One version: a Makefile VERSION without its changelog entry
    stops the build."""
    tree = os.path.join(tmp, "tree")
    os.makedirs(tree)
    subprocess.run(["sh", "-c", "git ls-files -z -co --exclude-standard | "
                    'tar --null -T - -cf - | tar -C "$1" -xf -', "sh", tree],
                   cwd=ctx.top, check=True)
    with open(os.path.join(tree, "Makefile")) as f:
        mk = f.read()
    with open(os.path.join(tree, "Makefile"), "w") as f:
        f.write(re.sub(r"^VERSION(\s*):=.*$", r"VERSION\1:= 9.9.9", mk,
                       flags=re.M))
    rc, o = sh(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree)
    w.ok(rc != 0 and "debian/changelog says %s, the packages of the "
         "Makefile's VERSION for this libibverbs are 9.9.9" % version in o,
         "a Makefile VERSION (9.9.9) debian/changelog does not repeat "
         "stops the build (exit %d)" % rc, o)


def contents_case(ctx, w, old, version, ma, pv=None):
    """What each package ships, as debian/contents records it for this
    version (a version's list is never edited once released): a change
    to what a package ships is a new version with its changelog entry and
    its list. The version and the multiarch triplet in paths are written
    @VERSION@ and @MA@; on a difference the list of this build is shown,
    to record. pv: the packages' version, when not version (another
    Debian's build of it: the same list)."""
    have = contents(old, pv or version, ma, version)
    with open(ctx.path("debian/contents")) as f:
        rec = recorded(f.read(), version)
    # the list as the commit that added the version's changelog entry had
    entry = subprocess.run(["git", "log", "-1", "--format=%H",
                            "-Sibpd (%s)" % version, "--",
                            "debian/changelog"], cwd=ctx.top,
                           capture_output=True, text=True).stdout.strip()
    released = rec
    if entry:
        released = recorded(subprocess.run(
            ["git", "show", entry + ":debian/contents"], cwd=ctx.top,
            capture_output=True, text=True).stdout, version)
    mine = "%s:\n%s" % (version, "\n".join(have))
    if not rec:
        good, why = False, ("debian/contents has no list for %s: add this "
                            "one\n%s" % (version, mine))
    elif released != rec:
        good, why = False, ("debian/contents' list for %s changed after %s "
                            "added %s to debian/changelog: a new version, "
                            "with its own list" % (version, entry[:12],
                                                   version))
    else:
        good = rec == have
        why = ("the packages ship other files than debian/contents records "
               "for %s: a new version (debian/changelog), and its list:\n%s"
               % (version, mine))
    w.ok(good, "debian/contents: the packages of %s ship what it recorded "
         "with %s's changelog entry (%d paths)" % (version, version,
                                                   len(have)), why)


def previous(ctx, w, tmp):
    """libibpd1 of the last version whose ibpd.driver was a conffile
    (the parent of the newest commit that took it out of debian/
    libibpd1.install), built from git history: its directory, or "-"."""
    gone = subprocess.run(["git", "log", "-1", "--format=%H",
                           "-G^etc/libibverbs.d/ibpd.driver$", "--",
                           "debian/libibpd1.install"], cwd=ctx.top,
                          capture_output=True, text=True).stdout.strip()
    if not gone:
        w.skip("the version with the ibpd.driver conffile: no git history")
        return "-"
    src, prev = os.path.join(tmp, "prev-src"), os.path.join(tmp, "prev")
    os.makedirs(src)
    subprocess.run(["sh", "-c", 'git archive "$1^" | tar -C "$2" -xf -',
                    "sh", gone, src], cwd=ctx.top, check=True)
    rc, o = sh([os.path.join(src, "scripts/build/deb-build"), "--out",
                prev])
    lib = [os.path.join(prev, f) for f in os.listdir(prev)
           if f.startswith("libibpd1_")] if rc == 0 else []
    conf = sh(["dpkg-deb", "-I", lib[0], "conffiles"])[1] if lib else ""
    w.ok(lib and "/etc/libibverbs.d/ibpd.driver" in conf.splitlines(),
         "deb-build of %s^ (%s): libibpd1 with the ibpd.driver conffile" % (
             gone[:12], field(lib[0], "Version") if lib else "?"), o + conf)
    return prev


def vm(ctx, w, args):
    """deb_vm.sh in the VM; its "deb-vm: " lines as cases, each failed
    one shown with the output before it; what it printed kept in the
    log directory."""
    t = time.monotonic()
    r = subprocess.run(ctx.section.vm.argv(
        ctx.top, [ctx.path(GUEST[0])] + args), cwd=ctx.top,
        env=ctx.environ(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, errors="replace")
    w.diag("the VM: %d s" % (time.monotonic() - t))
    logdir = os.environ.get("IBPD_LOG_DIR") or ctx.path("out/logs")
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, "deb-vm.log"), "w") as f:
        f.write(r.stdout)
    n, case = 0, []
    for line in r.stdout.splitlines():
        if line.startswith("deb-vm: "):
            n += 1
            st, desc = line[len("deb-vm: "):].split(" ", 1)
            if st == "skip":
                w.skip("VM: " + desc)
            else:
                w.ok(st == "pass", "VM: " + desc, "\n".join(case))
            case = []
        elif line.startswith("# "):
            w.print(line)
        else:
            case.append(line)
    w.ok(r.returncode == 0 and n == VM_CASES, "VM: all %d cases ran, no "
         "kernel splat (vm-run exit %d)" % (VM_CASES, r.returncode),
         "\n".join(r.stdout.splitlines()[-40:]))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""rdma-core's sources, and its build with the staged series.

The series' base is the released upstream-rdma-core (the tarball that
scripts/build/rdma-core-fetch downloads) with PACKAGE_VERSION set to the
next release, upstream-rdma-core-next: the series bumps the private ABI
(IBVERBS_PABI_VERSION), which buildlib/check-build allows only with a
PACKAGE_VERSION as new.

stage rdma-core-build OUT [--without TEXT]: that base with the series in
OUT applied (less the patches whose subject contains TEXT) and built,
cached by the series' diffs in $IBPD_CACHE/rdma-core/staged-<base>-<hash>;
prints that directory, whose src/build is the build (IN_PLACE: usable as
is). upstream-proof uses it, and the build without rxe's and siw's
doorbell patches, where the cross-process traffic test must fail.

stage rdma-core-tree OUT: the same, and prints its build tree
(src/build), or fails when it does not build (user/provider/provider.mk:
the provider for the series' ABI).
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess
import time

from .common import (CACHE, RDMA_CORE_NEXT, RDMA_CORE_VERSION, TOP,
                     StageError, diffs, log, output, patches, read, run,
                     write)

WHO = "rdma-core-build"


def pristine(d):
    """The pristine rdma-core source in d."""
    orig = os.path.join(CACHE, "rdma-core", "dl",
                        f"rdma-core_{RDMA_CORE_VERSION}.orig.tar.gz")
    if not os.path.isfile(orig):
        subprocess.run([os.path.join(TOP, "scripts/build/rdma-core-fetch"),
                        RDMA_CORE_VERSION], stdout=subprocess.DEVNULL,
                       check=True)
    unpack = d + ".unpack"
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(unpack, ignore_errors=True)
    os.makedirs(unpack)
    subprocess.run(["tar", "-C", unpack, "-xzf", orig], check=True)
    # the tarball may unpack to a directory named after a git hash
    top = next(e.path for e in os.scandir(unpack) if e.is_dir())
    os.rename(top, d)
    os.rmdir(unpack)


def base(d):
    """The series' base in d: the pristine release, with the next
    release's PACKAGE_VERSION (RDMA_CORE_NEXT)."""
    pristine(d)
    cmake = os.path.join(d, "CMakeLists.txt")
    text = read(cmake)
    old = f'set(PACKAGE_VERSION "{RDMA_CORE_VERSION}")'
    if old not in text:
        raise StageError(f"{cmake}: no {old}")
    write(cmake, text.replace(old,
                              f'set(PACKAGE_VERSION "{RDMA_CORE_NEXT}")'))


def subject(p):
    """The subject of a mail of the series, its [PATCH ...] prefix aside,
    continuation lines joined."""
    m = re.search(r"^Subject: (?:\[[^]]*\] )?(.*(?:\n[ \t].*)*)", read(p),
                  re.M)
    return re.sub(r"\n[ \t]+", " ", m.group(1)) if m else ""


def ccache_env():
    """The environment with scripts/build/ccache-env's on top: the series'
    builds, and the build less a patch, share their compilers' cache."""
    env = dict(os.environ)
    for line in output([os.path.join(TOP, "scripts/build/ccache-env")
                        ]).splitlines():
        k, _, v = line.partition("=")
        env[k] = v
    return env


def build(out, without=None):
    """Apply the series in out to the base and build it, once per series
    (cached by its diffs: not the identity of whoever staged them, nor the
    commit ids and dates, which follow this tree's last commit). without:
    leave out the patches whose subject contains that text (the proof's
    build of the series less a patch). Returns the directory: apply.rc
    and build.rc hold the steps' exit statuses, apply.log and build.log
    their output, src/build the build. Two stagings of the same series at
    once would share a directory: one tree at a time."""
    series = [p for p in patches(out) if not without or
              without not in subject(p)]
    if without and len(series) == len(patches(out)):
        raise StageError(f"no patch of {out} is about \"{without}\"")
    # the copyright lines name the sender: not part of the key
    key = re.sub(rb"(?m)^\+(.*)Copyright \(c\).*$", rb"+\1Copyright",
                 diffs(series))
    key += f"base: PACKAGE_VERSION {RDMA_CORE_NEXT}".encode()
    digest = hashlib.sha256(key).hexdigest()[:12]
    cache = os.path.join(CACHE, "rdma-core")
    d = os.path.join(cache, f"staged-{RDMA_CORE_VERSION}-{digest}")
    log(WHO, f"rdma-core {RDMA_CORE_VERSION} with the series"
        + (f" less \"{without}\"" if without else "") + f" ({d})")
    if os.path.isfile(os.path.join(d, ".ready")):
        log(WHO, "(cached)")
        return d
    # builds of other series unused for a day go (not sooner: another
    # tree's staging may be using one right now)
    for ready in glob.glob(os.path.join(cache, "staged-*/.ready")):
        if time.time() - os.path.getmtime(ready) >= 24 * 3600:
            shutil.rmtree(os.path.dirname(ready), ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "src")
    base(src)
    rc = 0
    for p in series:
        with open(p) as f:
            if run(["patch", "-p1", "-s", "-d", src,
                    "--no-backup-if-mismatch"],
                   out=os.path.join(d, "apply.log"), append=True, stdin=f):
                rc = 1
                break
    write(os.path.join(d, "apply.rc"), f"{rc}\n")
    if rc == 0:
        blog = os.path.join(d, "build.log")
        log(WHO, "building it (cmake, ninja -j2, warnings as errors; "
            f"log in {blog})")
        b = os.path.join(src, "build")
        os.makedirs(b)
        env = ccache_env()
        rc = run(["cmake", "-GNinja", "-DIN_PLACE=1", "-DNO_MAN_PAGES=1",
                  "-DENABLE_WERROR=1", "-DPYTHON_EXECUTABLE=/usr/bin/python3",
                  ".."], out=blog, cwd=b, env=env)
        if rc == 0:
            # not niced: in make check the debug kernel's lane runs
            # beside it, and a nice 19 build waits for that lane's VMs
            rc = run(["ninja", "-j2"], out=blog, append=True, cwd=b,
                     env=env)
        write(os.path.join(d, "build.rc"), f"{rc}\n")
    open(os.path.join(d, ".ready"), "w").close()
    return d


def tree(out):
    """The build tree (src/build) of build(out); StageError when it does
    not build."""
    d = build(out)
    rc = os.path.join(d, "build.rc")
    if not os.path.isfile(rc) or read(rc).strip() != "0":
        raise StageError(f"rdma-core does not build: {d}/build.log")
    return os.path.join(d, "src", "build")


def fetch():
    """The pristine release's build in the cache ("" if it cannot be had)."""
    return output([os.path.join(TOP, "scripts/build/rdma-core-fetch"),
                   RDMA_CORE_VERSION])

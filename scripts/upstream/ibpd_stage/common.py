# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""What every job of the staging uses: the tree and the cache, the
matrix's values (scripts/matrix.conf), the logs on stderr, commands run as
subprocesses, patch files read, and the project's TAP writer
(scripts/lib/ibpd_tap.py)."""

import glob
import os
import re
import subprocess
import sys

import ibpd_tap

HERE = os.path.dirname(os.path.realpath(__file__))
UPSTREAM = os.path.dirname(HERE)
TOP = os.path.realpath(os.path.join(UPSTREAM, "..", ".."))
CACHE = subprocess.run([os.path.join(TOP, "scripts", "build", "cache-dir")],
                       check=True, stdout=subprocess.PIPE,
                       text=True).stdout.strip()
# the entry points: scripts/upstream/stage, and stage-upstream (stage stage)
STAGE_UPSTREAM = os.path.join(UPSTREAM, "stage-upstream")
COVER = "0000-cover-letter.patch"
UAPI = "include/uapi/rdma"


def matrix(name):
    """A value of the test matrix, scripts/matrix.conf ("NAME = VALUE")."""
    with open(os.path.join(TOP, "scripts", "matrix.conf")) as f:
        for line in f:
            k, eq, v = line.partition("=")
            if eq and not k.startswith("#") and k.strip() == name:
                return v.strip()
    raise KeyError(f"no {name} in scripts/matrix.conf")


# The series' base (scripts/matrix.conf): the released rdma-core, its
# private ABI and the one the series bumps it to (its first patch changes
# the import_context contract), and the next release's PACKAGE_VERSION,
# which buildlib/check-build wants at least as new as the private ABI.
RDMA_CORE_VERSION = matrix("upstream-rdma-core")
PABI_RELEASED = matrix(f"rdma-core-{RDMA_CORE_VERSION}").split()[2]
PABI = matrix("upstream-rdma-core-abi")
RDMA_CORE_NEXT = matrix("upstream-rdma-core-next")
PABI_NODE = matrix("provider-abi-node")


def log(who, msg):
    """A line of progress on stderr, "WHO: MSG" (WHO: the job's name)."""
    print(f"{who}: {msg}", file=sys.stderr, flush=True)


class StageError(Exception):
    """A refusal or a failed step: logged, exit status 1."""


def run(cmd, out=None, append=False, cwd=None, env=None, stdin=None):
    """Run cmd; its stdout and stderr into the file out (or inherited).
    Returns the exit status."""
    if out is None:
        return subprocess.run(cmd, cwd=cwd, env=env, stdin=stdin).returncode
    with open(out, "a" if append else "w") as f:
        return subprocess.run(cmd, cwd=cwd, env=env, stdin=stdin, stdout=f,
                              stderr=subprocess.STDOUT).returncode


def output(cmd, cwd=None):
    """stdout of cmd, trailing newlines removed, as $(cmd) has it; "" when
    it fails."""
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True)
    return r.stdout.rstrip("\n") if r.returncode == 0 else ""


def read(path):
    """A text file's contents (bytes that are not UTF-8 kept as they are)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def write(path, text):
    """Write text to path, as read() reads it."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)


def grep(pattern, path, flags=0):
    """The lines of path that match pattern (re.search)."""
    return [l for l in read(path).splitlines() if re.search(pattern, l, flags)]


def patches(d):
    """The numbered patches of a series directory, the cover letter aside."""
    return [p for p in sorted(glob.glob(os.path.join(d, "0*.patch")))
            if os.path.basename(p) != COVER]


def diffs(paths):
    """The diffs of patch files, from their first "diff --git" line on: not
    who staged them, nor when."""
    out = b""
    for p in paths:
        with open(p, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        for i, l in enumerate(lines):
            if l.startswith(b"diff --git"):
                out += b"".join(lines[i:])
                break
    return out


def touched(paths, prefix=""):
    """The files the patches write to (their "+++ b/" lines) below prefix."""
    files = set()
    for p in paths:
        for l in read(p).splitlines():
            if l.startswith("+++ b/" + prefix):
                files.add(l[len("+++ b/"):])
    return sorted(files)


def diff_lines(paths, name):
    """The lines the patches add or remove in the file name."""
    lines, cur = [], None
    for p in paths:
        for l in read(p).splitlines():
            if l.startswith("diff --git ") or l == "-- ":
                cur = None
            elif l.startswith("+++ "):
                cur = l[len("+++ b/"):]
            elif cur == name and l[:1] in "+-" and not l.startswith("---"):
                lines.append(l)
    return lines


def tap_writer():
    """The project's one TAP writer (scripts/lib/ibpd_tap.py), its plan
    counted: printed with the totals, at the end."""
    return ibpd_tap.Writer()


def ok(tap, good, desc, shown=None):
    """tap.ok(), with the file shown, if there is one, when the case
    failed (its last lines). Returns good."""
    diag = None
    if not good and shown and os.path.isfile(shown):
        diag = read(shown)
    return tap.ok(good, desc, diag=diag)

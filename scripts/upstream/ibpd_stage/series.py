# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""A series of patch files edited as git commits.

stage open rdma-core|kernel DIR: a git repository in DIR (new) whose first
commit ("base") is the series' base and whose next commits are its
patches, in order, each with its file's text above the diff as its
message, verbatim ("---" and the notes below it included). rdma-core:
patches/rdma-core on the released rdma-core (the tarball that
scripts/build/rdma-core-fetch caches). kernel: patches/core/fixes, then
patches/core/next, on the directories a series may change
(drivers/infiniband/{core,sw/rxe,sw/siw}, include/rdma,
include/uapi/rdma, tools/testing/selftests/rdma: what kernel-build
--upstream takes) of the matrix's upstream-kernel's linux-source
(scripts/build/kernel-fetch); each commit's last message line,
"Series-dir: fixes" or "next", says where it goes.

Edit with git: commit --amend, rebase -i (reword, edit, fixup, reorder,
drop), a new commit (a kernel one ends with its Series-dir: line).

stage write DIR [TOP]: the commits after "base" back into their
directory (under TOP, by default the checkout; a copy of its patches/
for a dry run), as git format-patch names and writes them: the message
above the diff as it is, the diff git's; the directory's numbered
patches replaced (the cover letter and README stay). Prints what it wrote, and the bridge's
backports (patches/bridge/SERIES/) of a patch whose diff changed: they
are made by hand from it.
"""

import glob
import os
import shutil
import subprocess

from .common import TOP, StageError, log, read, write
from . import rdma_core

WHO = "stage"
BASE = "base"
DIR_TRAILER = "Series-dir: "
KERNEL_DIRS = ("drivers/infiniband/core", "drivers/infiniband/sw/rxe",
               "drivers/infiniband/sw/siw", "include/rdma",
               "include/uapi/rdma", "tools/testing/selftests/rdma")
# the series a repository holds: its directories of patch files
SERIES = {"rdma-core": ("patches/rdma-core",),
          "kernel": ("patches/core/fixes", "patches/core/next")}
# git as the tool uses it: no user's configuration changes what it writes
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "ibpd",
           "GIT_AUTHOR_EMAIL": "ibpd@invalid", "GIT_COMMITTER_NAME": "ibpd",
           "GIT_COMMITTER_EMAIL": "ibpd@invalid",
           "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}


def git(repo, *args, stdin=None):
    env = dict(os.environ, **GIT_ENV)
    r = subprocess.run(["git", "-C", repo, "-c", "core.quotepath=off",
                        "-c", "diff.noprefix=false", "-c",
                        "diff.mnemonicprefix=false", "-c", "diff.renames=false",
                        "-c", "commit.gpgsign=false"] + list(args),
                       input=stdin, env=env, capture_output=True, text=True,
                       errors="surrogateescape")
    if r.returncode:
        raise StageError(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def split(path):
    """A patch file's text above its diff (the message, "Subject: " taken
    off), and the diff."""
    text = read(path)
    i = text.find("\ndiff --git ")
    if not text.startswith("Subject: ") or i < 0:
        raise StageError(f"{path}: no \"Subject: \" line, or no diff")
    return text[len("Subject: "):i + 1], text[i + 1:]


def split_diff(text):
    """A patch file's diff, from its first "diff --git" line."""
    i = text.find("\ndiff --git ")
    return text[i + 1:] if i >= 0 else ""


def commit(repo, message):
    path = os.path.join(repo, ".git", "ibpd-message")
    write(path, message)
    git(repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim",
        "-F", path)
    os.unlink(path)


def message_of(repo, rev):
    """A commit's message as it was given (git log's %B adds a newline)."""
    return git(repo, "cat-file", "commit", rev).split("\n\n", 1)[1]


def open_series(name, dest):
    """The repository of the series name in dest (which must not exist)."""
    if name not in SERIES:
        raise StageError(f"no series {name} (rdma-core or kernel)")
    if os.path.lexists(dest):
        raise StageError(f"{dest} exists")
    if name == "rdma-core":
        rdma_core.pristine(dest)
    else:
        series = subprocess.run(
            [os.path.join(TOP, "scripts/build/matrix"), "upstream-kernel"],
            check=True, capture_output=True, text=True).stdout.strip()
        kdir = subprocess.run(
            [os.path.join(TOP, "scripts/build/kernel-fetch"), series],
            check=True, capture_output=True, text=True).stdout.strip()
        src = os.path.realpath(os.path.join(kdir, "source"))
        for d in KERNEL_DIRS:
            shutil.copytree(os.path.join(src, d), os.path.join(dest, d),
                            symlinks=True)
    git(dest, "init", "-q")
    # a message as written: its "#" lines and blank ones kept (the notes
    # below "---" may have them), whatever commits or rewords it
    git(dest, "config", "commit.cleanup", "verbatim")
    git(dest, "add", "-A")
    commit(dest, BASE + "\n")
    n = 0
    for d in SERIES[name]:
        for p in sorted(glob.glob(os.path.join(TOP, d, "[0-9]*.patch"))):
            message, diff = split(p)
            try:
                git(dest, "apply", "--index", "-", stdin=diff)
            except StageError as e:
                raise StageError(f"{os.path.relpath(p, TOP)} does not "
                                 f"apply: {e}")
            if name == "kernel":
                message = message + DIR_TRAILER + os.path.basename(d) + "\n"
            commit(dest, message)
            n += 1
    write(os.path.join(dest, ".git", "ibpd-series"), name + "\n")
    log(WHO, f"{dest}: the {name} series, {n} commits on \"{BASE}\"")


def write_series(repo, top=TOP):
    """The commits after base back into their directories (under top: the
    checkout's patches/, or a copy)."""
    try:
        name = read(os.path.join(repo, ".git", "ibpd-series")).strip()
    except OSError:
        raise StageError(f"{repo}: not a series that stage open made")
    revs = git(repo, "rev-list", "--reverse", "HEAD").split()
    if not revs or message_of(repo, revs[0]) != BASE + "\n":
        raise StageError(f"{repo}: its first commit is not \"{BASE}\"")
    out = {d: [] for d in SERIES[name]}
    for rev in revs[1:]:
        message = message_of(repo, rev)
        d = SERIES[name][0]
        if name == "kernel":
            lines = message.rstrip("\n").split("\n")
            where = lines[-1][len(DIR_TRAILER):] \
                if lines[-1].startswith(DIR_TRAILER) else None
            d = next((s for s in SERIES[name]
                      if os.path.basename(s) == where), None)
            if d is None:
                raise StageError(f"{rev[:12]} \"{lines[0]}\": its last line "
                                 f"is not \"{DIR_TRAILER}fixes\" or \"next\"")
            message = "\n".join(lines[:-1]) + "\n"
        diff = git(repo, "show", "--format=", "--no-color", "--abbrev=7",
                   rev)
        if not diff.startswith("diff --git "):
            raise StageError(f"{rev[:12]}: no diff")
        out[d].append((rev, "Subject: " + message + diff))
    backports = []
    for d, series in out.items():
        old = {os.path.basename(p): read(p) for p in
               glob.glob(os.path.join(top, d, "[0-9]*.patch"))}
        new = {}
        for i, (rev, text) in enumerate(series, 1):
            # the name git format-patch gives it
            fname = git(repo, "format-patch", "-1", "--start-number",
                        str(i), "-o", os.path.join(repo, ".git",
                                                   "ibpd-names"),
                        rev).strip()
            os.unlink(fname)
            fname = os.path.basename(fname)
            new[fname] = text
        for f, text in old.items():
            if new.get(f) != text:
                os.unlink(os.path.join(top, d, f))
        for f, text in new.items():
            if old.get(f) != text:
                write(os.path.join(top, d, f), text)
                log(WHO, f"wrote {d}/{f}")
                if d != "patches/core/next":
                    continue
                # the bridge's backports of a for-next patch (its number)
                was = [t for o, t in old.items() if o[:5] == f[:5]]
                if was and split_diff(was[0]) == split_diff(text):
                    continue
                backports += [os.path.relpath(b, top) for b in glob.glob(
                    os.path.join(top, "patches/bridge/*", f[:5] + "*.patch"))]
    for b in backports:
        log(WHO, f"{b}: a backport of a patch whose diff changed: make it "
            "again from the patch")

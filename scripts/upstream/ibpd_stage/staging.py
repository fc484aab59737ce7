# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""stage-upstream [--check] [SERIES]: the three upstream series.

Each series is git format-patch --cover-letter output, against the kernel
source of SERIES (default: scripts/matrix.conf's upstream-kernel) and the
matrix's upstream-rdma-core (its base: rdma_core.py):
  out/upstream/linux-fixes/  [PATCH rdma-rc n/m]: the ib_core fixes
                             that users reach (patches/core/fixes), for
                             the -rc branch and stable;
  out/upstream/linux/        [PATCH rdma-next n/m]: the fixes that need
                             fault injection, rxe and siw answering
                             QUERY_CONTEXT and the kselftest
                             (patches/core/next), on top of the fixes;
  out/upstream/rdma-core/    [PATCH rdma-core n/m]: "Update kernel
                             headers" by rdma-core's kernel-headers/update
                             --not-final when the kernel series changes
                             include/uapi/rdma, then patches/rdma-core;
  out/upstream/SENDING       what the sender adds before sending: the
                             rebase onto rdma.git (for-rc, for-next) or
                             rdma-core's master, base-commit:, To/Cc.
ibpd itself (driver, provider, DV library) stays out of tree and is not
staged. patches/stable is not staged: it is the debug kernel's backport
(patches/stable/README says why no stable series is sent).

The patch files kept in patches/ carry no author and no Signed-off-by:
the commits are made, and signed off, with the caller's git identity (git
config user.name / user.email) at staging time; staging refuses when it
is unset. The stored format: a "Subject:" line, a blank line, the message,
"---", notes for the reader of the mail (test narrative: they go below
the "---" of the mail, as git notes), the diff. @COPYRIGHT@ in a diff
stands for "<year> <the sender's name>". Each series' cover letter is the
file cover-letter beside its patches, in the same form, ${name} standing
for what staging knows (the kernel source, the patch counts).

With --check, check.py's cases follow, as kselftest TAP.
"""

import glob
import os
import re
import shutil
import string
import subprocess
import sys
import time

from . import rdma_core
from .common import (COVER, PABI_RELEASED, RDMA_CORE_NEXT, RDMA_CORE_VERSION,
                     TOP, UAPI, StageError, grep, log, matrix, output,
                     patches, read, run, touched, write)

WHO = "stage-upstream"


class Stager:
    """Commits stored patches as the caller and writes the series."""

    def __init__(self, name, email, work):
        self.name, self.email, self.work = name, email, work

    def git(self, repo, *args, check=True, **kw):
        cmd = ["git", "-C", repo, "-c", f"user.name={self.name}",
               "-c", f"user.email={self.email}", *args]
        return subprocess.run(cmd, check=check, **kw)

    def rev(self, repo, what="HEAD"):
        return self.git(repo, "rev-parse", what, stdout=subprocess.PIPE,
                        text=True).stdout.strip()

    def init(self, repo, message):
        """A repository of what repo holds, in one commit; its id."""
        self.git(repo, "init", "-q")
        self.git(repo, "add", "-A")
        self.git(repo, "commit", "-q", "-m", message)
        return self.rev(repo)

    def copyright(self):
        """What @COPYRIGHT@ stands for: the year of the commits' date and
        the sender's name."""
        date = os.environ.get("GIT_AUTHOR_DATE", "")
        year = date[:4] if re.match(r"[0-9]{4}-", date) else \
            time.strftime("%Y", time.gmtime())
        return f"{year} {self.name}"

    def apply_series(self, repo, paths):
        """One signed-off commit per stored patch; the text between its
        "---" and its diff, if any, becomes the commit's git note."""
        msg = os.path.join(self.work, "msg")
        diff = os.path.join(self.work, "diff")
        for p in paths:
            text = read(p)
            write(diff, text.replace("@COPYRIGHT@", self.copyright()))
            if self.git(repo, "apply", "--index", diff,
                        check=False).returncode:
                raise StageError(f"{os.path.basename(p)} does not apply")
            lines = text.split("\n")
            end = next((i for i in range(2, len(lines)) if lines[i] == "---"),
                       len(lines))
            first = next((i for i in range(end, len(lines))
                          if lines[i].startswith("diff --git ")), len(lines))
            write(msg, lines[0][len("Subject: "):] + "\n" +
                  "".join(l + "\n" for l in lines[1:end]))
            self.git(repo, "commit", "-q", "-s", "-F", msg)
            notes = "\n".join(lines[end + 1:first]).strip("\n")
            if notes:
                write(msg, notes + "\n")
                self.git(repo, "notes", "add", "-F", msg)

    def format_series(self, repo, span, out, prefix, cover, values):
        """git format-patch of span into out, the cover letter from the
        stored file cover (Subject:, blank line, text; ${name}s from
        values)."""
        self.git(repo, "format-patch", "-q", "--cover-letter", "--notes",
                 f"--subject-prefix={prefix}", "-o", out, span)
        text = read(cover)
        subject, _, blurb = text.partition("\n\n")
        subject = subject[len("Subject: "):]
        blurb = string.Template(blurb).substitute(values).rstrip("\n")
        p = os.path.join(out, COVER)
        s = read(p)
        assert "*** SUBJECT HERE ***" in s and "*** BLURB HERE ***" in s
        s = s.replace("*** SUBJECT HERE ***", subject)
        s = s.replace("*** BLURB HERE ***", blurb)
        write(p, s)


def stored_series():
    """The stored patches: fixes, for-next, rdma-core, the stable
    backport (the debug kernel's, not staged); each in the stored format
    and without an identity."""
    series = [sorted(glob.glob(os.path.join(TOP, "patches", d, "*.patch")))
              for d in ("core/fixes", "core/next", "rdma-core", "stable")]
    for p in sum(series, []):
        lines = read(p).split("\n")
        if not lines[0].startswith("Subject: ") or "---" not in lines:
            raise StageError(f"{p}: not Subject:, message, ---, diff")
        head = lines[:lines.index("---") + 1]
        if any(re.match(r"(From|Date|Signed-off-by):", l, re.I) for l in head):
            raise StageError(f"{p}: carries an identity (From/Date/"
                             "Signed-off-by): staging adds them")
    return series


def stage_kernel(st, src, fixes, features):
    """The kernel repository: the files the series touch and the uAPI
    headers that rdma-core copies (include/uapi/rdma, for its
    kernel-headers/update), as the pristine source has them (the patches
    then apply to the full tree). Returns the repository and the ids of its
    base and of the fixes."""
    repo = os.path.join(st.work, "repo")
    shutil.copytree(os.path.join(src, UAPI), os.path.join(repo, UAPI))
    for f in touched(fixes + features):
        # a file that a patch of the series creates
        if not os.path.isfile(os.path.join(src, f)):
            continue
        os.makedirs(os.path.join(repo, os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(src, f), os.path.join(repo, f))
    os.makedirs(repo, exist_ok=True)
    base = st.init(repo, f"base: {os.path.basename(src)} as packaged")
    st.apply_series(repo, fixes)
    fixed = st.rev(repo)
    st.apply_series(repo, features)
    return repo, base, fixed


def headers_update(st, rc, krepo, commit, out):
    """rdma-core's own kernel-headers/update --not-final, in the rdma-core
    repository rc, against the kernel repository krepo at commit: its
    "Update kernel headers" commit (signed off with the identity in rc's
    configuration), or none when the headers are the same ("Commit is
    empty"). Its output in the file out; True when it ran."""
    st.git(rc, "config", "user.name", st.name)
    st.git(rc, "config", "user.email", st.email)
    rc_ = run(["/usr/bin/python3", "kernel-headers/update", "--not-final",
               krepo, commit], out=out, cwd=rc)
    return rc_ == 0 or bool(grep("Commit is empty", out))


def stage_rdma_core(st, krepo, kernel_patches, out, rc_patches, values):
    """rdma-core: "Update kernel headers" when the kernel series changes
    the uAPI headers, then the stored patches, against the series' base.
    Returns the repository and its base."""
    rc = os.path.join(st.work, "rdma-core")
    rdma_core.base(rc)
    base = st.init(rc, f"base: rdma-core {RDMA_CORE_VERSION} as packaged, "
                   f"PACKAGE_VERSION {RDMA_CORE_NEXT}")

    # 1. the kernel headers, if the kernel series changes them
    if touched(kernel_patches, UAPI + "/"):
        if not headers_update(st, rc, krepo, "HEAD",
                              os.path.join(st.work, "headers-update.log")):
            raise StageError("kernel-headers/update failed: "
                             f"{st.work}/headers-update.log")

    # 2. libibverbs, rxe and siw, the test
    st.apply_series(rc, rc_patches)
    os.makedirs(out, exist_ok=True)
    values["nrc"] = len(output(["git", "-C", rc, "rev-list",
                                f"{base}..HEAD"]).split())
    st.format_series(rc, f"{base}..HEAD", out, "PATCH rdma-core",
                     os.path.join(TOP, "patches/rdma-core/cover-letter"),
                     values)
    return rc, base


def sending_note(up, src, kver):
    """What the sender adds before sending (out/upstream/SENDING, and on
    stderr): the series are made against packaged sources, not the
    maintainers' trees; To/Cc as get_maintainer.pl of that source
    says."""
    lines = [
        f"The kernel series are made against Debian's {os.path.basename(src)}"
        f" ({kver}), rdma-core's against {RDMA_CORE_VERSION} as released"
        f" (PACKAGE_VERSION {RDMA_CORE_NEXT}). Before sending:",
        "",
        "linux-fixes: rebase onto rdma.git's for-rc branch",
        "  (git://git.kernel.org/pub/scm/linux/kernel/git/rdma/rdma.git),",
        "  then git format-patch --base=<for-rc> (base-commit:);",
        "linux: rebase onto rdma.git's for-next branch on top of the",
        "  fixes, then git format-patch --base=<for-next>;",
        "rdma-core: rebase onto master of github.com/linux-rdma/rdma-core",
        "  (if master has moved IBVERBS_PABI_VERSION past "
        f"{PABI_RELEASED}, drop the",
        "  first patch's bump hunks), open the pull request with the",
        "  cover letter, label needs-kernel-patch, and post it to",
        "  linux-rdma@vger.kernel.org;",
        "then re-run make stage-upstream --check on the rebased trees.",
        "",
        "To/Cc, from scripts/get_maintainer.pl of "
        f"{os.path.basename(src)} (re-run it on the rebased tree):",
    ]
    for d in ("linux-fixes", "linux"):
        paths = patches(os.path.join(up, d))
        r = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git",
                            "--no-git-fallback", "--no-rolestats", *paths],
                           cwd=src, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        who = [l for l in r.stdout.splitlines() if l.strip()]
        lines.append(f"  {d}: " + (", ".join(who) or
                                   "(get_maintainer.pl failed)"))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(up, "SENDING"), "w") as f:
        f.write(text)
    print(text, file=sys.stderr, end="", flush=True)


def ls_series(up):
    """ls of the series' directories, on stderr."""
    dirs = sorted(glob.glob(os.path.join(up, "*")))
    print("\n\n".join(f"{d}:\n" + "\n".join(sorted(os.listdir(d)))
                      for d in dirs), file=sys.stderr, flush=True)


class Staged:
    """What stage() made: the Stager, the kernel source and its version,
    out/upstream, the stored kernel patches, and the repositories (the
    kernel's and its base, rdma-core's and its base)."""

    def __init__(self, st, series, src, kver, up, stored, repos):
        self.st, self.series, self.src, self.kver = st, series, src, kver
        self.up, self.stored = up, stored
        self.krepo, self.kbase, self.rc, self.rc_base = repos


def stage(series=None):
    """Stage the three series (the module's docstring) for the kernel
    SERIES (default: the matrix's upstream-kernel); a Staged."""
    series = series or matrix("upstream-kernel")

    # Whoever stages the series sends it and signs it off.
    name = output(["git", "-C", TOP, "config", "user.name"])
    email = output(["git", "-C", TOP, "config", "user.email"])
    if not name or not email:
        log(WHO, "no git identity: set git config user.name and "
            "user.email;")
        raise StageError("the series' From: and Signed-off-by: are yours, "
                         "whoever stages them sends them")
    # Staging goes on (make check stages too), but such a series cannot
    # be sent: the DCO wants a known identity that replies can reach.
    if re.search(r"\.(example|invalid|test)$|noreply", email, re.I):
        log(WHO, f"warning: {email} is no address a maintainer can reply "
            "to: set your own (git config user.name/user.email) before "
            "sending")
    # patches/stable is the debug kernel's backport, not sent (its README)
    fixes, features, rc_patches, _ = stored_series()

    kdir = output([os.path.join(TOP, "scripts/build/kernel-fetch"), series])
    if not kdir:
        raise StageError(f"no kernel source {series}")
    src = os.path.realpath(os.path.join(kdir, "source"))
    kver = read(os.path.join(kdir, "kver")).strip()
    up = os.path.join(TOP, "out/upstream")
    work = os.path.join(TOP, "out/stage")
    for d in (up, work):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)

    # Commits dated by this tree's last commit: the same tree stages the
    # same series, hashes included (the proof's builds are cached by the
    # series).
    date = output(["git", "-C", TOP, "log", "-1", "--format=%cI"])
    date = date or "@0 +0000"
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = date

    st = Stager(name, email, work)
    repo, base, fixed = stage_kernel(st, src, fixes, features)
    values = {"source": os.path.basename(src), "kver": kver,
              "nfix": len(fixes), "nfeat": len(features),
              "rdma_core_version": RDMA_CORE_VERSION}
    # the cover letters name the rdma-core series' length: stage it first
    rc, rc_base = stage_rdma_core(st, repo, fixes + features,
                                  os.path.join(up, "rdma-core"), rc_patches,
                                  values)
    log(WHO, f"rdma-core series: {up}/rdma-core")
    cover = os.path.join(TOP, "patches/core/{}/cover-letter")
    st.format_series(repo, f"{base}..{fixed}", os.path.join(up, "linux-fixes"),
                     "PATCH rdma-rc", cover.format("fixes"), values)
    st.format_series(repo, f"{fixed}..HEAD", os.path.join(up, "linux"),
                     "PATCH rdma-next", cover.format("next"), values)
    log(WHO, f"kernel series for {os.path.basename(src)}: {up}/linux-fixes "
        f"({len(fixes)} patches), {up}/linux ({len(features)} patches)")
    ls_series(up)
    sending_note(up, src, kver)
    return Staged(st, series, src, kver, up, fixes + features,
                  (repo, base, rc, rc_base))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""stage-upstream [--check] [SERIES]: the three upstream series.

Each series is git format-patch --cover-letter output, against the kernel
source of SERIES (default: scripts/matrix.conf's upstream-kernel) and the
matrix's upstream-rdma-core (its base: rdma_core.py):
  out/upstream/linux-fixes/  [PATCH rdma-rc n/m]: the ib_core fixes
                             that users reach (patches/core/fixes), for
                             the -rc branch and stable ([PATCH rdma-rc]
                             without a cover letter when it is one);
  out/upstream/linux/        [PATCH rdma-next n/m]: the fixes that need
                             fault injection, rxe and siw answering
                             QUERY_CONTEXT and the kselftest
                             (patches/core/next), on top of the fixes;
  out/upstream/rdma-core/    [PATCH rdma-core n/m]: "Update kernel
                             headers" by rdma-core's kernel-headers/update
                             --not-final when the kernel series changes
                             include/uapi/rdma, then patches/rdma-core;
  out/upstream/SENDING       what the sender changes after a rebase
                             onto rdma.git (for-rc, for-next) or
                             rdma-core's master, and the To/Cc written
                             into each mail (recipients.py).
The sender's base of a series, when there is one, comes as
IBPD_BASE_RDMA_RC, IBPD_BASE_RDMA_NEXT, IBPD_BASE_RDMA_CORE (a commit id):
"base-commit:" in that series' mails, as git format-patch --base writes.
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

from . import rdma_core, recipients
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

    def apply_series(self, repo, paths, values=None):
        """One signed-off commit per stored patch; the text between its
        "---" and its diff, if any, becomes the commit's git note (its
        ${name}s from values, as in a cover letter)."""
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
            if values:
                notes = string.Template(notes).safe_substitute(values)
            if notes:
                write(msg, notes + "\n")
                self.git(repo, "notes", "add", "-F", msg)

    def format_series(self, repo, span, out, prefix, cover, values,
                      base=None):
        """git format-patch of span into out, the cover letter from the
        stored file cover (Subject:, blank line, text; ${name}s from
        values); a series of one patch has none (cover is None: what a
        letter would say is below the patch's "---"). base: the sender's
        base commit, written "base-commit: <sha>" as format-patch --base
        writes it (in the cover letter, or below the one patch's diff)."""
        one = cover is None
        self.git(repo, "format-patch", "-q", "--notes",
                 *([] if one else ["--cover-letter"]),
                 f"--subject-prefix={prefix}", "-o", out, span)
        if one:
            p = patches(out)[0]
            s = read(p)
        else:
            text = read(cover)
            subject, _, blurb = text.partition("\n\n")
            subject = subject[len("Subject: "):]
            blurb = string.Template(blurb).substitute(values).rstrip("\n")
            p = os.path.join(out, COVER)
            s = read(p)
            assert "*** SUBJECT HERE ***" in s and "*** BLURB HERE ***" in s
            s = s.replace("*** SUBJECT HERE ***", subject)
            s = s.replace("*** BLURB HERE ***", blurb)
        if base:
            sig = s.rindex("\n-- \n")
            s = s[:sig] + f"\n\nbase-commit: {base}" + s[sig:]
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


def stage_kernel(st, src, fixes, features, values):
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
    st.apply_series(repo, fixes, values)
    fixed = st.rev(repo)
    st.apply_series(repo, features, values)
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
                     values, sender_base("rdma-core"))
    return rc, base


# The sender's base of each series, when the sender has one: the commit
# of rdma.git (for-rc, for-next) or of rdma-core that the series is sent
# on, given as IBPD_BASE_<NAME>=<sha1> (40 hex digits).
BASES = {"linux-fixes": "IBPD_BASE_RDMA_RC", "linux": "IBPD_BASE_RDMA_NEXT",
         "rdma-core": "IBPD_BASE_RDMA_CORE"}


def sender_base(d):
    """The sender's base commit of the series d (BASES), or None."""
    sha = os.environ.get(BASES[d], "").strip()
    if sha and not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise StageError(f"{BASES[d]}={sha}: not a full commit id")
    return sha or None


def sending_note(up, src, kver, said):
    """What the sender does after a rebase and before sending
    (out/upstream/SENDING, and on stderr), and the To/Cc that staging
    wrote into each mail (said: series -> {mail: (To, Cc)})."""
    name = os.path.basename(src)
    lines = [
        f"The kernel series were made against Debian's {name} ({kver}),",
        f"rdma-core's against {RDMA_CORE_VERSION} as released (PACKAGE_VERSION"
        f" {RDMA_CORE_NEXT}), and tested",
        "there; their letters (and the rdma-rc patch, below its ---) say so,",
        "which stays true after a rebase. To send a series rebased onto the",
        "maintainers' tree:",
        "",
        "1. rebase it: linux-fixes onto rdma.git's for-rc, linux onto",
        "   for-next on top of the fixes",
        "   (git://git.kernel.org/pub/scm/linux/kernel/git/rdma/rdma.git),",
        "   rdma-core onto master of github.com/linux-rdma/rdma-core (if",
        f"   master has moved IBVERBS_PABI_VERSION past {PABI_RELEASED}, the",
        "   bump hunks of \"libibverbs: Leave cmd_fd to the caller when",
        "   ibv_import_device() fails\" drop out, and the letter's paragraph",
        "   \"The private ABI\" with them);",
        "2. stage again with the base of each:",
        "     IBPD_BASE_RDMA_RC=<for-rc sha1> IBPD_BASE_RDMA_NEXT=<for-next"
        " sha1> \\",
        "     IBPD_BASE_RDMA_CORE=<master sha1> make stage-upstream",
        "   which writes \"base-commit: <sha1>\" into each cover letter (into",
        "   the rdma-rc patch, which has none, below its diff), as git",
        "   format-patch --base does; nothing else of the mails changes;",
        "3. in each letter's paragraph that names the base (\"Made against",
        "   ...\"), add what it now applies to: \"It applies to rdma.git's",
        "   for-next at <sha1> (base-commit: below).\", after checking",
        "   that it does (git am on that commit) and that the tested",
        "   statements still hold there;",
        "4. re-run get_maintainer.pl on the rebased tree; staging's To/Cc",
        "   below are those of the packaged source's MAINTAINERS;",
        "5. rdma-core: open the pull request with the cover letter, label",
        "   needs-kernel-patch, and post the series to linux-rdma.",
        "",
        f"To/Cc written into each mail (get_maintainer.pl of {name} with the",
        f"series applied; rdma-core {RDMA_CORE_VERSION}'s MAINTAINERS):",
    ]
    for d, mails in said.items():
        for mail, (to, cc) in sorted(mails.items()):
            lines.append(f"  {d}/{mail}")
            lines.append("    To: " + (", ".join(to) or "-"))
            lines.append("    Cc: " + (", ".join(cc) or "-"))
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
    values = {"source": os.path.basename(src), "kver": kver,
              "nfix": len(fixes), "nfeat": len(features),
              "rdma_core_version": RDMA_CORE_VERSION}
    repo, base, fixed = stage_kernel(st, src, fixes, features, values)
    # the cover letters name the rdma-core series' length: stage it first
    rc, rc_base = stage_rdma_core(st, repo, fixes + features,
                                  os.path.join(up, "rdma-core"), rc_patches,
                                  values)
    log(WHO, f"rdma-core series: {up}/rdma-core")
    # a series of one patch has no cover letter (what one would say is
    # below its "---")
    cover = os.path.join(TOP, "patches/core/{}/cover-letter")
    st.format_series(repo, f"{base}..{fixed}", os.path.join(up, "linux-fixes"),
                     "PATCH rdma-rc",
                     None if len(fixes) == 1 else cover.format("fixes"),
                     values, sender_base("linux-fixes"))
    st.format_series(repo, f"{fixed}..HEAD", os.path.join(up, "linux"),
                     "PATCH rdma-next", cover.format("next"), values,
                     sender_base("linux"))
    log(WHO, f"kernel series for {os.path.basename(src)}: {up}/linux-fixes "
        f"({len(fixes)} patches), {up}/linux ({len(features)} patches)")
    log(WHO, "To/Cc: get_maintainer.pl of the patched source (hard links)")
    tree = recipients.patched_tree(
        src, patches(os.path.join(up, "linux-fixes")) +
        patches(os.path.join(up, "linux")), os.path.join(work, "maint"))
    said = {d: recipients.address(os.path.join(up, d),
                                  lambda p: recipients.kernel(tree, p))
            for d in ("linux-fixes", "linux")}
    shutil.rmtree(tree, ignore_errors=True)
    sections = recipients.rdma_core_sections(rc)
    said["rdma-core"] = recipients.address(
        os.path.join(up, "rdma-core"),
        lambda p: recipients.rdma_core(sections, p))
    ls_series(up)
    sending_note(up, src, kver, said)
    return Staged(st, series, src, kver, up, fixes + features,
                  (repo, base, rc, rc_base))

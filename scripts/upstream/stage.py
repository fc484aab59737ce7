#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The three upstream series, and their check.

stage.py stage [--check] [SERIES] (what scripts/upstream/stage-upstream
runs): each series as git format-patch --cover-letter output, against the
kernel source of SERIES (default: scripts/matrix.conf's upstream-kernel)
and the matrix's upstream-rdma-core:
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
stands for "<year> <the sender's name>". Each series' cover letter is the file cover-letter beside
its patches, in the same form, ${name} standing for what staging knows
(the kernel source, the patch counts).

--check then applies each series to a pristine source (fixes to the
kernel source, for-next on top of them, rdma-core to its base), builds the
series' drivers/infiniband/core, sw/rxe and sw/siw as modules for the
stock kernel (scripts/build/kernel-build --upstream, the booted proof's
build) and the rdma kselftests with W=1, runs checkpatch --strict on every
kernel patch and builds rdma-core with -DENABLE_WERROR=1, its check-build
an ABI check and a check that a provider built for one private ABI is
never loaded by a libibverbs of the other; and a check of the words of
every log and cover letter (no unmerged kernel version, no invented
identity); as kselftest TAP.

The rdma-core series bumps the private ABI (IBVERBS_PABI_VERSION, to the
matrix's upstream-rdma-core-abi), which buildlib/check-build allows only
with a PACKAGE_VERSION as new: its base is the released
upstream-rdma-core with PACKAGE_VERSION set to the next release,
upstream-rdma-core-next (the cover letter says so).

stage.py rdma-core-build OUT: that base with the series in OUT applied and
built (cached by the series' diffs in
$IBPD_CACHE/rdma-core/staged-<base>-<hash>); prints that directory, whose
src/build is the build (IN_PLACE: usable as is). upstream-proof uses it.

stage.py rdma-core-tree OUT: the same, and prints its build tree (src/build),
or fails when it does not build (user/provider/provider.mk: the provider
for the series' ABI).

stage.py check-build-tests SCRIPT ARGS... (run in rdma-core's build
directory): rdma-core's buildlib/check-build, less three tests (see
check_build_tests()).

Standard library only; git, make, patch, checkpatch and the ABI tools run
as subprocesses.
"""

import glob
import hashlib
import inspect
import os
import re
import shutil
import string
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
TOP = os.path.realpath(os.path.join(HERE, "..", ".."))
CACHE = os.environ.get("IBPD_CACHE") or os.path.expanduser("~/.cache/ibpd")


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
COVER = "0000-cover-letter.patch"
PROG = "stage-upstream"


def log(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


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
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


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


class Tap:
    """kselftest TAP, as scripts/tests/tap.sh writes it: on a failure the
    file self.out, when set, is shown. The plan comes last, with the
    totals: the count of the cases that ran, not one kept by hand (a run
    that dies before it has no plan, which TAP reads as incomplete)."""

    def __init__(self):
        self.n = self.npass = self.nfail = self.nskip = 0
        self.out = None
        print("TAP version 13", flush=True)

    def ok(self, good, desc):
        self.n += 1
        if good:
            self.npass += 1
            print(f"ok {self.n} {desc}", flush=True)
            return
        self.nfail += 1
        print(f"not ok {self.n} {desc}")
        if self.out and os.path.isfile(self.out):
            for l in read(self.out).splitlines()[:40]:
                print(f"# {l}")
        sys.stdout.flush()

    def skip(self, desc):
        self.n += 1
        self.nskip += 1
        print(f"ok {self.n} # SKIP {desc}", flush=True)

    def totals(self):
        print(f"1..{self.n}")
        print(f"# Totals: pass:{self.npass} fail:{self.nfail} xfail:0 "
              f"xpass:0 skip:{self.nskip} error:0", flush=True)
        return 0 if self.nfail == 0 else 1


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
            with open(diff, "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(text.replace("@COPYRIGHT@", self.copyright()))
            if self.git(repo, "apply", "--index", diff,
                        check=False).returncode:
                raise StageError(f"{os.path.basename(p)} does not apply")
            lines = text.split("\n")
            end = next((i for i in range(2, len(lines)) if lines[i] == "---"),
                       len(lines))
            first = next((i for i in range(end, len(lines))
                          if lines[i].startswith("diff --git ")), len(lines))
            with open(msg, "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(lines[0][len("Subject: "):] + "\n")
                f.write("".join(l + "\n" for l in lines[1:end]))
            self.git(repo, "commit", "-q", "-s", "-F", msg)
            notes = "\n".join(lines[end + 1:first]).strip("\n")
            if notes:
                with open(msg, "w", encoding="utf-8",
                          errors="surrogateescape") as f:
                    f.write(notes + "\n")
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
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(s)


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


UAPI = "include/uapi/rdma"


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


def rdma_core_base(d):
    """The series' base in d: the pristine release, with the next
    release's PACKAGE_VERSION (RDMA_CORE_NEXT)."""
    rdma_core_pristine(d)
    cmake = os.path.join(d, "CMakeLists.txt")
    text = read(cmake)
    old = f'set(PACKAGE_VERSION "{RDMA_CORE_VERSION}")'
    if old not in text:
        raise StageError(f"{cmake}: no {old}")
    with open(cmake, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text.replace(old, f'set(PACKAGE_VERSION "{RDMA_CORE_NEXT}")'))


def rdma_core_pristine(d):
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
    the uAPI headers, then the stored patches, against the pristine
    release. Returns the repository and its base."""
    rc = os.path.join(st.work, "rdma-core")
    rdma_core_base(rc)
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


def stage(argv):
    check = bool(argv) and argv[0] == "--check"
    if check:
        argv = argv[1:]
    series = argv[0] if argv else matrix("upstream-kernel")

    # Whoever stages the series sends it and signs it off.
    name = output(["git", "-C", TOP, "config", "user.name"])
    email = output(["git", "-C", TOP, "config", "user.email"])
    if not name or not email:
        log("no git identity: set git config user.name and user.email;")
        raise StageError("the series' From: and Signed-off-by: are yours, "
                         "whoever stages them sends them")
    # Staging goes on (make check stages too), but such a series cannot
    # be sent: the DCO wants a known identity that replies can reach.
    if re.search(r"\.(example|invalid|test)$|noreply", email, re.I):
        log(f"warning: {email} is no address a maintainer can reply to: "
            "set your own (git config user.name/user.email) before sending")
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
    log(f"rdma-core series: {up}/rdma-core")
    cover = os.path.join(TOP, "patches/core/{}/cover-letter")
    st.format_series(repo, f"{base}..{fixed}", os.path.join(up, "linux-fixes"),
                     "PATCH rdma-rc", cover.format("fixes"), values)
    st.format_series(repo, f"{fixed}..HEAD", os.path.join(up, "linux"),
                     "PATCH rdma-next", cover.format("next"), values)
    log(f"kernel series for {os.path.basename(src)}: {up}/linux-fixes "
        f"({len(fixes)} patches), {up}/linux ({len(features)} patches)")
    ls_series(up)
    sending_note(up, src, kver)
    if not check:
        return 0
    return Check(st, series, src, kver, up, fixes + features,
                 (repo, base, rc, rc_base)).run()


class Check:
    """--check: apply, the modules, the kselftests, checkpatch; then the
    rdma-core series."""

    def __init__(self, st, series, src, kver, up, stored, repos):
        self.st, self.series, self.src, self.kver = st, series, src, kver
        self.up, self.stored, self.work = up, stored, st.work
        self.krepo, self.kbase, self.rc, self.rc_base = repos
        self.tree = os.path.join(self.work, "linux")
        self.obj = os.path.join(self.work, "obj")
        self.out = os.path.join(self.work, "out")
        self.kpatches = (patches(os.path.join(up, "linux-fixes")) +
                         patches(os.path.join(up, "linux")))
        self.tap = Tap()

    def run(self):
        for case in (self.refusal, self.numbering, self.words, self.apply,
                     self.core, self.kselftests, self.checkpatch,
                     self.headers):
            case()
        RdmaCoreCheck(os.path.join(self.up, "rdma-core"), self.work,
                      self.tap).run()
        return self.tap.totals()

    def refusal(self):
        """No identity, no series: the refusal, with git's global and
        system configuration out of the way (unless this repository has
        its own)."""
        local = [output(["git", "-C", TOP, "config", "--local", k])
                 for k in ("user.name", "user.email")]
        if any(local):
            self.tap.skip("no series without a git identity: this "
                          "repository sets its own")
            return
        out = os.path.join(self.work, "refusal")
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null",
                   GIT_CONFIG_NOSYSTEM="1")
        good = run([sys.executable, os.path.realpath(__file__), "stage"],
                   out=out, env=env) != 0
        good &= bool(grep("no git identity: set git config user.name and "
                          "user.email", out))
        good &= os.path.isfile(os.path.join(self.up, "linux", COVER))
        self.tap.out = out
        self.tap.ok(good, "no series without a git identity (user.name, "
                    "user.email unset: refused)")

    def numbering(self):
        """The numbering, and no patch signed by anyone but the caller."""
        name, email = self.st.name, self.st.email
        problems = []
        for d in ["linux-fixes", "linux", "rdma-core"]:
            d = os.path.join(self.up, d)
            all_ = sorted(glob.glob(os.path.join(d, "0*.patch")))
            want = re.compile(r"^Subject: \[PATCH [a-z0-9.-]+ [0-9]+/%d\] " %
                              (len(all_) - 1), re.M)
            for p in all_:
                lines = read(p).split("\n")
                i = next(i for i, l in enumerate(lines)
                         if l.startswith("Subject: "))
                subj = "\n".join(lines[i:i + 2]).replace("\n ", " ")
                if not want.search(subj):
                    problems.append(f"# {p}: {subj}")
                if os.path.basename(p) == COVER:
                    continue
                signed = [l for l in lines if l.startswith("Signed-off-by: ")]
                if signed != [f"Signed-off-by: {name} <{email}>"]:
                    problems.append(f"# {p}: not signed off by {name} "
                                    f"<{email}> alone")
            if re.search("SUBJECT HERE|BLURB HERE",
                         read(os.path.join(d, COVER))):
                problems.append("")
        for p in patches(os.path.join(self.up, "linux-fixes")):
            if not (grep(r'^Fixes: [0-9a-f]{12} \(".*"\)$', p) and
                    "Cc: stable@vger.kernel.org" in read(p).split("\n")):
                problems.append(f"# {p}: no Fixes: or no Cc: stable")
        # for-next: a fix there needs fault injection to reach, not stable
        for p in patches(os.path.join(self.up, "linux")):
            if grep(r"^Cc: stable", p):
                problems.append(f"# {p}: Cc: stable in for-next")
        with open(self.out, "w") as f:
            f.write("".join(l + "\n" for l in problems if l))
        self.tap.out = self.out
        self.tap.ok(not problems, f"3 series, [PATCH <tree> n/m] with cover "
                    f"letters, signed off by {name} alone; the -rc fixes "
                    "with Fixes: and Cc: stable, for-next without Cc: "
                    "stable")

    # a kernel version: "7.5", "Linux 7.5", "v7.5-rc1", "7.5.y" (one digit
    # before the dot: rdma-core's are two, IP addresses' parts longer)
    KVERSION = re.compile(r"(?<![\w.])v?([1-9])\.([0-9]{1,2})(?![0-9])")
    # no person nor company: what an invented identity looks like
    INVENTED = re.compile(r"ibpd authors|the ibpd (project|team)|your name|"
                          r"@[\w.-]*\.(example|invalid|test)\b|noreply",
                          re.I)

    @staticmethod
    def prose(path):
        """What a mail says in words: the message (and notes) up to the
        diff, and the lines that a man page of the diff gains."""
        lines, cur = [], None
        for l in read(path).split("\n"):
            if l.startswith("diff --git "):
                cur = l.split(" b/")[-1]
            elif cur is None:
                lines.append(l)
            elif cur.endswith(".md") and l.startswith("+") and \
                    not l.startswith("+++"):
                lines.append(l[1:])
        return lines

    def words(self):
        """The words of every log, cover letter and man page: no kernel
        version newer than the source the series is made against (none is
        merged), no invented identity (the sender's own aside, whose
        address may be a placeholder in make check), a copyright line the
        series adds names the sender; a stable backport, if one is staged,
        opens with exactly "commit <sha1> upstream."."""
        base = tuple(int(x) for x in self.kver.split(".")[:2])
        own = f"{self.st.name} <{self.st.email}>"
        problems = []
        mails = sorted(glob.glob(os.path.join(self.up, "*", "0*.patch")))
        for p in mails:
            name = os.path.relpath(p, self.up)
            for l in self.prose(p):
                for m in self.KVERSION.finditer(l):
                    if (int(m.group(1)), int(m.group(2))) > base:
                        problems.append(f"# {name}: names {m.group(0)}, "
                                        f"newer than {self.kver}: {l}")
                if self.INVENTED.search(l.replace(own, "").replace(
                        self.st.email, "")):
                    problems.append(f"# {name}: an invented identity: {l}")
            for l in read(p).split("\n"):
                if re.match(r"\+.*Copyright \(c\)", l) and \
                        self.st.name not in l:
                    problems.append(f"# {name}: a copyright not the "
                                    f"sender's: {l}")
        stable = sorted(glob.glob(os.path.join(self.up, "stable-*",
                                               "0*.patch")))
        for p in [p for p in stable if os.path.basename(p) != COVER]:
            body = read(p).split("\n\n", 1)[1]
            if not re.match(r"commit [0-9a-f]{40} upstream\.\n\n", body):
                problems.append(f"# {p}: the first line is not "
                                "'commit <sha1> upstream.'")
        with open(self.out, "w") as f:
            f.write("".join(l + "\n" for l in problems))
        self.tap.out = self.out
        self.tap.ok(mails and not problems,
                    f"the words of {len(mails)} mails: no kernel version "
                    f"newer than {'.'.join(map(str, base))}, no invented "
                    "identity, copyright lines the sender's"
                    + (", stable backports opening with 'commit <sha1> "
                       "upstream.'" if stable else " (no stable series)"))

    def apply(self):
        log(f"pristine copy of {os.path.basename(self.src)} (hard links)")
        subprocess.run(["cp", "-al", self.src, self.tree], check=True)
        good = True
        for p in self.kpatches:
            with open(p) as f:
                if run(["patch", "-p1", "-s", "-d", self.tree,
                        "--no-backup-if-mismatch"], out=self.out, stdin=f):
                    print(f"# {p} does not apply", flush=True)
                    good = False
                    break
        self.tap.ok(good, "the fixes, then for-next, apply to "
                    f"{os.path.basename(self.src)}")

    def core(self):
        """The series' drivers/infiniband/core, sw/rxe and sw/siw built with
        W=1 as modules for the stock kernel: the build that the booted
        proof boots (scripts/build/kernel-build --upstream, cached by the
        series' diffs with its log, build.log), which must show no warning
        in a file that the series touches."""
        log("the series' modules (kernel-build --upstream: "
            "drivers/infiniband/core, sw/rxe and sw/siw, W=1)")
        files = [f for f in touched(self.stored)
                 if not f.startswith("tools/")]
        r = subprocess.run([os.path.join(TOP, "scripts/build/kernel-build"),
                            "--upstream", self.series],
                           env=dict(os.environ, IBPD_UPSTREAM_STAGED="1"),
                           stdout=subprocess.PIPE, text=True)
        kd = r.stdout.strip()
        built = r.returncode == 0 and os.path.isfile(
            os.path.join(kd, "mod/core/ib_uverbs.ko"))
        warned = False
        for f in files if built else []:
            for l in grep(rf"(^|/){re.escape(f)}:[0-9]+:[0-9]+: "
                          "(warning|error)", os.path.join(kd, "build.log")):
                print(f"# {l}")
                warned = True
        self.tap.out = None
        self.tap.ok(built and not warned,
                    "drivers/infiniband/core, sw/rxe and sw/siw build with "
                    f"the series as modules for {self.kver} (W=1: no warning "
                    f"in {' '.join(os.path.basename(f) for f in files)})")

    def steps(self, cmds):
        """cmds in turn, their output in self.out, until one fails; the
        status of that one."""
        open(self.out, "w").close()
        for cmd in cmds:
            rc = run(cmd, out=self.out, append=True)
            if rc:
                return rc
        return 0

    def kselftests(self):
        log("the kselftests of tools/testing/selftests/rdma")
        ksft = os.path.join(self.work, "ksft")
        rdma = os.path.join(self.tree, "tools/testing/selftests/rdma")
        rc = self.steps([
            ["make", "-s", "-C", self.tree, f"O={self.obj}", "headers"],
            ["mkdir", "-p", ksft],
            ["make", "-C", rdma, f"OUTPUT={ksft}",
             f"KHDR_INCLUDES=-isystem {self.obj}/usr/include", "W=1", "all"]])
        built = os.access(os.path.join(ksft, "shared_ucontext"), os.X_OK)
        self.tap.ok(rc == 0 and built and
                    not grep("warning|error", self.out, re.I),
                    "tools/testing/selftests/rdma builds shared_ucontext "
                    "(no warnings)")

    def checkpatch(self):
        """Run from the copy, without git (GIT_DIR names nothing: the copy
        lies in this repository's tree): no git-based checks. That is, no
        linux history to check the Fixes: commit ids against
        (UNKNOWN_COMMIT_ID, which checkpatch reports for any id without
        one); the fixes' messages say where their ids come from. Debian's
        python3 has ply for spdxcheck.py, a python3 earlier in PATH may
        not. The patches touch files that MAINTAINERS gives to linux-rdma
        (INFINIBAND SUBSYSTEM, and tools/testing/selftests/rdma)."""
        env = dict(os.environ, GIT_DIR="/nonexistent",
                   PATH="/usr/bin:" + os.environ.get("PATH", ""))
        run(["perl", "scripts/checkpatch.pl", "--strict", "--show-types",
             "--ignore", "FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID",
             *self.kpatches],
            out=self.out, cwd=self.tree, env=env)
        unmaintained = False
        for f in touched(self.kpatches):
            r = subprocess.run(["perl", "scripts/get_maintainer.pl",
                                "--no-git", "--no-git-fallback", "-f", f],
                               cwd=self.tree, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            if "linux-rdma@vger.kernel.org" not in r.stdout:
                with open(self.out, "a") as o:
                    o.write(f"# {f}: no linux-rdma in MAINTAINERS\n")
                unmaintained = True
        totals = [l.split() for l in grep("^total:", self.out)]
        sums = [sum(int(t[i]) for t in totals) for i in (1, 3, 5)]
        n = len(self.kpatches)
        print(f"# checkpatch --strict over {n} kernel patches: "
              f"errors/warnings/checks: {sums[0]} {sums[1]} {sums[2]}",
              flush=True)
        self.tap.ok(sums == [0, 0, 0] and not unmaintained and
                    len(totals) == n and
                    not grep("traceback", self.out, re.I),
                    "checkpatch --strict: 0 errors, 0 warnings, 0 checks on "
                    "every kernel patch")

    def headers(self):
        """rdma-core's own kernel-headers/update --not-final against the
        staged kernel tree, at its base (the pristine source) and at the
        head of the for-next series, each in a clone of the pristine
        rdma-core: what the series gives rdma-core's headers is the
        difference. It must be the staged "Update kernel headers" commit
        when there is one, and nothing when there is none."""
        heads = {}
        out = os.path.join(self.work, "headers")
        open(out, "w").close()
        for name, commit in (("base", self.kbase), ("series", "HEAD")):
            d = os.path.join(self.work, f"headers-{name}")
            shutil.rmtree(d, ignore_errors=True)
            self.st.git(self.work, "clone", "-q", self.rc, d)
            self.st.git(d, "checkout", "-q", "-b", "headers", self.rc_base)
            if not headers_update(self.st, d, self.krepo, commit,
                                  out + "." + name):
                with open(out, "a") as f:
                    f.write(read(out + "." + name))
                heads[name] = None
                continue
            heads[name] = output(["git", "-C", d, "rev-parse",
                                  "HEAD:kernel-headers"])
        base_dir = os.path.join(self.work, "headers-base")
        drift = output(["git", "-C", base_dir, "diff", "--name-only",
                        self.rc_base, "HEAD", "--", "kernel-headers"])
        drift = " ".join(os.path.basename(f) for f in drift.split())
        first = output(["git", "-C", self.rc, "log", "--reverse",
                        "--format=%H %s", f"{self.rc_base}..HEAD"])
        first = first.split("\n")[0].split(" ", 1) if first else ["", ""]
        staged = first[1] == "Update kernel headers"
        self.tap.out = out
        if staged:
            want = output(["git", "-C", self.rc, "rev-parse",
                           f"{first[0]}:kernel-headers"])
            good = heads["series"] is not None and heads["series"] == want
            what = ("the staged \"Update kernel headers\" is what rdma-core's "
                    "kernel-headers/update --not-final writes for the staged "
                    "kernel tree")
        else:
            good = None not in heads.values() and \
                heads["series"] == heads["base"]
            print(f"# kernel-headers/update --not-final against "
                  f"{self.kver}'s source changes {drift or 'nothing'}, "
                  "with the kernel series as without it", flush=True)
            what = ("no \"Update kernel headers\": rdma-core's "
                    "kernel-headers/update --not-final writes the same "
                    "headers for the staged kernel tree as for the pristine "
                    "source (the kernel series adds no uAPI)")
        self.tap.ok(good, what)


def rdma_core_build(out):
    """Apply the series in out to a pristine rdma-core and build it, once
    per series (cached by its diffs: not the identity of whoever staged
    them, nor the commit ids and dates, which follow this tree's last
    commit). Returns the directory; its src/build is the build. Two
    stagings of the same series at once would share a directory: one tree
    at a time."""
    series = patches(out)
    # the copyright lines name the sender: not part of the key
    key = re.sub(rb"(?m)^\+(.*)Copyright \(c\).*$", rb"+\1Copyright",
                 diffs(series))
    key += f"base: PACKAGE_VERSION {RDMA_CORE_NEXT}".encode()
    digest = hashlib.sha256(key).hexdigest()[:12]
    cache = os.path.join(CACHE, "rdma-core")
    d = os.path.join(cache, f"staged-{RDMA_CORE_VERSION}-{digest}")
    log(f"rdma-core {RDMA_CORE_VERSION} with the series ({d})")
    if os.path.isfile(os.path.join(d, ".ready")):
        log("(cached)")
        return d
    # builds of other series unused for a day go (not sooner: another
    # tree's staging may be using one right now)
    for ready in glob.glob(os.path.join(cache, "staged-*/.ready")):
        if time.time() - os.path.getmtime(ready) >= 24 * 3600:
            shutil.rmtree(os.path.dirname(ready), ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "src")
    rdma_core_base(src)
    rc = 0
    for p in series:
        with open(p) as f:
            if run(["patch", "-p1", "-s", "-d", src,
                    "--no-backup-if-mismatch"],
                   out=os.path.join(d, "apply.log"), append=True, stdin=f):
                rc = 1
                break
    with open(os.path.join(d, "apply.rc"), "w") as f:
        f.write(f"{rc}\n")
    if rc == 0:
        blog = os.path.join(d, "build.log")
        log("building it (cmake, ninja -j2, warnings as errors; "
            f"log in {blog})")
        build = os.path.join(src, "build")
        os.makedirs(build)
        rc = run(["cmake", "-GNinja", "-DIN_PLACE=1", "-DNO_MAN_PAGES=1",
                  "-DENABLE_WERROR=1", "-DPYTHON_EXECUTABLE=/usr/bin/python3",
                  ".."], out=blog, cwd=build)
        if rc == 0:
            # not niced: in make check the debug kernel's lane runs
            # beside it, and a nice 19 build waits for that lane's VMs
            rc = run(["ninja", "-j2"], out=blog, append=True, cwd=build)
        with open(os.path.join(d, "build.rc"), "w") as f:
            f.write(f"{rc}\n")
    open(os.path.join(d, ".ready"), "w").close()
    return d


def rdma_core_fetch():
    """The pristine release's build in the cache ("" if it cannot be had)."""
    return output([os.path.join(TOP, "scripts/build/rdma-core-fetch"),
                   RDMA_CORE_VERSION])


class RdmaCoreCheck:
    """--check of the rdma-core series: apply, build with warnings as
    errors, what the series promises, check-build, the ABI."""

    def __init__(self, out, work, tap):
        self.series, self.tap = out, tap
        self.w = os.path.join(work, "rdma-core-check")

    def status(self, name):
        try:
            return read(os.path.join(self.dir, name)).strip()
        except OSError:
            return None

    def case(self, log_name, fn, desc):
        """A case whose fn writes to the log log_name."""
        self.tap.out = self.w + log_name
        with open(self.tap.out, "w") as f:
            good = fn(f)
        self.tap.ok(good, desc)

    def run(self):
        self.dir = d = rdma_core_build(self.series)
        v = RDMA_CORE_VERSION
        self.tap.out = os.path.join(d, "apply.log")
        self.tap.ok(self.status("apply.rc") == "0",
                    f"the {len(patches(self.series))} rdma-core patches apply "
                    f"to rdma-core {v}")
        self.tap.out = os.path.join(d, "build.log")
        self.tap.ok(self.status("build.rc") == "0" and
                    not grep("(warning|error):", self.tap.out, re.I),
                    f"rdma-core {v} builds with the series "
                    "(-DENABLE_WERROR=1, no warnings)")
        built = self.status("build.rc") == "0"
        build = os.path.join(d, "src/build")
        # what the series promises: the new private ABI with the generic
        # import, rxe and siw linking to it
        self.case(".log", lambda f: self.exports(build, f),
                  f"the generic import (context, PD, MR) in the private ABI "
                  f"{PABI} (bumped from the release's {PABI_RELEASED}), "
                  "which rxe and siw use")
        self.case(".check-build.log",
                  lambda f: built and run([
                      "/usr/bin/python3",
                      os.path.realpath(__file__), "check-build-tests",
                      "buildlib/check-build", "--src", "..", "--cc", "gcc"],
                      out=f.name, cwd=build) == 0,
                  "rdma-core's buildlib/check-build (private ABI, library "
                  "names, headers alone in C and C++)")
        abi_log = self.w + ".abi.log"
        with open(abi_log, "w") as f:
            good = built and self.abi(os.path.join(d, "src"),
                                      rdma_core_fetch(), self.w + "-abi", f)
        print(read(abi_log), end="", flush=True)
        self.tap.out = None
        self.tap.ok(good, f"ABI: the libraries the series can change as in "
                    f"{v} (abi-compliance-checker; libibverbs' private "
                    "symbols aside)")
        self.case(".abi-control.log",
                  lambda f: self.abi_control(self.w + "-abi", f),
                  "ABI check's control: a libibverbs without ibv_import_pd is "
                  "found incompatible")
        self.case(".contract.log",
                  lambda f: built and self.contract(
                      build, rdma_core_fetch(), self.w + "-provider", f),
                  f"a provider built for one import_context contract is "
                  f"never loaded by the other's libibverbs (libibpd for "
                  f"{PABI_RELEASED} and {PABI}, each against both)")

    # loads libibverbs.so.1 of LD_LIBRARY_PATH, then the provider argv[1],
    # as libibverbs' dlopen() of a provider would
    LOAD = ("import ctypes, os, sys\n"
            "ctypes.CDLL('libibverbs.so.1', mode=ctypes.RTLD_GLOBAL)\n"
            "ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)\n")

    @staticmethod
    def contract(build, pristine, w, f):
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
                    ["/usr/bin/python3", "-c", RdmaCoreCheck.LOAD, so],
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
        print(read(f.name), end="", flush=True)
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

    def abi(self, src, pristine, w, f):
        """The ABI check of rdma-core's stable branches (check-build's
        test_verbs_uapi: each shared library dumped with abi-dumper and
        compared by abi-compliance-checker with ABI/<name>.dump), for the
        libraries the series can change (ABI_SCOPE: libibverbs), against
        the pristine release's build (what a stable branch's ABI files
        would hold, which the release tarball lacks), less libibverbs'
        private symbols (the private version node: the series adds to them; they
        bind only rdma-core's own providers, built with it)."""
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
            found = [l for l in glob.glob(os.path.join(
                old, f"lib{name}.so.*.*.*")) if not os.path.islink(l)]
            if len(found) != 1:
                f.write(f"# lib{name}: not in the pristine build ({old})\n")
                good = False
                continue
            lib = found[0]
            # the same library of the series' build (its file name has
            # the series' PACKAGE_VERSION)
            built = [l for l in glob.glob(os.path.join(
                new, f"lib{name}.so.*.*.*")) if not os.path.islink(l)]
            if len(built) != 1:
                f.write(f"# lib{name}: not built with the series\n")
                good = False
                continue
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
                     self.dump(built[0], cur) and
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
        with open(control, "w", encoding="utf-8",
                  errors="surrogateescape") as c:
            c.write("".join(l for l in text.splitlines(keepends=True)
                            if not any(s in l for s in syms)))
        return (not self.acc("ibverbs", os.path.join(w, "ref-ibverbs.dump"),
                             control, f) and
                bool(grep("Total binary compatibility problems: [1-9]",
                          control + ".acc")))


def check_build_tests(argv):
    """rdma-core's own build-time tests (buildlib/check-build: the private
    ABI of every provider, the published and installed headers compiled
    alone in C and C++, the libraries' names against the release), less
    two: the static link test, which wants an -DENABLE_STATIC=1 build and
    fails on the pristine base here too, and the ABI test, test_verbs_uapi,
    which RdmaCoreCheck.abi() runs in the form a stable branch would."""
    script = "../" + argv[0]
    sys.argv = [script] + argv[1:]
    src = read(script)
    g = {"__name__": "check_build", "__file__": script}
    exec(compile(src[:src.index("funcs = globals();")], script, "exec"), g)
    for k, v in list(g.items()):
        if k.startswith("test_") and inspect.isfunction(v) and \
                k not in ("test_static_libs", "test_verbs_uapi"):
            print("# check-build:", k, flush=True)
            v(g["args"])
    return 0


def main(argv):
    global PROG
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if cmd == "stage":
            return stage(args)
        if cmd == "rdma-core-build" and len(args) == 1:
            PROG = "stage.py"
            print(rdma_core_build(os.path.abspath(args[0])))
            return 0
        if cmd == "rdma-core-tree" and len(args) == 1:
            PROG = "stage.py"
            d = rdma_core_build(os.path.abspath(args[0]))
            if read(os.path.join(d, "build.rc")).strip() != "0":
                raise StageError(f"rdma-core does not build: {d}/build.log")
            print(os.path.join(d, "src", "build"))
            return 0
        if cmd == "check-build-tests" and args:
            return check_build_tests(args)
    except StageError as e:
        log(str(e))
        return 1
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

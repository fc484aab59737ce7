# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""A series of patch files edited as git commits, and written back.

stage open rdma-core|kernel [DIR]: a git repository (DIR, by default
$IBPD_CACHE/series/SERIES-<this checkout's hash>, printed) whose branch
"series" is the series' base, a commit "base", and its patches applied
with git am, in order: rdma-core, patches/rdma-core on the released
rdma-core (the tarball that scripts/build/rdma-core-fetch caches);
kernel, patches/core/fixes then patches/core/next on the directories a
series may change (KERNEL_DIRS: what kernel-build --upstream takes) of
the matrix's upstream-kernel's linux-source (scripts/build/kernel-fetch).
A commit's message is its file's, the notes below its "---" (test
narrative) its git note (refs/notes/commits, carried by amend and rebase);
a kernel commit's last line, "Series-dir: fixes" or "next", says where it
goes. The kernel repository has a branch bridge/SERIES for each series of
patches/bridge/: that series' linux-source (the same directories), then
its backports, each a commit whose message is the next/ patch's with a
bracketed note. DIR may exist if writing it back would change nothing
(it is made anew).

Edit with git on "series": commit --amend, rebase -i (reword, edit,
fixup, reorder, drop), a new commit (a kernel one ends with its
Series-dir: line). A backport is made from its next/ patch by write; edit
one by hand on its branch only where write says so.

stage write SERIES|DIR [TOP]: the commits after "base" back into their
directories under TOP (by default the checkout that opened it; a copy of
its patches/ for a dry run): the message, the notes and git format-patch's
diff under git format-patch's name, the directory's numbered patches
replaced (the cover letter and README stay). Then each backport of
patches/bridge/SERIES/, its message the next/ patch's of the same subject
with the backport's note, its diff made again when that patch's diff
changed since the backport was made: the change to the patch (an
interdiff), applied to the backport on its branch (git apply, then git
apply -3); a hunk that does not apply there fails the write, named, and
the backport is then made by hand on its branch (a commit there that
write did not make is taken as it is). Each backport is checked with
scripts/upstream/backport-check before anything is written. The
repository's working tree must be clean.
"""

import glob
import hashlib
import os
import shutil
import subprocess
import tempfile

from .common import CACHE, TOP, StageError, log, matrix, read, write
from . import rdma_core

WHO = "stage"
BASE = "base"
BRANCH = "series"
BRIDGE = "patches/bridge"
NEXT = "patches/core/next"
DIR_TRAILER = "Series-dir: "
KERNEL_DIRS = ("drivers/infiniband/core", "drivers/infiniband/sw/rxe",
               "drivers/infiniband/sw/siw", "include/rdma",
               "include/uapi/rdma", "tools/testing/selftests/rdma")
# the series a repository holds: its directories of patch files
SERIES = {"rdma-core": ("patches/rdma-core",),
          "kernel": ("patches/core/fixes", NEXT)}
BACKPORT_CHECK = os.path.join(TOP, "scripts/upstream/backport-check")
# git as the tool uses it: no user's configuration changes what it writes
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "ibpd",
           "GIT_AUTHOR_EMAIL": "ibpd@invalid", "GIT_COMMITTER_NAME": "ibpd",
           "GIT_COMMITTER_EMAIL": "ibpd@invalid",
           "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
# what git am needs of a mail above the stored file's "Subject:" line
MAIL_HEAD = "From: ibpd <ibpd@invalid>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n"


def git(repo, *args, stdin=None, env=None, check=True):
    e = dict(os.environ, **GIT_ENV, **(env or {}))
    r = subprocess.run(["git", "-C", repo, "-c", "core.quotepath=off",
                        "-c", "diff.noprefix=false", "-c",
                        "diff.mnemonicprefix=false", "-c", "diff.renames=false",
                        "-c", "commit.gpgsign=false"] + list(args),
                       input=stdin, env=e, capture_output=True, text=True,
                       errors="surrogateescape")
    if r.returncode and check:
        raise StageError(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout if check else r


def default_dir(name):
    """Where stage open puts the series name of this checkout."""
    tag = hashlib.sha256(TOP.encode()).hexdigest()[:8]
    return os.path.join(CACHE, "series", f"{name}-{tag}")


def split_text(text, where):
    """A patch file's message (its "Subject: " taken off), the notes below
    its "---" and its diff."""
    i = text.find("\n---\n")
    j = text.find("\ndiff --git ", max(i, 0))
    if not text.startswith("Subject: ") or i < 0 or j < 0:
        raise StageError(f"{where}: not \"Subject:\", message, ---, diff")
    return text[len("Subject: "):i + 1], text[i + 5:j + 1], text[j + 1:]


def message_of(repo, rev):
    """A commit's message as it was given (git log's %B adds a newline)."""
    return git(repo, "cat-file", "commit", rev).split("\n\n", 1)[1]


def subject_of(message):
    return message.split("\n", 1)[0]


def notes_of(repo, rev):
    """A commit's git note, as it was given ("" without one)."""
    r = git(repo, "notes", "list", rev, check=False)
    if r.returncode:
        return ""
    return git(repo, "cat-file", "blob", r.stdout.strip())


def commit_tree(repo, tree, parent, message):
    """A commit of tree on parent, its message verbatim."""
    return git(repo, "commit-tree", tree, *(["-p", parent] if parent else []),
               stdin=message).strip()


def base_commit(repo, src, dirs):
    """A commit "base" of the directories dirs of the source tree src
    (those it has)."""
    dirs = [d for d in dirs if os.path.isdir(os.path.join(src, d))]
    with tempfile.TemporaryDirectory() as t:
        env = {"GIT_INDEX_FILE": os.path.join(t, "index")}
        git(repo, "--work-tree=" + src, "add", "-f", "-A", "--", *dirs,
            env=env)
        tree = git(repo, "write-tree", env=env).strip()
    return commit_tree(repo, tree, None, BASE + "\n")


def am(repo, path, trailer=None):
    """The patch file path, a commit on HEAD by git am; its notes (below
    "---") the commit's git note, verbatim; trailer: a last line of its
    message."""
    text = read(path)
    where = os.path.relpath(path, TOP)
    _, notes, _ = split_text(text, where)
    if trailer:
        i = text.index("\n---\n")
        text = text[:i + 1] + "\n" + trailer + "\n" + text[i + 1:]
    mail = os.path.join(repo, ".git", "ibpd-mail")
    write(mail, MAIL_HEAD + text)
    r = git(repo, "am", "-q", "-k", "--whitespace=nowarn", mail, check=False)
    os.unlink(mail)
    if r.returncode:
        git(repo, "am", "--abort", check=False)
        raise StageError(f"{where} does not apply (git am): "
                         f"{(r.stdout + r.stderr).strip()}")
    if notes:
        blob = git(repo, "hash-object", "-w", "--stdin", stdin=notes).strip()
        git(repo, "notes", "add", "-C", blob, "HEAD")


def kernel_source(k):
    """The linux-source directory of the matrix's kernel k
    (scripts/build/kernel-fetch)."""
    kdir = subprocess.run([os.path.join(TOP, "scripts/build/kernel-fetch"),
                           k], capture_output=True, text=True).stdout.strip()
    if not kdir:
        raise StageError(f"no kernel {k} (scripts/build/kernel-fetch {k})")
    return os.path.realpath(os.path.join(kdir, "source"))


def bridges(top):
    """The bridge's older series, each with its linux-source directory:
    the series of the matrix's kernels but the upstream-kernel's; a
    series of patches/bridge/ must be one of them."""
    up = matrix("upstream-kernel")
    out = {}
    for k in matrix("kernels").split():
        src = kernel_source(k)
        if k != up:
            out[os.path.basename(src)[len("linux-source-"):]] = src
    for p in glob.glob(os.path.join(top, BRIDGE, "*", "[0-9]*.patch")):
        s = os.path.basename(os.path.dirname(p))
        if s not in out:
            raise StageError(f"{BRIDGE}/{s}: no kernel of the matrix has "
                             "that series (scripts/matrix.conf)")
    return out


def open_series(name, dest=None):
    """The repository of the series name in dest (default_dir() when
    None), made anew; dest may exist only if writing it back would change
    nothing."""
    if name not in SERIES:
        raise StageError(f"no series {name} (rdma-core or kernel)")
    dest = dest or default_dir(name)
    if os.path.lexists(dest):
        if changes(dest):
            raise StageError(f"{dest} exists, with commits not written back "
                             f"(stage write {dest}): write them, or remove "
                             "it")
        shutil.rmtree(dest)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    try:
        make(name, dest)
    except (StageError, subprocess.CalledProcessError):
        shutil.rmtree(dest, ignore_errors=True)
        raise
    print(dest)


def make(name, dest):
    """open_series()'s repository in dest, which does not exist."""
    if name == "rdma-core":
        rdma_core.pristine(dest)
        git(dest, "init", "-q", "-b", BRANCH)
        base = base_commit(dest, dest, ["."])
    else:
        os.makedirs(dest)
        git(dest, "init", "-q", "-b", BRANCH)
        base = base_commit(dest, kernel_source(matrix("upstream-kernel")),
                           KERNEL_DIRS)
    # a message as written: its "#" lines kept, the editor's help cut
    git(dest, "config", "commit.cleanup", "scissors")
    # amend and rebase carry a commit's notes (below its "---")
    git(dest, "config", "notes.rewriteRef", "refs/notes/commits")
    git(dest, "reset", "-q", "--hard", base)
    n = 0
    for d in SERIES[name]:
        for p in sorted(glob.glob(os.path.join(TOP, d, "[0-9]*.patch"))):
            am(dest, p, DIR_TRAILER + os.path.basename(d)
               if name == "kernel" else None)
            n += 1
    tip = git(dest, "rev-parse", "HEAD").strip()
    opened = [f"{n} commits on \"{BASE}\" (branch {BRANCH})"]
    for s, src in sorted(bridges(TOP).items()) if name == "kernel" else ():
        git(dest, "update-ref", "refs/heads/bridge/" + s,
            base_commit(dest, src, KERNEL_DIRS))
        git(dest, "checkout", "-q", "bridge/" + s)
        for p in sorted(glob.glob(os.path.join(TOP, BRIDGE, s,
                                               "[0-9]*.patch"))):
            am(dest, p)
        # what write compares with: the branch as made, and the series
        # its backports were made from
        git(dest, "update-ref", "refs/ibpd/bridge/" + s, "HEAD")
        git(dest, "update-ref", "refs/ibpd/derived/" + s, tip)
        opened.append(f"bridge/{s} ({os.path.basename(src)})")
    git(dest, "checkout", "-q", BRANCH)
    write(os.path.join(dest, ".git", "ibpd-series"), name + "\n")
    write(os.path.join(dest, ".git", "ibpd-top"), TOP + "\n")
    log(WHO, f"the {name} series: " + ", ".join(opened))


def repository(arg):
    """The repository that stage open made, by series name or path."""
    repo = default_dir(arg) if arg in SERIES else os.path.abspath(arg)
    try:
        name = read(os.path.join(repo, ".git", "ibpd-series")).strip()
    except OSError:
        raise StageError(f"{repo}: not a series that stage open made")
    return repo, name


def format_patch(repo, rev, number):
    """git format-patch's name of the commit rev as patch number, and its
    diff."""
    out = os.path.join(repo, ".git", "ibpd-format-patch")
    path = git(repo, "format-patch", "-1", "-k", "--no-stat",
               "--no-signature", "--abbrev=7", "--start-number",
               str(number), "-o", out, rev).strip()
    text = read(path)
    shutil.rmtree(out)
    i = text.find("\ndiff --git ")
    if i < 0:
        raise StageError(f"{rev[:12]} \"{subject_of(message_of(repo, rev))}"
                         "\": no diff")
    return os.path.basename(path), text[i + 1:]


class Patch:
    """A commit of the series: its directory, message (its Series-dir:
    line taken off), notes and number in its directory."""

    def __init__(self, repo, rev, d, number, message):
        self.rev, self.d, self.number, self.message = rev, d, number, message
        self.subject = subject_of(message)
        self.notes = notes_of(repo, rev)
        self.name, self.diff = format_patch(repo, rev, number)

    def text(self):
        return "Subject: " + self.message + "---\n" + self.notes + self.diff


def commits(repo, name, rev=BRANCH):
    """The commits of the series up to rev: (commit, directory, message
    without its Series-dir: line)."""
    revs = git(repo, "rev-list", "--reverse", rev).split()
    if not revs or message_of(repo, revs[0]) != BASE + "\n":
        raise StageError(f"{repo}: the first commit of {rev} is not "
                         f"\"{BASE}\"")
    out = []
    for r in revs[1:]:
        message, d = message_of(repo, r), SERIES[name][0]
        if name == "kernel":
            lines = message.rstrip("\n").split("\n")
            where = lines[-1][len(DIR_TRAILER):] \
                if lines[-1].startswith(DIR_TRAILER) else None
            d = next((s for s in SERIES[name]
                      if os.path.basename(s) == where), None)
            if d is None:
                raise StageError(f"{r[:12]} \"{lines[0]}\": its last line "
                                 f"is not \"{DIR_TRAILER}fixes\" or \"next\"")
            message = "\n".join(lines[:-1]).rstrip("\n") + "\n"
        out.append((r, d, message))
    return out


def series_patches(repo, name):
    """The commits of the series, as Patches."""
    out, numbers = [], {d: 0 for d in SERIES[name]}
    for r, d, message in commits(repo, name):
        numbers[d] += 1
        out.append(Patch(repo, r, d, numbers[d], message))
    return out


def patch_id(repo, rev):
    return git(repo, "patch-id", "--stable",
               stdin=git(repo, "show", "--format=", rev)).split(" ")[0]


def note_of(message, where):
    """A backport's bracketed note: its message's last paragraph, "[ "
    to "]"."""
    i = message.rstrip("\n").rfind("\n\n[")
    note = message[i + 2:] if i >= 0 else ""
    if not note.rstrip("\n").endswith("]"):
        raise StageError(f"{where}: no bracketed note (\"[ ... ]\") ends "
                         "its message")
    return note


def hunks(diff):
    """A diff's hunks, each a patch of its own: (file, @@ line, patch)."""
    out, head, cur = [], "", None
    for line in diff.splitlines(keepends=True):
        if line.startswith("diff --git "):
            head, cur = line, None
        elif line.startswith("@@"):
            cur = [head, line]
            out.append(cur)
        elif cur is None:
            head += line
        else:
            cur.append(line)
    return [(h[0].split("\n", 1)[0].split(" b/", 1)[-1], h[1].rstrip("\n"),
             "".join(h)) for h in out]


def apply(repo, tree, diff, three_way=False):
    """tree with diff applied (git apply, -3 too when three_way), or
    None when it does not apply."""
    with tempfile.TemporaryDirectory() as t:
        env = {"GIT_INDEX_FILE": os.path.join(t, "index")}
        git(repo, "read-tree", tree, env=env)
        for how in (["--cached"], ["--cached", "-3"])[:2 if three_way else 1]:
            if not git(repo, "apply", *how, "-", stdin=diff, env=env,
                       check=False).returncode:
                return git(repo, "write-tree", env=env).strip()
    return None


class Bridge:
    """The backports of one series of patches/bridge/ (bridge/SERIES),
    made again from the series' next/ patches."""

    def __init__(self, repo, series, patches):
        self.repo, self.s, self.where = repo, series, f"{BRIDGE}/{series}"
        self.next = [p for p in patches if p.d == NEXT]
        self.tip = self.rev("refs/heads/bridge/" + series)
        # a commit of the branch that write did not make: the user's
        self.by_hand = self.tip != self.rev("refs/ibpd/bridge/" + series)
        # the series the backports were made from (None: a new branch)
        self.derived = self.rev("refs/ibpd/derived/" + series)

    def rev(self, ref):
        return git(self.repo, "rev-parse", "-q", "--verify", ref,
                   check=False).stdout.strip() or None

    def patch_of(self, subject, was):
        """The next/ patch of a backport: by its subject, else (a reword)
        the one whose diff is that of the patch it was made from."""
        p = next((p for p in self.next if p.subject == subject), None)
        if p is None and was:
            pid = patch_id(self.repo, was)
            p = next((p for p in self.next
                      if patch_id(self.repo, p.rev) == pid), None)
        if p is None:
            raise StageError(f"{self.where}: the backport \"{subject}\": no "
                             f"patch of next/ has its subject (drop it with "
                             f"git on bridge/{self.s}, or give it one)")
        return p

    def interdiff(self, was, now):
        """The change from the next/ patch was to now: now's diff on was's
        parent, against was."""
        x = apply(self.repo, was + "^", git(
            self.repo, "show", "--format=", "--binary", now.rev))
        if x is None:
            raise StageError(f"{self.where}: \"{now.subject}\" does not "
                             "apply where it was when its backport was made "
                             "(an earlier patch changed its context): make "
                             f"the backport by hand on bridge/{self.s}")
        return git(self.repo, "diff", "--full-index", "--binary", was, x)

    def carry(self, tree, diff, subject):
        """tree with diff, the change to the patch, applied; StageError
        naming the hunks that do not apply."""
        new = apply(self.repo, tree, diff, three_way=True)
        if new:
            return new
        bad = [f"  {f}: {at}\n" + "".join(
            "    " + l + "\n" for l in h.splitlines()
            if l[:1] in "+-" and not l.startswith(("+++", "---")))
            for f, at, h in hunks(diff) if apply(self.repo, tree, h) is None]
        raise StageError(
            f"{self.where}: the change to \"{subject}\" does not apply to "
            f"its backport (git apply, git apply -3); the hunk"
            f"{'s' if len(bad) > 1 else ''} of the change that do"
            f"{'' if len(bad) > 1 else 'es'} not:\n" + "".join(bad) +
            f"make the backport by hand on branch bridge/{self.s} of "
            f"{self.repo} (git checkout bridge/{self.s}, edit, git commit "
            "--amend), then write again")

    def derive(self):
        """The backports made again: [(commit, its next/ Patch)]."""
        base = git(self.repo, "rev-list", "--max-parents=0", self.tip
                   ).split()[0]
        was_next = {subject_of(m): r for r, d, m in
                    commits(self.repo, "kernel", self.derived)
                    if d == NEXT} if self.derived else {}
        parent, out = base, []
        for b in git(self.repo, "rev-list", "--reverse",
                     f"{base}..{self.tip}").split():
            message = message_of(self.repo, b)
            subject = subject_of(message)
            note = note_of(message, f"{self.where}: \"{subject}\"")
            was = was_next.get(subject)
            now = self.patch_of(subject, was)
            tree = b + "^{tree}"
            if git(self.repo, "rev-parse", b + "^").strip() != parent:
                tree = self.carry(parent + "^{tree}", git(
                    self.repo, "show", "--format=", "--binary", b), subject)
            if not self.by_hand and was and \
                    patch_id(self.repo, was) != patch_id(self.repo, now.rev):
                tree = self.carry(tree, self.interdiff(was, now), subject)
            parent = commit_tree(self.repo, git(
                self.repo, "rev-parse", tree).strip(), parent,
                now.message + "\n" + note)
            out.append((parent, now))
        return out


def render(repo, name):
    """What writing repo back writes: {directory: {file name: text}}, and
    the refs to move then [(ref, commit)]."""
    if any(os.path.exists(os.path.join(repo, ".git", d))
           for d in ("rebase-merge", "rebase-apply")):
        raise StageError(f"{repo}: a rebase or git am is under way: finish "
                         "it first")
    if git(repo, "status", "--porcelain", "--untracked-files=no").strip():
        raise StageError(f"{repo}: changes not committed: commit them (git "
                         "commit --amend) or stash them first")
    patches = series_patches(repo, name)
    files = {d: {} for d in SERIES[name]}
    for p in patches:
        files[p.d][p.name] = p.text()
    refs = []
    heads = git(repo, "for-each-ref", "--format=%(refname)",
                "refs/heads/bridge/").split()
    tip = git(repo, "rev-parse", BRANCH).strip()
    for ref in heads:
        bridge = Bridge(repo, ref[len("refs/heads/bridge/"):], patches)
        d = files.setdefault(bridge.where, {})
        made = bridge.derive()
        for c, now in made:
            fname, diff = format_patch(repo, c, now.number)
            d[fname] = "Subject: " + message_of(repo, c) + "---\n" + \
                now.notes + diff
            check_backport(now, fname, d[fname], bridge.where)
        last = made[-1][0] if made else bridge.tip
        refs += [(ref, last), ("refs/ibpd/bridge/" + bridge.s, last),
                 ("refs/ibpd/derived/" + bridge.s, tip)]
    return files, refs


def check_backport(patch, fname, text, where):
    """scripts/upstream/backport-check of a backport made: StageError with
    its output when it fails."""
    up, bp = os.path.join(NEXT, patch.name), os.path.join(where, fname)
    with tempfile.TemporaryDirectory() as t:
        for p, s in ((up, patch.text()), (bp, text)):
            os.makedirs(os.path.join(t, os.path.dirname(p)), exist_ok=True)
            write(os.path.join(t, p), s)
        r = subprocess.run([BACKPORT_CHECK, up, bp], cwd=t,
                           capture_output=True, text=True)
    if r.returncode:
        raise StageError(f"{where}/{fname} is no backport of {patch.name}:\n"
                         + r.stdout + r.stderr.rstrip("\n"))


def stored(top, d):
    """The numbered patch files of the directory d under top."""
    return {os.path.basename(p): read(p) for p in
            glob.glob(os.path.join(top, d, "[0-9]*.patch"))}


def changes(repo):
    """What writing repo back into the checkout that opened it would
    change (directory/file names); StageError when it is not an opened
    series or cannot be written back."""
    repo, name = repository(repo)
    top = read(os.path.join(repo, ".git", "ibpd-top")).strip()
    files, _ = render(repo, name)
    return [f"{d}/{f}" for d, new in files.items()
            for f in set(new) | set(stored(top, d))
            if new.get(f) != stored(top, d).get(f)]


def write_series(arg, top=None):
    """The series of the repository arg (a series name: its default_dir())
    back into its directories under top (default: the checkout that
    opened it)."""
    repo, name = repository(arg)
    top = top or read(os.path.join(repo, ".git", "ibpd-top")).strip()
    files, refs = render(repo, name)
    wrote = 0
    for d, new in files.items():
        old = stored(top, d)
        if new:
            os.makedirs(os.path.join(top, d), exist_ok=True)
        for f, text in old.items():
            if new.get(f) != text:
                os.unlink(os.path.join(top, d, f))
        for f, text in sorted(new.items()):
            if old.get(f) != text:
                write(os.path.join(top, d, f), text)
                log(WHO, f"wrote {d}/{f}")
                wrote += 1
    head = git(repo, "symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
    for ref, rev in refs:
        git(repo, "update-ref", ref, rev)
        if ref == head:	# its tree is clean (render()): the new one
            git(repo, "reset", "-q", "--hard", rev)
    log(WHO, f"{repo}: {wrote or 'no'} file{'' if wrote == 1 else 's'} "
        f"written in {top}")

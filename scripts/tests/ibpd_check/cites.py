# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The prose of the repository held to the tree: no path cited that is
gone, no paragraph twice.

The paths that the prose cites:
the docs (Documentation/, README files, the man pages) whole, and the
comments of everything else (C's, Python's and its docstrings, the
"#" comments of shell, make and the rest). A citation is a word that
starts with a top-level directory of the tree ("scripts/build/matrix",
"patches/bridge/SERIES/") or a bare Python or shell script's name
("run_one.sh"). It stands when the tree has it: the path, from the top
or from a directory above the citing file (a package's "debian/rules");
a pattern's match ("*", "{a,b}", "<hash>" and an upper-case word such
as SERIES or PROG match a name; a patch's number, its file); a program
built from PATH.c; for a
bare name, a tracked file of that name. Others' files named like ours
(the kernel's scripts/checkpatch.pl) are listed in OTHERS, each with
whose it is. The changelogs (history), the patches (another tree's
paths) and the recorded logs are not read.

No paragraph twice: no run of REPEAT words stands twice in the docs
(Documentation/, the README files; not the man pages, each of which
stands alone), as a paragraph left behind by a move would.

    python3 -m ibpd_check.cites [TOP]

Prints FILE:LINE: PATH for each citation of a path the tree lacks, and
FILE:LINE: for each run of words that stands twice; exit status 1 if
there is one.
"""

import ast
import io
import os
import re
import subprocess
import sys
import tokenize

# others' paths and names that the prose cites: {path or name: whose}
OTHERS = {
    "scripts/checkpatch.pl": "the kernel's",
    "scripts/get_maintainer.pl": "the kernel's",
    "kernel/configs/kvm_guest.config": "the kernel's",
    "kernel/drivers": "a kernel's modules, /lib/modules/KVER/kernel",
    "selftests/rdma": "the kernel's kselftests, installed",
    "Documentation/process": "the kernel's",
    "debian/patches": "rdma-core's Debian source, which the bridge rebuilds",
    "debian/backport-check": "the bridge's source package's copy",
    "kunit_parser.py": "the kernel's kunit.py",
    "kunit_tool_test.py": "the kernel's kunit.py",
    "spdxcheck.py": "the kernel's",
    "run_kselftest.sh": "the kernel's kselftest runner",
    "rxe_netns_names.sh": "the kernel's rdma kselftests",
    "rxe_shared_ucontext.sh": "the kernel series' rdma kselftests",
    "siw_shared_ucontext.sh": "the kernel series' rdma kselftests",
    "rxe_test_NETDEV_UNREGISTER.sh": "the kernel's rdma kselftests",
    "shared_ucontext.sh": "the kernel series' rdma kselftests",
    "run_tests.py": "rdma-core's tests",
}
# the bridge's source package, as packaging/ibpd-rdma-sw/debian/assemble
# and scripts/build/bridge-rxe make it
PACKAGE = {
    "packaging/ibpd-rdma-sw/": ("patches/rxe", "patches/siw"),
}
SKIP = re.compile(r"^(patches/.*\.patch|scripts/tests/logs/.*"
                  r"|(.*/)?debian/changelog)$")
DOC = re.compile(r"^(Documentation/.*|man/.*|(.*/)?README[^/]*|.*\.(rst|md))$")
BARE = re.compile(r"(?<![\w./$@*-])([\w-]+\.(?:py|sh))(?![\w/-])")
# a "#" comment: at the start of a line or after a blank ("$#", "${#x}",
# "'#'" are not)
HASH = re.compile(r"(?:^|\s)#(?!!)(.*)$")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
PLACEHOLDER = re.compile(r"<[^>/]*>|\{\}|\b[A-Z][A-Z0-9_]*\b|(?<=_)[A-Z]+\b")


def tracked(top):
    """The tree's files (those git tracks, and those it would: not
    ignored), and its directories."""
    files = subprocess.run(["git", "-C", top, "ls-files", "-z", "--cached",
                            "--others", "--exclude-standard"],
                           check=True, stdout=subprocess.PIPE,
                           text=True).stdout.split("\0")
    files = [f for f in files if f]
    dirs = {f.rsplit("/", i)[0] for f in files
            for i in range(1, f.count("/") + 1)}
    return files, dirs


def citation(tops):
    """The pattern of a path that starts with one of tops."""
    return re.compile(r"(?<![\w./$@~-])((?:%s)/(?:[\w.+*<>@-]|/|\{[^}\s]*\})*"
                      r"[\w*}>/])" % "|".join(re.escape(t) for t in tops))


def python_prose(text):
    """(line, text) of a Python source's comments and docstrings."""
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type == tokenize.COMMENT:
                yield t.start[0], t.string
        tree = ast.parse(text)
    except (SyntaxError, tokenize.TokenError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            d = node.body[0]
            if (isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant)
                    and isinstance(d.value.value, str)):
                for i, line in enumerate(d.value.value.split("\n")):
                    yield d.lineno + i, line


def prose(path, text):
    """(line, text) of what a file says in words: a doc whole, else its
    comments."""
    if DOC.match(path):
        yield from enumerate(text.split("\n"), 1)
    elif re.search(r"\.(c|h)(\.in)?$", path):
        for m in C_COMMENT.finditer(text):
            first = text.count("\n", 0, m.start()) + 1
            for i, line in enumerate(m.group(0).split("\n")):
                yield first + i, line
    elif path.endswith(".py") or re.match(r"#!.*python", text):
        yield from python_prose(text)
    else:
        for n, line in enumerate(text.split("\n"), 1):
            m = HASH.search(line)
            if m:
                yield n, m.group(1)


def expand(path):
    """A cited path's braces expanded: the paths it names."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",")
            for p in expand(path[:m.start()] + alt + path[m.end():])]


def pattern(path):
    """A cited path as a regular expression: "*" and its placeholders
    any name."""
    parts = re.split(r"(\*|%s)" % PLACEHOLDER.pattern, path)
    # a patch by its number: patches/stable/0001
    number = "-[^/]*" if re.search(r"(^|/)\d{4}$", path) else ""
    return re.compile("".join("[^/]*" if i % 2 else re.escape(p)
                              for i, p in enumerate(parts) if p is not None)
                      + number + "$")


class Tree:
    def __init__(self, top):
        self.files, self.dirs = tracked(top)
        self.all = set(self.files) | self.dirs
        self.names = {os.path.basename(f) for f in self.files}
        self.tops = sorted({f.split("/")[0] for f in self.files if "/" in f})
        self.cite = citation(self.tops)

    def has(self, path, where):
        """Whether the path cited in the file where stands (see above):
        each of the paths its braces name."""
        return all(self.has1(p, where) for p in expand(path))

    def has1(self, path, where):
        path = path.rstrip("/")
        bases = [""] + [where.rsplit("/", i)[0] + "/"
                        for i in range(1, where.count("/") + 1)]
        for base in bases:
            if base + path in self.all or base + path + ".c" in self.all:
                return True
        if any(path == o or path.startswith(o + "/") for o in OTHERS):
            return True
        if any(where.startswith(p) and path in paths
               for p, paths in PACKAGE.items()):
            return True
        r = pattern(path)
        return any(r.match(f[len(base):]) for base in bases
                   for f in self.all if f.startswith(base))

    def stale(self, path, text):
        """[(line, cited path)] of a file's text that the tree lacks."""
        out = []
        for n, line in prose(path, text):
            for m in self.cite.finditer(line):
                if not self.has(m.group(1), path):
                    out.append((n, m.group(1)))
            for m in BARE.finditer(line):
                name = m.group(1)
                if name not in self.names and name not in OTHERS and \
                        not any(pattern(name).match(x) for x in self.names):
                    out.append((n, name))
        return out


REPEAT = 25
TWICE = re.compile(r"^(Documentation/.*\.rst|(.*/)?README[^/]*)$")


def repeats(texts, n=REPEAT):
    """[(file, line, file, line)] of the runs of n words or more that
    stand twice in texts {file: text}: each run once, where it starts,
    and where it stood first."""
    seen = {}
    out = []
    for f in sorted(texts):
        words = [(m.group(0), texts[f].count("\n", 0, m.start()) + 1)
                 for m in re.finditer(r"\S+", texts[f])]
        prev = None	# where the run followed stood first
        for i in range(len(words) - n + 1):
            key = " ".join(w for w, _ in words[i:i + n])
            if key not in seen:
                seen[key] = (f, i, words[i][1])
                prev = None
                continue
            g, j, line = seen[key]
            if prev != (g, j - 1):
                out.append((f, words[i][1], g, line))
            prev = (g, j)
    return out


def check(top):
    """What is wrong with the tree's prose: "FILE:LINE: ..." lines."""
    t = Tree(top)
    out = []
    docs = {}
    for f in t.files:
        if SKIP.match(f):
            continue
        try:
            with open(os.path.join(top, f)) as fh:
                text = fh.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        out += ["%s:%d: %s: no such file in the tree" % (f, n, p)
                for n, p in t.stale(f, text)]
        if TWICE.match(f):
            docs[f] = text
    out += ["%s:%d: %d words or more as at %s:%d" % (f, n, REPEAT, g, m)
            for f, n, g, m in repeats(docs)]
    return out


def main(argv):
    top = argv[0] if argv else os.path.realpath(os.path.join(
        os.path.dirname(__file__), "..", "..", ".."))
    bad = check(top)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""To: and Cc: of every mail of the series, as each project's maintainers
file says for the files that the patch touches.

The kernel's: scripts/get_maintainer.pl of the patched source (the
pristine source, hard-linked, with the staged series applied), for each
patch: its maintainers (and supporters) in To:, the rest (reviewers,
lists) in Cc:. rdma-core has no such script: its MAINTAINERS (the staged
tree's) is read here, the M: of each section whose F: patterns match a
touched file in To:, its L: and the list that the file's preamble names
for every patch in Cc:. A cover letter goes to everyone its patches go
to.
"""

import os
import re
import subprocess

from .common import COVER, StageError, patches, read, run, touched, write


def patched_tree(src, kpatches, d):
    """The kernel source src with the patches kpatches applied, in d (hard
    links: patch replaces the files it changes, the source stays as it
    is)."""
    subprocess.run(["rm", "-rf", d], check=True)
    subprocess.run(["cp", "-al", src, d], check=True)
    for p in kpatches:
        with open(p) as f:
            if run(["patch", "-p1", "-s", "-d", d, "--no-backup-if-mismatch"],
                   out=os.devnull, stdin=f):
                raise StageError(f"{p} does not apply to {src}")
    return d


def kernel(tree, patch):
    """(To, Cc) of patch by get_maintainer.pl in tree."""
    r = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git",
                        "--no-git-fallback", "--rolestats", patch],
                       cwd=tree, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode or not r.stdout.strip():
        raise StageError(f"get_maintainer.pl failed on {patch}")
    to, cc = [], []
    for l in r.stdout.splitlines():
        m = re.match(r"(.*?) \((.*)\)$", l.strip())
        who, role = (m.group(1), m.group(2)) if m else (l.strip(), "")
        (to if re.match(r"(maintainer|supporter):", role) else cc).append(who)
    return to, cc


def _pattern(f):
    """An F: pattern of rdma-core's MAINTAINERS as a regex: a trailing
    slash takes the directory and all below, a * stays within a path
    component."""
    below = f.endswith("/")
    rx = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else
                  re.escape(c) for c in f)
    return re.compile(rx + (".*" if below else "") + "$")


def rdma_core_sections(repo):
    """The list of the preamble and the sections of rdma-core's
    MAINTAINERS in repo: (list, [(name, {"M": [...], "L": [...], "F":
    [regex, ...]})])."""
    text = read(os.path.join(repo, "MAINTAINERS"))
    head, _, body = text.partition("-----------------------------------")
    lists = re.findall(r"^([\w.+-]+@[\w.-]+)$", head, re.M)
    sections = []
    for block in re.split(r"\n\s*\n", body):
        lines = [l for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        sec = {"M": [], "L": [], "F": []}
        for l in lines[1:]:
            k, _, v = l.partition(":")
            if k in sec:
                v = v.strip()
                sec[k].append(_pattern(v) if k == "F" else v)
        sections.append((lines[0].strip(), sec))
    return lists, sections


def rdma_core(sections, patch):
    """(To, Cc) of patch from rdma_core_sections()."""
    lists, secs = sections
    to, cc = [], list(lists)
    for f in touched([patch]):
        for _, sec in secs:
            if any(rx.match(f) for rx in sec["F"]):
                to += [m for m in sec["M"] if m not in to]
                cc += [m for m in sec["L"] if m not in cc]
    if not to:
        # the package's maintainers take what no section names
        for name, sec in secs:
            if name.startswith("* OVERALL PACKAGE"):
                to = list(sec["M"])
    return to, [c for c in cc if c not in to]


def _header(name, who):
    """A To: or Cc: header, one address a line."""
    return f"{name}: " + ",\n    ".join(who) + "\n"


def address(out, recipients):
    """Writes To: and Cc: into every mail of the series in out: each patch
    as recipients(patch) says, the cover letter to all of them. Returns
    {mail's name: (To, Cc)}."""
    said = {}
    for p in patches(out):
        said[os.path.basename(p)] = recipients(p)
    everyone_to, everyone_cc = [], []
    for to, cc in said.values():
        everyone_to += [t for t in to if t not in everyone_to]
        everyone_cc += [c for c in cc if c not in everyone_cc]
    everyone_cc = [c for c in everyone_cc if c not in everyone_to]
    cover = os.path.join(out, COVER)
    if os.path.isfile(cover):
        said[COVER] = (everyone_to, everyone_cc)
    for name, (to, cc) in said.items():
        p = os.path.join(out, name)
        s = read(p)
        # after the Subject: header and its continuation lines
        m = re.search(r"^Subject: .*\n(?:[ \t].*\n)*", s, re.M)
        hdr = (_header("To", to) if to else "") + \
            (_header("Cc", cc) if cc else "")
        write(p, s[:m.end()] + hdr + s[m.end():])
    return said

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""What a run costs, from its log: each section's wall time and
core-seconds (the runner's "# time:" lines) and its cases (its block of
the log, from its "### TITLE (Ns)" line to the next, read with
tap.parse()), recorded in scripts/tests/check-times, and the one table
of Documentation/testing.rst made from that file, between its
".. times-table" and ".. end of times-table" lines.

    scripts/tests/check --record-times LOG [--run TEXT]
    scripts/tests/check --times-table [write|check]

--record-times writes check-times from the log of a run (TEXT says
which run it was: the table's caption) and the table from it;
--times-table write makes the table again from check-times, check exits
1 when the table is not what check-times makes (the static checks run
it). The runner's budget warning reads check-times too
(runner.read_times()).
"""

import difflib
import os
import re
import textwrap

from . import runner, tap

DOC = os.path.join("Documentation", "testing.rst")
BEGIN = ".. times-table"
END = ".. end of times-table"
HEADER = re.compile(r"^### (.*) \(\d+s\)$")
# the runner's headers that are not a section's: the debug lane's note,
# the summary; a section that did not run has no time
NOT_SECTION = re.compile(r"^(debug kernel lane: .*|summary"
                         r"|.*: not run \(.*\))$")
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")
ALL = re.compile(r"^# time: all (\d+) s, (\d+) core-s$")


def blocks(lines):
    """The sections' blocks of a log, in the order printed: [lines]."""
    out = []
    cur = None
    for line in lines:
        m = HEADER.match(line.rstrip("\n"))
        if m:
            cur = None if NOT_SECTION.match(m.group(1)) else []
            if cur is not None:
                out.append(cur)
        elif cur is not None:
            cur.append(line)
    return out


def parse(lines):
    """A run's log as (rows, all, total): rows [(section, lane, wall,
    core-s, Counts)] in the order each lane ran them (the main lane's
    first, as the log prints them), all (wall, core-s) of the runner,
    total the Counts of its last line. The lanes' blocks are the
    sections of their "# time:" lines, in that order. ValueError when
    the log has no times, or its blocks' cases do not add up to its
    total."""
    lines = list(lines)
    times = runner.parse_times(lines)
    if not times:
        raise ValueError("no section times (# time:) in the log")
    order = [t for lane in (runner.MAIN, runner.DEBUG)
             for t in times if t[1] == lane]
    order += [t for t in times if t not in order]
    bl = blocks(lines)
    if len(bl) != len(order):
        raise ValueError("%d sections' blocks in the log, %d times"
                         % (len(bl), len(order)))
    rows = [(name, lane, wall, cpu, tap.parse(b, nested=True).counts)
            for (name, lane, wall, cpu), b in zip(order, bl)]
    wall = total = None
    for line in lines:
        m = ALL.match(line.rstrip("\n"))
        if m:
            wall = (int(m.group(1)), int(m.group(2)))
        m = SUMMARY.match(line.rstrip("\n"))
        if m:
            total = tap.Counts(*map(int, m.groups()))
    s = tap.Counts()
    for r in rows:
        s += r[4]
    if total is not None and s != total:
        raise ValueError("the sections' cases (%s) are not the run's (%s)"
                         % (s.summary(), total.summary()))
    return rows, wall, total or s


def record(lines, path, run):
    """Writes check-times (path) from a run's log: run says which run."""
    rows, wall, total = parse(lines)
    with open(path, "w") as f:
        f.write("# Each section's wall time, core-seconds and cases in one "
                "make check,\n"
                "# written by scripts/tests/check --record-times LOG: the "
                "runner's budget\n"
                "# warning compares each section's share of a run with "
                "these, and\n"
                "# Documentation/testing.rst's table is made of them.\n"
                "# run: %s\n" % run)
        if wall:
            f.write("# all: %d s, %d core-s\n" % wall)
        f.write("# section lane wall-s core-s passed failed skipped\n")
        for name, lane, secs, cpu, c in rows:
            f.write("%-16s %-5s %5d %6s %5d %3d %4d\n" % (
                name, lane, secs, "-" if cpu is None else cpu,
                c.passed, c.failed, c.skipped))


def read(path):
    """check-times as (run, all, rows): run its caption, all (wall,
    core-s) or None, rows [(section, lane, wall, core-s, Counts or
    None)] (a file of before the cases were counted has none)."""
    run, wall, rows = None, None, []
    with open(path) as f:
        for line in f:
            if line.startswith("# run: "):
                run = line[len("# run: "):].strip()
            elif line.startswith("# all: "):
                w = re.findall(r"\d+", line)
                wall = (int(w[0]), int(w[1]))
            elif line.strip() and not line.startswith("#"):
                w = line.split()
                c = (tap.Counts(*map(int, w[4:7])) if len(w) >= 7
                     else None)
                rows.append((w[0], w[1], int(w[2]),
                             None if w[3] == "-" else int(w[3]), c))
    return run, wall, rows


def table(run, wall, rows):
    """The rst text between the table's markers (their lines
    excluded)."""
    def n(x):
        return "--" if x is None else str(x)

    # the main lane's first, each lane's in the order it ran them
    rows = sorted(rows, key=lambda r: r[1] != runner.MAIN)
    body = [(name, lane, n(secs), n(cpu),
             n(c and c.passed), n(c and c.failed), n(c and c.skipped))
            for name, lane, secs, cpu, c in rows]
    total = None
    for r in rows:
        if r[4]:
            total = (total or tap.Counts()) + r[4]
    body.append(("the runner", "", n(wall and wall[0]),
                 n(wall and wall[1]), n(total and total.passed),
                 n(total and total.failed), n(total and total.skipped)))
    head = ("section", "lane", "wall s", "core-s", "passed", "failed",
            "skipped")
    widths = [max(len(r[i]) for r in body + [head]) for i in range(7)]
    rule = "  ".join("=" * w for w in widths)

    def fmt(r):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    return "\n".join(["", textwrap.fill("The run: %s." % (
        run or "not recorded"), 72), "",
                      rule, fmt(head), rule] + [fmt(r) for r in body] +
                     [rule, ""]) + "\n"


def replace(text, block):
    """text (testing.rst) with block between the table's markers."""
    lines = text.splitlines(True)
    try:
        b = next(i for i, x in enumerate(lines) if x.startswith(BEGIN))
        e = next(i for i, x in enumerate(lines) if x.rstrip() == END)
    except StopIteration:
        raise ValueError("no %r ... %r lines in %s" % (BEGIN, END, DOC))
    # the BEGIN comment's own lines (indented) stay
    k = b + 1
    while k < e and lines[k].startswith("   "):
        k += 1
    return "".join(lines[:k]) + block + "".join(lines[e:])


def times_table(top, mode):
    """--times-table write|check: testing.rst's table from check-times.
    Exit status (check: 1 and a diff when it differs)."""
    doc = os.path.join(top, DOC)
    with open(doc) as f:
        text = f.read()
    new = replace(text, table(*read(os.path.join(top, runner.TIMES))))
    if mode == "check":
        if new == text:
            return 0
        print("".join(difflib.unified_diff(
            text.splitlines(True), new.splitlines(True), DOC,
            DOC + " (made from %s)" % runner.TIMES)), end="")
        return 1
    if new != text:
        with open(doc, "w") as f:
            f.write(new)
    return 0

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""kselftest TAP: the one parser of the test house, and its one writer.

Writer and Counts are scripts/lib/ibpd_tap.py's, which the upstream
staging writes with too, without this package: they are named here as
the house's modules have always named them (tap.Writer, tap.Counts).

parse() reads an output as a tree of nested TAP, as the kernel's
kunit_parser.py reads KTAP: "# " before a TAP line puts it one level
deeper, and each level has its own TAP header, plan, results and "# Totals:".
The kernel's kselftest runner (run_kselftest.sh) prints each program's
output one level down, then the program's result at its own level ("ok N
selftests: COLLECTION: PROG", "# SKIP" for exit 4, "not ok ... # exit=N"
or "# TIMEOUT N seconds"): with nested=True that line is the parent of
the nested block before it, and parse() counts every leaf case once (see
parse()). What is nested before any other result is that result's
diagnostics, not cases.
"""

import re
from dataclasses import dataclass, field

import ibpd_tap

Counts = ibpd_tap.Counts
Writer = ibpd_tap.Writer

TOTALS = re.compile(r"^# Totals: (.*)$")
RESULT = re.compile(r"^(not )?ok\b")
RUNNER = re.compile(r"^(not )?ok \d+ selftests: \S+: ")
HEADER = re.compile(r"^K?TAP version \d+")
PLAN = re.compile(r"^1\.\.\d+")
# what "# " nests one level deeper (anything else after "# " is a comment)
NESTED = re.compile(r"^((not )?ok \d+|K?TAP version \d+|1\.\.\d+)")
PREFIX = "# "
# vm-run's words on a VM it stopped, and the console's last lines after
STOP = re.compile(r"^vm-run: (stopped the VM|the console's last lines|\| )")


@dataclass
class Result:
    """What parse() read: the counts, each "not ok" line (nested ones
    too when nested, without the "# " prefixes of nesting) and the notes of failing
    "# Totals:" lines that carry one (a step's own verdict: "(static
    exited 1)"), and stops: what vm-run said of a VM it stopped early
    (a hang, its silence, its time) with the console's last lines
    (STOP)."""

    counts: Counts = field(default_factory=Counts)
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    stops: list = field(default_factory=list)


def unnest(line):
    """A line without the "# " prefixes of nesting, and its depth: "# "
    makes a TAP line (a result, a header, a plan, a nested "# " line) one
    level deeper; "# Totals:" is a line of its own level, any other "# "
    line a comment."""
    depth = 0
    while line.startswith(PREFIX) and not TOTALS.match(line):
        rest = line[len(PREFIX):]
        if not (NESTED.match(rest) or rest.startswith(PREFIX)):
            break
        line, depth = rest, depth + 1
    return line, depth


def totals_of(text):
    """The Counts of a "# Totals:" line's fields, and its note if any."""
    c = Counts()
    note = None
    m = re.search(r"\((.*)\)\s*$", text)
    if m:
        note = m.group(1)
        text = text[:m.start()]
    for kv in text.split():
        k, _, v = kv.partition(":")
        if not v.isdigit():
            continue
        if k == "pass":
            c.passed += int(v)
        elif k in ("fail", "error"):
            c.failed += int(v)
        elif k == "skip":
            c.skipped += int(v)
    return c, note


def result_counts(line):
    """One result line as Counts: a pass, a failure or a skip."""
    if line.startswith("not ok"):
        return Counts(failed=1)
    if re.search(r"#\s*SKIP", line, re.I):
        return Counts(skipped=1)
    return Counts(passed=1)


@dataclass
class Test:
    """A result line of the tree (without its nesting's "# "), and when
    it is the kselftest runner's line for a program (program), that
    program's output: the Streams nested before it."""

    line: str
    program: bool = False
    streams: list = field(default_factory=list)

    def cases(self):
        """Its leaf cases: the program's when it printed any, one more
        failure if the runner says it failed, or a stream of the
        program's ran other than its plan's number of cases (as
        kunit_parser.py's "expected N tests, but got M"), and none of
        them did (it crashed, or timed out, after them); else the line
        itself."""
        c = cases(self.streams)
        if c == Counts():
            return result_counts(self.line)
        if (self.line.startswith("not ok") or self.unplanned()) and \
                not c.failed:
            c.failed += 1
        return c

    def unplanned(self):
        """The program's streams whose plan and number of results
        differ, as "planned N cases, ran M"."""
        return ["planned %d cases, ran %d" % (s.plan, len(s.results))
                for s in self.streams
                if s.plan is not None and s.plan != len(s.results)]

    @property
    def ok(self):
        """False when its line says not ok or a case under it failed."""
        return not self.cases().failed

    def failures(self):
        """Its failed lines: its cases' first, then its own."""
        f = [x for s in self.streams for t in s.results
             for x in t.failures()]
        if not f and not self.line.startswith("not ok"):
            f = ["%s: %s" % (self.line, u) for u in self.unplanned()]
        return f + [self.line] if self.line.startswith("not ok") else f


@dataclass
class Stream:
    """One TAP stream of a level: from its header (or the end of the
    last one) to its "# Totals:" line; the Tests of its result lines and
    its totals, (Counts, note) each."""

    results: list = field(default_factory=list)
    totals: list = field(default_factory=list)
    plan: int = None


def tree(items, depth, nested):
    """The Streams of a level: items are (depth, line) of that level and
    deeper. With nested, a runner's line takes what was nested since the
    level's last line as its program's output (its Streams, parsed at
    the next level); anything else nested is diagnostics."""
    streams = [Stream()]
    pending = []
    for d, line in items:
        if d > depth:
            pending.append((d, line))
            continue
        m = TOTALS.match(line)
        if HEADER.match(line):
            if streams[-1].results or streams[-1].totals:
                streams.append(Stream())
        elif PLAN.match(line):
            streams[-1].plan = int(line[3:].split()[0])
            continue
        elif RESULT.match(line):
            t = Test(line, bool(nested and RUNNER.match(line)))
            if t.program:
                t.streams = tree(pending, depth + 1, nested)
            streams[-1].results.append(t)
        elif m:
            streams[-1].totals.append(totals_of(m.group(1)))
            streams.append(Stream())
        else:
            continue	# a comment: what is nested goes on
        pending = []
    return [s for s in streams if s.results or s.totals]


def read(lines, nested=False):
    """The top level's Streams of an output's lines (tree()); without
    nested, what is nested is not read."""
    items = []
    for raw in lines:
        line, depth = unnest(raw.rstrip("\n"))
        if depth and not nested:
            continue
        items.append((depth, line))
    return tree(items, 0, nested)


def cases(streams):
    """The leaf cases of a program's Streams: every result once."""
    c = Counts()
    for s in streams:
        for t in s.results:
            c += t.cases()
    return c


def parse(lines, nested=False):
    """Count an output's cases: its tree (tree()), a Result.

    At the top level, the house's outputs count by their "# Totals:"
    lines, as each of its programs prints one for its cases (the
    harness's, the shell tests', ibpd_stage's, the verbs tests' own) and a
    step's verdict is one of its own ("(NAME exited 1)"). With nested,
    each program the kselftest runner ran counts by its cases
    (Test.cases()); the runner's own "# Totals:" (7.x prints them, for
    programs: a stream of runner lines alone, without a note) are not
    counted again. Without nested, the runner's lines are results like
    any other and what is nested is not read.
    """
    r = Result()
    lines = list(lines)
    r.stops = [x.rstrip("\n") for x in lines if STOP.match(x)]
    for s in read(lines, nested):
        programs = sum(t.program for t in s.results)
        plain = programs < len(s.results)
        for t in s.results:
            if t.program:
                r.counts += t.cases()
                r.failures += t.failures()
                r.notes += notes(t.streams)
            elif t.line.startswith("not ok"):
                r.failures.append(t.line)
        for c, note in s.totals:
            if programs and not plain and not note:
                continue	# the runner's, of its programs
            r.counts += c
            if note and c.failed:
                r.notes.append(note)
    return r


def notes(streams):
    """The notes of failing "# Totals:" lines in a program's Streams."""
    n = []
    for s in streams:
        n += [note for c, note in s.totals if note and c.failed]
        for t in s.results:
            n += notes(t.streams)
    return n

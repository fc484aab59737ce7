# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""kselftest TAP: the one writer and the one parser of the test house.

Writer prints what the kselftest harness prints (tools/testing/selftests/
kselftest_harness.h, kselftest.h): "TAP version 13", a plan, one "ok N
DESC" or "not ok N DESC" per case ("ok N # SKIP WHY" for a skipped one)
and last "# Totals: pass:N fail:N xfail:0 xpass:0 skip:N error:0".

parse() counts an output's "# Totals:" lines, as make check's summary
does: every harness (kselftest programs, the shell tests, stage.py, the
verbs tests' own cases) prints one per program. With nested=True it also
counts those of programs run by the kernel's kselftest runner
(run_kselftest.sh), which prefixes a program's output with "# " and adds
a line per program of its own but no totals.
"""

import re
import sys
from dataclasses import dataclass, field

TOTALS = re.compile(r"^# Totals: (.*)$")
RESULT = re.compile(r"^(not )?ok\b")
RUNNER = re.compile(r"^(not )?ok \d+ selftests: \S+: ")
PREFIX = "# "


@dataclass
class Counts:
    """Cases passed, failed (errors included) and skipped."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other):
        return Counts(self.passed + other.passed, self.failed + other.failed,
                      self.skipped + other.skipped)

    def totals(self, note=None):
        """The kselftest "# Totals:" line of these counts."""
        line = ("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0"
                % (self.passed, self.failed, self.skipped))
        return line + (" (%s)" % note if note else "")

    def summary(self):
        """make check's last line."""
        return "%d passed, %d failed, %d skipped" % (
            self.passed, self.failed, self.skipped)


@dataclass
class Result:
    """What parse() read: the counts, each "not ok" line (nested ones
    too when nested, without the "# " prefixes of nesting) and the notes of failing
    "# Totals:" lines that carry one (a step's own verdict: "(static
    exited 1)")."""

    counts: Counts = field(default_factory=Counts)
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def unnest(line):
    """A line without the "# " prefixes of the runner's nesting, and its
    depth. "# Totals:" is a line of its own depth, not a nested one."""
    depth = 0
    while line.startswith(PREFIX) and not TOTALS.match(line):
        rest = line[len(PREFIX):]
        if not (RESULT.match(rest) or rest.startswith(PREFIX)):
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


def parse(lines, nested=False):
    """Count an output's results (see the module's docstring).

    Unnested, the "# Totals:" lines at the top level are the counts.
    Nested, a program the kselftest runner ran ("ok N selftests: DIR:
    PROG") counts as its own "# Totals:" say, one level down, or as one
    case if it printed none; a "not ok" program whose totals show no
    failure (it crashed, or timed out) is one failure more; the runner's
    own totals (7.x prints them: programs, not cases) are not counted
    again, while other top-level totals (programs run without the
    runner, next to it) are.
    """
    r = Result()
    block, block_totals, block_failures = Counts(), 0, []
    runner_lines = other_lines = 0
    for raw in lines:
        line, depth = unnest(raw.rstrip("\n"))
        if depth and not nested:
            continue
        if depth > 1:
            continue
        m = TOTALS.match(line)
        if depth == 1:
            if line.startswith("not ok"):
                block_failures.append(line)
            elif m:
                c, note = totals_of(m.group(1))
                block += c
                block_totals += 1
                if note and c.failed:
                    block_failures.append("# failed: " + note)
            continue
        runner = nested and RUNNER.match(line)
        if runner:
            r.failures += [f for f in block_failures
                           if not f.startswith("# failed: ")]
        if line.startswith("not ok"):
            r.failures.append(line)
        if runner:
            r.notes += [f[len("# failed: "):] for f in block_failures
                        if f.startswith("# failed: ")]
            if block_totals:
                r.counts += block
                if line.startswith("not ok") and not block.failed:
                    r.counts.failed += 1
            else:
                r.counts += result_counts(line)
            runner_lines += 1
        elif RESULT.match(line):
            other_lines += 1
        elif not m:
            continue
        else:
            if not (runner_lines and not other_lines):
                c, note = totals_of(m.group(1))
                r.counts += c
                if note and c.failed:
                    r.notes.append(note)
            runner_lines = other_lines = 0
        # what was nested before a result or totals of the top level is
        # not the next runner's program's: another program's diagnostics
        block, block_totals, block_failures = Counts(), 0, []
    return r


class Writer:
    """A kselftest TAP stream: ok(), skip(), then totals(). The plan is
    printed first when known, else with the totals (counted)."""

    def __init__(self, plan=None, out=None):
        self.out = out or sys.stdout
        self.n = 0
        self.counts = Counts()
        self.plan = plan
        self.print("TAP version 13")
        if plan is not None:
            self.print("1..%d" % plan)

    def print(self, line):
        print(line, file=self.out, flush=True)

    def diag(self, text, limit=None):
        """Lines of text as "# " comments (the last LIMIT of them)."""
        lines = str(text).rstrip("\n").splitlines()
        for line in lines[-limit:] if limit else lines:
            self.print("# " + line if line else "#")

    def ok(self, good, desc, diag=None):
        """One case; diag (text) is shown when it failed. Returns good."""
        self.n += 1
        if good:
            self.counts.passed += 1
            self.print("ok %d %s" % (self.n, desc))
        else:
            self.counts.failed += 1
            self.print("not ok %d %s" % (self.n, desc))
            if diag:
                self.diag(diag, 40)
        return bool(good)

    def skip(self, desc, why=None):
        """A case that cannot run here."""
        self.n += 1
        self.counts.skipped += 1
        self.print("ok %d # SKIP %s%s" % (self.n, desc,
                                         ": " + why if why else ""))

    def totals(self, note=None):
        """The "# Totals:" line (and the plan, if it was not known at
        the start); True when nothing failed."""
        if self.plan is None:
            self.print("1..%d" % self.n)
        elif self.plan != self.n:
            self.print("# planned %d cases, ran %d" % (self.plan, self.n))
            self.counts.failed += 1
        self.print(self.counts.totals(note))
        return self.counts.failed == 0

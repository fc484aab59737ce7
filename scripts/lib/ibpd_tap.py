# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""kselftest TAP out: the project's one TAP writer, and the counts its
"# Totals:" line gives. make check (scripts/tests/ibpd_check, whose tap.py
parses what the writer and the test programs print) and the upstream
staging's check (scripts/upstream/ibpd_stage) both write with it; neither
package imports the other.

Writer prints what the kselftest harness prints (tools/testing/selftests/
kselftest_harness.h, kselftest.h): "TAP version 13", a plan, one "ok N
DESC" or "not ok N DESC" per case ("ok N # SKIP WHY" for a skipped one)
and last "# Totals: pass:N fail:N xfail:0 xpass:0 skip:N error:0".
"""

import sys
from dataclasses import dataclass


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

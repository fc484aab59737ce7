# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""KUnit's results from the debug boot: the suites' KTAP (run_debug.sh
tags it, sections.debug() keeps it) parsed by the kernel's own kunit.py,
of the debug kernel's source, whose report this prints; the results are
read from the JSON that kunit.py writes beside the KTAP (kunit.py parse
--json=FILE: KernelCI's test groups, the same in every kernel of the
matrix), with the KTAP's own top-level plan, and their counts printed as
a kselftest "# Totals:" line.

    python3 -m ibpd_check.kunit KSRC KTAP

Exit status 0 when every test passed.
"""

import json
import os
import re
import subprocess
import sys

from .tap import Counts

# the KTAP's top level: its plan (run_kunit.sh's, of the suites) and the
# suites' result lines; the suites' own lines are indented
PLAN = re.compile(r"^1\.\.(\d+)")
RESULT = re.compile(r"^(not )?ok \d+ ")


def counts(result):
    """The Counts of kunit.py's JSON result, a test group of test_cases
    and nested sub_groups (a parameterised test is a group of its
    cases): each case once, PASS a pass, SKIP a skip, any other status a
    failure (FAIL; ERROR: a crashed or missing test; an empty suite is a
    FAIL case). None when it names no case."""
    c = Counts()
    groups = [result]
    while groups:
        g = groups.pop()
        for case in g.get("test_cases", []):
            status = case.get("status")
            if status == "PASS":
                c.passed += 1
            elif status == "SKIP":
                c.skipped += 1
            else:
                c.failed += 1
        groups += g.get("sub_groups", [])
    return None if c == Counts() else c


def unplanned(lines):
    """"planned N suites, ran M" when the KTAP's top-level plan and its
    result lines differ, else None: a suite that ended without its
    result line, which kunit.py's JSON does not show (nor, before 7.x,
    its exit status: a parse error to it)."""
    plan, ran = None, 0
    for line in lines:
        m = PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
        elif RESULT.match(line):
            ran += 1
    if plan is None or plan == ran:
        return None
    return "planned %d suites, ran %d" % (plan, ran)


def read_json(path):
    """kunit.py's JSON result in path, None when it wrote none (or not
    JSON)."""
    try:
        with open(path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) else None


def main(argv):
    ksrc, ktap = argv
    kunit = os.path.join(ksrc, "tools", "testing", "kunit", "kunit.py")
    out = os.path.splitext(ktap)[0] + ".json"
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([sys.executable, kunit, "parse", "--json=" + out,
                        ktap],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    sys.stdout.write(p.stdout)
    result = read_json(out)
    c = counts(result) if result is not None else None
    if c is None:
        print(Counts(failed=1).totals("no KUnit results"))
        return 1
    # as tap.py counts a program that ran other than its plan: one
    # failure more, unless a case failed already
    with open(ktap, errors="replace") as f:
        note = unplanned(f)
    if note and not c.failed:
        c.failed += 1
    print(c.totals(note))
    return 0 if p.returncode == 0 and not c.failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

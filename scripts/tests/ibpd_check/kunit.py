# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""KUnit's results from the debug boot: the suites' KTAP (run_debug.sh
tags it, sections.debug() keeps it) parsed by the kernel's own kunit.py,
of the debug kernel's source, whose report this prints, then its counts
as a kselftest "# Totals:" line.

    python3 -m ibpd_check.kunit KSRC KTAP

Exit status 0 when every test passed.
"""

import os
import re
import subprocess
import sys

from .tap import Counts

# kunit.py's summary, "Testing complete. Ran 22 tests: passed: 21,
# failed: 1", names only the counts that are not 0 (passed always), in
# colour on a terminal; a crashed test or a parse error is a failure here.
SUMMARY = "Testing complete."
COUNT = re.compile(r"(passed|failed|skipped|crashed|errors): (\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def counts(report):
    """The counts of the last summary line of kunit.py's report, None
    when it has none."""
    line = None
    for text in ANSI.sub("", report).splitlines():
        if SUMMARY in text:
            line = text
    if line is None:
        return None
    n = {k: int(v) for k, v in COUNT.findall(line)}
    failed = sum(n.get(k, 0) for k in ("failed", "crashed", "errors"))
    return Counts(n.get("passed", 0), failed, n.get("skipped", 0))


def main(argv):
    ksrc, ktap = argv
    kunit = os.path.join(ksrc, "tools", "testing", "kunit", "kunit.py")
    p = subprocess.run([sys.executable, kunit, "parse", ktap],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    sys.stdout.write(p.stdout)
    c = counts(p.stdout)
    if c is None:
        print(Counts(failed=1).totals("no KUnit results"))
        return 1
    print(c.totals())
    return 0 if p.returncode == 0 and not c.failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""python3 -m ibpd_check [--quick] [--no-debug] [--list] [SECTION...]

make check's sections (all, or those named), as kselftest TAP, then a
summary: the failed cases by section, the totals and last "N passed,
N failed, N skipped". KERNELS (default: the matrix's kernels) names the
kernels whose sections run; IBPD_DEBUG=0 is --no-debug, IBPD_QUICK=1
--quick (make check-quick: the static checks and the kernels' sections
with the system libibverbs). The on-demand sections run only when named:
vm-test (make vm-test: TEST, on KERNEL or the matrix's vm-test-kernel),
verbs (make verbs-check: on KERNEL or the matrix's default-kernel),
bench (make bench) and soak (make soak: SOAK_MINUTES); make
upstream-proof names upstream-proof. IBPD_CHECK_OUT: where the TAP
files go (default: out/check); IBPD_CHECK_BUDGET: the run's budget in
seconds (runner.py). --record-times LOG [--run TEXT]: scripts/tests/
check-times from a run's log (the sections' times that the budget's
warning compares with, and their cases; TEXT says which run it was) and
Documentation/testing.rst's table from it; --times-table [write|check]:
that table from check-times, or whether it is what check-times makes
(times.py). Exit status 0 only if nothing failed.
"""

import argparse
import os
import sys
import time

from . import deb, runner, sections, times


def main(argv):
    top = os.path.realpath(os.path.join(os.path.dirname(__file__),
                                        "..", "..", ".."))
    ap = argparse.ArgumentParser(prog="check", description=__doc__.split(
        "\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    default=os.environ.get("IBPD_QUICK") == "1")
    ap.add_argument("--no-debug", action="store_true",
                    default=os.environ.get("IBPD_DEBUG", "1") != "1")
    ap.add_argument("--list", action="store_true",
                    help="the sections, their lanes, VMs, guest commands "
                    "and builds")
    ap.add_argument("--record-times", metavar="LOG",
                    help="write %s and the table of %s from a run's log"
                    % (runner.TIMES, times.DOC))
    ap.add_argument("--run", metavar="TEXT",
                    help="with --record-times: which run the log is")
    ap.add_argument("--times-table", nargs="?", const="write",
                    choices=("write", "check"),
                    help="%s's table from %s, or check it" % (
                        times.DOC, runner.TIMES))
    ap.add_argument("section", nargs="*")
    a = ap.parse_args(argv)
    if a.record_times:
        run = a.run or "a make check of %s" % time.strftime(
            "%Y-%m-%d", time.localtime(os.path.getmtime(a.record_times)))
        with open(a.record_times, errors="replace") as f:
            try:
                times.record(f, os.path.join(top, runner.TIMES), run)
            except ValueError as e:
                ap.error("%s: %s" % (a.record_times, e))
    if a.record_times or a.times_table:
        return times.times_table(top, a.times_table or "write")
    kernels = (os.environ.get("KERNELS") or
               sections.matrix(top, "kernels")).split()
    dist_kernels = [(d, k) for d in sections.matrix(top, "dists").split()
                    for k in deb.dist_kernels(top, d)]
    reg = sections.registry(kernels, dist_kernels)
    if a.list:
        for s in reg:
            print("%-16s %-6s %-9s %s" % (
                s.name, s.lane, "on demand" if s.on_demand else
                "quick" if s.quick else "", s.title))
            if s.vm:
                print("%33s VM: %s; guest: %s" % ("", s.vm.describe(),
                                                  " ".join(s.guest)))
            if s.builds:
                print("%33s builds: %s" % ("", "; ".join(
                    n.what(top) for n in s.builds)))
        return 0
    try:
        reg = sections.select(reg, a.section)
    except ValueError as e:
        ap.error(str(e))
    r = runner.Runner(top, reg, kernels, quick=a.quick,
                      debug=not a.no_debug,
                      out=os.environ.get("IBPD_CHECK_OUT"))
    return r.run()


sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""python3 -m ibpd_check [--quick] [--no-debug] [--list] [SECTION...]

make check's sections (all, or those named), as kselftest TAP, then a
summary: the failed cases by section, the totals and last "N passed,
N failed, N skipped". KERNELS (default: the matrix's kernels) names the
kernels whose sections run; IBPD_DEBUG=0 is --no-debug, IBPD_QUICK=1
--quick (make check-quick: the static checks and the kernels' sections
with the system libibverbs). Exit status 0 only if nothing failed.
"""

import argparse
import os
import sys

from . import runner, sections


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
                    help="the sections, their lanes and guest halves")
    ap.add_argument("section", nargs="*")
    a = ap.parse_args(argv)
    kernels = (os.environ.get("KERNELS") or
               sections.matrix(top, "kernels")).split()
    reg = sections.registry(kernels)
    if a.list:
        for s in reg:
            print("%-16s %-6s %-5s %s%s" % (
                s.name, s.lane, "quick" if s.quick else "",
                s.title, " [guest: %s]" % s.guest if s.guest else ""))
        return 0
    if a.section:
        names = {s.name for s in reg}
        bad = [n for n in a.section if n not in names]
        if bad:
            ap.error("no section %s (--list)" % ", ".join(bad))
        reg = [s for s in reg if s.name in a.section]
        for s in reg:
            s.requires = tuple(r for r in s.requires if r in a.section)
    r = runner.Runner(top, reg, kernels, quick=a.quick,
                      debug=not a.no_debug)
    return r.run()


sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The three upstream series, and their check: the entry point of the
ibpd_stage package (one module per job; its __init__ lists them), run as
scripts/upstream/stage ARGS (python3 -m ibpd_stage, with this package and
scripts/lib on its path).

stage stage [--check] [SERIES] (what scripts/upstream/stage-upstream
runs): the series in out/upstream/, signed off with the caller's git
identity (ibpd_stage/staging.py); with --check, checked as kselftest TAP
(ibpd_stage/check.py, ibpd_stage/rdma_core_check.py).

stage rdma-core-build OUT [--without TEXT]: rdma-core with the series in
OUT applied (less the patches whose subject contains TEXT) and built,
cached; prints its directory (ibpd_stage/rdma_core.py). upstream-proof
uses it.

stage rdma-core-tree OUT: the same, and prints its build tree, or fails
when it does not build (user/provider/provider.mk).

stage open rdma-core|kernel [DIR]: a series as git commits on its base,
in a repository made anew (DIR, by default under $IBPD_CACHE/series/,
printed); the kernel's with a branch of each bridge series' backports;
stage write SERIES|DIR [TOP]: the commits back into the patch files, the
bridge's backports made again (ibpd_stage/series.py).
"""

import os
import sys

from . import rdma_core, series
from .check import Check
from .common import StageError, log
from .staging import stage


def main(argv):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if cmd == "stage":
            check = args[:1] == ["--check"]
            if check:
                args = args[1:]
            if len(args) <= 1:
                staged = stage(*args)
                return 0 if not check or Check(staged).run() else 1
        if cmd == "rdma-core-build" and (len(args) == 1 or (
                len(args) == 3 and args[1] == "--without")):
            print(rdma_core.build(os.path.abspath(args[0]),
                                  args[2] if len(args) == 3 else None))
            return 0
        if cmd == "open" and len(args) in (1, 2):
            series.open_series(args[0], *map(os.path.abspath, args[1:]))
            return 0
        if cmd == "write" and len(args) in (1, 2):
            series.write_series(args[0], *map(os.path.abspath, args[1:]))
            return 0
        if cmd == "rdma-core-tree" and len(args) == 1:
            print(rdma_core.tree(os.path.abspath(args[0])))
            return 0
    except StageError as e:
        log("stage" if cmd != "stage" else "stage-upstream", str(e))
        return 1
    print(__doc__.split("\n\n", 1)[1], file=sys.stderr, end="")
    return 2


sys.exit(main(sys.argv[1:]))

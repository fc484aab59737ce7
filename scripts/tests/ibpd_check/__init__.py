# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make check as one program, in kunit.py's shape: a registry of sections
(sections.py), a runner with two lanes (runner.py), one kselftest TAP
parser (tap.py) and writer (scripts/lib/ibpd_tap.py, which ibpd_stage
writes with too) and its own tests (test_check.py, on logs recorded in
scripts/tests/logs/)."""

import os
import sys

# scripts/lib: what the house shares with the upstream staging (the TAP
# writer), found whichever way this package is run (python3 -m
# ibpd_check[.MODULE], with scripts/tests on PYTHONPATH)
LIB = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    "lib"))
if LIB not in sys.path:
    sys.path.append(LIB)

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""rdma-core's own python tests (tests/run_tests.py), one line per test.

pyverbs_run.py TESTS_DIR --dev DEV [run_tests.py options] [TEST...]

Runs the tests of an rdma-core source tree as its run_tests.py does (same
argument parser, same test loading) and prints, for each test, a line
"RESULT <test id> <pass|skip|fail> <reason>" that pyverbs_diff.py compares
with the checked-in expectations. The reason of a skip is the test's own.
Run with the pyverbs of that tree on PYTHONPATH and Debian's python3.
"""

import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


class LineResult(unittest.TextTestResult):
    """Records every test's outcome, then prints one line each."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcomes.append((test.id(), "pass", ""))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcomes.append((test.id(), "skip", reason))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes.append((test.id(), "fail", err[0].__name__))

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes.append((test.id(), "fail", err[0].__name__))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.outcomes.append((test.id(), "fail", "expected failure"))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.outcomes.append((test.id(), "pass", "unexpected success"))

    def stopTestRun(self):
        super().stopTestRun()
        for tid, status, reason in self.outcomes:
            reason = " ".join(reason.split())
            print(f"RESULT {tid} {status} {reason}".rstrip(), flush=True)


def main():
    tests_dir = sys.argv.pop(1)
    sys.path.insert(0, tests_dir)
    from args_parser import parser  # pylint: disable=import-outside-toplevel

    tests = SourceFileLoader(
        "tests", os.path.join(tests_dir, "__init__.py")).load_module()
    parser.parse_args()
    runner = unittest.TextTestRunner(resultclass=LineResult, stream=sys.stderr)
    unittest.main(module=tests, testRunner=runner, exit=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

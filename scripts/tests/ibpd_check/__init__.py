# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make check as one program, in kunit.py's shape: a registry of sections
(sections.py), a runner with two lanes (runner.py), one kselftest TAP
writer and parser (tap.py, which ibpd_stage uses too) and its own tests
(test_check.py, on logs recorded in scripts/tests/logs/)."""

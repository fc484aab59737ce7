#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""check_build.py CHECK-BUILD [ARGS...], run in rdma-core's build
directory: rdma-core's own build-time tests (buildlib/check-build, given
as CHECK-BUILD, with its own arguments ARGS: --src, --cc, ...), less the
two that do not apply here (SKIPPED). The rest: the private ABI of every
provider (test_verbs_private), the libraries' file names against their
symbol versions and the PACKAGE_VERSION (test_lib_names), the published
and the installed headers compiled alone in C and C++.

check-build has no way to select tests: its module-level tail parses its
arguments and runs every test_* function. So it is loaded as a module
(importlib, its own source as it is) with arguments that its parser
refuses: the import stops there, at the SystemExit of argparse, with every
function defined and no test run. Its parser then reads ARGS, and the
tests run here, one by one. Standard library only (check-build itself
imports pkg_resources).
"""

import contextlib
import importlib.machinery
import importlib.util
import inspect
import io
import os
import sys

# what stays out, and why
SKIPPED = {
    "test_static_libs": "wants an -DENABLE_STATIC=1 build: fails on the "
                        "pristine base here too",
    "test_verbs_uapi": "the ABI test: RdmaCoreCheck.abi() runs it in the "
                       "form a stable branch would (the release tarball "
                       "has no ABI/)",
}
# an argument check-build's parser refuses: its import stops there
REFUSED = "--ibpd-stop-before-the-tests"


def load(script):
    """check-build as a module: its functions, its parser, no test run."""
    loader = importlib.machinery.SourceFileLoader("check_build", script)
    spec = importlib.util.spec_from_loader("check_build", loader)
    module = importlib.util.module_from_spec(spec)
    argv, sys.argv = sys.argv, [script, REFUSED]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            loader.exec_module(module)
    except SystemExit:
        pass
    finally:
        sys.argv = argv
    if not hasattr(module, "parser") or hasattr(module, "args"):
        raise RuntimeError(f"{script}: not a check-build that parses its "
                           "arguments before it runs its tests")
    return module


def tests(module):
    """The module's test_* functions, in the order it defines them."""
    return [(k, v) for k, v in vars(module).items()
            if k.startswith("test_") and inspect.isfunction(v) and
            v.__module__ == module.__name__]


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    script = os.path.abspath(argv[0])
    m = load(script)
    # what check-build's tail does with its arguments
    args = m.parser.parse_args(argv[1:])
    if args.SRC is None:
        args.SRC = m.get_src_dir()
    args.SRC = os.path.abspath(args.SRC)
    args.PACKAGE_VERSION = m.get_package_version(args)
    # a global of the module, as the tail makes it: helpers read it
    m.args = args
    for name, test in tests(m):
        if name in SKIPPED:
            print(f"# check-build: {name} skipped: {SKIPPED[name]}",
                  flush=True)
            continue
        print("# check-build:", name, flush=True)
        test(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Compares a run of rdma-core's tests with the checked-in expectations.

pyverbs_diff.py EXPECT RESULTS VERSION DEVICE

RESULTS holds the "RESULT <test id> <status> <reason>" lines of
pyverbs_run.py. Prints one kselftest TAP case for the run and a
"# Totals:" line: ok when every test of VERSION on DEVICE in EXPECT ended
as listed and no test is new; each difference is printed as a comment.
Exit status 0 when the run matches.
"""

import sys


def load_expect(path, version, device):
    want = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) == 4 and line[0] == version and line[1] == device:
                want[line[2]] = line[3]
    return want


def load_results(path):
    got = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            w = line.split(None, 3)
            if len(w) >= 3 and w[0] == "RESULT":
                got[w[1]] = w[2]
    return got


def main():
    expect, results, version, device = sys.argv[1:5]
    want = load_expect(expect, version, device)
    got = load_results(results)
    diffs = [f"{t}: {want.get(t, 'not listed')} expected, "
             f"{got.get(t, 'did not run')} now"
             for t in sorted(set(want) | set(got))
             if want.get(t) != got.get(t)]
    counts = {s: sum(1 for v in got.values() if v == s)
              for s in ("pass", "skip", "fail")}
    what = (f"rdma-core {version} run_tests.py on {device}: "
            f"{counts['pass']} pass, {counts['skip']} skip, "
            f"{counts['fail']} fail")
    print("TAP version 13")
    print("1..1")
    ok = bool(want) and not diffs
    print(f"{'ok' if ok else 'not ok'} 1 {what}, "
          f"{'as expected' if ok else f'{len(diffs)} differ from the list'}")
    for d in diffs:
        print(f"# {d}")
    print(f"# Totals: pass:{int(ok)} fail:{int(not ok)} xfail:0 xpass:0 "
          "skip:0 error:0")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

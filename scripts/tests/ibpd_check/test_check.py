# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""The runner's own tests, on logs recorded in scripts/tests/logs/ (as
kunit_tool_test.py tests kunit.py on its test_data): the TAP parser on a
harness program's output, the kernel's kselftest runner's (6.1's and
7.3's, run over programs that pass, fail, crash, skip and time out, and
over ibpd's kselftests), output nested one level deeper than the
runner, and the writer."""

import ast
import contextlib
import glob
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

from . import (bench, bridge, builds, cites, deb, kunit, proof, runner,
               sections, tap, times, vm)

LOGS = os.path.join(os.path.dirname(__file__), "..", "logs")
TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))


def log(name):
    with open(os.path.join(LOGS, name)) as f:
        return f.read().splitlines(True)


class Parse(unittest.TestCase):
    def test_harness(self):
        # the tail of ibpd_test, then the stress and fuzz programs
        r = tap.parse(log("ksft-harness.log"))
        self.assertEqual(r.counts, tap.Counts(60, 0, 0))
        self.assertEqual(r.failures, [])

    def test_runner(self):
        # the runner's line is the parent of the program's cases: pass 2
        # + skip 1; pass 1 + fail 1; a crash after a case: that case and
        # one failure; a crash with no case: one failure; exit 4: one
        # skip; a timeout with no case: one failure. 7.3's runner adds
        # totals of its own (programs): not counted again.
        for k in ("6.1", "7.3"):
            r = tap.parse(log("ksft-runner-%s.log" % k), nested=True)
            self.assertEqual(r.counts, tap.Counts(4, 4, 2), k)
            self.assertEqual(r.failures, [
                "not ok 2 b.two",
                "not ok 2 selftests: ibpd: t_fail.sh # exit=1",
                "not ok 3 selftests: ibpd: t_crash.sh # exit=139",
                "not ok 5 selftests: ibpd: t_abort.sh # exit=139",
                "not ok 6 selftests: ibpd: t_timeout.sh # TIMEOUT 60 "
                "seconds"], k)

    def test_recorded(self):
        # ibpd's kselftests as 6.1's and 7.3's runners ran them in a
        # stock kernel's boot (run_vm.sh --no-unload, then --unload; the
        # harness's RUN and OK comments left out): every case once, as
        # many as the programs' own "# Totals:" say (none crashed)
        for k, want in (("6.1", tap.Counts(134, 0, 4)),
                        ("7.3", tap.Counts(137, 0, 1))):
            lines = log("ksft-ibpd-%s.log" % k)
            r = tap.parse(lines, nested=True)
            self.assertEqual(r.counts, want, k)
            self.assertEqual(r.failures, [], k)
            said = tap.Counts()
            for s in tap.read(lines, nested=True):
                for t in s.results:
                    own = [c for x in t.streams for c, _ in x.totals]
                    said = sum(own, said) if own else \
                        said + tap.result_counts(t.line)
            self.assertEqual(r.counts, said, k)

    def test_tree(self):
        # one stream at the top, a program's stream under each line
        s = tap.read(log("ksft-runner-7.3.log"), nested=True)
        self.assertEqual(len(s), 1)
        self.assertEqual(s[0].plan, 6)
        self.assertEqual([len(t.streams) for t in s[0].results],
                         [1, 1, 1, 0, 0, 0])
        self.assertEqual([t.cases() for t in s[0].results], [
            tap.Counts(2, 0, 1), tap.Counts(1, 1, 0), tap.Counts(1, 1, 0),
            tap.Counts(skipped=1), tap.Counts(failed=1),
            tap.Counts(failed=1)])
        self.assertEqual([t.ok for t in s[0].results],
                         [True, False, False, True, False, False])
        self.assertEqual(s[0].results[0].streams[0].plan, 3)

    def test_nested_not_ok_fails_the_parent(self):
        # a runner's "ok" over a failed case (a program that exits 0
        # after one): the parent fails, the case counts once
        r = tap.read(["TAP version 13", "1..1", "# selftests: ibpd: t",
                      "# 1..2", "# ok 1 a", "# not ok 2 b",
                      "ok 1 selftests: ibpd: t"], nested=True)
        t = r[0].results[0]
        self.assertFalse(t.ok)
        self.assertEqual(t.cases(), tap.Counts(1, 1, 0))
        self.assertEqual(t.failures(), ["not ok 2 b"])

    def test_nested_plan_not_kept(self):
        # a program that ran one case more than it planned, and exited
        # 0: one failure more, named; as many as planned: none
        lines = ["TAP version 13", "1..1", "# selftests: ibpd: t",
                 "# 1..2", "# ok 1 a", "# ok 2 b", "# ok 3 c",
                 "ok 1 selftests: ibpd: t"]
        t = tap.read(lines, nested=True)[0].results[0]
        self.assertFalse(t.ok)
        self.assertEqual(t.cases(), tap.Counts(3, 1, 0))
        self.assertEqual(t.failures(), ["ok 1 selftests: ibpd: t: "
                                        "planned 2 cases, ran 3"])
        r = tap.parse(lines, nested=True)
        self.assertEqual(r.counts, tap.Counts(3, 1, 0))
        lines[3] = "# 1..3"
        t = tap.read(lines, nested=True)[0].results[0]
        self.assertTrue(t.ok)
        self.assertEqual(t.failures(), [])

    def test_depth(self):
        # "# " nests a TAP line; "# Totals:" and other comments stay
        self.assertEqual(tap.unnest("# # ok 1 x"), ("ok 1 x", 2))
        self.assertEqual(tap.unnest("# # Totals: pass:1"),
                         ("# Totals: pass:1", 1))
        self.assertEqual(tap.unnest("# Totals: pass:1"),
                         ("# Totals: pass:1", 0))
        self.assertEqual(tap.unnest("# TAP version 13"), ("TAP version 13", 1))
        self.assertEqual(tap.unnest("# ok, done"), ("# ok, done", 0))
        self.assertEqual(tap.unnest("# #  RUN  a.b ..."),
                         ("#  RUN  a.b ...", 1))

    def test_runner_unnested(self):
        # read as plain TAP, 7.3's runner's own totals are all there is
        r = tap.parse(log("ksft-runner-7.3.log"))
        self.assertEqual(r.counts, tap.Counts(1, 4, 1))
        self.assertEqual(len(r.failures), 4)

    def test_runner_then_programs(self):
        # what a kernel's boot prints: the runner's kselftests, then
        # programs run without it (stress, fuzz, the verbs tests)
        for k in ("6.1", "7.3"):
            lines = log("ksft-runner-%s.log" % k) + log("ksft-harness.log")
            r = tap.parse(lines, nested=True)
            self.assertEqual(r.counts, tap.Counts(64, 4, 2), k)

    def test_runner_then_verdict(self):
        # a step's verdict after a runner without totals of its own (6.1)
        # is the step's, not the runner's: counted
        lines = log("ksft-runner-6.1.log") + [
            tap.Counts(failed=1).totals("kernel-6.1 exited 1") + "\n"]
        r = tap.parse(lines, nested=True)
        self.assertEqual(r.counts, tap.Counts(4, 5, 2))
        self.assertEqual(r.notes, ["kernel-6.1 exited 1"])

    def test_nested_deeper(self):
        # run_proof.sh prints the rdma kselftests' runner one level down:
        # their results are the proof's to judge, not cases of its own
        r = tap.parse(log("proof-nested.log"))
        self.assertEqual(r.counts, tap.Counts())
        self.assertEqual(r.failures, [])
        r = tap.parse(log("proof-nested.log"), nested=True)
        self.assertEqual(r.counts, tap.Counts())

    def test_nested_then_runner(self):
        # a proof's nested runner output, its own verdict, then a runner:
        # the proof's nested totals and failures are not the runner's
        lines = log("proof-nested.log") + [
            "ok 1 stock: seed_test\n", tap.Counts(1).totals() + "\n"]
        lines += log("ksft-runner-7.3.log")
        r = tap.parse(lines, nested=True)
        self.assertEqual(r.counts, tap.Counts(5, 4, 2))
        self.assertEqual(len(r.failures), 5)

    def test_notes(self):
        r = tap.parse(["TAP version 13\n", "ok 1 x\n",
                       "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 "
                       "error:0\n",
                       "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 "
                       "error:0 (static exited 2)\n"])
        self.assertEqual(r.counts, tap.Counts(1, 1, 0))
        self.assertEqual(r.notes, ["static exited 2"])

    def test_error_is_a_failure(self):
        r = tap.parse(["# Totals: pass:3 fail:1 xfail:0 xpass:0 skip:2 "
                       "error:1\n"])
        self.assertEqual(r.counts, tap.Counts(3, 2, 2))


class Writer(unittest.TestCase):
    def test_roundtrip(self):
        out = io.StringIO()
        w = tap.Writer(out=out)
        w.ok(True, "one")
        w.ok(False, "two", diag="why\nit failed")
        w.skip("three", "no rxe")
        self.assertFalse(w.totals())
        text = out.getvalue()
        self.assertEqual(text.splitlines(), [
            "TAP version 13", "ok 1 one", "not ok 2 two", "# why",
            "# it failed", "ok 3 # SKIP three: no rxe", "1..3",
            "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0"])
        r = tap.parse(io.StringIO(text))
        self.assertEqual(r.counts, tap.Counts(1, 1, 1))
        self.assertEqual(r.failures, ["not ok 2 two"])

    def test_plan(self):
        out = io.StringIO()
        w = tap.Writer(plan=2, out=out)
        w.ok(True, "one")
        self.assertFalse(w.totals())
        self.assertIn("# planned 2 cases, ran 1", out.getvalue())
        self.assertTrue(out.getvalue().startswith("TAP version 13\n1..2\n"))

    def test_staging_apart(self):
        """One writer, scripts/lib's, which the staging writes with too
        without importing this package: no module of ibpd_stage names
        ibpd_check, and its writer works with scripts/upstream and
        scripts/lib alone on the path."""
        import ibpd_tap
        self.assertIs(tap.Writer, ibpd_tap.Writer)
        self.assertIs(tap.Counts, ibpd_tap.Counts)
        upstream = os.path.join(TOP, "scripts", "upstream")
        for path in glob.glob(os.path.join(upstream, "ibpd_stage", "*.py")):
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for n in ast.walk(tree):
                if isinstance(n, ast.Import):
                    names = [a.name for a in n.names]
                elif isinstance(n, ast.ImportFrom):
                    names = [n.module or ""]
                else:
                    continue
                self.assertNotIn("ibpd_check",
                                 [x.split(".")[0] for x in names],
                                 "%s:%d" % (path, n.lineno))
        code = ("import importlib, pkgutil, sys\n"
                "import ibpd_stage\n"
                "for m in pkgutil.iter_modules(ibpd_stage.__path__):\n"
                "    if m.name != '__main__':\n"
                "        importlib.import_module('ibpd_stage.' + m.name)\n"
                "from ibpd_stage.common import tap_writer\n"
                "w = tap_writer()\n"
                "w.ok(True, 'one')\n"
                "w.totals()\n"
                "print(type(w).__module__)\n"
                "print(sorted(m for m in sys.modules if 'ibpd_check' in m))\n")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join(
                       [upstream, os.path.join(TOP, "scripts", "lib")]))
        p = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual((p.returncode, p.stdout.splitlines()), (0, [
            "TAP version 13", "ok 1 one", "1..1",
            "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0",
            "ibpd_tap", "[]"]), p.stdout)


class Runner(unittest.TestCase):
    """The lanes, the queue, a step's exit status and the summary, on
    sections that run sh."""

    def sh(self, name, script, lane, **kw):
        return sections.Section(name, name, lane, lambda ctx: ctx.step(
            name, ["sh", "-c", script]), **kw)

    def run_sections(self, secs, **kw):
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            r = runner.Runner(d, secs, [], out=os.path.join(d, "check"),
                              stream=out, **kw)
            return r.run(), out.getvalue(), r

    def test_summary(self):
        ok = "echo 'ok 1 a'; echo '%s'" % tap.Counts(1).totals()
        rc, text, r = self.run_sections([
            self.sh("one", ok, runner.MAIN),
            self.sh("two", "echo 'not ok 1 b'; echo '%s'; exit 1" %
                    tap.Counts(failed=1).totals(), runner.DEBUG,
                    debug=True),
            self.sh("three", "exit 3", runner.ANY),
            self.sh("four", ok, runner.ANY),
            self.sh("five", ok, runner.DEBUG, debug=True)])
        self.assertEqual(rc, 1)
        lines = text.splitlines()
        self.assertEqual(lines[-1], "3 passed, 2 failed, 0 skipped")
        self.assertIn("# failed in two: not ok 1 b", lines)
        self.assertIn("# failed: three exited 3", lines)
        # each lane took one of the shared sections, or one took both
        self.assertEqual(r.queue, [])
        self.assertEqual(sorted(r.done), ["five", "four", "one", "three",
                                          "two"])

    def test_stopped_vm(self):
        """A VM that vm-run stopped early: its words and the console's
        last lines in the summary, after the step's verdict."""
        rc, text, r = self.run_sections([self.sh("hung", "\n".join([
            "echo 'TAP version 13'",
            "echo 'vm-run: stopped the VM, the kernel reported a hang: "
            "unregister_netdevice: waiting for d0 to become free'",
            "echo \"vm-run: the console's last lines:\"",
            "echo 'vm-run: | [ 20.1] leaked reference.'",
            "echo 'vm-run: progress, not a stop'", "exit 124"]),
            runner.MAIN)])
        self.assertEqual(rc, 1)
        lines = text.splitlines()
        i = lines.index("# failed: hung exited 124")
        self.assertEqual(lines[i - 3:i], [
            "# failed in hung: vm-run: stopped the VM, the kernel reported "
            "a hang: unregister_netdevice: waiting for d0 to become free",
            "# failed in hung: vm-run: the console's last lines:",
            "# failed in hung: vm-run: | [ 20.1] leaked reference."])

    def test_times(self):
        """Each section's wall time and core-seconds, counted from what it
        ran through step() and through subprocess.run() alike, in either
        lane; the lanes' and the run's."""
        burn = ("/usr/bin/python3 -c 'import time\n"
                "t = time.process_time()\n"
                "while time.process_time() - t < 0.4: pass'")

        def own(ctx):
            subprocess.run(["sh", "-c", burn], check=True)
            ctx.record("own", tap.Counts(1).totals())
        rc, text, r = self.run_sections([
            self.sh("stepped", burn, runner.MAIN),
            sections.Section("own", "own", runner.DEBUG, own, debug=True),
            self.sh("idle", "sleep 0.3", runner.MAIN)])
        self.assertEqual(rc, 0, text)
        self.assertIs(subprocess.Popen, self.popen)
        cpu = {n: c for n, _, _, c in r.times}
        self.assertGreaterEqual(cpu["stepped"], 0.35)
        self.assertGreaterEqual(cpu["own"], 0.35)
        self.assertLess(cpu["idle"], 0.2)
        rows = runner.parse_times(io.StringIO(text))
        self.assertEqual(sorted((n, lane) for n, lane, _, _ in rows), [
            ("idle", "main"), ("own", "debug"), ("stepped", "main")])
        # (its seconds: whatever a loaded machine makes of 0.4 CPU-s)
        self.assertRegex(text, r"# time: debug lane: \d+ s of sections")
        self.assertRegex(text, r"# time: all \d+ s, \d+ core-s")
        self.assertNotIn("# warning", text)

    def setUp(self):
        self.popen = subprocess.Popen

    def test_budget(self):
        """Over its budget, a run names the sections whose share of it
        grew against check-times, and the new ones."""
        with mock.patch.dict(os.environ, {"IBPD_CHECK_BUDGET": "0"}), \
                mock.patch.object(runner, "read_times", lambda p: {
                    "slow": 0.01, "fast": 100.0}), \
                mock.patch.object(runner, "GROWN_SECS", 0):
            rc, text, r = self.run_sections([
                self.sh("slow", "sleep 0.5", runner.MAIN),
                self.sh("fast", "true", runner.MAIN),
                self.sh("fresh", "true", runner.MAIN)])
        self.assertEqual(rc, 0)
        warn = [x for x in text.splitlines() if x.startswith("# warning")]
        self.assertRegex(warn[0], r"over its budget of 0 s")
        self.assertRegex(warn[1], r"^# warning: slow grew: 0 s, [0-9.]+x "
                         r"its share of the run in scripts/tests/check-times")
        self.assertEqual(warn[2:], ["# warning: fresh grew: 0 s (new)"])

    def test_grown_and_record(self):
        self.assertEqual(runner.grown({"a": 10, "b": 10},
                                      {"a": 20, "b": 20}), [])
        # the whole run twice as slow: nothing grew; b's share did
        self.assertEqual([n for n, *_ in runner.grown(
            {"a": 200, "b": 600}, {"a": 100, "b": 100})], ["b"])
        # ... but by seconds: noise
        self.assertEqual(runner.grown({"a": 2, "b": 6}, {"a": 1, "b": 1}),
                         [])
        log = io.StringIO(
            "# time: static           main  lane   106 s\n"
            "# time: debug            debug lane  1811 s   3000 core-s\n"
            "# time: main lane: 106 s of sections\n"
            "# time: all 3593 s, 5000 core-s\n")
        self.assertEqual(runner.parse_times(log), [
            ("static", "main", 106, None), ("debug", "debug", 1811, 3000)])

    def test_quick_and_no_debug(self):
        rc, text, r = self.run_sections([
            self.sh("one", "echo '%s'" % tap.Counts(2).totals(),
                    runner.MAIN, quick=True),
            self.sh("two", "exit 1", runner.MAIN),
            self.sh("three", "exit 1", runner.DEBUG, debug=True,
                    quick=True)], quick=True, debug=False)
        self.assertEqual(rc, 0)
        self.assertEqual(text.splitlines()[-1],
                         "2 passed, 0 failed, 0 skipped")

    def test_selected_and_passed(self):
        """What a later section of the main lane knows of the earlier
        ones (the kernels' sections of the upstream proof)."""
        seen = {}

        def look(ctx):
            for n in ("one", "two", "nine"):
                seen[n] = (ctx.selected(n), ctx.passed(n))
        rc, text, r = self.run_sections([
            self.sh("one", "echo '%s'" % tap.Counts(1).totals(),
                    runner.MAIN),
            self.sh("two", "exit 1", runner.MAIN),
            sections.Section("three", "three", runner.MAIN, look)])
        self.assertEqual(seen, {"one": (True, True), "two": (True, False),
                                "nine": (False, False)})

    def test_this_runs_steps(self):
        """The summary sums this run's steps, not what an earlier run
        left in the output directory; another step's file stays."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "check")
            os.makedirs(out)
            with open(os.path.join(out, "old.tap"), "w") as f:
                f.write(tap.Counts(failed=5).totals() + "\n")
            text = io.StringIO()
            r = runner.Runner(d, [self.sh("one", "echo '%s'" % tap.Counts(
                1).totals(), runner.MAIN)], [], out=out, stream=text)
            self.assertEqual(r.run(), 0)
            self.assertEqual(text.getvalue().splitlines()[-1],
                             "1 passed, 0 failed, 0 skipped")
            self.assertTrue(os.path.exists(os.path.join(out, "old.tap")))

    def test_select(self):
        """make check's sections leave out the on-demand ones; named,
        they run, with the sections whose output they read, before
        them."""
        reg = [self.sh("one", "", runner.MAIN),
               self.sh("two", "", runner.DEBUG, debug=True),
               self.sh("three", "", runner.DEBUG, debug=True,
                       after=("two",)),
               self.sh("four", "", runner.ANY, on_demand=True)]
        self.assertEqual([s.name for s in sections.select(reg, [])],
                         ["one", "two", "three"])
        sel = sections.select(reg, ["four", "three"])
        self.assertEqual([s.name for s in sel], ["two", "three", "four"])
        self.assertEqual([s.name for s in sections.select(reg, ["two"])],
                         ["two"])
        with self.assertRaises(ValueError):
            sections.select(reg, ["five"])
        # make check's: the coverage report alone boots the debug kernel
        reg = sections.registry(["6.1"])
        self.assertEqual([s.name for s in sections.select(reg, [
            "coverage"])], ["debug", "coverage"])
        for s in reg:	# what a section reads: its lane's, before it
            for a in s.after:
                r, = [x for x in reg if x.name == a]
                self.assertEqual(r.lane, s.lane)
                self.assertLess(reg.index(r), reg.index(s))

    def test_vm_threads(self):
        """With the debug lane beside the main one, each step's VMs run
        their vCPUs in one host thread, unless the caller said otherwise;
        a lane alone, as the caller said."""
        ok = "echo '%s'" % tap.Counts(1).totals()
        single = '[ "$IBPD_VM_TCG_THREAD" = single ] && ' + ok
        unset = '[ -z "${IBPD_VM_TCG_THREAD+set}" ] && ' + ok
        multi = '[ "$IBPD_VM_TCG_THREAD" = multi ] && ' + ok
        with mock.patch.dict(os.environ):
            os.environ.pop("IBPD_VM_TCG_THREAD", None)
            rc, text, r = self.run_sections([
                self.sh("one", single, runner.MAIN),
                self.sh("two", single, runner.DEBUG, debug=True)])
            self.assertEqual((rc, text.splitlines()[-1]),
                             (0, "2 passed, 0 failed, 0 skipped"))
            rc, text, r = self.run_sections([self.sh("one", unset,
                                                     runner.MAIN)])
            self.assertEqual(rc, 0)
            # the debug lane alone (make soak), printed as it runs
            rc, text, r = self.run_sections([self.sh(
                "two", unset + "; echo progress", runner.DEBUG,
                debug=True)])
            self.assertEqual(rc, 0)
            self.assertIn("progress", text)
            self.assertNotIn("debug kernel lane", text)
            # a VM the section starts itself: the deb section's
            rc, text, r = self.run_sections([
                self.deb_vm(single), self.sh("two", single, runner.DEBUG,
                                            debug=True)])
            self.assertEqual((rc, text.splitlines()[-1]),
                             (0, "%d passed, 0 failed, 0 skipped"
                              % (deb.VM_CASES + 2)))
            os.environ["IBPD_VM_TCG_THREAD"] = "multi"
            rc, text, r = self.run_sections([
                self.sh("one", multi, runner.MAIN),
                self.sh("two", multi, runner.DEBUG, debug=True)])
            self.assertEqual(rc, 0)

    def deb_vm(self, cond):
        """A section that runs deb.vm() on a VM whose vm-run is sh:
        deb_vm.sh's cases pass when cond holds."""
        cases = "; ".join(["echo 'deb-vm: pass case'"] * deb.VM_CASES)
        v = mock.Mock()
        v.argv = lambda top, cmd: ["sh", "-c", "%s && { %s; }" % (
            cond.split(" && ")[0], cases)]

        def run(ctx):
            with ctx.writer() as w:
                deb.vm(ctx, w, [])
        return sections.Section("deb", "deb", runner.MAIN, run, vm=v,
                                guest=deb.GUEST)


def matrix(top, name):
    """vm.matrix's stand-in, scripts/build/matrix NAME: the kernels (the
    newest not last), else "M-NAME"."""
    return "6.12 7 6.1" if name == "kernels" else "M-" + name


class Fake(builds.Need):
    """A build that takes a while, counted; ok: whether it builds."""

    def __init__(self, name, ok=True, quick=True):
        self.name, self.ok, self.quick = name, ok, quick
        self.count = 0

    def key(self, top):
        return ("fake", self.name)

    def what(self, top):
        return "fake " + self.name

    def build(self, ctx, log):
        self.count += 1
        time.sleep(0.2)	# the other lane asks meanwhile
        return self.ok


class Builds(unittest.TestCase):
    """What sections need built: declared, made once a run before the
    first section that declares it, a failed one failing each section
    that declares it; make check's declarations."""

    def sec(self, name, lane, needs, ran, **kw):
        def run(ctx):
            ran.append(name)
            ctx.record(name, tap.Counts(1).totals())
        return sections.Section(name, name, lane, run, builds=needs, **kw)

    def test_once(self):
        a, b = Fake("a"), Fake("b")
        ran = []
        rc, text, r = Runner.run_sections(self, [
            self.sec("one", runner.MAIN, (a,), ran),
            self.sec("two", runner.DEBUG, (a, b), ran, debug=True),
            self.sec("three", runner.ANY, (b, a), ran)])
        self.assertEqual(rc, 0, text)
        self.assertEqual((a.count, b.count), (1, 1))
        self.assertEqual(sorted(ran), ["one", "three", "two"])
        self.assertEqual(text.count("# build: fake a"), 1)

    def test_failed(self):
        bad, good = Fake("bad", ok=False), Fake("good")
        ran = []
        rc, text, r = Runner.run_sections(self, [
            self.sec("one", runner.MAIN, (bad, good), ran),
            self.sec("two", runner.DEBUG, (good, bad), ran, debug=True),
            self.sec("three", runner.ANY, (good,), ran)])
        self.assertEqual(rc, 1)
        self.assertEqual((bad.count, good.count), (1, 1))
        self.assertEqual(ran, ["three"])
        lines = text.splitlines()
        self.assertEqual(lines[-1], "1 passed, 2 failed, 0 skipped")
        fails = sorted(x for x in lines if x.startswith("# failed: "))
        self.assertEqual(len(fails), 2, fails)
        for f, sec in zip(fails, ("one", "two")):
            self.assertIn("# failed: %s needs fake bad: it did not build"
                          % sec, f)
            self.assertIn("build-fake-bad.log", f)
        # the one that did not build it names the one that did
        self.assertIn("in section one", fails[1])

    def test_quick(self):
        full = Fake("full", quick=False)
        rc, text, r = Runner.run_sections(self, [
            self.sec("one", runner.MAIN, (full,), [], quick=True)],
            quick=True)
        self.assertEqual((rc, full.count), (0, 0))

    def test_module(self):
        """The one way ibpd.ko is built: make module W=1 (the static
        section's flags), for the need and for the proof's own."""
        argvs = []

        def run(argv, env=None, **kw):
            argvs.append(argv)
            return subprocess.CompletedProcess(argv, 0)
        ctx = OnDemand.Ctx()
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(builds.subprocess, "run", run):
            ctx.section = sections.Section("s", "s", runner.MAIN,
                                           lambda ctx: None)
            log = os.path.join(d, "log")
            self.assertTrue(builds.Module("6.12").build(ctx, log))
            self.assertTrue(builds.Module("debug", gcov=True).build(ctx, log))
            self.assertTrue(builds.module(ctx, "upstream", log, b="out/u"))
        make = ["make", "-s", "-C", "/top", "module", "W=1"]
        self.assertEqual(argvs, [
            ["/top/scripts/build/kernel-dir", "6.12"],
            make + ["KERNEL=6.12"],
            ["/top/scripts/build/kernel-dir", "debug"],
            make + ["KERNEL=debug", "IBPD_GCOV=1"],
            make + ["KERNEL=upstream", "B=out/u"]])
        self.assertIn("W=1 C=2", open(os.path.join(
            TOP, "scripts/tests/static_test.sh")).read())

    def keys(self, s):
        return [n.key("/top") for n in s.builds]

    def test_declared(self):
        """Every section whose VM loads ibpd.ko declares it for the VM's
        kernel (the proof's patched kernel takes its own build: the
        section's VM says so, ko=); the ones that run the tests declare
        them; make check's sections build the debug kernel's one way."""
        with mock.patch.object(vm, "matrix", matrix):
            reg = sections.registry(["6.1", "6.12", "7"])
            tests = sections.TESTS.key("/top")
            for s in reg:
                if not s.vm or not s.vm.ibpd or s.name == "upstream-proof":
                    continue
                k = s.vm.kernel_name("/top")
                self.assertTrue(any(key[:2] == ("module", k)
                                    for key in self.keys(s)), s.name)
                if s.name not in ("bench",):
                    self.assertTrue(any(key[0] == "tests"
                                        for key in self.keys(s)), s.name)
            by = {s.name: self.keys(s) for s in reg}
            self.assertEqual(by["kernel-6.12"], [
                ("module", "6.12"), tests, ("rdma-cores",)])
            self.assertEqual(by["upstream-proof"], [
                ("module", k) for k in ("6.1", "6.12", "7")] + [
                ("make", "lib", "build/bench/ibpd_bench")])
            self.assertEqual(by["coverage"], [("module", "debug", "gcov")])
            self.assertEqual(by["vm-test"][0], ("module",
                                                "M-vm-test-kernel"))
            self.assertEqual(builds.clashes(sections.select(reg, []),
                                            "/top", False), [])
            self.assertEqual(builds.clashes(sections.select(reg, [
                "debug", "soak"]), "/top", False),
                ["ibpd.ko for kernel debug with gcov and without"])
        rc, text, r = Runner.run_sections(self, [
            self.sec("one", runner.MAIN, (builds.Module("debug"),), []),
            self.sec("two", runner.DEBUG, (builds.Module("debug", True),),
                     [], debug=True)])
        self.assertEqual(rc, 1)
        self.assertIn("# error: this run's sections want ibpd.ko for "
                      "kernel debug with gcov and without", text)


class OnDemand(unittest.TestCase):
    """The commands of the on-demand sections (make vm-test, verbs-check,
    bench, soak), with their KERNEL and TEST from the environment."""

    class Ctx(runner.Context):
        """runner.Context, its steps recorded, not run."""
        top = "/top"
        out = "/out"

        passes = False	# what a step returns

        def __init__(self):
            self.steps = []
            self.envs = []
            self.failed = []
            self.recorded = []
            self.section = None
            self.lane = runner.Lane(runner.MAIN, io.StringIO(), 0)

        def step(self, name, argv, env=None, nested=False, divert=None):
            self.steps.append((name, argv))
            self.envs.append(env)
            return self.passes	# no output to read

        def record(self, name, line, append=False):
            self.recorded.append((name, line))

        def fail(self, name, why):
            self.failed.append((name, why))

        def run(self, s):
            self.section = s
            s.run(self)

    def run_section(self, name, env, passes=False):
        ctx = self.Ctx()
        ctx.passes = passes
        s = {s.name: s for s in sections.registry([])}[name]
        with mock.patch.dict(os.environ, env), \
                mock.patch.object(vm, "matrix", matrix):
            for k in ("KERNEL", "TEST", "PACKAGES"):
                if k not in env:
                    os.environ.pop(k, None)
            ctx.run(s)
        return ctx

    def test_vm_test(self):
        ctx = self.run_section("vm-test", {"TEST": "ibpd_test -r 'a b'"})
        (name, argv), = ctx.steps
        self.assertEqual(argv, ["/top/scripts/vm/vm-run", "--kernel",
                                "M-vm-test-kernel", "--rxe", "--",
                                "/top/selftests/vm/run_one.sh",
                                "ibpd_test", "-r", "a b"])
        ctx = self.run_section("vm-test", {"TEST": "x", "KERNEL": "debug"})
        self.assertEqual(ctx.steps[0][1][1:3], ["--kernel", "debug"])
        ctx = self.run_section("vm-test", {})
        self.assertEqual((ctx.steps, len(ctx.failed)), ([], 1))

    def test_verbs_bench_soak(self):
        ctx = self.run_section("verbs", {"KERNEL": "6.12"})
        self.assertEqual(ctx.steps, [("verbs", [
            "/top/scripts/vm/vm-run", "--kernel", "6.12", "--rxe", "--",
            "/top/selftests/vm/run_verbs.sh"])])
        ctx = self.run_section("verbs", {})
        self.assertEqual(ctx.steps[0][1][2], "M-default-kernel")
        # the three VMs of make bench, then its report: the doorbell
        # group alone on the newest of the matrix's kernels, without ibpd
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(bench.proof, "patched_env",
                                  lambda ctx, log: {"IBPD_KO": "/p/ibpd.ko",
                                                    "IBPD_PROVIDER": "/p/l"}):
            ctx = self.run_section("bench", {"IBPD_BENCH_OUT": d,
                                             "KERNEL": "6.12"}, passes=True)
            self.assertEqual(ctx.steps, [("bench", [
                "/top/scripts/vm/vm-run", "--kernel", "6.12", "--rxe",
                "--mem", "6G", "--smp", "1", "--icount", "0", "--append",
                "nokaslr", "--idle", "3000", "--",
                "/top/selftests/vm/run_bench.sh"]), ("bench-import", [
                "/top/scripts/vm/vm-run", "--kernel", "upstream", "--rxe",
                "--ko", "/p/ibpd.ko", "--mem", "6G", "--smp", "1",
                "--icount", "0", "--append", "nokaslr", "--idle", "3000",
                "--", "/top/selftests/vm/run_bench.sh"]), ("bench-doorbell", [
                "/top/scripts/vm/vm-run", "--kernel", "7", "--rxe",
                "--no-ibpd", "--mem", "6G", "--smp", "1", "--icount", "0",
                "--append", "nokaslr", "--idle", "3000", "--",
                "/top/selftests/vm/run_bench.sh"]), ("bench-report", [
                "/usr/bin/python3", "/top/bench/report.py", d + "/raw.log",
                d])])
            self.assertEqual(ctx.recorded[0][0], "bench-report")
            self.assertEqual(ctx.envs[1], {
                "IBPD_PROVIDER": "/p/l", "IBPD_BENCH_GROUPS": "datapath",
                "IBPD_BENCH_CLOCK": "icount"})
            self.assertEqual(ctx.envs[2], {"IBPD_BENCH_GROUPS": "doorbell",
                                           "IBPD_BENCH_CLOCK": "icount"})
            # the test kernel the newest already: no second boot of it
            ctx = self.run_section("bench", {"IBPD_BENCH_OUT": d,
                                             "KERNEL": "7"}, passes=True)
            self.assertEqual([n for n, _ in ctx.steps],
                             ["bench", "bench-import", "bench-report"])
            ctx = self.run_section("bench", {"IBPD_BENCH_OUT": d,
                                             "IBPD_BENCH_CLOCK": "host"})
            self.assertNotIn("--icount", ctx.steps[0][1])
            self.assertNotIn("--smp", ctx.steps[0][1])
            # the host's clock, under TCG too, whatever the machine has
            self.assertIn("--accel tcg", " ".join(ctx.steps[0][1]))
            # the first VM failed: no second, no report
            self.assertEqual([n for n, _ in ctx.steps], ["bench"])
            # the host's clock in the doorbell's VM too
            ctx = self.run_section("bench", {"IBPD_BENCH_OUT": d,
                                             "IBPD_BENCH_CLOCK": "host",
                                             "IBPD_BENCH_IMPORT": "0"},
                                   passes=True)
            self.assertEqual(ctx.steps[1][0], "bench-doorbell")
            self.assertIn("--accel tcg", " ".join(ctx.steps[1][1]))
            self.assertNotIn("--icount", ctx.steps[1][1])


class Declared(unittest.TestCase):
    """The sections' VMs, as declared: vm-run's command line from them
    (a section without a VM, with one, with the debug kernel, with
    -icount), and what a declaration may not say."""

    def argv(self, name, kernels=("6.1",)):
        s = {s.name: s for s in sections.registry(list(kernels))}[name]
        if not s.vm:
            return None
        return s.vm.argv("/top", ["/top/" + g for g in s.guest[:1]])

    def test_no_vm(self):
        for name in ("static", "staging", "install", "coverage",
                     "debug-build"):
            self.assertIsNone(self.argv(name), name)

    def test_stock(self):
        with mock.patch.object(vm, "matrix", lambda top, n: "M-" + n):
            self.assertEqual(self.argv("kernel-6.1"), [
                "/top/scripts/vm/vm-run", "--kernel", "6.1", "--rxe", "--",
                "/top/selftests/vm/run_kernel.sh"])

    def test_debug(self):
        s = {s.name: s for s in sections.registry([])}["debug"]
        self.assertTrue(s.vm.console)
        self.assertEqual(s.vm.argv("/top", ["g"], log="/out/l"), [
            "/top/scripts/vm/vm-run", "--kernel", "debug", "--append",
            "panic_on_warn=1", "--log", "/out/l", "--", "g"])
        self.assertEqual(self.argv("soak"), [
            "/top/scripts/vm/vm-run", "--kernel", "debug", "--mem", "3G",
            "--append", "panic_on_warn=1", "--",
            "/top/selftests/vm/run_soak.sh"])

    def test_icount(self):
        v = vm.VM("6.12", clock=vm.ICOUNT, modules=["tun?"])
        self.assertEqual(v.argv("/t", ["g", "a"], modules=["siw?"],
                                timeout=99), [
            "/t/scripts/vm/vm-run", "--kernel", "6.12", "--modules",
            "tun? siw?", "--smp", "1", "--icount", "0", "--timeout", "99",
            "--", "g", "a"])
        self.assertIn("icount", v.describe())

    def test_accel(self):
        """vm-run's choice (KVM where it runs) unless a VM says TCG;
        icount is TCG's without saying."""
        self.assertNotIn("--accel", vm.VM("6.12").argv("/t", ["g"]))
        v = vm.VM("6.12", accel=vm.TCG)
        self.assertEqual(v.argv("/t", ["g"]), [
            "/t/scripts/vm/vm-run", "--kernel", "6.12", "--accel", "tcg",
            "--", "g"])
        self.assertIn("tcg", v.describe())
        v = vm.VM("6.12", clock=vm.ICOUNT, accel=vm.TCG)
        self.assertNotIn("--accel", v.argv("/t", ["g"]))
        with self.assertRaises(ValueError):
            vm.VM("6.12", accel="kvm")

    def test_deb(self):
        with mock.patch.object(vm, "matrix", lambda top, n: "M-" + n), \
                mock.patch.dict(os.environ, {"IBPD_DEB_KERNEL": "6.12"}):
            self.assertEqual(self.argv("deb"), [
                "/top/scripts/vm/vm-run", "--kernel", "6.12", "--no-ibpd",
                "--", "/top/selftests/vm/deb_vm.sh"])
        self.assertEqual(deb.recorded(
            "# c\n2.0.1:\nlibibpd1 b\nibpd-dkms a\n\n2.0.2:\nx y\n",
            "2.0.1"), ["ibpd-dkms a", "libibpd1 b"])

    def test_deb_dist(self):
        """Another Debian's packages: a section a kernel the matrix boots
        it with, of those make check runs; the VM boots its userland."""
        reg = sections.registry(["6.1", "7"], [("trixie", "7"),
                                               ("trixie", "6.12")])
        s, = [s for s in reg if s.name.startswith("deb-")]
        self.assertEqual(s.name, "deb-trixie-7")
        self.assertEqual(s.lane, runner.ANY)
        self.assertEqual(s.vm.argv("/top", ["/top/" + s.guest[0]]), [
            "/top/scripts/vm/vm-run", "--kernel", "7", "--dist", "trixie",
            "--no-ibpd", "--", "/top/selftests/vm/deb_vm.sh"])
        self.assertEqual([s for s in sections.registry(
            ["6.1"], [("trixie", "7")]) if s.name.startswith("deb-")], [])
        with mock.patch.object(deb, "matrix",
                               lambda top, n: "M-" + n + " 7"):
            self.assertEqual(deb.dist_kernels("/top", "trixie"),
                             ["M-dist-trixie-kernels", "7"])

    def test_refused(self):
        with self.assertRaises(ValueError):
            vm.VM("7", clock=vm.ICOUNT, smp=2)
        with self.assertRaises(ValueError):
            vm.VM("7", clock="tsc")
        with self.assertRaises(ValueError):
            sections.Section("x", "x", runner.MAIN, vm=vm.VM("7"))
        with self.assertRaises(ValueError):
            sections.Section("x", "x", runner.MAIN)


class Proof(unittest.TestCase):
    """The proof section's git identity (make upstream-proof alone keeps
    the caller's, make check stages with its own), its boots (the stock
    kernels' in their own sections when this run has them, with what the
    proof passes them), and the series' new kselftests, read from it."""

    class Ctx(OnDemand.Ctx):
        kernels = ["6.1", "7"]

        def __init__(self, top, out, selected):
            super().__init__()
            self.top, self.out, self.sel = top, out, selected
            self.kept = {}
            self.writers = []

        def selected(self, name):
            return name in self.sel

        def keep(self, value):
            self.kept[self.section.name] = value

        def result(self, name):
            return self.kept.get(name)

        def boot(self, **kw):
            self.steps.append((kw.get("name", self.section.name),
                               kw.get("vm", self.section.vm)))
            self.envs.append(kw["env"])
            return True

        @contextlib.contextmanager
        def writer(self, name=None):
            w = tap.Writer(out=io.StringIO())
            self.writers.append((name, w))
            yield w

    def identity(self, identity, selected):
        with tempfile.TemporaryDirectory() as d:
            home = os.path.join(d, "gitconfig-home")
            with open(home, "w") as f:
                f.write("[user]\n" + "".join(
                    "\t%s = %s\n" % kv for kv in identity.items()))
            ctx = self.Ctx(d, d, selected)
            with mock.patch.dict(os.environ, {"GIT_CONFIG_GLOBAL": home,
                                              "GIT_CONFIG_NOSYSTEM": "1"}):
                for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                          "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
                    os.environ.pop(k, None)
                env = proof.identity(ctx)
            cfg = env.get("GIT_CONFIG_GLOBAL")
            if cfg:
                self.assertEqual(cfg, os.path.join(d, "gitconfig"))
                with open(cfg) as f:
                    self.assertIn("name = ibpd make check", f.read())
            return cfg is not None

    def test_identity(self):
        me = {"name": "A U Thor", "email": "a@example.org"}
        # make upstream-proof alone, the caller has an identity: theirs
        self.assertFalse(self.identity(me, {"upstream-proof"}))
        # only a name, or none: make check's
        for who in ({"name": "A U Thor"}, {"email": "a@example.org"}, {}):
            self.assertTrue(self.identity(who, {"upstream-proof"}))
        # make check (staging runs too): always its own
        self.assertTrue(self.identity(me, {"staging", "upstream-proof"}))

    def test_staged_once(self):
        # make check: the staging section stages, the proof takes its
        # series, whether its checks passed or not, and stages none of
        # its own (where the section staged none, the proof fails); make
        # upstream-proof alone: the proof stages
        for selected, staged, stages, fails in (
                ({"staging", "upstream-proof"}, True, 0, "stop"),
                ({"staging", "upstream-proof"}, False, 0, "staged no"),
                ({"upstream-proof"}, False, 1, "stop")):
            ctx = self.Ctx("/top", "/out", selected)
            ctx.passed = lambda name: False
            argvs = []

            def run(ctx, log, argv, env=None, **kw):
                argvs.append(argv)
                if argv[0].endswith("kernel-dir"):	# enough: stop here
                    raise proof.BuildError("stop")
                return ""
            with tempfile.TemporaryDirectory() as d, \
                    mock.patch.object(proof, "run", run):
                ctx.top = ctx.out = d
                # an earlier run's series: the staging section's start
                # removes it
                os.makedirs(os.path.join(d, "out/upstream"))
                open(os.path.join(d, proof.STAGED), "w").close()
                if "staging" in selected:
                    proof.unstage(ctx)
                if staged:
                    open(os.path.join(d, proof.STAGED), "w").close()
                self.assertIsNone(proof.build(ctx))
            stage = [a for a in argvs if a[0].endswith("stage-upstream")]
            self.assertEqual(len(stage), stages, argvs)
            self.assertEqual(len(ctx.failed), 1)
            self.assertEqual(ctx.failed[0][0], "upstream-proof-build")
            self.assertIn(fails, ctx.failed[0][1])

    def run_proof(self, selected):
        top = os.path.realpath(os.path.join(os.path.dirname(__file__),
                                            "..", "..", ".."))
        ctx = self.Ctx(top, "/out", selected)
        ctx.section = {s.name: s for s in sections.registry(
            ctx.kernels)}["upstream-proof"]
        patched = proof.Patched("/ko", "/rc", "/p/libibpd", "/nodb", "/ksft")
        ctx.compared = []
        new = proof.new_kselftests(top)
        with mock.patch.object(proof, "build", lambda ctx: patched), \
                mock.patch.object(proof, "new_kselftests", lambda top: new), \
                mock.patch.object(proof, "compare", lambda ctx, log:
                                  ctx.compared.append(log)), \
                mock.patch.object(proof, "matrix",
                                  lambda top, n: {"upstream-kernel": "7"}[n]), \
                mock.patch.object(glob, "glob", lambda p: []):
            ctx.section.run(ctx)
        return ctx, patched

    def test_stock_runs(self):
        # make upstream-proof alone: the stock kernels booted here
        ctx, p = self.run_proof({"upstream-proof"})
        self.assertEqual([n for n, _ in ctx.steps], [
            "upstream-proof", "upstream-proof-6.1", "upstream-proof-7"])
        self.assertEqual(ctx.steps[0][1], proof.PATCHED)
        self.assertEqual([(v.kernel, v.rxe) for _, v in ctx.steps[1:]],
                         [("6.1", True), ("7", True)])
        self.assertEqual([e["IBPD_PROOF"] for e in ctx.envs],
                         ["upstream", "stock", "stock"])
        self.assertEqual([e["IBPD_PROOF_KSFT"] for e in ctx.envs[1:]],
                         ["0", "1"])
        for e in ctx.envs:
            self.assertEqual(e["IBPD_PROOF_NEW_KSFT"],
                             "rxe_shared_ucontext.sh siw_shared_ucontext.sh")
            self.assertEqual(e["IBPD_RDMA_CORE"], "/rc")
        self.assertEqual(ctx.compared, [os.path.join(
            ctx.top, proof.OUT, "stock-7.log")])
        self.assertEqual(ctx.kept, {})
        # make check: the kernels' sections boot them, with stock()'s
        ctx, p = self.run_proof({"upstream-proof", "kernel-6.1",
                                 "kernel-7"})
        self.assertEqual([n for n, _ in ctx.steps], ["upstream-proof"])
        self.assertEqual(ctx.compared, [])
        self.assertIs(ctx.kept["upstream-proof"], p)
        with mock.patch.object(proof, "matrix", lambda top, n: "7"):
            env, mods = proof.stock(ctx, "7")
        self.assertEqual((env["IBPD_PROOF"], env["IBPD_PROOF_KSFT"],
                          env["IBPD_KSFT"], mods),
                         ("stock", "1", "/ksft", proof.STOCK_MODULES))
        ctx.kept = {}
        self.assertIsNone(proof.stock(ctx, "7"))

    def test_new_kselftests(self):
        top = os.path.realpath(os.path.join(os.path.dirname(__file__),
                                            "..", "..", ".."))
        self.assertEqual(proof.new_kselftests(top), [
            "rxe_shared_ucontext.sh", "siw_shared_ucontext.sh"])

    def test_compare(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(proof, "new_kselftests", lambda top: [
                    "rxe_shared_ucontext.sh"]):
            os.makedirs(os.path.join(d, proof.OUT))
            lines = ["# ksft-rdma: rxe_netns_names.sh pass\n",
                     "# ksft-rdma: rxe_shared_ucontext.sh pass\n"]
            with open(os.path.join(d, proof.OUT, "upstream.log"), "w") as f:
                f.writelines(lines)
            stock = os.path.join(d, "stock.tap")
            for last, good in (("skip", True), ("pass", True),
                               ("fail", True)):
                with open(stock, "w") as f:
                    f.writelines(lines[:1] + [
                        "# ksft-rdma: rxe_shared_ucontext.sh %s\n" % last])
                ctx = self.Ctx(d, d, set())
                with mock.patch.object(proof, "matrix", lambda top, n: "7"):
                    proof.compare(ctx, stock)
                (name, w), = ctx.writers
                self.assertEqual(w.counts.passed, 1)
            with open(stock, "w") as f:
                f.write("# ksft-rdma: rxe_netns_names.sh fail\n")
            ctx = self.Ctx(d, d, set())
            with mock.patch.object(proof, "matrix", lambda top, n: "7"):
                proof.compare(ctx, stock)
                proof.compare(ctx, None)
            self.assertEqual([(w.counts.failed, w.counts.skipped)
                              for _, w in ctx.writers], [(1, 0), (0, 1)])


class Bridge(unittest.TestCase):
    """The bridge's sections: one a kernel, in the lane free first, the
    packages built once a run, a boot with what the host made for that
    kernel, a kernel installed later on the first only; make vm-test
    PACKAGES=1 runs TEST after the same setup (bridge_vm.sh --run)."""

    class Ctx(OnDemand.Ctx):
        kernels = ["6.1", "6.12", "7"]
        out = "/out"

    def run(self, result=None):
        debs = ["/top/out/bridge/rdma-core/libibverbs1.deb",
                "/top/out/bridge/rxe/ibpd-rxe-dkms.deb"]
        self.built = []
        with mock.patch.object(bridge, "build",
                               lambda ctx, lint: self.built.append(lint)
                               or debs), \
                mock.patch.object(bridge, "distro_repo",
                                  lambda ctx, d: "/distro"), \
                mock.patch.object(bridge, "prebuild",
                                  lambda ctx, k, d: "/built-" + k), \
                mock.patch.object(bridge, "kernel_dir",
                                  lambda top, k: "/kc-" + k), \
                mock.patch.object(bridge, "headers_run_here",
                                  lambda d: d != "/kc-6.12"), \
                mock.patch.object(bridge, "stage", lambda ctx, d: None), \
                mock.patch.object(bridge, "other_kernel",
                                  lambda ctx, k: "/other-" + k), \
                mock.patch.object(bridge, "source_standin",
                                  lambda ctx, k, changed=False:
                                  "/source-" + k + ("-changed" if changed
                                                    else "")), \
                mock.patch.object(bridge, "rebuilt",
                                  lambda ctx, k: "/rebuilt-" + k), \
                mock.patch.dict(bridge._packages, clear=True):
            return super().run(result)

    def sections(self):
        return [s for s in sections.registry(self.Ctx.kernels)
                if s.name.startswith("bridge")]

    def test_declared(self):
        self.assertEqual([(s.name, s.lane, s.guest, s.vm.kernel,
                           s.vm.rxe, s.on_demand, s.debug)
                          for s in self.sections()],
                         [("bridge-" + k, runner.ANY,
                           ["selftests/vm/bridge_vm.sh"], k, False, False,
                           False) for k in self.Ctx.kernels])

    def test_boots(self):
        ctx = self.Ctx()
        for s in self.sections():
            ctx.run(s)
        self.assertEqual(self.built, [True])
        self.assertEqual([n for n, _ in ctx.steps],
                         ["bridge-6.1", "bridge-6.12", "bridge-7"])
        for (name, argv), env in zip(ctx.steps, ctx.envs):
            k = name[len("bridge-"):]
            self.assertEqual(argv, ["/top/scripts/vm/vm-run", "--kernel", k,
                                    "--", "/top/selftests/vm/bridge_vm.sh"])
            self.assertEqual(env["IBPD_BRIDGE_BUILT"], "/built-" + k)
            self.assertEqual(env["IBPD_BRIDGE_DISTRO"], "/distro")
            self.assertEqual(env["IBPD_BRIDGE_DEBS"],
                             "/top/out/bridge/install")
            # 6.12's headers do not build here (the mock): 7's
            self.assertEqual(env.get("IBPD_BRIDGE_NEXT"),
                             "/kc-7" if k == "6.1" else None)
            # a kernel of another series on the first kernel's boot
            self.assertEqual(env.get("IBPD_BRIDGE_OTHER_SERIES"),
                             "/other-6.1" if k == "6.1" else None)
            # the kernel's source; the later kernel's, changed; the
            # packages rebuilt, on the first kernel's boot
            self.assertEqual(env["IBPD_BRIDGE_SOURCE"], "/source-" + k)
            self.assertEqual(env.get("IBPD_BRIDGE_NEXT_SOURCE"),
                             "/source-7-changed" if k == "6.1" else None)
            self.assertEqual(env.get("IBPD_BRIDGE_REBUILT"),
                             "/rebuilt-6.1" if k == "6.1" else None)

    def test_one_kernel(self):
        """A run of one kernel: no kernel installed later, a kernel of
        another series still."""
        s, = [s for s in sections.registry(["6.12"])
              if s.name.startswith("bridge")]
        ctx = self.Ctx()
        ctx.run(s)
        self.assertNotIn("IBPD_BRIDGE_NEXT", ctx.envs[0])
        self.assertEqual(ctx.envs[0]["IBPD_BRIDGE_OTHER_SERIES"],
                         "/other-6.12")

    def test_build_failed(self):
        """make bridge failed (a failure of the first section, build()'s):
        the other kernels' sections fail without building again, no
        boot."""
        ctx = self.Ctx()
        with mock.patch.object(bridge, "build",
                               lambda ctx, lint: self.built.append(lint)):
            for s in self.sections():
                ctx.run(s)
        self.assertEqual(self.built, [True])
        self.assertEqual(ctx.steps, [])
        self.assertEqual([n for n, _ in ctx.failed],
                         ["bridge-6.12", "bridge-7"])

    def test_vm_test_packages(self):
        ctx = OnDemand.run_section(self, "vm-test", {
            "TEST": "ibpd --device rxe0 demo", "PACKAGES": "1",
            "KERNEL": "6.12"})
        (name, argv), = ctx.steps
        self.assertEqual(argv, ["/top/scripts/vm/vm-run", "--kernel", "6.12",
                                "--", "/top/selftests/vm/bridge_vm.sh",
                                "--run", "ibpd", "--device", "rxe0",
                                "demo"])
        self.assertNotIn("IBPD_BRIDGE_DISTRO", ctx.envs[0])
        self.assertEqual(ctx.envs[0]["IBPD_BRIDGE_SOURCE"], "/source-6.12")
        self.assertEqual(self.built, [False])	# no lintian



class BridgeLint(unittest.TestCase):
    """lintian's verdict kept in the cache: a pass on the same bytes is
    not run again; other bytes, or a failure, are."""

    def test_kept(self):
        runs = []
        verdict = {"rc": 0}

        def run(argv, **kw):
            if argv[-1] == "--version":
                return subprocess.CompletedProcess(argv, 0, b"Lintian v2\n")
            runs.append(argv[-1])
            return subprocess.CompletedProcess(
                argv, verdict["rc"], "W: tag\n" if verdict["rc"] else "",
                "")

        with tempfile.TemporaryDirectory() as d:
            ch = os.path.join(d, "p_1_amd64.changes")
            with open(ch, "w") as f:
                f.write("Source: p\nChecksums-Sha256:\n 00 1 p_1_all.deb\n"
                        "Files:\n 00 1 misc optional p_1_all.deb\n")
            deb_file = os.path.join(d, "p_1_all.deb")
            with open(deb_file, "w") as f:
                f.write("one")
            with mock.patch.object(bridge, "cache",
                                   lambda ctx, *p: os.path.join(d, "c", *p)), \
                    mock.patch.object(bridge.subprocess, "run", run):
                self.assertEqual(bridge.lint(None, ch)[:2], (True, ""))
                ok, out, kept = bridge.lint(None, ch)
                self.assertTrue(ok and kept)
                self.assertEqual(runs, [ch])
                with open(deb_file, "w") as f:	# other bytes
                    f.write("two")
                verdict["rc"] = 2
                self.assertEqual(bridge.lint(None, ch),
                                 (False, "W: tag\n", None))
                self.assertEqual(bridge.lint(None, ch)[0], False)
                self.assertEqual(runs, [ch] * 3)

class KUnit(unittest.TestCase):
    """kunit.py's results read from its JSON (kunit.py parse --json),
    not from its report, whose words differ from kernel to kernel and
    are coloured on a terminal."""

    SUITES = {"name": "KUnit Test Group", "sub_groups": [
        {"name": "ibpd_pool", "sub_groups": [], "test_cases": [
            {"name": "a", "status": "PASS"}, {"name": "b", "status": "PASS"},
            {"name": "c", "status": "SKIP"}]},
        {"name": "ibpd_pd", "test_cases": [
            {"name": "d", "status": "FAIL"}, {"name": "", "status": "ERROR"}],
         "sub_groups": [{"name": "param", "sub_groups": [], "test_cases": [
             {"name": "e", "status": "PASS"},
             {"name": "f", "status": "FAIL"}]}]}],
        "test_cases": []}

    def test_counts(self):
        # every case once, a parameterised test's too
        self.assertEqual(kunit.counts(self.SUITES), tap.Counts(3, 3, 1))
        # 7.x's counts beside the cases ("misc") are not counted again
        self.assertEqual(kunit.counts(dict(self.SUITES, misc={
            "tests": 7, "passed": 3, "failed": 2, "crashed": 1,
            "skipped": 1, "errors": 1})), tap.Counts(3, 3, 1))
        # no KTAP at all: a group without a case
        self.assertIsNone(kunit.counts({"name": "KUnit Test Group",
                                        "sub_groups": [], "test_cases": []}))

    def run_kunit(self, report, rc, result=None, stale=None, lines=()):
        """kunit.main() on a kunit.py that prints report, writes result
        (unless None) as its JSON and exits with rc; stale: a JSON left
        from an earlier run; lines: the KTAP's."""
        with tempfile.TemporaryDirectory() as d:
            t = os.path.join(d, "tools", "testing", "kunit")
            os.makedirs(t)
            ktap = os.path.join(d, "kunit.ktap")
            with open(ktap, "w") as f:
                f.writelines(line + "\n" for line in lines)
            out = os.path.join(d, "kunit.json")
            if stale is not None:
                with open(out, "w") as f:
                    json.dump(stale, f)
            with open(os.path.join(t, "kunit.py"), "w") as f:
                f.write("import json, sys\n"
                        "assert sys.argv[1:] == ['parse', %r, %r], sys.argv\n"
                        "print(%r)\n" % ("--json=" + out, ktap, report))
                if result is not None:
                    f.write("json.dump(%r, open(%r, 'w'))\n" % (result, out))
                f.write("sys.exit(%d)\n" % rc)
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                ret = kunit.main([d, ktap])
        return ret, stdout.getvalue().splitlines()

    def test_main(self):
        ok = {"name": "KUnit Test Group", "sub_groups": [], "test_cases": [
            {"name": "a", "status": "PASS"}, {"name": "b", "status": "PASS"}]}
        ret, out = self.run_kunit(
            "Testing complete. Ran 2 tests: passed: 2", 0, ok)
        self.assertEqual((ret, out[-1]), (0, tap.Counts(2).totals()))
        # the counts are the JSON's, whatever the report's words (older
        # kunit.py: "N tests run. N failed.", no colon after a count)
        ret, out = self.run_kunit(
            "Testing complete. 2 tests run. 0 failed. 0 crashed.", 0, ok)
        self.assertEqual((ret, out[-1]), (0, tap.Counts(2).totals()))
        # a failure: kunit.py's exit status and the count agree
        ret, out = self.run_kunit(
            "Testing complete. Ran 2 tests: passed: 1, failed: 1", 1,
            dict(ok, test_cases=[{"name": "a", "status": "PASS"},
                                 {"name": "b", "status": "FAIL"}]))
        self.assertEqual((ret, out[-1]), (1, tap.Counts(1, 1).totals()))
        # kunit.py failed without a failed case (all skipped): exit 1
        ret, out = self.run_kunit("Testing complete. Ran 1 tests: skipped: 1",
                                  1, dict(ok, test_cases=[
                                      {"name": "a", "status": "SKIP"}]))
        self.assertEqual((ret, out[-1]), (1, tap.Counts(skipped=1).totals()))
        # a suite without its result line, all its cases passed (kunit.py
        # before 7.x: exit 0): one failure, as for a program that ran
        # other than its plan
        ktap = ["KTAP version 1", "1..2", "    KTAP version 1",
                "    # Subtest: s1", "    1..1", "    ok 1 a", "ok 1 s1",
                "    KTAP version 1", "    # Subtest: s2", "    1..1",
                "    ok 1 b"]
        ret, out = self.run_kunit("Testing complete. Ran 2 tests: passed: 2,"
                                  " errors: 1", 0, ok, lines=ktap)
        self.assertEqual((ret, out[-1]), (1, tap.Counts(2, 1).totals(
            "planned 2 suites, ran 1")))
        ret, out = self.run_kunit("", 0, ok, lines=ktap + ["ok 2 s2"])
        self.assertEqual((ret, out[-1]), (0, tap.Counts(2).totals()))
        # no JSON at all, and not an earlier run's: one failure, said so
        for stale in (None, ok):
            ret, out = self.run_kunit("Traceback (most recent call last):",
                                      1, stale=stale)
            self.assertEqual((ret, out[-1]), (1, tap.Counts(
                failed=1).totals("no KUnit results")))

    def test_recorded(self):
        """The debug boot's KTAP as recorded (scripts/tests/logs/
        kunit-debug.ktap, 36 cases in 5 suites), and changed, through the
        kunit.py of a kernel in the cache, when there is one."""
        cache = subprocess.run([os.path.join(TOP, "scripts", "build",
                                              "cache-dir")],
                               stdout=subprocess.PIPE, text=True).stdout
        found = sorted(glob.glob(os.path.join(
            cache.strip(), "kernels", "*", "source", "tools", "testing",
            "kunit", "kunit.py")))
        if not found:
            self.skipTest("no kernel source with kunit.py in the cache")
        ksrc = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(found[0]))))
        with open(os.path.join(LOGS, "kunit-debug.ktap")) as f:
            recorded = f.readlines()
        # as recorded; a suite's result line lost; a case failed
        for lines, want in (
                (recorded, (0, tap.Counts(36).totals())),
                ([x for x in recorded if not x.startswith("ok 1 ")],
                 (1, tap.Counts(36, 1).totals("planned 5 suites, ran 4"))),
                ([x.replace("    ok 3 ", "    not ok 3 ") for x in recorded],
                 (1, tap.Counts(31, 5).totals()))):
            with tempfile.TemporaryDirectory() as d:
                ktap = os.path.join(d, "kunit.ktap")
                with open(ktap, "w") as k:
                    k.writelines(lines)
                stdout = io.StringIO()
                with contextlib.redirect_stdout(stdout):
                    ret = kunit.main([ksrc, ktap])
            self.assertEqual((ret, stdout.getvalue().splitlines()[-1]), want,
                             stdout.getvalue())


class Times(unittest.TestCase):
    """A run's log to check-times, and testing.rst's table from it."""

    sh = Runner.sh
    run_sections = Runner.run_sections

    def run_log(self):
        def cases(n, failed=0, skipped=0):
            return "echo 'TAP version 13'; echo '%s'" % tap.Counts(
                n, failed, skipped).totals()
        return self.run_sections([
            self.sh("first", cases(2), runner.MAIN),
            self.sh("deep", cases(1, skipped=3), runner.DEBUG, debug=True),
            self.sh("gone", "exit 1", runner.DEBUG, debug=True),
            self.sh("shared", cases(4), runner.ANY)])

    def test_record_and_table(self):
        rc, text, r = self.run_log()
        rows, wall, total = times.parse(text.splitlines(True))
        got = {name: (lane, c) for name, lane, _, _, c in rows}
        self.assertEqual(got["first"], ("main", tap.Counts(2)))
        self.assertEqual(got["deep"], ("debug", tap.Counts(1, 0, 3)))
        self.assertEqual(got["gone"][1], tap.Counts(failed=1))
        self.assertEqual(got["shared"][1], tap.Counts(4))
        self.assertEqual(total, tap.Counts(7, 1, 3))
        self.assertEqual([x[1] for x in rows],
                         sorted((x[1] for x in rows), key=lambda lane:
                                lane != runner.MAIN))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "t")
            times.record(text.splitlines(True), p, "a test's run")
            self.assertEqual(set(runner.read_times(p)), set(got))
            run, w, rec = times.read(p)
            self.assertEqual(run, "a test's run")
            self.assertEqual(w, wall)
            self.assertEqual([(x[0], x[4]) for x in rec],
                             [(x[0], x[4]) for x in rows])
            t = times.table(run, w, rec)
            self.assertIn("The run: a test's run.", t)
            self.assertRegex(t, r"\nthe runner +\d+ +\d+ +7 +1 +3\n")
            doc = "a\n\n.. times-table: made\n   by it\n\nold\n" \
                  ".. end of times-table\n\nb\n"
            new = times.replace(doc, t)
            self.assertTrue(new.startswith("a\n\n.. times-table: made\n"
                                           "   by it\n\nThe run: "))
            self.assertTrue(new.endswith(".. end of times-table\n\nb\n"))
            self.assertEqual(times.replace(new, t), new)
            with self.assertRaises(ValueError):
                times.replace("no markers\n", t)
            with self.assertRaises(ValueError):
                times.record([], os.path.join(d, "u"), "none")

    def test_cases_add_up(self):
        """A log whose blocks do not add up to its total is refused."""
        rc, text, r = self.run_log()
        lines = text.splitlines(True)
        lines[-1] = "9 passed, 1 failed, 3 skipped\n"
        with self.assertRaisesRegex(ValueError, "not the run's"):
            times.parse(lines)


class Cites(unittest.TestCase):
    """The paths that the prose cites, held to the tree."""

    def tree(self, files):
        t = cites.Tree.__new__(cites.Tree)
        t.files = files
        t.dirs = {f.rsplit("/", i)[0] for f in files
                  for i in range(1, f.count("/") + 1)}
        t.all = set(t.files) | t.dirs
        t.names = {os.path.basename(f) for f in files}
        t.tops = sorted({f.split("/")[0] for f in files if "/" in f})
        t.cite = cites.citation(t.tops)
        return t

    def test_stale(self):
        t = self.tree(["scripts/build/matrix", "scripts/upstream/stage",
                       "selftests/vm/run_one.sh", "selftests/x_test.c",
                       "patches/bridge/6.1/0001-a.patch",
                       "packaging/p/debian/rules", "debian/control",
                       "Documentation/t.rst"])
        text = "\n".join([
            "See ``scripts/build/matrix`` and scripts/build/gone.",
            "selftests/vm/run_X.sh, selftests/vm/run_*.sh, "
            "patches/bridge/SERIES/ and patches/bridge/6.1/0001,",
            "selftests/x_test (built), scripts/{build,upstream}/",
            "the kernel's scripts/checkpatch.pl, /usr/share/scripts/x,",
            "stage.py and run_one.sh; kunit_parser.py is the kernel's.",
            "scripts/{build,nowhere}/"])
        self.assertEqual(t.stale("Documentation/t.rst", text), [
            (1, "scripts/build/gone"), (5, "stage.py"),
            (6, "scripts/{build,nowhere}/")])
        # a package's own debian/, from a file in it
        self.assertEqual(t.stale("packaging/p/debian/x",
                                 "# debian/rules, debian/gone\n"),
                         [(1, "debian/gone")])

    def test_repeats(self):
        run = " ".join("w%d" % i for i in range(30))
        texts = {"a.rst": "x y\n" + run + "\nz\n",
                 "b.rst": "one " + run + " two\n" + run[:40] + "\n"}
        self.assertEqual(cites.repeats(texts), [("b.rst", 1, "a.rst", 2)])
        self.assertEqual(cites.repeats({"c.rst": run + "\n" + run}),
                         [("c.rst", 2, "c.rst", 1)])
        self.assertEqual(cites.repeats(texts, n=31), [])

    def test_comments_only(self):
        t = self.tree(["scripts/a.sh", "user/x.c"])
        self.assertEqual(t.stale("user/x.c", "f(\"scripts/b\");\n"
                                 "/* scripts/c\n * and scripts/a.sh */\n"
                                 "// scripts/d\n"),
                         [(2, "scripts/c"), (4, "scripts/d")])
        self.assertEqual(t.stale("scripts/a.sh", "cat scripts/b # scripts/c"
                                 "\n${#x} scripts/d\n"),
                         [(1, "scripts/c")])
        self.assertEqual(t.stale("scripts/t.py", '"""scripts/c"""\n'
                                 'x = "scripts/b"  # scripts/d\n'),
                         [(2, "scripts/d"), (1, "scripts/c")])


class TapResult(unittest.TestResult):
    """unittest's results as kselftest TAP, for make check."""

    def __init__(self, writer):
        super().__init__()
        self.w = writer

    def addSuccess(self, test):
        self.w.ok(True, test.id())

    def addFailure(self, test, err):
        self.w.ok(False, test.id(), self._exc_info_to_string(err, test))

    addError = addFailure

    def addSkip(self, test, reason):
        self.w.skip(test.id(), reason)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromName(__name__)
    w = tap.Writer(plan=suite.countTestCases())
    suite.run(TapResult(w))
    sys.exit(0 if w.totals() else 1)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make check's runner: runs the sections of the registry (sections.py)
in two lanes, writes each step's output to out/check/STEP.tap, and sums
up this run's steps with tap.parse() (the files of steps this run did
not run stay as the run that ran them left them). Before a section
runs, the runner builds what it declares it needs (Section.builds:
builds.py), each build once a run, whichever section declares it first.

The main lane prints as it runs. The debug lane runs beside it, into
out/check/debug-lane.log, printed after the main lane's (alone, as make
soak runs it, it prints as it runs). A section of
lane "any" goes to whichever lane is free first (a VM's tests are mostly
one process: two lanes keep the two CPUs busy). With two lanes, each
VM runs its vCPUs in one host thread (IBPD_VM_TCG_THREAD=single, unless
the caller set it): a host thread a vCPU, two VMs side by side are much
slower. The kernels' sections stay in the main lane, which keeps the
two lanes' ends close (the times measured: Documentation/testing.rst,
"Run times").

The summary gives each section's wall time and core-seconds (the CPU
time of the programs it ran, VMs and builds included: Accounted), each
lane's and the run's. A run longer than its budget (IBPD_CHECK_BUDGET
seconds, by default 3600: 60 of CI's 90 minutes) prints a warning that
names the sections that grew against the times recorded in
scripts/tests/check-times (check --record-times LOG writes them:
times.py), each as a share of its run, so that a slower machine does
not count as growth.
"""

import contextlib
import os
import resource
import subprocess
import sys
import threading
import time

from . import builds, tap

MAIN, DEBUG, ANY = "main", "debug", "any"
BUDGET = 3600
TIMES = os.path.join("scripts", "tests", "check-times")
# a section is named as grown when its share of the run is this many
# times the recorded one's, and that share is at least this many
# seconds more (a section of seconds that doubles is noise)
GROWN = 1.25
GROWN_SECS = 60

_section_cpu = threading.local()


class Accounted(subprocess.Popen):
    """subprocess.Popen whose reaping adds the child's CPU time (with that
    of the descendants it reaped: a VM's qemu, a build's compilers) to
    the section that the calling thread runs. The runner puts it in
    subprocess's place while it runs, so that subprocess.run() in a
    section counts too. Only a wait reaps through _try_wait(); a child
    that poll() reaps is not counted."""

    def _try_wait(self, wait_flags):
        try:
            pid, sts, ru = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return (self.pid, 0)
        if pid == self.pid and hasattr(_section_cpu, "secs"):
            _section_cpu.secs += ru.ru_utime + ru.ru_stime
        return (pid, sts)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def read_times(path):
    """{section: wall seconds} of a check-times file."""
    times = {}
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if w and not w[0].startswith("#") and len(w) >= 3:
                    times[w[0]] = float(w[2])
    except FileNotFoundError:
        pass
    return times


def grown(times, recorded, factor=GROWN, floor=None):
    """The sections of times {name: secs} whose share of their run is at
    least factor times their share in recorded, and floor (GROWN_SECS)
    seconds more than that share, then those that recorded lacks:
    [(name, secs, recorded secs or None, growth)], most grown first."""
    floor = GROWN_SECS if floor is None else floor
    total = sum(times.values()) or 1
    rtotal = sum(recorded.values()) or 1
    out = []
    for name, secs in times.items():
        r = recorded.get(name)
        if r is None:
            out.append((name, secs, None, float("inf")))
            continue
        share = (r or 1) * total / rtotal
        g = secs / share
        if g >= factor and secs - share >= floor:
            out.append((name, secs, r, g))
    return sorted(out, key=lambda x: (x[2] is None, -x[3]))


def parse_times(log):
    """[(section, lane, wall, cpu)] of a run's summary ("# time:"
    lines; cpu None in a run's from before core-seconds were counted)."""
    rows = []
    for line in log:
        w = line.split()
        if (len(w) >= 7 and w[:2] == ["#", "time:"] and w[4] == "lane"
                and w[2] != "all"):
            rows.append((w[2], w[3], int(w[5]),
                         int(w[7]) if len(w) >= 9 else None))
    return rows


class Lane:
    """Where a lane's sections print."""

    def __init__(self, name, stream, start):
        self.name = name
        self.stream = stream
        self.start = start

    def print(self, line=""):
        self.stream.write(line + "\n")
        self.stream.flush()

    def section(self, title):
        self.print()
        self.print("### %s (%ds)" % (title, time.monotonic() - self.start))


class Tee:
    """A file and a lane's stream as one (a Writer's out)."""

    def __init__(self, *files):
        self.files = files

    def write(self, text):
        for f in self.files:
            f.write(text)

    def flush(self):
        for f in self.files:
            f.flush()


class Context:
    """What a section's run() gets: the checkout, the output directory,
    the kernels and the mode, its section (its VM and guest command),
    step()/boot()/writer() to run and record, fail() for what could not
    run."""

    def __init__(self, top, out, kernels, quick, lane, runner, section=None):
        self.section = section
        self.top = top
        self.out = out
        self.kernels = kernels
        self.quick = quick
        self.lane = lane
        self._runner = runner
        self.ok = True

    def path(self, *parts):
        return os.path.join(self.top, *parts)

    def tap_path(self, name):
        return self._runner.tap_path(name)

    def environ(self, env=None):
        """The environment of what the section runs: the caller's, the
        runner's (how a VM runs its vCPUs) and env on top. A program the
        section starts itself, not through step(), is given this one."""
        e = dict(os.environ)
        e.update(self._runner.env)
        e.update(env or {})
        return e

    def step(self, name, argv, env=None, show=True, nested=False,
             divert=None):
        """Runs argv (in the checkout), its output (stderr too) to
        out/check/NAME.tap and, if show, the lane's stream. A step that
        exits non-zero without a failed case in its output counts as one
        failed case. divert (PREFIX, FILE): every line to FILE too
        (appended), those that start with PREFIX (a program's raw
        figures) there only.
        True if it exited 0.
        """
        self._runner.nested[name] = nested
        self._runner.wrote(name)
        e = self.environ(env)
        prefix, side = divert or (None, os.devnull)
        with open(self.tap_path(name), "w") as f, open(side, "a") as d:
            p = subprocess.Popen(argv, cwd=self.top, env=e,
                                 stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT,
                                 text=True, errors="replace")
            for line in p.stdout:
                d.write(line)
                if prefix and line.startswith(prefix):
                    continue
                f.write(line)
                f.flush()
                if show:
                    self.lane.stream.write(line)
                    self.lane.stream.flush()
            rc = p.wait()
        if rc == 0:
            return True
        self.ok = False
        with open(self.tap_path(name)) as f:
            r = tap.parse(f, nested)
        if not r.counts.failed:
            self.record(name, tap.Counts(failed=1).totals(
                "%s exited %d" % (name, rc)), append=True)
        return False

    def boot(self, args=(), env=None, name=None, vm=None, guest=None,
             modules=(), ko=None, log=None, timeout=None, nested=False,
             divert=None):
        """The section's guest command (guest, else the section's) with
        args in its VM (vm, else the section's), as the step NAME (the
        section's name); vm-run's command line from the declaration
        (vm.VM.argv) with modules, ko, log and timeout on top. A VM that
        keeps its console (VM.console) keeps it in out/check/
        NAME-console.log unless log says where. True if it passed."""
        name = name or self.section.name
        vm = vm or self.section.vm
        guest = guest or self.section.guest
        if vm.console and not log:
            log = self.console(name)
        cmd = [self.path(guest[0])] + list(guest[1:]) + list(args)
        return self.step(name, vm.argv(self.top, cmd, modules=modules,
                                       ko=ko, log=log, timeout=timeout),
                         env=env, nested=nested, divert=divert)

    def console(self, name=None):
        """Where the boot NAME keeps its console log (VM.console)."""
        return os.path.join(self.out, "%s-console.log"
                            % (name or self.section.name))

    @contextlib.contextmanager
    def writer(self, name=None):
        """A step run here, in the program: a tap.Writer to its TAP file
        and the lane; its totals written at the end, a failed case
        failing the section."""
        name = name or self.section.name
        self._runner.nested[name] = False
        self._runner.wrote(name)
        with open(self.tap_path(name), "w") as f:
            w = tap.Writer(out=Tee(f, self.lane.stream))
            try:
                yield w
            except Exception as e:  # the host half's own bug: a case
                w.ok(False, "%s: %s: %s" % (name, type(e).__name__, e))
            if not w.totals():
                self.ok = False

    def keep(self, value):
        """What this section made that later ones use (result())."""
        self._runner.results[self.section.name] = value

    def result(self, name):
        """What the section NAME kept, if it has run in this run and
        passed (else None)."""
        if not self.passed(name):
            return None
        return self._runner.results.get(name)

    def selected(self, name):
        """Whether this run has the section NAME."""
        return any(s.name == name for s in self._runner.sections)

    def passed(self, name):
        """Whether the section NAME has run in this run and passed."""
        return self._runner.done.get(name, False)

    def fail(self, name, why):
        """A step that could not run: one failed case."""
        self.ok = False
        self.record(name, tap.Counts(failed=1).totals(why))

    def record(self, name, line, append=False):
        self._runner.wrote(name)
        with open(self.tap_path(name), "a" if append else "w") as f:
            f.write(line + "\n")
        self.lane.print(line)


class Runner:
    def __init__(self, top, sections, kernels, quick=False, debug=True,
                 out=None, stream=None):
        self.top = top
        self.out = out or os.path.join(top, "out", "check")
        self.kernels = kernels
        self.quick = quick
        self.debug = debug
        self.stream = stream or sys.stdout
        self.nested = {}
        self.start = time.monotonic()
        self.sections = [s for s in sections if s.wanted(quick, debug)]
        self.queue = [s for s in self.sections if s.lane == ANY]
        self.lock = threading.Lock()
        self.done = {}
        self.results = {}	# what sections kept (Context.keep)
        self.steps = []	# the names of this run's TAP files
        self.times = []
        self.env = {}	# what every step's environment has on top
        self.builds = builds.Builds(self.out)	# what sections need built

    def wrote(self, name):
        with self.lock:
            if name not in self.steps:
                self.steps.append(name)

    def take(self):
        with self.lock:
            return self.queue.pop(0) if self.queue else None

    def run_section(self, s, lane):
        lane.section(s.title)
        t = time.monotonic()
        _section_cpu.secs = 0.0
        ctx = Context(self.top, self.out, self.kernels, self.quick, lane,
                      self, s)
        try:
            if all(self.builds.need(ctx, n)
                   for n in builds.wanted(s.builds, self.quick)):
                s.run(ctx)
        except Exception as e:  # a section's own bug: it failed
            ctx.fail(s.name + "-error", "%s: %s: %s" % (
                s.name, type(e).__name__, e))
        self.done[s.name] = ctx.ok
        self.times.append((s.name, lane.name, time.monotonic() - t,
                           _section_cpu.secs))
        del _section_cpu.secs
        return ctx.ok

    def run_lane(self, lane, name):
        for s in self.sections:
            if s.lane == name:
                self.run_section(s, lane)
        while True:
            s = self.take()
            if not s:
                break
            self.run_section(s, lane)

    def run(self):
        """All the sections; the summary last. Exit status."""
        popen = subprocess.Popen
        subprocess.Popen = Accounted
        try:
            return self._run()
        finally:
            subprocess.Popen = popen

    def _run(self):
        os.makedirs(self.out, exist_ok=True)
        self.cpu0 = children_cpu()
        main = Lane(MAIN, self.stream, self.start)
        clash = builds.clashes(self.sections, self.top, self.quick)
        if clash:	# one build directory, two builds: not in one run
            for c in clash:
                main.print("# error: this run's sections want %s" % c)
            return 1
        lanes = {DEBUG if s.lane == DEBUG else MAIN for s in self.sections}
        if lanes == {DEBUG}:	# the debug lane alone (make soak) prints
            self.run_lane(Lane(DEBUG, self.stream, self.start), DEBUG)
            return self.summary(main)
        debug = None
        t = None
        if DEBUG in lanes:
            # Two lanes' VMs of two vCPUs, each vCPU a host thread of its
            # own, are four threads on two CPUs: a guest CPU that waits on
            # another (a spinlock, a TLB flush's IPI) spins while that
            # one's thread waits for a host CPU (two boots side by side
            # each way: Documentation/testing.rst, "The VM under the
            # tests").
            if "IBPD_VM_TCG_THREAD" not in os.environ:
                self.env["IBPD_VM_TCG_THREAD"] = "single"
            log = open(os.path.join(self.out, "debug-lane.log"), "w")
            debug = Lane(DEBUG, log, self.start)
            main.section("debug kernel lane: started beside the sections "
                         "below, printed after them (progress: %s)"
                         % log.name)
            t = threading.Thread(target=self.run_lane, args=(debug, DEBUG))
            t.start()
        self.run_lane(main, MAIN)
        if t:
            t.join()
            debug.stream.close()
            with open(debug.stream.name) as f:
                for line in f:
                    main.stream.write(line)
            main.stream.flush()
        return self.summary(main)

    def tap_path(self, name):
        return os.path.join(self.out, name + ".tap")

    def print_times(self, lane):
        """Each section's wall time and core-seconds, each lane's, the
        run's; the budget's warning."""
        lanes = {}
        for name, where, secs, cpu in self.times:
            lane.print("# time: %-16s %-5s lane %5d s %6d core-s"
                       % (name, where, secs, cpu))
            lanes[where] = lanes.get(where, 0) + secs
        for where, secs in sorted(lanes.items()):
            lane.print("# time: %s lane: %d s of sections" % (where, secs))
        wall = time.monotonic() - self.start
        lane.print("# time: all %d s, %d core-s" % (
            wall, children_cpu() - self.cpu0))
        budget = int(os.environ.get("IBPD_CHECK_BUDGET", BUDGET))
        if wall <= budget:
            return
        lane.print("# warning: this run took %d s, over its budget of %d s "
                   "(IBPD_CHECK_BUDGET; CI stops a run at 5400 s)"
                   % (wall, budget))
        recorded = read_times(os.path.join(self.top, TIMES))
        rows = grown({n: s for n, _, s, _ in self.times}, recorded)
        if not rows:
            lane.print("# warning: no section grew against %s: the machine "
                       "is slower" % TIMES)
        for name, secs, r, g in rows:
            lane.print("# warning: %s grew: %d s%s" % (
                name, secs, " (new)" if r is None else
                ", %.2fx its share of the run in %s (%d s)" % (g, TIMES, r)))

    def summary(self, lane):
        lane.section("summary")
        total = tap.Counts()
        notes = []
        for name in sorted(self.steps):
            with open(self.tap_path(name), errors="replace") as f:
                r = tap.parse(f, self.nested.get(name, False))
            total += r.counts
            for line in r.failures:
                lane.print("# failed in %s: %s" % (name, line))
            for line in r.stops:
                lane.print("# failed in %s: %s" % (name, line))
            notes += r.notes
        for n in notes:
            lane.print("# failed: %s" % n)
        self.print_times(lane)
        lane.print(total.totals())
        lane.print(total.summary())
        ok = total.failed == 0 and all(self.done.get(s.name, False)
                                       for s in self.sections)
        return 0 if ok else 1

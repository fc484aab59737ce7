# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""stage-upstream --check: the staged series checked, as kselftest TAP
(scripts/lib/ibpd_tap.py's writer, the plan counted and printed
with the totals).

The mails first: staging refuses without a git identity; the numbering,
the cover letters and the sign-offs; the words of every log, cover letter
and man page (no unmerged kernel version, no invented identity, copyright
lines the sender's). Then the kernel series: applied to a pristine copy
of the source (fixes, then for-next), the series' drivers/infiniband/core,
sw/rxe and sw/siw built as modules for the stock kernel with W=1
(scripts/build/kernel-build --upstream, the booted proof's build), the
rdma kselftests built with W=1, checkpatch --strict on every kernel patch,
and the uAPI headers that rdma-core's kernel-headers/update writes. Then
the rdma-core series' cases (rdma_core_check.py).
"""

import glob
import os
import re
import shutil
import subprocess

from .common import (COVER, STAGE_UPSTREAM, TOP, grep, log, ok, output,
                     patches, read, run, tap_writer, touched, write)
from . import recipients
from .rdma_core_check import RdmaCoreCheck
from .staging import headers_update

WHO = "stage-upstream"


class Check:
    """The cases of the series that stage() made (a Staged), in run()'s
    order."""

    def __init__(self, staged):
        self.s = staged
        self.st, self.up, self.kver = staged.st, staged.up, staged.kver
        self.work = self.st.work
        self.tree = os.path.join(self.work, "linux")
        self.out = os.path.join(self.work, "out")
        self.kpatches = (patches(os.path.join(self.up, "linux-fixes")) +
                         patches(os.path.join(self.up, "linux")))
        self.tap = tap_writer()
        # kernel-build --upstream: the series is staged (out/upstream)
        self.staged_env = dict(os.environ, IBPD_UPSTREAM_STAGED="1")

    def run(self):
        """Every case; True when none failed."""
        for case in (self.refusal, self.numbering, self.recipients,
                     self.words, self.apply,
                     self.core, self.kselftests, self.checkpatch,
                     self.headers):
            case()
        RdmaCoreCheck(os.path.join(self.up, "rdma-core"), self.work,
                      self.tap).run()
        return self.tap.totals()

    def refusal(self):
        """No identity, no series: the refusal, with git's global and
        system configuration out of the way (unless this repository has
        its own)."""
        local = [output(["git", "-C", TOP, "config", "--local", k])
                 for k in ("user.name", "user.email")]
        if any(local):
            self.tap.skip("no series without a git identity: this "
                          "repository sets its own")
            return
        out = os.path.join(self.work, "refusal")
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null",
                   GIT_CONFIG_NOSYSTEM="1")
        good = run([STAGE_UPSTREAM], out=out, env=env) != 0
        good &= bool(grep("no git identity: set git config user.name and "
                          "user.email", out))
        good &= os.path.isfile(os.path.join(self.up, "linux", COVER))
        ok(self.tap, good, "no series without a git identity (user.name, "
           "user.email unset: refused)", out)

    def numbering(self):
        """The numbering, and no patch signed by anyone but the caller."""
        name, email = self.st.name, self.st.email
        problems = []
        for d in ["linux-fixes", "linux", "rdma-core"]:
            d = os.path.join(self.up, d)
            all_ = sorted(glob.glob(os.path.join(d, "0*.patch")))
            cover = os.path.join(d, COVER)
            # a series of one patch goes without a cover letter
            if len(all_) == 1 and not os.path.isfile(cover):
                want = re.compile(r"^Subject: \[PATCH [a-z0-9.-]+\] ", re.M)
            else:
                want = re.compile(r"^Subject: \[PATCH [a-z0-9.-]+ [0-9]+/%d\] "
                                  % (len(all_) - 1), re.M)
                if len(all_) == 2:
                    problems.append(f"# {d}: a cover letter for one patch")
            for p in all_:
                lines = read(p).split("\n")
                i = next(i for i, l in enumerate(lines)
                         if l.startswith("Subject: "))
                subj = "\n".join(lines[i:i + 2]).replace("\n ", " ")
                if not want.search(subj):
                    problems.append(f"# {p}: {subj}")
                if os.path.basename(p) == COVER:
                    continue
                signed = [l for l in lines if l.startswith("Signed-off-by: ")]
                if signed != [f"Signed-off-by: {name} <{email}>"]:
                    problems.append(f"# {p}: not signed off by {name} "
                                    f"<{email}> alone")
            if os.path.isfile(cover) and re.search("SUBJECT HERE|BLURB HERE",
                                                   read(cover)):
                problems.append(f"# {d}/{COVER}: SUBJECT HERE or BLURB "
                                "HERE left")
        for p in patches(os.path.join(self.up, "linux-fixes")):
            if not (grep(r'^Fixes: [0-9a-f]{12} \(".*"\)$', p) and
                    "Cc: stable@vger.kernel.org" in read(p).split("\n")):
                problems.append(f"# {p}: no Fixes: or no Cc: stable")
        # for-next: a fix there needs fault injection to reach, not stable
        for p in patches(os.path.join(self.up, "linux")):
            if grep(r"^Cc: stable", p):
                problems.append(f"# {p}: Cc: stable in for-next")
        write(self.out, "".join(l + "\n" for l in problems))
        ok(self.tap, not problems, f"3 series, [PATCH <tree> n/m] with cover "
           f"letters (one patch: [PATCH <tree>], none), signed off by {name} "
           "alone; the -rc fixes with Fixes: and Cc: stable, for-next "
           "without Cc: stable", self.out)

    def recipients(self):
        """Every mail has To: (maintainers), and each patch names the
        maintainers of what it touches: the kselftest list for a kernel
        patch under tools/testing/selftests, linux-rdma for every other
        kernel patch, the provider's own maintainer (rdma-core's
        MAINTAINERS) for an rdma-core patch under providers/."""
        problems = []
        mails = sorted(glob.glob(os.path.join(self.up, "*", "0*.patch")))
        rc = os.path.join(self.up, "rdma-core")
        sections = recipients.rdma_core_sections(self.s.rc)
        for p in mails:
            head = read(p).split("\n\n", 1)[0]
            name = os.path.relpath(p, self.up)
            if not re.search(r"^To: ", head, re.M):
                problems.append(f"# {name}: no To:")
                continue
            if os.path.basename(p) == COVER:
                continue
            files = touched([p])
            if p.startswith(rc + "/"):
                want = [m for f in files if f.startswith("providers/")
                        for _, sec in sections[1]
                        if any(rx.match(f) for rx in sec["F"])
                        for m in sec["M"]]
            elif any(f.startswith("tools/testing/selftests/") for f in files):
                want = ["linux-kselftest@vger.kernel.org"]
            else:
                want = ["linux-rdma@vger.kernel.org"]
            missing = [w for w in want if w not in head]
            if missing:
                problems.append(f"# {name}: not to {', '.join(missing)}")
        write(self.out, "".join(l + "\n" for l in problems))
        ok(self.tap, bool(mails) and not problems,
           f"To/Cc of {len(mails)} mails: get_maintainer.pl of the patched "
           "kernel source, rdma-core's MAINTAINERS (rxe's and siw's "
           "maintainers, the kselftest list)", self.out)

    # a kernel version: "7.5", "Linux 7.5", "v7.5-rc1", "7.5.y" (one digit
    # before the dot: rdma-core's are two, IP addresses' parts longer)
    KVERSION = re.compile(r"(?<![\w.])v?([1-9])\.([0-9]{1,2})(?![0-9])")
    # no person nor company: what an invented identity looks like
    INVENTED = re.compile(r"ibpd authors|the ibpd (project|team)|your name|"
                          r"@[\w.-]*\.(example|invalid|test)\b|noreply",
                          re.I)

    @staticmethod
    def prose(path):
        """What a mail says in words: the message (and notes) up to the
        diff, and the lines that a man page of the diff gains."""
        lines, cur = [], None
        for l in read(path).split("\n"):
            if l.startswith("diff --git "):
                cur = l.split(" b/")[-1]
            elif cur is None:
                lines.append(l)
            elif cur.endswith(".md") and l.startswith("+") and \
                    not l.startswith("+++"):
                lines.append(l[1:])
        return lines

    def words(self):
        """The words of every log, cover letter and man page: no kernel
        version newer than the source the series is made against (none is
        merged), no invented identity (the sender's own aside, whose
        address may be a placeholder in make check), a copyright line the
        series adds names the sender; a stable backport, if one is staged,
        opens with exactly "commit <sha1> upstream."."""
        base = tuple(int(x) for x in self.kver.split(".")[:2])
        own = f"{self.st.name} <{self.st.email}>"
        problems = []
        mails = sorted(glob.glob(os.path.join(self.up, "*", "0*.patch")))
        for p in mails:
            name = os.path.relpath(p, self.up)
            for l in self.prose(p):
                for m in self.KVERSION.finditer(l):
                    if (int(m.group(1)), int(m.group(2))) > base:
                        problems.append(f"# {name}: names {m.group(0)}, "
                                        f"newer than {self.kver}: {l}")
                if self.INVENTED.search(l.replace(own, "").replace(
                        self.st.email, "")):
                    problems.append(f"# {name}: an invented identity: {l}")
            for l in read(p).split("\n"):
                if re.match(r"\+.*Copyright \(c\)", l) and \
                        self.st.name not in l:
                    problems.append(f"# {name}: a copyright not the "
                                    f"sender's: {l}")
        stable = sorted(glob.glob(os.path.join(self.up, "stable-*",
                                               "0*.patch")))
        for p in [p for p in stable if os.path.basename(p) != COVER]:
            body = read(p).split("\n\n", 1)[1]
            if not re.match(r"commit [0-9a-f]{40} upstream\.\n\n", body):
                problems.append(f"# {p}: the first line is not "
                                "'commit <sha1> upstream.'")
        write(self.out, "".join(l + "\n" for l in problems))
        ok(self.tap, bool(mails) and not problems,
           f"the words of {len(mails)} mails: no kernel version newer than "
           f"{'.'.join(map(str, base))}, no invented identity, copyright "
           "lines the sender's"
           + (", stable backports opening with 'commit <sha1> upstream.'"
              if stable else " (no stable series)"), self.out)

    def apply(self):
        """The kernel series, fixes then for-next, applied to a pristine
        copy (hard links) of the source, where the later cases build."""
        log(WHO, f"pristine copy of {os.path.basename(self.s.src)} "
            "(hard links)")
        subprocess.run(["cp", "-al", self.s.src, self.tree], check=True)
        good = True
        for p in self.kpatches:
            with open(p) as f:
                if run(["patch", "-p1", "-s", "-d", self.tree,
                        "--no-backup-if-mismatch"], out=self.out, stdin=f):
                    self.tap.diag(f"{p} does not apply")
                    good = False
                    break
        ok(self.tap, good, "the fixes, then for-next, apply to "
           f"{os.path.basename(self.s.src)}", self.out)

    def core(self):
        """The series' drivers/infiniband/core, sw/rxe and sw/siw built with
        W=1 as modules for the stock kernel: the build that the booted
        proof boots (scripts/build/kernel-build --upstream, cached by the
        series' diffs with its log, build.log), which must show no warning
        in a file that the series touches."""
        log(WHO, "the series' modules (kernel-build --upstream: "
            "drivers/infiniband/core, sw/rxe and sw/siw, W=1)")
        files = [f for f in touched(self.s.stored)
                 if not f.startswith("tools/")]
        r = subprocess.run([os.path.join(TOP, "scripts/build/kernel-build"),
                            "--upstream", self.s.series], env=self.staged_env,
                           stdout=subprocess.PIPE, text=True)
        kd = r.stdout.strip()
        built = r.returncode == 0 and os.path.isfile(
            os.path.join(kd, "mod/core/ib_uverbs.ko"))
        warned = False
        for f in files if built else []:
            for l in grep(rf"(^|/){re.escape(f)}:[0-9]+:[0-9]+: "
                          "(warning|error)", os.path.join(kd, "build.log")):
                self.tap.diag(l)
                warned = True
        self.tap.ok(built and not warned,
                    "drivers/infiniband/core, sw/rxe and sw/siw build with "
                    f"the series as modules for {self.kver} (W=1: no warning "
                    f"in {' '.join(os.path.basename(f) for f in files)})")

    def steps(self, cmds):
        """cmds in turn, their output in self.out, until one fails; the
        status of that one."""
        open(self.out, "w").close()
        for cmd in cmds:
            rc = run(cmd, out=self.out, append=True)
            if rc:
                return rc
        return 0

    def kselftests(self):
        """tools/testing/selftests/rdma of the patched copy, built with W=1
        against the patched source's headers (make headers, by
        kernel-build --upstream --headers: the same source and patches,
        made once a series): no warning."""
        log(WHO, "the kselftests of tools/testing/selftests/rdma")
        ksft = os.path.join(self.work, "ksft")
        rdma = os.path.join(self.tree, "tools/testing/selftests/rdma")
        r = subprocess.run([os.path.join(TOP, "scripts/build/kernel-build"),
                            "--upstream", "--headers", self.s.series],
                           env=self.staged_env, stdout=subprocess.PIPE,
                           text=True)
        rc = r.returncode
        if rc:
            write(self.out, "kernel-build --upstream --headers failed\n")
        else:
            rc = self.steps([
                ["mkdir", "-p", ksft],
                ["make", "-C", rdma, f"OUTPUT={ksft}",
                 f"KHDR_INCLUDES=-isystem {r.stdout.strip()}", "W=1", "all"]])
        built = os.access(os.path.join(ksft, "shared_ucontext"), os.X_OK)
        ok(self.tap, rc == 0 and built and
           not grep("warning|error", self.out, re.I),
           "tools/testing/selftests/rdma builds shared_ucontext "
           "(no warnings)", self.out)

    def checkpatch(self):
        """Run from the copy, without git (GIT_DIR names nothing: the copy
        lies in this repository's tree): no git-based checks. That is, no
        linux history to check the Fixes: commit ids against
        (UNKNOWN_COMMIT_ID, which checkpatch reports for any id without
        one); the fixes' messages say where their ids come from. Debian's
        python3 has ply for spdxcheck.py, a python3 earlier in PATH may
        not. The patches touch files that MAINTAINERS gives to linux-rdma
        (INFINIBAND SUBSYSTEM, and tools/testing/selftests/rdma)."""
        env = dict(os.environ, GIT_DIR="/nonexistent",
                   PATH="/usr/bin:" + os.environ.get("PATH", ""))
        run(["perl", "scripts/checkpatch.pl", "--strict", "--show-types",
             "--ignore", "FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID",
             *self.kpatches],
            out=self.out, cwd=self.tree, env=env)
        unmaintained = False
        for f in touched(self.kpatches):
            r = subprocess.run(["perl", "scripts/get_maintainer.pl",
                                "--no-git", "--no-git-fallback", "-f", f],
                               cwd=self.tree, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            if "linux-rdma@vger.kernel.org" not in r.stdout:
                with open(self.out, "a") as o:
                    o.write(f"# {f}: no linux-rdma in MAINTAINERS\n")
                unmaintained = True
        totals = [l.split() for l in grep("^total:", self.out)]
        sums = [sum(int(t[i]) for t in totals) for i in (1, 3, 5)]
        n = len(self.kpatches)
        self.tap.diag(f"checkpatch --strict over {n} kernel patches: "
                      f"errors/warnings/checks: {sums[0]} {sums[1]} "
                      f"{sums[2]}")
        ok(self.tap, sums == [0, 0, 0] and not unmaintained and
           len(totals) == n and not grep("traceback", self.out, re.I),
           "checkpatch --strict: 0 errors, 0 warnings, 0 checks on "
           "every kernel patch", self.out)

    def headers(self):
        """rdma-core's own kernel-headers/update --not-final against the
        staged kernel tree, at its base (the pristine source) and at the
        head of the for-next series, each in a clone of the pristine
        rdma-core: what the series gives rdma-core's headers is the
        difference. It must be the staged "Update kernel headers" commit
        when there is one, and nothing when there is none."""
        s, heads = self.s, {}
        out = os.path.join(self.work, "headers")
        open(out, "w").close()
        for name, commit in (("base", s.kbase), ("series", "HEAD")):
            d = os.path.join(self.work, f"headers-{name}")
            shutil.rmtree(d, ignore_errors=True)
            self.st.git(self.work, "clone", "-q", s.rc, d)
            self.st.git(d, "checkout", "-q", "-b", "headers", s.rc_base)
            if not headers_update(self.st, d, s.krepo, commit,
                                  out + "." + name):
                with open(out, "a") as f:
                    f.write(read(out + "." + name))
                heads[name] = None
                continue
            heads[name] = output(["git", "-C", d, "rev-parse",
                                  "HEAD:kernel-headers"])
        base_dir = os.path.join(self.work, "headers-base")
        drift = output(["git", "-C", base_dir, "diff", "--name-only",
                        s.rc_base, "HEAD", "--", "kernel-headers"])
        drift = " ".join(os.path.basename(f) for f in drift.split())
        first = output(["git", "-C", s.rc, "log", "--reverse",
                        "--format=%H %s", f"{s.rc_base}..HEAD"])
        first = first.split("\n")[0].split(" ", 1) if first else ["", ""]
        if first[1] == "Update kernel headers":
            want = output(["git", "-C", s.rc, "rev-parse",
                           f"{first[0]}:kernel-headers"])
            good = heads["series"] is not None and heads["series"] == want
            what = ("the staged \"Update kernel headers\" is what rdma-core's "
                    "kernel-headers/update --not-final writes for the staged "
                    "kernel tree")
        else:
            good = None not in heads.values() and \
                heads["series"] == heads["base"]
            self.tap.diag(f"kernel-headers/update --not-final against "
                          f"{self.kver}'s source changes "
                          f"{drift or 'nothing'}, with the kernel series as "
                          "without it")
            what = ("no \"Update kernel headers\": rdma-core's "
                    "kernel-headers/update --not-final writes the same "
                    "headers for the staged kernel tree as for the pristine "
                    "source (the kernel series adds no uAPI)")
        ok(self.tap, good, what, out)


#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tests of the ibpd command-line tool (libibverbs + ibpd's DV API), in the
# test VM (ibpd0 and rxe0 up): usage and exit codes, `ibpd devices`, `ibpd
# pds` on the files of another process (text and JSON, checked with
# python3; JSON on error paths too, names that are not UTF-8, a file
# without a context, another user's process), what observing a file does
# to it (with gdb, which stops ibpd while it lists a file), `ibpd demo`.
# kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib/ksft.sh
. "$dir/lib/ksft.sh"
ibpd=$build/ibpd
holders=()
# at exit: the holders told to go (their fifos closed), at_list_pds's gdb
# and py's python3 ended, not left to see the end of their input after the
# runner moved on
trap 'for h in "${holders[@]}"; do exec {h}>&-; done; gdb_stop; py_stop; rm -rf "$tmp"' EXIT

# hold DEV N [TAG]: starts ibpd_hold DEV N (TAG names its files, default
# DEV); sets hold_pid and hold_fd, its stdin in hold_in, its output in
# $tmp/hold-TAG.out. With hold_nocontext set, the holder also has fd 9 open
# on DEV's uverbs device, a file without a context.
hold() {
	local tag=${3:-$1} fifo=$tmp/hold-${3:-$1}
	mkfifo "$fifo"
	(
		[ -z "${hold_nocontext:-}" ] || exec 9< "/dev/infiniband/$(uverbs_of "$1")"
		exec "$ibpd_hold" "$1" "$2"
	) < "$fifo" > "$tmp/hold-$tag.out" &
	hold_pid=$!
	exec {hold_in}> "$fifo"
	holders+=("$hold_in")
	for _ in {1..600}; do
		grep -qs ready "$tmp/hold-$tag.out" && break
		nap
	done
	hold_fd=$(find "/proc/$hold_pid/fd" -lname '/dev/infiniband/uverbs*' \
		! -name 9 -printf '%f\n')
}

# uverbs_of DEV: the uverbs character device of RDMA device DEV.
uverbs_of() {
	local f d
	for f in /sys/class/infiniband_verbs/uverbs*; do
		read -r d < "$f/ibdev"
		[ "$d" = "$1" ] && echo "${f##*/}"
	done
}

# nap: 0.1 s, a timeout of read on a fifo no one writes to; a sleep is a
# process to start, and under TCG that costs more than the nap.
mkfifo "$tmp/nap"
exec {nap_fd}<> "$tmp/nap"
nap() {
	read -r -t 0.1 -u "$nap_fd" _
	return 0
}

# objects PID TAG: asks holder PID, started as TAG, what its file holds
# (SIGUSR1); prints its answer, "N pds, M async event files".
objects() {
	local pid=$1 out=$tmp/hold-$2.out n
	n=$(grep -c '^objects:' "$out")
	kill -USR1 "$pid"
	for _ in {1..100}; do
		[ "$(grep -c '^objects:' "$out")" -gt "$n" ] && break
		nap
	done
	grep '^objects:' "$out" | tail -n 1 | sed 's/^objects: //'
}

# at_list_pds GDBCMD ARGS...: runs ibpd ARGS (words without spaces or
# shell syntax: gdb's run passes them through a shell) under gdb, which
# stops it where it lists a file's PDs (ibpddv_list_pds: the file is
# imported; $at_fn instead, when set; at its call $at_skip + 1) and runs gdb command GDBCMD there
# ("shell CMD" for a shell command). ibpd's stdout and stderr in
# $tmp/gdb.out and $tmp/gdb.err, its exit status in gdb_rc (empty when
# gdb does not answer within 600 s), gdb's own output in $tmp/gdb.log.
# One gdb runs ibpd for every call (gdb_start, at the start of the
# script, so that its own start, seconds under TCG, runs beside the cases
# before): each call sets its own breakpoint, runs ibpd afresh and leaves
# neither breakpoint nor process behind. gdb reads no separate debug
# files (debug-file-directory) and loads no libthread_db and no scripts
# (auto-load): it would read libc's and ld.so's (libc6-dbg), seconds
# under TCG, on every run, for breakpoints that need only the symbols the
# libraries export.
at_list_pds() {
	local cmd=$1 line=
	shift
	gdb_rc=
	: > "$tmp/gdb.log"
	rm -f "$tmp/timeouts"
	gdb_start
	# shellcheck disable=SC2016 # gdb's $_exitcode and $bpnum
	printf '%s\n' 'set $_exitcode = $void' "break ${at_fn:-ibpddv_list_pds}" \
		"ignore \$bpnum ${at_skip:-0}" \
		"run $* > $tmp/gdb.out 2> $tmp/gdb.err < /dev/null" "$cmd" \
		delete continue kill 'print $_exitcode' 'echo @@done\n' \
		>&"${gdb_io[1]}"
	while IFS= read -r -t 600 -u "${gdb_io[0]}" line && [ "$line" != @@done ]; do
		echo "$line" >> "$tmp/gdb.log"
	done
	if [ "$line" != @@done ]; then
		echo "at_list_pds: no answer from gdb" >> "$tmp/gdb.log"
		gdb_stop
		return
	fi
	# shellcheck disable=SC2016 # gdb's value history
	gdb_rc=$(sed -n 's/^\$[0-9]* = //p' "$tmp/gdb.log")
}

# gdb_start: at_list_pds's gdb, started unless it runs, without the
# holders' fifos (their end of file is theirs to see) and py's; its stdin
# and stdout in gdb_io. gdb_stop: it ends.
gdb_start() {
	[ -n "${gdb_pid:-}" ] && kill -0 "$gdb_pid" 2> /dev/null && return
	gdb_stop
	coproc gdb_io {
		for h in "${holders[@]}"; do exec {h}>&-; done
		[ -z "${py_in:-}" ] || exec {py_in}>&- {py_out}<&-
		exec gdb -q -nx -iex 'set prompt' -iex 'set confirm off' \
			-iex 'set pagination off' -iex 'set debuginfod enabled off' \
			-iex "set debug-file-directory $tmp/no-debug-files" \
			-iex 'set auto-load off' \
			-iex 'set breakpoint pending on' "$ibpd" 2>&1
	}
	# shellcheck disable=SC2154 # the coprocess's
	gdb_pid=$gdb_io_PID
}

gdb_stop() {
	[ -n "${gdb_pid:-}" ] || return 0
	kill "$gdb_pid" 2> /dev/null
	wait "$gdb_pid" 2> /dev/null
	gdb_pid=
}

# py [-c CODE | -m MODULE | -] ARG...: what python3 with the same
# arguments does (a program from -c, a module's main, or the program on
# stdin, "py - ARG... <<'PY'"; sys.argv the same; stdin, stdout and
# stderr py's, opened afresh through /proc (stdout and stderr to append);
# its exit status python3's, 1 on an uncaught exception),
# run by one python3 for every call (py_start, at the start of the
# script): under TCG a python3 takes most of a second to start. py_stop:
# it ends.
py_start() {
	mkfifo "$tmp/py.in" "$tmp/py.out"
	python3 -c '
import os, runpy, sys, traceback
req, rep = sys.stdin, sys.stdout
while True:
    fds = req.readline().split()
    if not fds:
        break
    pid, fds = fds[0], fds[1:]
    mode = req.readline()[:-1]
    argv = [req.readline()[:-1] for _ in range(int(req.readline()))]
    code = []
    for line in iter(req.readline, ""):
        if line == "@@py-end@@\n":
            break
        code.append(line)
    def fd(n, how):
        try:
            return open(f"/proc/{pid}/fd/{fds[n]}" if n >= 0 else os.devnull, how)
        except OSError as e:
            print(f"py: fd {n} of {pid}: {e}", file=sys.__stderr__, flush=True)
            return open(os.devnull, how)
    ins, out, err = fd(0 if mode != "-" else -1, "r"), fd(1, "a"), fd(2, "a")
    sys.stdin, sys.stdout, sys.stderr = ins, out, err
    rc = 0
    try:
        if mode == "-m":
            sys.argv = argv
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            exec(compile("".join(code), argv[0], "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            rc = e.code or 0
        else:
            print(e.code, file=err)
            rc = 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    for f in (ins, out, err):
        f.close()
    sys.stdin, sys.stdout, sys.stderr = req, rep, sys.__stderr__
    rep.write(f"{rc}\n")
    rep.flush()
' < "$tmp/py.in" > "$tmp/py.out" 2> "$tmp/py.err" &
	py_pid=$!
	exec {py_in}> "$tmp/py.in" {py_out}< "$tmp/py.out"
}

py_stop() {
	[ -n "${py_pid:-}" ] || return 0
	[ ! -s "$tmp/py.err" ] || sed 's/^/# py: /' "$tmp/py.err"
	exec {py_in}>&- {py_out}<&-
	kill "$py_pid" 2> /dev/null
	wait "$py_pid" 2> /dev/null
	py_pid=
}

py() {
	local mode=$1 code='' rc
	shift
	case $mode in
	-c) code=$1; shift; set -- -c "$@" ;;
	-m) ;;
	-) IFS= read -rd '' code; set -- - "$@" ;;
	esac
	# (a write to the fifo of a python3 that is gone would end the script)
	if ! kill -0 "$py_pid" 2> /dev/null; then
		echo "py: python3 is gone: $(cat "$tmp/py.err")" >&2
		return 1
	fi
	# python3 opens copies of py's stdin, stdout and stderr: its own stay
	# while printf's redirection takes stdout
	exec {py_0}<&0 {py_1}>&1 {py_2}>&2
	printf '%s\n' "$BASHPID $py_0 $py_1 $py_2" "$mode" "$#" "$@" "$code" \
		@@py-end@@ >&"$py_in"
	if ! IFS= read -r -t 600 -u "$py_out" rc; then
		echo "py: no answer from python3: $(cat "$tmp/py.err")" >&2
		rc=1
	fi
	exec {py_0}<&- {py_1}>&- {py_2}>&-
	return "$rc"
}

# $wait_until WHAT...: what a case waits for in a gdb shell command
# (instead of a sleep long enough), polled every 0.1 s for up to 60 s;
# on a timeout it says so in $tmp/timeouts, which fails the case. WHAT:
# "lines N PATTERN FILE", N lines of FILE match PATTERN; "exited PID",
# process PID has exited (a zombie, or gone); "closed PID FD", PID's
# FD is closed.
wait_until="$tmp/wait_until $tmp/timeouts"
cat > "$tmp/wait_until" <<'EOF'
#!/bin/bash
log=$1
shift
met() {
	case $1 in
	lines) [ "$(grep -c "$3" "$4")" -ge "$2" ] ;;
	exited) [[ "$(sed -n 's/^State:[[:space:]]*//p' "/proc/$2/status" 2> /dev/null)" =~ ^(Z|X|$) ]] ;;
	closed) ! [ -e "/proc/$2/fd/$3" ] ;;
	esac
}
until met "$@"; do
	[ "$SECONDS" -lt 60 ] || { echo "wait_until $*: timed out" >> "$log"; exit 1; }
	sleep 0.1
done
EOF
chmod +x "$tmp/wait_until"

echo "TAP version 13"
if ! [ -x "$ibpd" ]; then
	echo "1..0 # SKIP no ibpd tool ($ibpd): the tool is built with libibpd"
	exit 4
fi
echo "1..47"
py_start
! command -v gdb > /dev/null || gdb_start

expect_rc 0 "--help" "$ibpd" --help
grep -q '^usage: ibpd' "$tmp/out"; ok $? "--help prints the usage"
expect_rc 2 "no command: usage error" "$ibpd"
expect_rc 2 "unknown command: usage error" "$ibpd" frobnicate
expect_rc 2 "invalid --pid: usage error" "$ibpd" pds --pid 12x
expect_rc 2 "invalid --fd: usage error" "$ibpd" pds --fd 12x
expect_rc 2 "negative --fd: usage error" "$ibpd" pds --fd -1
"$ibpd" --pid 0 pds > "$tmp/out" 2>&1
[ $? = 2 ] && grep -q "^ibpd: invalid pid '0'$" "$tmp/out"
ok $? "--pid 0: usage error, and says so"
expect_rc 2 "demo has no --json: usage error" "$ibpd" --json demo

"$ibpd" devices > "$tmp/out" 2>&1 &&
	grep -Eq '^ibpd0 +uverbs[0-9]+ +[0-9]+ +yes +yes$' "$tmp/out" &&
	grep -Eq '^rxe0 +uverbs[0-9]+ +[0-9]+ +no +no$' "$tmp/out"
ok $? "devices: ibpd0 is ibpd's and imports PDs, rxe0 neither"

"$ibpd" -d devices > "$tmp/out" 2>&1 &&
	grep -Eq '^ibpd0 +uverbs[0-9]+ +[0-9]+ +yes +yes +[0-9a-f]{16} +[0-9.]+ +[1-9][0-9]* +[1-9][0-9]*$' "$tmp/out"
ok $? "devices -d: GUID, firmware, max_pd and max_mr"

"$ibpd" devices --json > "$tmp/dev.json" 2> "$tmp/out" &&
	py -m json.tool "$tmp/dev.json" > /dev/null 2>> "$tmp/out" &&
	py - "$tmp/dev.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
devs = {d["device"]: d for d in json.load(open(sys.argv[1]))["devices"]}
assert devs["ibpd0"]["pd_import"] is True and devs["ibpd0"]["ibpd"] is True
assert devs["rxe0"]["pd_import"] is False and devs["rxe0"]["ibpd"] is False
assert all(d["uverbs"].startswith("uverbs") for d in devs.values())
PY
ok $? "devices --json: parses with python3 -m json.tool, says the same"

# devices_failed TAG RUN...: "ibpd devices" and "ibpd -j devices" under
# RUN (a prefix command) fail on ibpd0 and list rxe0: the error on
# stderr naming ibpd0 with TAG's message, ibpd0's row marked, exit 1.
devices_failed() {
	local msg=$1 rc rcj
	shift
	"$@" "$ibpd" devices > "$tmp/dv.txt" 2> "$tmp/dv.err"
	rc=$?
	"$@" "$ibpd" -j -d devices > "$tmp/dv.json" 2> "$tmp/dvj.err"
	rcj=$?
	cat "$tmp/dv.txt" "$tmp/dv.err" "$tmp/dv.json" "$tmp/dvj.err" > "$tmp/out"
	echo "exit $rc, -j -d: exit $rcj" >> "$tmp/out"
	[ $rc = 1 ] && [ $rcj = 1 ] &&
		grep -qx "ibpd: opening ibpd0: $msg" "$tmp/dv.err" &&
		grep -qx "ibpd: opening ibpd0: $msg" "$tmp/dvj.err" &&
		grep -Eq '^ibpd0 +uverbs[0-9]+ +[0-9]+ +yes +-$' "$tmp/dv.txt" &&
		grep -Eq '^rxe0 +uverbs[0-9]+ +[0-9]+ +no +no$' "$tmp/dv.txt" &&
		py - "$tmp/dv.json" "$msg" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
devs = {d["device"]: d for d in json.load(open(sys.argv[1]))["devices"]}
i, r = devs["ibpd0"], devs["rxe0"]
assert i["ibpd"] is True and i["pd_import"] is None and i["error"] == sys.argv[2], i
assert i["fw_ver"] is None and i["max_pd"] is None and i["max_mr"] is None, i
assert r["pd_import"] is False and "error" not in r and r["max_pd"] > 0, r
PY
}

# A device that cannot be opened: as uid 1000 with ibpd0's uverbs node
# at 0600 (EACCES), and in an rdma cgroup allowing no context on ibpd0
# (EAGAIN).
uv=/dev/infiniband/$(uverbs_of ibpd0)
mode=$(stat -c %a "$uv")
chmod 0600 "$uv"
devices_failed "Permission denied" setpriv --reuid=1000 --regid=1000 --clear-groups
ok $? "devices as uid 1000, ibpd0's uverbs node 0600: EACCES on stderr, its row marked (- / null, error), rxe0 listed, exit 1"
chmod "$mode" "$uv"
cg=$cgroot/ibpd_tool_test
if { grep -q " $cgroot cgroup2 " /proc/mounts ||
     mount -t cgroup2 none "$cgroot" 2> /dev/null; } &&
   grep -qw rdma "$cgroot/cgroup.controllers" 2> /dev/null; then
	# shellcheck disable=SC2016 # the inner shell expands them
	echo +rdma > "$cgroot/cgroup.subtree_control" && mkdir "$cg" &&
		echo "ibpd0 hca_handle=0" > "$cg/rdma.max" &&
		devices_failed "Resource temporarily unavailable" \
			sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg"
	ok $? "devices in an rdma cgroup with ibpd0 hca_handle=0: EAGAIN on stderr, its row marked, rxe0 listed, exit 1"
	# the limit back to max first (the 6.1.y/6.12.y rdmacg bug)
	echo "ibpd0 hca_handle=max" > "$cg/rdma.max"
	rmdir "$cg"
else
	skip "devices in an rdma cgroup: no rdma cgroup controller"
fi

# 16383 handles come back from the core at most: a file with exactly that
# many PDs shows 16382 and says there are more; with 16382, all of them.
for want in 16382 16383; do
	hold ibpd0 "$want" "many$want"
	"$ibpd" -j pds --pid "$hold_pid" > "$tmp/many.json" 2> "$tmp/out"
	rc=$?
	trunc=false
	if [ "$want" = 16383 ]; then
		trunc=true
		"$ibpd" pds --pid "$hold_pid" > "$tmp/many.txt" 2>> "$tmp/out" &&
			tail -n 1 "$tmp/many.txt" | tee -a "$tmp/out" |
			grep -qx "  16382 PDs (the first the kernel lists; there are more)" ||
			rc=1
	fi
	kill "$hold_pid"
	[ $rc = 0 ] &&
		py - "$tmp/many.json" "$trunc" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert len(f["pds"]) == 16382, len(f["pds"])
assert f["truncated"] is (sys.argv[2] == "true"), f["truncated"]
PY
	ok $? "pds of a file with $want PDs: 16382 shown, truncated $trunc"
done

hold ibpd0 3
"$ibpd" pds --pid "$hold_pid" --json > "$tmp/pds.json" 2> "$tmp/out" &&
	py -m json.tool "$tmp/pds.json" > /dev/null 2>> "$tmp/out" &&
	py - "$tmp/pds.json" "$tmp/hold-ibpd0.out" "$hold_pid" "$hold_fd" \
		>> "$tmp/out" 2>&1 <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
want = [dict(zip(("handle", "pdn", "usecnt"), map(int, l.split())))
        for l in open(sys.argv[2]) if l[0].isdigit()]
assert len(files) == 1, files
f = files[0]
assert (f["pid"], f["fd"], f["device"]) == (int(sys.argv[3]), int(sys.argv[4]), "ibpd0"), f
assert f["truncated"] is False, f
assert sorted(f["pds"], key=lambda p: p["handle"]) == want, (f["pds"], want)
PY
ok $? "pds --pid --json: the holder's 3 PDs with pdn and use count"

"$ibpd" pds --pid "$hold_pid" > "$tmp/out" 2>&1 &&
	grep -q "^pid $hold_pid fd $hold_fd: ibpd0$" "$tmp/out" &&
	grep -q "^  3 PDs$" "$tmp/out" &&
	[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +[01]$' "$tmp/out")" = 3 ]
ok $? "pds --pid: table of 3 PDs"

# Each PD's import fails (the fail_import knob, ENOMEM): an error for each
# on stderr with its handle, no row, "0 PDs", exit 1; in JSON an empty list.
dbg0=$(dbg_dirs ibpd0)
echo Y > "$dbg0/fail_import"
"$ibpd" pds --pid "$hold_pid" > "$tmp/fi.txt" 2> "$tmp/fi.err"
rc=$?
"$ibpd" -j pds --pid "$hold_pid" > "$tmp/fi.json" 2> "$tmp/fi-j.err"
rc_j=$?
echo N > "$dbg0/fail_import"
cat "$tmp/fi.txt" "$tmp/fi.err" "$tmp/fi.json" "$tmp/fi-j.err" > "$tmp/out"
echo "exit $rc, -j: exit $rc_j" >> "$tmp/out"
handles=$(grep -E '^[0-9]+ ' "$tmp/hold-ibpd0.out" | cut -d' ' -f1 | sort -n)
errs() { sed -n "s/^ibpd: pid $hold_pid fd $hold_fd: PD handle \([0-9]*\): Cannot allocate memory$/\1/p" "$1" | sort -n; }
[ $rc = 1 ] && [ $rc_j = 1 ] && [ "$(grep -c . "$tmp/fi.err")" = 3 ] &&
	[ "$(errs "$tmp/fi.err")" = "$handles" ] && [ "$(errs "$tmp/fi-j.err")" = "$handles" ] &&
	grep -qx "  0 PDs" "$tmp/fi.txt" && ! grep -q -- ' - ' "$tmp/fi.txt" &&
	py - "$tmp/fi.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert (f["device"], f["pds"]) == ("ibpd0", []), f
PY
ok $? "pds with every PD's import failing (fail_import): each on stderr with its handle, no row, 0 PDs, exit 1"

# 300 files of ibpd0 (no context: each skipped with a message) and a dup
# of the last: dup'ed fds of a file are shown once, however many files.
python3 - "$tmp/many-files" "$(uverbs_of ibpd0)" <<'PY' &
import os, sys, time
fds = [os.open(f"/dev/infiniband/{sys.argv[2]}", os.O_RDWR) for _ in range(300)]
os.dup(fds[-1])
with open(sys.argv[1], "w") as f:
    f.write("ready\n")
time.sleep(600)
PY
many_pid=$!
for _ in {1..100}; do [ -s "$tmp/many-files" ] && break; nap; done
"$ibpd" pds --pid "$many_pid" > "$tmp/mf.out" 2> "$tmp/mf.err"
rc=$?
kill "$many_pid"
wait "$many_pid" 2> /dev/null
{ echo "exit $rc"; tail -n 3 "$tmp/mf.err"; } > "$tmp/out"
[ $rc = 0 ] && [ "$(grep -c 'without a context (nothing to list): skipped$' "$tmp/mf.err")" = 300 ]
ok $? "pds of a process with 300 files and a dup of the last: each file once"

expect_rc 0 "pds --pid --fd: the holder's uverbs fd" \
	"$ibpd" pds --pid "$hold_pid" --fd "$hold_fd"
expect_rc 1 "pds --fd of a file that is not uverbs: fails" \
	"$ibpd" pds --pid "$hold_pid" --fd 1
"$ibpd" pds > "$tmp/out" 2>&1 && grep -q "has no uverbs file open" "$tmp/out"
ok $? "pds of a process without uverbs files"

"$ibpd" -j -p -d pds --pid "$hold_pid" > "$tmp/pretty.json" 2> "$tmp/out" &&
	[ "$(wc -l < "$tmp/pretty.json")" -gt 10 ] &&
	py - "$tmp/pretty.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert len(f["pds"]) == 3 and all(p["id"] > 0 for p in f["pds"]), f
PY
ok $? "pds -j -p -d: pretty JSON with each PD's identity"

ibpd_pid=$hold_pid ibpd_fd=$hold_fd
hold rxe0 2
"$ibpd" pds --pid "$hold_pid" --json > "$tmp/rxe.json" 2> "$tmp/out" &&
	py - "$tmp/rxe.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert f["device"] == "rxe0" and f["ibpd"] is False and f["pds"] is None, f
PY
ok $? "pds on rxe0: the file shown, no DV call made, PDs null"

# A file nobody made a context on (a bare open) has no PDs: skipped, with
# a message, while the process's other file is listed.
hold_nocontext=1 hold ibpd0 2 nocontext
"$ibpd" pds --pid "$hold_pid" > "$tmp/nc.txt" 2> "$tmp/nc.err"
rc=$?
cat "$tmp/nc.txt" "$tmp/nc.err" > "$tmp/out"
[ $rc = 0 ] && grep -q "^pid $hold_pid fd $hold_fd: ibpd0$" "$tmp/nc.txt" &&
	grep -q "^  2 PDs$" "$tmp/nc.txt" &&
	grep -q "^ibpd: pid $hold_pid fd 9: a file of ibpd0 without a context (nothing to list): skipped$" "$tmp/nc.err"
ok $? "pds --pid: a uverbs fd without a context is skipped with a message, the other file listed, exit 0"
"$ibpd" -j pds --pid "$hold_pid" --fd 9 > "$tmp/nc.json" 2> "$tmp/nc.err"
rc=$?
cat "$tmp/nc.json" "$tmp/nc.err" > "$tmp/out"
[ $rc = 0 ] && grep -q "fd 9: a file of ibpd0 without a context" "$tmp/nc.err" &&
	py -c 'import json, sys; assert json.load(open(sys.argv[1])) == {"files": []}' \
		"$tmp/nc.json" >> "$tmp/out" 2>&1
ok $? "pds -j --fd of a file without a context: skipped, {\"files\": []}, exit 0"

# An O_PATH fd of a uverbs device opens no file of it: skipped with a
# message, exit 0 (not an import that fails with EBADF).
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_PATH)
os.dup2(fd, 9)
os.close(fd)
print("ready", flush=True)
time.sleep(600)' "/dev/infiniband/$(uverbs_of ibpd0)" > "$tmp/opath.out" &
opath_pid=$!
for _ in {1..300}; do
	grep -qs ready "$tmp/opath.out" && break
	nap
done
"$ibpd" pds --pid "$opath_pid" > "$tmp/out" 2>&1
rc=$?
kill "$opath_pid"
wait "$opath_pid" 2> /dev/null
[ $rc = 0 ] &&
	grep -q "^ibpd: pid $opath_pid fd 9: an O_PATH fd of ibpd0, no file of it (nothing to list): skipped$" "$tmp/out"
ok $? "pds --pid: an O_PATH fd of a uverbs device is skipped with a message, exit 0"

# A file whose device was deleted before ibpd looked: shown with no PDs
# (the removal destroyed them), as one whose device goes while listed.
if rdma link add ibpdtg type ibpd netdev lo; then
	hold ibpdtg 2 removed
	rdma link delete ibpdtg
	"$ibpd" pds --pid "$hold_pid" > "$tmp/rm.txt" 2> "$tmp/rm.err"
	rc=$?
	"$ibpd" -j pds --pid "$hold_pid" > "$tmp/rm.json" 2>> "$tmp/rm.err"
	rc=$rc$?
	cat "$tmp/rm.txt" "$tmp/rm.json" "$tmp/rm.err" > "$tmp/out"
	[ "$rc" = 00 ] && grep -qx "pid $hold_pid fd $hold_fd: a removed device" "$tmp/rm.txt" &&
		grep -qx "  0 PDs (the removal destroyed them)" "$tmp/rm.txt" &&
		py - "$tmp/rm.json" "$hold_pid" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert (f["pid"], f["device"], f["ibpd"], f["pds"]) == (int(sys.argv[2]), None, None, []), f
PY
	ok $? "pds: a file whose device was deleted before: shown with no PDs (text and JSON), exit 0"
else
	ok 1 "pds with the device deleted before: rdma link add failed"
fi

# Another user's process: /proc refuses its fds with EACCES, said as such.
if id -u 1000 > /dev/null 2>&1 || [ "$(id -u)" = 0 ]; then
	setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$ibpd" pds --pid "$ibpd_pid" --fd "$ibpd_fd" > "$tmp/out" 2>&1
	rc=$?
	[ $rc = 1 ] &&
		grep -qx "ibpd: fd $ibpd_fd of pid $ibpd_pid: Permission denied" "$tmp/out" &&
		! grep -q 'not a uverbs file' "$tmp/out"
	ok $? "pds --fd of another user's process (uid 1000): Permission denied (EACCES), exit 1"
else
	skip "pds --fd of another user's process: not root, no uid 1000"
fi

# With -j, every path prints one JSON object, the error on stderr.
: > "$tmp/out"
as_user=(setpriv --reuid=1000 --regid=1000 --clear-groups)
for args in "pds --pid $ibpd_pid --fd 1" "pds --pid $ibpd_pid --fd 999" \
	    "pds --pid 4194305" "as_user pds --pid $ibpd_pid"; do
	run=("$ibpd" -j)
	[ "${args%% *}" != as_user ] || run=("${as_user[@]}" "$ibpd" -j)
	# shellcheck disable=SC2086 # one argument a word
	"${run[@]}" ${args#as_user } > "$tmp/err.json" 2> "$tmp/err.txt"
	rc=$?
	echo "ibpd -j $args: exit $rc, $(cat "$tmp/err.txt")" >> "$tmp/out"
	[ $rc = 1 ] && [ -s "$tmp/err.txt" ] &&
		py -c 'import json, sys; assert json.load(open(sys.argv[1])) == {"files": []}' \
			"$tmp/err.json" >> "$tmp/out" 2>&1 || echo FAIL >> "$tmp/out"
done
"$ibpd" -j -p pds --pid 4194305 2> /dev/null | py -m json.tool > /dev/null 2>> "$tmp/out" ||
	echo FAIL >> "$tmp/out"
"$ibpd" -j frobnicate > "$tmp/err.json" 2> /dev/null
rc=$?
[ $rc = 2 ] && [ ! -s "$tmp/err.json" ] || echo "FAIL: -j frobnicate: exit $rc, $(cat "$tmp/err.json")" >> "$tmp/out"
! grep -q FAIL "$tmp/out"
ok $? "-j on error paths (not uverbs, no such fd, no such pid, another user's process): {\"files\": []} on stdout, the error on stderr, exit 1; a usage error: no JSON"

# A device name that is not UTF-8 (0xff 0xfe) with some that is (U+00E9):
# the JSON is valid UTF-8, the bytes escaped as \u00ff\u00fe.
odd8=$(printf 'ibpd\377\376\303\251')
if rdma dev set ibpd0 name "$odd8"; then
	"$ibpd" -j devices > "$tmp/utf8.json" 2> "$tmp/out"
	rc=$?
	"$ibpd" -j pds --pid "$ibpd_pid" > "$tmp/utf8-pds.json" 2>> "$tmp/out"
	rc2=$?
	rdma dev set "$odd8" name ibpd0
	[ $rc = 0 ] && [ $rc2 = 0 ] && grep -qF 'ibpd\u00ff\u00fe' "$tmp/utf8.json" &&
		py - "$tmp/utf8.json" "$tmp/utf8-pds.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
devs = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["devices"]
assert "ibpd\u00ff\u00fe\u00e9" in [d["device"] for d in devs], devs
f, = json.loads(open(sys.argv[2], "rb").read().decode("utf-8"))["files"]
assert f["device"] == "ibpd\u00ff\u00fe\u00e9" and len(f["pds"]) == 3, f
PY
	ok $? "-j with a device name of bytes 0xff 0xfe and UTF-8 é: valid UTF-8 JSON, the bytes as \\u00ff\\u00fe"
else
	ok 1 "-j with a device name of bytes 0xff 0xfe: the rename failed"
fi

# What observing does to a file (ibpd(1)): stopped while it lists the
# file, ibpd holds an async event file in it and keeps the file when the
# observed process dies; once ibpd is done, all of it is gone.
if command -v gdb > /dev/null; then
	hold ibpd0 3 observed
	obs_pid=$hold_pid
	disown "$obs_pid"	# killed below: no job report
	before=$(objects "$obs_pid" observed)
	dbg0=$(dbg_dirs ibpd0)
	pds_before=$(cat "$dbg0/num_pds")
	n=$(grep -c '^objects:' "$tmp/hold-observed.out")
	at_list_pds "shell kill -USR1 $obs_pid; $wait_until lines $((n + 1)) ^objects: $tmp/hold-observed.out; kill -KILL $obs_pid; $wait_until exited $obs_pid; cat $dbg0/num_pds > $tmp/during" \
		-j pds --pid "$obs_pid"
	during=$(grep '^objects:' "$tmp/hold-observed.out" | tail -n 1)
	{
		echo "before: $before; during: $during; PDs: $pds_before, killed $(cat "$tmp/during"), after $(cat "$dbg0/num_pds")"
		cat "$tmp/gdb.out" "$tmp/gdb.err" "$tmp/timeouts"
	} > "$tmp/out" 2>&1
	[ ! -e "$tmp/timeouts" ] && [ "$before" = "3 pds, 0 async event files" ] &&
		[ "$during" = "objects: 3 pds, 1 async event files" ] &&
		[ "$(cat "$tmp/during")" = "$pds_before" ] &&
		[ "$(cat "$dbg0/num_pds")" = $((pds_before - 3)) ] &&
		[ "$gdb_rc" = 0 ] &&
		py -c 'import json, sys; f, = json.load(open(sys.argv[1]))["files"]; assert len(f["pds"]) == 3, f' \
			"$tmp/gdb.out" >> "$tmp/out" 2>&1
	ok $? "pds: observing adds an async event file to the file and keeps it past its process's death, until ibpd is done"
	[ "$(objects "$ibpd_pid" ibpd0)" = "3 pds, 0 async event files" ]
	ok $? "pds: after the listings, the holder's file has its 3 PDs and no async event file of ibpd's"

	# A PD destroyed after the listing, before ibpd looks it up (the
	# first ibv_import_pd()): its handle names nothing, and it is left out.
	# (The holder is told through its fifo: gdb does not pass on our fds.)
	hold ibpd0 2 gone
	at_fn=ibv_import_pd at_list_pds "shell echo d > $tmp/hold-gone; $wait_until lines 1 ^destroyed $tmp/hold-gone.out" \
		-j pds --pid "$hold_pid"
	cat "$tmp/gdb.out" "$tmp/gdb.err" "$tmp/hold-gone.out" "$tmp/timeouts" > "$tmp/out" 2>&1
	[ ! -e "$tmp/timeouts" ] && [ "$gdb_rc" = 0 ] && [ "$(grep -c '^destroyed .*: Success$' "$tmp/hold-gone.out")" = 1 ] &&
		py - "$tmp/gdb.out" "$tmp/hold-gone.out" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
held = [int(l.split()[0]) for l in open(sys.argv[2]) if l[0].isdigit()]
assert [p["handle"] for p in f["pds"]] == held[:1], (f, held)
PY
	ok $? "pds -j: a PD destroyed between the listing and its lookup is left out, exit 0"

	# ibv_query_device fails for the first device (gdb makes it return
	# EIO): with -d, that row is marked in text and JSON, exit 1.
	for j in "" -j; do
		at_fn=ibv_query_device at_list_pds "return (int) 5" $j -d devices
		cp "$tmp/gdb.out" "$tmp/q$j.out"
		cat "$tmp/gdb.out" "$tmp/gdb.err" >> "$tmp/q.log"
		echo "exit $gdb_rc" >> "$tmp/q.log"
		[ "$gdb_rc" = 1 ] && [ "$(grep -c '^ibpd: querying .*: Input/output error$' "$tmp/gdb.err")" = 1 ] ||
			echo FAIL >> "$tmp/q.log"
	done
	cp "$tmp/q.log" "$tmp/out"
	! grep -q FAIL "$tmp/q.log" &&
		[ "$(grep -Ec ' +- +- +-$' "$tmp/q.out")" = 1 ] &&
		[ "$(grep -Ec ' [0-9.]+ +[1-9][0-9]* +[1-9][0-9]*$' "$tmp/q.out")" = 1 ] &&
		py - "$tmp/q-j.out" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
bad = [d for d in devs if "error" in d]
assert len(bad) == 1 and bad[0]["error"] == "Input/output error", devs
assert bad[0]["max_pd"] is None and bad[0]["pd_import"] is not None, bad
assert all(d["max_pd"] > 0 for d in devs if "error" not in d), devs
PY
	ok $? "devices -d: ibv_query_device fails for one device: its row marked (text and JSON), the other listed, exit 1"

	# ibpddv_list_pds fails (gdb makes it return EIO): the JSON still closes.
	at_list_pds "return (int) 5" -j pds --pid "$ibpd_pid"
	cat "$tmp/gdb.out" "$tmp/gdb.err" > "$tmp/out"
	[ "$gdb_rc" = 1 ] &&
		grep -qx "ibpd: listing the PDs of pid $ibpd_pid fd $ibpd_fd: Input/output error" "$tmp/gdb.err" &&
		py - "$tmp/gdb.out" "$ibpd_pid" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert (f["pid"], f["device"], f["ibpd"], f["pds"]) == (int(sys.argv[2]), "ibpd0", True, None), f
PY
	ok $? "pds -j: ibpddv_list_pds fails after the import: the file's object closed (pds null), the error on stderr, exit 1"

	# An fd closed between the listing of the process's fds and ibpd's
	# pidfd_getfd() (the first syscall()): skipped, as one closed before.
	(
		exec 9< "/dev/infiniband/$(uverbs_of ibpd0)"
		trap 'exec 9<&-' USR1
		echo ready
		while :; do sleep 0.2; done
	) > "$tmp/closing.out" &
	closing_pid=$!
	for _ in {1..300}; do
		grep -qs ready "$tmp/closing.out" && break
		nap
	done
	at_fn=syscall at_list_pds "shell kill -USR1 $closing_pid; $wait_until closed $closing_pid 9" \
		pds --pid "$closing_pid"
	kill "$closing_pid"
	wait "$closing_pid" 2> /dev/null
	cat "$tmp/gdb.out" "$tmp/gdb.err" "$tmp/gdb.log" "$tmp/timeouts" > "$tmp/out" 2>&1
	[ ! -e "$tmp/timeouts" ] && [ "$gdb_rc" = 0 ] && ! [ -s "$tmp/gdb.err" ] &&
		grep -qx "pid $closing_pid has no uverbs file open" "$tmp/gdb.out"
	ok $? "pds --pid: an fd closed after it was listed is skipped, exit 0"

	# The device goes after ibpd imported the file: it took the PDs along.
	if rdma link add ibpdtj type ibpd netdev lo; then
		hold ibpdtj 2
		at_list_pds "shell rdma link delete ibpdtj" -j pds --pid "$hold_pid"
		cat "$tmp/gdb.out" "$tmp/gdb.err" > "$tmp/out"
		[ "$gdb_rc" = 0 ] &&
			py - "$tmp/gdb.out" "$hold_pid" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert (f["pid"], f["device"], f["ibpd"], f["pds"]) == (int(sys.argv[2]), "ibpdtj", True, []), f
PY
		ok $? "pds -j: the device deleted after the import: the file shown with no PDs, exit 0"
		rdma link delete ibpdtj 2> /dev/null
	else
		ok 1 "pds -j with the device deleted after the import: rdma link add failed"
	fi

	# The device goes while ibpd queries the PDs of a file of 3000, at
	# the third (two queried): the file is shown with none, no PD row, no
	# error. (A breakpoint hit costs a ptrace stop: a few, not thousands.)
	: > "$tmp/mid.log"
	for j in -j ""; do
		rdma link add ibpdtk type ibpd netdev lo || {
			echo "rdma link add: FAIL" >> "$tmp/mid.log"
			continue
		}
		hold ibpdtk 3000 "mid$j"
		at_fn=ibpddv_query_pd at_skip=2 at_list_pds "shell rdma link delete ibpdtk" \
				$j pds --pid "$hold_pid"
		cp "$tmp/gdb.out" "$tmp/mid$j.out"
		cat "$tmp/gdb.out" "$tmp/gdb.err" >> "$tmp/mid.log"
		echo "exit $gdb_rc" >> "$tmp/mid.log"
		[ "$gdb_rc" = 0 ] && [ ! -s "$tmp/gdb.err" ] || echo FAIL >> "$tmp/mid.log"
		rdma link delete ibpdtk 2> /dev/null
	done
	cp "$tmp/mid.log" "$tmp/out"
	! grep -q FAIL "$tmp/mid.log" &&
		grep -qx "  0 PDs" "$tmp/mid.out" && [ "$(grep -c . "$tmp/mid.out")" = 2 ] &&
		py - "$tmp/mid-j.out" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert (f["device"], f["ibpd"], f["truncated"], f["pds"]) == ("ibpdtk", True, False, []), f
PY
	ok $? "pds (text and -j): the device deleted at the third of 3000 PDs: the file shown with no PDs, nothing on stderr, exit 0"
else
	skip "pds: observing a file, stopped in ibpddv_list_pds: no gdb"
	skip "pds: the holder's file after the listings: no gdb"
	skip "pds -j: a PD destroyed between the listing and its lookup: no gdb"
	skip "devices -d with ibv_query_device failing: no gdb"
	skip "pds -j with ibpddv_list_pds failing: no gdb"
	skip "pds -j with the device deleted after the import: no gdb"
	skip "pds with the device deleted during the listing: no gdb"
fi

# pds --pid --fd on an fd that turns from an rxe0 file into a socket and
# back: the tool reads the file it got (pidfd_getfd), never the fd again.
python3 - "$tmp/flip" <<'PY' &
import os, socket, sys
uv = [f for f in os.listdir("/sys/class/infiniband_verbs") if f.startswith("uverbs")
      and open(f"/sys/class/infiniband_verbs/{f}/ibdev").read().strip() == "rxe0"]
rxe = os.open(f"/dev/infiniband/{uv[0]}", os.O_RDWR)
sock = socket.socket()
fd = os.dup(rxe)
with open(sys.argv[1], "w") as f:
    f.write(f"{fd}\n")
while True:
    os.dup2(sock.fileno(), fd)
    os.dup2(rxe, fd)
PY
flip_pid=$!
for _ in {1..100}; do [ -s "$tmp/flip" ] && break; nap; done
flip_fd=$(cat "$tmp/flip")
: > "$tmp/out"
for _ in {1..50}; do
	"$ibpd" pds --pid "$flip_pid" --fd "$flip_fd" >> "$tmp/out" 2>&1
	rc=$?
	[ "$rc" -lt 128 ] || echo "killed: exit $rc" >> "$tmp/out"
done
kill "$flip_pid"
wait "$flip_pid" 2> /dev/null
echo "rxe0 $(grep -c ': rxe0$' "$tmp/out"), not uverbs $(grep -c 'not a uverbs file' "$tmp/out") of 50" >> "$tmp/out"
! grep -q '^killed' "$tmp/out" && grep -q ': rxe0$' "$tmp/out"
ok $? "pds --pid --fd racing an fd that flips between rxe0 and a socket: 50 runs, no crash"

"$ibpd" demo > "$tmp/out" 2>&1 &&
	grep -q 'ibv_dealloc_pd -> 16 (Device or resource busy)' "$tmp/out" &&
	grep -q 'ibpddv_import_pd(handle [0-9]*, id [1-9]' "$tmp/out" &&
	grep -q 'demo complete' "$tmp/out"
ok $? "demo: the whole story, exit 0"
grep -q 'ibpd0 has no queue pairs (ibv_query_device: max_qp 0): the demo shares the PD and stops there' "$tmp/out" &&
	! grep -q 'RDMA WRITE of' "$tmp/out"
ok $? "demo on ibpd0: stops after sharing the PD, and says why (max_qp 0)"

# A device name is any string: the demo runs rdma without a shell, with
# no fixed buffer (50 characters, shell syntax in it).
# shellcheck disable=SC2016 # the name is literal
odd='x$(echo${IFS}INJECTED>&2)-a-device-name-over-forty'
if rdma dev set ibpd0 name "$odd"; then
	"$ibpd" --device "$odd" demo > "$tmp/out" 2>&1
	rc=$?
	rdma dev set "$odd" name ibpd0
	[ $rc = 0 ] && ! grep -qx INJECTED "$tmp/out" &&
		grep -qxF "  \$ rdma resource show pd dev $odd" "$tmp/out" &&
		grep -qF "  dev $odd pdn " "$tmp/out" &&
		! grep -q 'rdma resource show failed' "$tmp/out"
	ok $? "demo on a device named $odd: rdma runs without a shell"
else
	ok 1 "demo on a device named $odd: the rename failed"
fi

# rxe's provider claims a device named rxe* by name: ibpd's gets it only
# when libibverbs tries it first (RDMAV_DRIVERS order), or when the
# program links libibpd (the provider registers as the library loads).
abi=$("$build/../scripts/build/provider-abi")
prov=$build/provider/abi$abi/libibpd
if rdma dev set ibpd0 name rxepd0; then
	RDMAV_DRIVERS=$prov ibv_devinfo -d rxepd0 > "$tmp/out" 2>&1
	first=$?
	RDMAV_DRIVERS=rxe:$prov ibv_devinfo -d rxepd0 >> "$tmp/out" 2>&1
	second=$?
	RDMAV_DRIVERS=rxe:$prov "$ibpd" devices >> "$tmp/out" 2>&1
	rdma dev set rxepd0 name ibpd0
	echo "ibpd first: exit $first; rxe first: exit $second" >> "$tmp/out"
	[ $first = 0 ] && [ $second != 0 ] &&
		grep -Eq '^rxepd0 +uverbs[0-9]+ +[0-9]+ +yes +yes$' "$tmp/out"
	ok $? "a device named rxepd0: rxe's provider takes it when tried first, not from a program linking libibpd"
else
	ok 1 "a device named rxepd0: the rename failed"
fi

# The driver files' order (ibpddv_is_supported(3)): libibverbs reads the
# files of /etc/libibverbs.d in readdir(3) order and puts each provider
# name at the head of its list, so the one it read last loads first. Two
# files alone in the directory (a tmpfs over it, in a mount namespace of
# their own), rxe's and ibpd's, both ways round: rxepd0 opens only when
# ibpd's provider loads first.
if rdma dev set ibpd0 name rxepd0; then
	# shellcheck disable=SC2016 # the inner shell expands them
	unshare -m sh -c '
		mount -t tmpfs ibpd-test /etc/libibverbs.d || exit 1
		for first in rxe ibpd; do
			rm -f /etc/libibverbs.d/*
			echo "driver rxe" > /etc/libibverbs.d/a.driver
			echo "driver $1" > /etc/libibverbs.d/b.driver
			[ $first = ibpd ] && {
				echo "driver $1" > /etc/libibverbs.d/a.driver
				echo "driver rxe" > /etc/libibverbs.d/b.driver
			}
			order=$(ls -f /etc/libibverbs.d | grep "\.driver$" | tr "\n" " ")
			last=$(ls -f /etc/libibverbs.d | grep "\.driver$" | tail -n 1)
			ibv_devinfo -d rxepd0 > /dev/null 2>&1
			echo "a.driver: $first first; readdir order: $order; ibv_devinfo -d rxepd0: exit $?; last read: $(cat /etc/libibverbs.d/$last)"
		done' sh "$prov" > "$tmp/order" 2>&1
	rc=$?
	rdma dev set rxepd0 name ibpd0
	cp "$tmp/order" "$tmp/out"
	# the provider of the file read last opens rxepd0 (0) if it is ibpd's
	[ $rc = 0 ] && [ "$(grep -c 'exit 0; last read: driver /' "$tmp/order")" = 1 ] &&
		[ "$(grep -c 'exit [1-9][0-9]*; last read: driver rxe$' "$tmp/order")" = 1 ]
	ok $? "two driver files: the provider of the one libibverbs reads last (readdir order) is tried first"
else
	ok 1 "two driver files: the rename to rxepd0 failed"
fi

# rxe0 has QPs: the parent sets up the data path; on a kernel whose rxe
# imports no context, the child stops at the import and the parent with it.
"$ibpd" --device rxe0 demo > "$tmp/out" 2>&1
[ $? = 1 ] && grep -q 'ibv_create_qp -> RC QP [0-9]* (INIT)' "$tmp/out" &&
	grep -q 'ibv_import_device: Operation not supported' "$tmp/out" &&
	grep -q 'the child process failed' "$tmp/out"
ok $? "demo on rxe0: ibv_import_device fails with EOPNOTSUPP, exit 1"

tap_totals

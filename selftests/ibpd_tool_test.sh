#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tests of the ibpd command-line tool (libibverbs + ibpd's DV API), in the
# test VM (ibpd0 and rxe0 up): usage and exit codes, `ibpd devices`, `ibpd
# pds` on the files of another process (text and JSON, checked with
# python3), `ibpd demo`. kselftest TAP.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=selftests/lib.sh
. "$dir/lib.sh"
ibpd=$build/ibpd
holders=()
trap 'for h in "${holders[@]}"; do exec {h}>&-; done; rm -rf "$tmp"' EXIT

# Starts ibpd_hold DEV N; sets hold_pid and hold_fd, its stdin in hold_in.
hold() {
	local fifo=$tmp/hold-$1
	mkfifo "$fifo"
	"$ibpd_hold" "$1" "$2" < "$fifo" > "$tmp/hold-$1.out" &
	hold_pid=$!
	exec {hold_in}> "$fifo"
	holders+=("$hold_in")
	for _ in $(seq 100); do
		grep -q ready "$tmp/hold-$1.out" && break
		sleep 0.1
	done
	hold_fd=$(for f in /proc/$hold_pid/fd/*; do
		case $(readlink "$f") in /dev/infiniband/uverbs*) basename "$f";; esac
	done)
}

echo "TAP version 13"
if ! [ -x "$ibpd" ]; then
	echo "1..0 # SKIP no ibpd tool ($ibpd): the tool is built with libibpd"
	exit 4
fi
echo "1..22"

expect_rc 0 "--help" "$ibpd" --help
grep -q '^usage: ibpd' "$tmp/out"; ok $? "--help prints the usage"
expect_rc 2 "no command: usage error" "$ibpd"
expect_rc 2 "unknown command: usage error" "$ibpd" frobnicate
expect_rc 2 "invalid --pid: usage error" "$ibpd" pds --pid 12x
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
	python3 -m json.tool "$tmp/dev.json" > /dev/null 2>> "$tmp/out" &&
	python3 - "$tmp/dev.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
devs = {d["device"]: d for d in json.load(open(sys.argv[1]))["devices"]}
assert devs["ibpd0"]["pd_import"] is True and devs["ibpd0"]["ibpd"] is True
assert devs["rxe0"]["pd_import"] is False and devs["rxe0"]["ibpd"] is False
assert all(d["uverbs"].startswith("uverbs") for d in devs.values())
PY
ok $? "devices --json: parses with python3 -m json.tool, says the same"

hold ibpd0 3
"$ibpd" pds --pid "$hold_pid" --json > "$tmp/pds.json" 2> "$tmp/out" &&
	python3 -m json.tool "$tmp/pds.json" > /dev/null 2>> "$tmp/out" &&
	python3 - "$tmp/pds.json" "$tmp/hold-ibpd0.out" "$hold_pid" "$hold_fd" \
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

expect_rc 0 "pds --pid --fd: the holder's uverbs fd" \
	"$ibpd" pds --pid "$hold_pid" --fd "$hold_fd"
expect_rc 1 "pds --fd of a file that is not uverbs: fails" \
	"$ibpd" pds --pid "$hold_pid" --fd 1
"$ibpd" pds > "$tmp/out" 2>&1 && grep -q "has no uverbs file open" "$tmp/out"
ok $? "pds of a process without uverbs files"

"$ibpd" -j -p -d pds --pid "$hold_pid" > "$tmp/pretty.json" 2> "$tmp/out" &&
	[ "$(wc -l < "$tmp/pretty.json")" -gt 10 ] &&
	python3 - "$tmp/pretty.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert len(f["pds"]) == 3 and all(p["id"] > 0 for p in f["pds"]), f
PY
ok $? "pds -j -p -d: pretty JSON with each PD's identity"

hold rxe0 2
"$ibpd" pds --pid "$hold_pid" --json > "$tmp/rxe.json" 2> "$tmp/out" &&
	python3 - "$tmp/rxe.json" >> "$tmp/out" 2>&1 <<'PY'
import json, sys
f, = json.load(open(sys.argv[1]))["files"]
assert f["device"] == "rxe0" and f["ibpd"] is False and f["pds"] is None, f
PY
ok $? "pds on rxe0: the file shown, no DV call made, PDs null"

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
for _ in $(seq 100); do [ -s "$tmp/flip" ] && break; sleep 0.1; done
flip_fd=$(cat "$tmp/flip")
: > "$tmp/out"
for _ in $(seq 50); do
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
abi=$(objdump -T "/usr/lib/$(gcc -print-multiarch)/libibverbs.so.1" |
	sed -n 's/.*IBVERBS_PRIVATE_\([0-9]*\).*/\1/p' | head -n 1)
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

"$ibpd" --device rxe0 demo > "$tmp/out" 2>&1
[ $? = 1 ] && grep -q 'ibv_import_device: Operation not supported' "$tmp/out"
ok $? "demo on rxe0: ibv_import_device fails with EOPNOTSUPP, exit 1"

tap_totals

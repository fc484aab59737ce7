#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tests of the test tooling itself, kselftest-style TAP: the matrix's
# reader, the splat detector on recorded console logs, the soak's verdict
# on recorded soak output, and vm-run's exit status, working tree sharing,
# splat detection and second boots in a real VM.
set -u
# shellcheck source=selftests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/lib/tap.sh"
tap_setup 75
trap 'rm -rf "$tmp" "$top"/scripts/tests/untracked-*' EXIT

# The matrix (scripts/matrix.conf) and its reader: what make reads of it
# is what the scripts read.
m=$top/scripts/build/matrix
expect_rc 2 "matrix: an unknown name" "$m" no-such-name
grep -q "matrix: no 'no-such-name' in .*scripts/matrix.conf" "$tmp/out"
ok $? "matrix: the unknown name and the file are named"
expect_rc 2 "matrix: no name" "$m"
# shellcheck disable=SC2016 # make's $(...), not the shell's
printf 'include %s\nall:\n\t@echo "$(kernels)|$(vm-modules)|$(word 3,$(rdma-core-$(word 1,$(rdma-cores))))"\n' \
	"$top/scripts/matrix.conf" > "$tmp/matrix.mk"
[ "$(make -s -f "$tmp/matrix.mk")" = \
  "$("$m" kernels)|$("$m" vm-modules)|$("$m" "rdma-core-$("$m" rdma-cores 1)" 3)" ]
ok $? "matrix: make's include and the reader agree (kernels, VM modules, a provider ABI)"
st=0
for k in $("$m" kernels); do
	[ -n "$("$m" "kernel-$k" 2)" ] || st=1
done
ok $st "matrix: every kernel of kernels has its suite and version pattern"
# which tests each boot runs: programs the kselftests' install has,
# kselftests of their list (selftests/Makefile's programs and scripts)
st=0
ksft=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$top/selftests/Makefile" |
	sed -n 's/^TEST_\(GEN_\)\{0,1\}PROGS *:= *//p' | tr -s ' \t' '\n')
for b in stock debug soak; do
	for t in $("$m" "boot-$b-programs"); do
		[ -e "$top/selftests/stress/$t.c" ] || [ -e "$top/selftests/$t" ] || st=1
	done
done
for t in $("$m" boot-stock-skip) $("$m" boot-debug-skip) $("$m" ksft-last); do
	printf '%s\n' "$ksft" | grep -qxF "${t#ibpd:}" || st=1
done
ok $st "matrix: each boot's programs and skipped kselftests are the selftests'"
# provider-abi: of a libibverbs, and the rdma-core of the matrix for it
echo "$("$m" provider-abi-node)$("$m" "rdma-core-$("$m" rdma-cores 1)" 3)" > "$tmp/v"
(cd "$tmp" && printf 'int x;\n' > x.c && gcc -shared -fPIC -o libv.so.1 x.c \
	-Wl,--version-script=<(printf '%s { global: x; local: *; };\n' "$(cat v)")) &&
	[ "$("$top/scripts/build/provider-abi" "$tmp/libv.so.1")" = \
	  "$("$m" "rdma-core-$("$m" rdma-cores 1)" 3)" ] &&
	[ "$("$top/scripts/build/provider-abi" --rdma-core "$tmp/libv.so.1")" = \
	  "$("$m" rdma-cores 1)" ]
ok $? "provider-abi: the ABI of a library's private version node, and its rdma-core"
expect_rc 1 "provider-abi: a library without the node" \
	"$top/scripts/build/provider-abi" "$tmp/x.c"
# provider-abi --next: libibpd1's upper bound (debian/rules). 56.1 is ABI
# 34, as 44.0 is: both end before 57.0; the newest has no known end.
[ "$("$top/scripts/build/provider-abi" --next 34)" = 57 ] &&
	[ "$("$top/scripts/build/provider-abi" --next 57)" = 59 ]
ok $? "provider-abi --next: the release of the next provider ABI (34: 57)"
expect_rc 1 "provider-abi --next: the newest ABI, whose end is not known" \
	"$top/scripts/build/provider-abi" --next "$("$m" provider-abis | awk '{ print $NF }')"
# each rdma-core of the matrix has the ABI of provider-abis' newest
# release at or below its version
st=0
for v in $("$m" rdma-cores); do
	want=
	for a in $("$m" provider-abis); do
		[ "$a" -le "${v%%.*}" ] && want=$a
	done
	[ "$("$m" "rdma-core-$v" 3)" = "$want" ] || st=1
done
ok $st "matrix: each rdma-core's provider ABI is provider-abis' for its version"
# The guest's timing of its programs (selftests/lib/vm.sh: timed, after
# the kselftest runner's result lines): a line after each result line,
# nothing else changed, the output in the file too.
printf '%s\n' 'TAP version 13' '1..2' '# selftests: ibpd: a_test' '# ok 1 x' \
	'ok 1 selftests: ibpd: a_test' '# selftests: ibpd: b_test.sh' \
	'not ok 2 selftests: ibpd: b_test.sh # TIMEOUT 45 seconds' > "$tmp/runner"
# shellcheck source=selftests/lib/vm.sh
(. "$top/selftests/lib/vm.sh"; timed "$tmp/timed.file" < "$tmp/runner" > "$tmp/timed.out")
grep -vE '^# ibpd: (a_test|b_test\.sh): [0-9]+ s$' "$tmp/timed.out" | cmp -s - "$tmp/runner" &&
	sed -n '6p;9p' "$tmp/timed.out" | tr '\n' '|' |
	grep -qxE '# ibpd: a_test: [01] s\|# ibpd: b_test\.sh: [01] s\|' &&
	cmp -s "$tmp/timed.out" "$tmp/timed.file"
ok $? "the guest's timing of the kselftest runner's programs: a line after each result"

expect_rc 0 "splat-check: clean console log" "$top/scripts/vm/splat-check" "$top/scripts/tests/logs/clean.log"
for s in warning oops kasan lockdep kmemleak hang-netdev hang-task hang-rcu hang-lockup; do
	expect_rc 1 "splat-check: $s is a splat" "$top/scripts/vm/splat-check" "$top/scripts/tests/logs/$s.log"
done
expect_rc 1 "splat-check --hang: a netdev reference never put" \
	"$top/scripts/vm/splat-check" --hang "$top/scripts/tests/logs/hang-netdev.log"
[ "$(cat "$tmp/out")" = "[ 1071.002314] unregister_netdevice: waiting for ibpdr1 to become free. Usage count = 2" ]
ok $? "splat-check --hang: prints the first report, once"
expect_rc 0 "splat-check --hang: a WARNING is a splat, not a hang" \
	"$top/scripts/vm/splat-check" --hang "$top/scripts/tests/logs/warning.log"
expect_rc 1 "splat-check --hang-report: a hung task's report" \
	"$top/scripts/vm/splat-check" --hang-report "$top/scripts/tests/logs/hang-task.log"
head -n 1 "$tmp/out" | grep -q 'INFO: task ip:412 blocked for more than' &&
	grep -q '__ib_unregister_device+0x29' "$tmp/out" &&
	grep -q '</TASK>' "$tmp/out" && ! grep -q 'locks held' "$tmp/out"
ok $? "splat-check --hang-report: the blocked task's stack, not the lock list"
expect_rc 0 "splat-check --hang-report: no hang, no report" \
	"$top/scripts/vm/splat-check" --hang-report "$top/scripts/tests/logs/warning.log"

# make soak's report (ibpd_check/soak.py): RAW OUT VM_STATUS SPLAT_STATUS TARGETS
soak() {
	PYTHONPATH=$top/scripts/tests /usr/bin/python3 -m ibpd_check.soak "$top/scripts/tests/logs/$1" \
		"$tmp/soak" "$2" "$3" "$4"
}
mkdir -p "$tmp/soak"
expect_rc 0 "soak-report: a clean short run passes" soak soak-pass.log 0 0 0
[ -s "$tmp/soak/soak.png" ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ops_total"] == 12345 and d["kmemleak_suspected_leaks"] == 0
assert len(d["samples"]) == 2 and not d["failed"]' "$tmp/soak/soak.json"
ok $? "soak-report: soak.json holds the figures and the samples, soak.png is drawn"
expect_rc 1 "soak-report: objects left fail the run" soak soak-left.log 0 0 0
expect_rc 1 "soak-report: kmemleak's suspects fail the run" soak soak-leak.log 0 0 0
expect_rc 1 "soak-report: a splat fails the run" soak soak-pass.log 0 1 0
expect_rc 1 "soak-report: an hour's targets (1M ops, 1M calls, 100 events) missed" \
	soak soak-pass.log 0 0 1

# The kernel series edited as commits (scripts/upstream/stage open and
# write): opened into a repository here, written back into a copy of
# patches/, never the checkout's. Unchanged, nothing changes, the bridge's
# backports included; a line of the rxe patch edited, both backports are
# made again with it; the patch reworded, their messages follow; a change
# that no backport can take is refused, its hunk named, nothing written.
stage=$top/scripts/upstream/stage sr=$tmp/series
git_() {
	(cd "$sr" && env GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@invalid GIT_COMMITTER_NAME=t \
		GIT_COMMITTER_EMAIL=t@invalid git "$@")
}
# on_rxe CMD...: CMD run in the repository stopped at the rxe patch (git
# rebase -i, "edit"), the commit amended with what it changed
on_rxe() {
	local c
	c=$(git_ log --format=%h --grep='^RDMA/rxe: ' series) &&
		GIT_SEQUENCE_EDITOR="sed -i 's/^pick $c /edit $c /'" \
			git_ rebase -q -i "$(git_ rev-list --max-parents=0 series)" &&
		(cd "$sr" && "$@") && git_ commit -q -a --amend --no-edit &&
		git_ rebase --continue > /dev/null
}
rxe=drivers/infiniband/sw/rxe/rxe_verbs.c
backports_ok() {	# the copy's backports, each of the copy's rxe patch
	local bp
	for bp in "$tmp"/top/patches/bridge/*/*.patch; do
		"$top/scripts/upstream/backport-check" \
			"$tmp"/top/patches/core/next/*-RDMA-rxe-*.patch "$bp" || return 1
	done
}
# the copy's files that differ from the checkout's
changed_() { diff -rq "$top/patches" "$tmp/top/patches" | sed "s|.*$top/patches/||; s| and .*||"; }
mkdir -p "$tmp/top"
cp -a "$top/patches" "$tmp/top/"
bridges=$(for d in "$top"/patches/bridge/*/; do d=${d%/}; printf 'bridge/%s ' "${d##*/}"; done)
# shellcheck disable=SC2086 # the branches' names: words
"$stage" open kernel "$sr" > "$tmp/open" 2> "$tmp/out" &&
	[ "$(cat "$tmp/open")" = "$sr" ] &&
	! printf '%s\n' $bridges |
		grep -qvxF "$(git_ for-each-ref --format='%(refname:short)' refs/heads/bridge/)" &&
	[ "$(git_ rev-parse --abbrev-ref HEAD)" = series ]
ok $? "stage open kernel DIR: the series on branch series, each bridge series' backports on one of their own (${bridges% })"
"$stage" write "$sr" "$tmp/top" > "$tmp/out" 2>&1 && [ -z "$(changed_)" ]
ok $? "stage write: the series as opened, written back, changes no file (the backports' included)"
on_rxe sed -i 's/all there is to tell of it\./all there is to tell of it, no more./' "$rxe" \
	> "$tmp/out" 2>&1 &&
	"$stage" write "$sr" "$tmp/top" >> "$tmp/out" 2>&1 &&
	[ "$(changed_ | sed 's|/[^/]*$||' | paste -sd' ')" = "bridge/6.1 bridge/6.12 core/next" ] &&
	[ "$(grep -lxF '+ * is mmap()ed: the core'"'"'s attributes are all there is to tell of it, no more.' \
		"$tmp"/top/patches/*/*/0*.patch | wc -l)" = 3 ] &&
	backports_ok >> "$tmp/out" 2>&1
ok $? "stage write: a line of the rxe patch edited, the patch and both backports have it (backport-check), no other file changed"
reword() { GIT_EDITOR="sed -i 's/$1/$2/'" git_ commit -q --amend; }
on_rxe reword 'which has nothing to add to them' 'which adds nothing to them' \
	> "$tmp/out" 2>&1 &&
	"$stage" write "$sr" "$tmp/top" >> "$tmp/out" 2>&1 &&
	[ "$(grep -l '^Add rxe_query_ucontext(), which adds nothing to them\.$' "$tmp"/top/patches/*/*/0*.patch | wc -l)" = 3 ] &&
	backports_ok >> "$tmp/out" 2>&1
ok $? "stage write: the rxe patch reworded, each backport's message is its new one with the backport's note"
cp -a "$tmp/top" "$tmp/top.was"
# the ops line moved next to one that 6.1's rxe_dev_ops does not have there
on_rxe sed -i -e '/^\t\.query_ucontext = rxe_query_ucontext,$/d' \
	-e 's/^\t\.rereg_user_mr = rxe_rereg_user_mr,$/&\n\t.query_ucontext = rxe_query_ucontext,/' "$rxe" \
	> "$tmp/out" 2>&1
expect_rc 1 "stage write: a change that a backport cannot take is refused" "$stage" write "$sr" "$tmp/top"
grep -q '^stage: patches/bridge/6.1: the change to "RDMA/rxe: .*" does not apply to its backport' "$tmp/out" &&
	grep -q "^  $rxe: @@ .* @@ static const struct ib_device_ops rxe_dev_ops = {\$" "$tmp/out" &&
	grep -q "make the backport by hand on branch bridge/6.1 of $sr" "$tmp/out" &&
	diff -r "$tmp/top.was" "$tmp/top" >> "$tmp/out" 2>&1
ok $? "stage write: the series and the hunk that does not apply named, the branch to make it on, nothing written"
expect_rc 1 "stage open: refused where a repository has commits not written back" \
	"$stage" open kernel "$sr"

# A backport's one check (scripts/upstream/backport-check): a line of the
# patch's changed, or its message, each fails it.
sed 's/^+\t\.query_ucontext = /+\t.query_ucontext =  /' "$top"/patches/bridge/6.1/*.patch > "$tmp/bp"
expect_rc 1 "backport-check: a backport that changes another line" \
	"$top/scripts/upstream/backport-check" "$top"/patches/core/next/*-RDMA-rxe-*.patch "$tmp/bp"
sed '3s/^/Then /' "$top"/patches/bridge/6.1/*.patch > "$tmp/bp"
expect_rc 1 "backport-check: a backport whose message is another" \
	"$top/scripts/upstream/backport-check" "$top"/patches/core/next/*-RDMA-rxe-*.patch "$tmp/bp"

# bridge-rxe finds the patches it carries by their subjects: in a copy
# of the tree whose patches are numbered anew (0003 is 0013, ...), the
# same patches (--patches), not a number's.
mkdir -p "$tmp/renum/scripts/build"
cp "$top/scripts/build/bridge-rxe" "$top/scripts/build/cache-dir" "$tmp/renum/scripts/build/"
cp -a "$top/patches" "$tmp/renum/"
for p in "$tmp"/renum/patches/*/*.patch "$tmp"/renum/patches/*/*/*.patch; do
	b=${p##*/}
	mv "$p" "${p%/*}/$(printf %04d $((10#${b%%-*} + 10)))-${b#*-}"
done
"$top/scripts/build/bridge-rxe" --patches > "$tmp/want" &&
	"$tmp/renum/scripts/build/bridge-rxe" --patches > "$tmp/out" 2>&1 &&
	[ "$(wc -l < "$tmp/want")" -ge 2 ] &&
	[ "$(sed 's|/000\([0-9]\)-|/001\1-|' "$tmp/want")" = "$(cat "$tmp/out")" ]
ok $? "bridge-rxe: the patches it carries found by their subjects, whatever their numbers"

# Guest-side runners refuse the host, naming how they are started.
expect_rc 2 "run_one.sh on the host: refused" "$top/selftests/vm/run_one.sh" ibpd_test
grep -q 'run me in the test VM: make vm-test' "$tmp/out"
ok $? "run_one.sh on the host: names make vm-test"
expect_rc 127 "run_one.sh in the VM: no such test program (exit 127)" \
	"$top/scripts/vm/vm-run" --no-ibpd -- "$top/selftests/vm/run_one.sh" no_such_test
grep -q "run_one.sh: no test program 'no_such_test'" "$tmp/out"
ok $? "run_one.sh: the missing program is named"

expect_rc 0 "vm-run -- true" "$top/scripts/vm/vm-run" --no-ibpd -- true
expect_rc 1 "vm-run -- false" "$top/scripts/vm/vm-run" --no-ibpd -- false
# make bench's clock (-icount), whatever thread mode the caller's
# environment has: qemu has no multi-threaded TCG under -icount
expect_rc 0 "vm-run with IBPD_VM_ICOUNT=0 and IBPD_VM_TCG_THREAD=multi boots" \
	env IBPD_VM_ICOUNT=0 IBPD_VM_TCG_THREAD=multi \
	"$top/scripts/vm/vm-run" --no-ibpd -- true

# KVM where it runs a kernel (scripts/vm/kvm-probe), else TCG with a note;
# these machines have a /dev/kvm that does not. The probe's verdicts on a
# stand-in qemu: a kernel that panics for want of a root is one that ran.
expect_rc 0 "vm-run: auto: KVM or TCG, as kvm-probe says" \
	"$top/scripts/vm/vm-run" --no-ibpd -- true
vmlinuz=$("$top/scripts/build/kernel-dir")/vmlinuz
if why=$("$top/scripts/vm/kvm-probe" "$vmlinuz"); then
	grep -q 'vm-run: booting (qemu KVM' "$tmp/out" &&
		! grep -q 'KVM does not run' "$tmp/out"
else
	grep -qF "vm-run: KVM does not run a kernel here ($why): TCG" "$tmp/out" &&
		grep -q 'vm-run: booting (qemu TCG' "$tmp/out"
fi
ok $? "vm-run: auto: the accelerator is the probe's, the fallback noted in one line"
# TCG's vCPU (vm-run's TCG_CPU): max less ERMS and FSRM, so that the
# guest's kernel copies and clears memory without rep movsb and rep stosb
expect_rc 0 "vm-run --accel tcg: TCG without a probe" \
	"$top/scripts/vm/vm-run" --no-ibpd --accel tcg -- \
	sh -c 'grep -m1 "^flags" /proc/cpuinfo'
grep -q 'vm-run: booting (qemu TCG' "$tmp/out" && ! grep -q KVM "$tmp/out"
ok $? "vm-run --accel tcg: no note, TCG"
grep -q 'vm-run: booting (qemu TCG, [0-9]* vCPUs (max,erms=off,fsrm=off)' "$tmp/out" &&
	grep '^flags' "$tmp/out" | grep -qw sse4_2 &&
	! grep '^flags' "$tmp/out" | grep -qwE 'erms|fsrm'
ok $? "vm-run: TCG's vCPU is max less ERMS and FSRM (said, and seen in the guest)"
expect_rc 0 "vm-run --cpu max: the model asked for" \
	"$top/scripts/vm/vm-run" --no-ibpd --accel tcg --cpu max -- \
	sh -c 'grep -m1 "^flags" /proc/cpuinfo'
grep -q 'vm-run: booting (qemu TCG, [0-9]* vCPUs (max)' "$tmp/out" &&
	grep '^flags' "$tmp/out" | grep -qw erms
ok $? "vm-run --cpu max: said, and the guest has ERMS"
# vm-run --dist: the job's root is the matrix's userland (made on first
# use), its own packages, with this tree and the kernel's cache at their
# host paths, what the job writes there the VM's alone.
droot=$("$top/scripts/build/dist-root" trixie 2> "$tmp/dist.log") ||
	cat "$tmp/dist.log"
# shellcheck disable=SC2016 # the guest's shell expands them
expect_rc 0 "vm-run --dist trixie: boots" \
	"$top/scripts/vm/vm-run" --no-ibpd --dist trixie -- sh -c \
	'. /etc/os-release && echo "codename $VERSION_CODENAME" &&
	 echo "python3 $(dpkg-query -W -f="\${Version}" python3)" &&
	 cat "$IBPD_KERNEL_DIR/kver" && echo x > "$1/untracked-dist" && echo wrote' \
	sh "$top/scripts/tests"
grep -q 'vm-run: booting (qemu .*, root: trixie)' "$tmp/out" &&
	grep -qx "codename trixie" "$tmp/out" &&
	grep -qx "python3 $(sed -n 's/^python3 //p' "${droot%/root}/manifest")" "$tmp/out" &&
	grep -qxF "$(cat "$("$top/scripts/build/kernel-dir")/kver")" "$tmp/out" &&
	grep -qx wrote "$tmp/out" && [ ! -e "$top/scripts/tests/untracked-dist" ]
ok $? "vm-run --dist trixie: trixie's packages (os-release, the python3 of its manifest), the tree and the kernel's cache at their paths, the VM's writes its own"
# throwaway-root: the host's root or a userland's, what is written there
# gone after, a bound directory written through, CMD's exit status
tr=$tmp/throwaway
mkdir -p "$tr"
# shellcheck disable=SC2016 # the command's shell expands them
expect_rc 3 "throwaway-root /: CMD's exit status" \
	"$top/scripts/build/throwaway-root" --bind "$tr" / sh -c \
	'chroot "$IBPD_ROOT" sh -c "echo x > /etc/ibpd-throwaway && cat /etc/ibpd-throwaway && echo y > $1/kept" sh "$1"; exit 3' \
	sh "$tr"
[ "$(cat "$tap_out")" = x ] && [ ! -e /etc/ibpd-throwaway ] && [ "$(cat "$tr/kept")" = y ]
ok $? "throwaway-root /: the root's writes gone, the bound directory's kept"
if [ -n "$droot" ]; then
	# shellcheck disable=SC2016
	expect_rc 0 "throwaway-root --chroot: in the userland" \
		"$top/scripts/build/throwaway-root" --chroot "$droot" sh -c \
		'. /etc/os-release && echo "$VERSION_CODENAME" && touch /etc/ibpd-throwaway'
	[ "$(cat "$tap_out")" = trixie ] && [ ! -e "$droot/etc/ibpd-throwaway" ]
	ok $? "throwaway-root --chroot: the command in trixie's root, which stays as it was"
else
	skip "throwaway-root --chroot: no trixie root"
fi
if "$top/scripts/vm/kvm-probe" "$vmlinuz" > /dev/null; then
	expect_rc 0 "vm-run --accel kvm: boots where KVM runs" \
		"$top/scripts/vm/vm-run" --no-ibpd --accel kvm -- true
else
	expect_rc 125 "vm-run --accel kvm: refused where KVM does not run" \
		"$top/scripts/vm/vm-run" --no-ibpd --accel kvm -- true
fi
stub=$tmp/stub
mkdir -p "$stub"
cat > "$stub/qemu-system-x86_64" << 'EOF'
#!/bin/sh
for a; do case $a in file:*) f=${a#file:} ;; esac; done
[ -n "$STUB_HANG" ] && exec sleep 60
echo "VFS: Unable to mount root fs" > "$f"
EOF
chmod +x "$stub/qemu-system-x86_64"
if [ -w /dev/kvm ]; then
	expect_rc 0 "kvm-probe: a kernel that boots under KVM: usable" \
		env IBPD_CACHE="$tmp/kc" PATH="$stub:$PATH" \
		"$top/scripts/vm/kvm-probe" "$vmlinuz"
	expect_rc 1 "kvm-probe: a kernel that does not boot in time: not usable, said why" \
		env IBPD_CACHE="$tmp/kc2" PATH="$stub:$PATH" STUB_HANG=1 \
		IBPD_KVM_PROBE_SECS=2 "$top/scripts/vm/kvm-probe" "$vmlinuz"
	# asked again with a qemu that would boot: the kept answer, its reason
	said=$(grep -c '^a kernel did not boot under KVM in 2s$' "$tmp/out")
	env IBPD_CACHE="$tmp/kc2" PATH="$stub:$PATH" \
		"$top/scripts/vm/kvm-probe" "$vmlinuz" > "$tmp/out" 2>&1
	rc=$?
	[ "$said" = 1 ] && [ $rc = 1 ] &&
		grep -qx 'a kernel did not boot under KVM in 2s' "$tmp/out"
	ok $? "kvm-probe: the reason said, and the answer kept for this boot of the host"
else
	for _ in 1 2 3; do
		skip "kvm-probe's verdicts: no writable /dev/kvm here"
	done
fi

# An untracked program in the working tree runs in the VM by its path.
prog=$(mktemp "$top/scripts/tests/untracked-XXXXXX")
# shellcheck disable=SC2016 # expanded by the program, in the VM
printf '#!/bin/sh\necho "marker $(uname -r)"\nexit 42\n' > "$prog"
chmod +x "$prog"
expect_rc 42 "vm-run: untracked program runs, status propagates" \
	"$top/scripts/vm/vm-run" --no-ibpd -- "$prog"
grep -q "^marker [0-9]" "$tmp/out"
ok $? "vm-run: the program's output reaches the host"

# A splat in the console fails the run even though the command succeeded.
expect_rc 1 "vm-run: kernel splat fails the run" "$top/scripts/vm/vm-run" \
	--no-ibpd -- sh -c 'echo "WARNING: CPU: 0 PID: 1 at synthetic" > /dev/kmsg'

# The watchdog stops a silent VM, not a slow one: a job that talks every
# 4 s runs past --idle 30, one that goes quiet is stopped as hung. (Not
# --idle 10: on loaded cores qemu is slow to the first console byte,
# Documentation/testing.rst, "Run times".)
# shellcheck disable=SC2016 # expanded by the job, in the VM
expect_rc 0 "vm-run --idle 30: a job that prints every 4 s for 48 s runs to its end" \
	"$top/scripts/vm/vm-run" --no-ibpd --idle 30 -- \
	sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "tick $i"; sleep 4; done'
expect_rc 124 "vm-run --idle 30: a job silent for longer is stopped (exit 124)" \
	"$top/scripts/vm/vm-run" --no-ibpd --idle 30 -- sh -c 'echo start; sleep 600'
grep -q 'vm-run: stopped the VM, no output from the VM for 30s: hung' "$tmp/out"
ok $? "vm-run: the hang is reported as one"

# A hang the kernel reports while it goes on talking (a netdev reference
# never put: its message every 10 s keeps the VM from going idle) stops
# the VM IBPD_VM_HANG_GRACE s after the first report, not at --idle or
# --timeout, with the console's last lines.
# shellcheck disable=SC2016 # expanded by the job, in the VM
IBPD_VM_HANG_GRACE=5 expect_rc 124 \
	"vm-run: a VM whose kernel reports a hang is stopped early (exit 124)" \
	"$top/scripts/vm/vm-run" --no-ibpd --idle 300 --timeout 300 -- sh -c \
	'while :; do echo "unregister_netdevice: waiting for d0 to become free. Usage count = 2" > /dev/kmsg; sleep 2; done'
grep -q 'vm-run: stopped the VM, the kernel reported a hang: .*unregister_netdevice: waiting for d0' "$tmp/out" &&
	grep -q "^vm-run: | .*unregister_netdevice: waiting for d0" "$tmp/out" &&
	grep -A1 -x "vm-run: the first report:" "$tmp/out" | grep -q "^vm-run: | .*waiting for d0" &&
	! grep -q 'still running after' "$tmp/out"
ok $? "vm-run: the hang is named, its first report and the console's last lines shown"

# A kernel that dies before vm-init runs is booted once more, then the
# run fails: the kernel panics for want of an init here, twice.
IBPD_VM_APPEND="rdinit=/nonexistent" expect_rc 125 \
	"vm-run: a kernel dead before vm-init: booted again, then fails" \
	"$top/scripts/vm/vm-run" --no-ibpd -- true
[ "$(grep -c 'booting again' "$tmp/out")" = 1 ] &&
	grep -q 'vm-run: the VM ended without a job status' "$tmp/out"
ok $? "vm-run: one second boot, and the failure reported"

# A splat in the boot, before anything of ours loads, is the boot's: no
# job, a second boot. Here the "splat" is on the kernel's command line,
# which the kernel prints in every boot: twice, then the run fails.
IBPD_VM_APPEND="WARNING:synthetic" expect_rc 1 \
	"vm-run: a splat in the boot: booted again, still there: fails" \
	"$top/scripts/vm/vm-run" --no-ibpd -- sh -c 'echo job-ran'
[ "$(grep -c 'a kernel splat in the boot, before the job.*booting again' "$tmp/out")" = 1 ] &&
	! grep -q '^job-ran' "$tmp/out"
ok $? "vm-run: the job does not run after a splat in the boot"

# bridge-debs (README's install command): on a machine whose dpkg has
# librdmacm1 and rdma-core installed and ibacm removed (its conffiles
# left), the bridge's packages it has, what the import needs, --with's,
# and their dependencies among the bridge's .debs; no other package, no
# -dbgsym. Stand-in packages, dpkg's database a file here.
mkdir -p "$tmp/bd/debs" "$tmp/bd/admin/updates" "$tmp/bd/admin/info"
fake_deb() {	# fake_deb PKG [DEPENDS]
	local d=$tmp/bd/src/$1
	mkdir -p "$d/DEBIAN"
	{
		echo "Package: $1"
		echo "Version: 1.0"
		echo "Architecture: all"
		echo "Maintainer: ibpd <ibpd@invalid>"
		[ -z "${2:-}" ] || echo "Depends: $2"
		echo "Description: a stand-in"
	} > "$d/DEBIAN/control"
	dpkg-deb --root-owner-group -b "$d" "$tmp/bd/debs/${1}_1.0_all.deb" > /dev/null
}
fake_deb libibverbs1 'libc6 (>= 2.34), adduser'
fake_deb ibverbs-providers 'libibverbs1 (= 1.0)'
fake_deb libibpd1 'libibverbs1-private-abi | libibverbs1 (>= 1.0)'
fake_deb ibpd-tools 'libibpd1:any'
fake_deb ibpd-rxe-dkms 'dkms'
fake_deb ibpd-siw-dkms 'dkms'
fake_deb rdma-core
fake_deb ibacm 'rdma-core'
fake_deb librdmacm1 'libibverbs1'
fake_deb libibumad3
fake_deb libibverbs-dev 'libibverbs1'
fake_deb libibpd-dev 'libibpd1, libibverbs-dev'
fake_deb python3-pyverbs 'librdmacm1 (>= 1.0), libibumad3, python3 (<< 3.12)'
fake_deb libibverbs1-dbgsym
mv "$tmp/bd/debs/libibverbs1-dbgsym_1.0_all.deb" "$tmp/bd/debs/libibverbs1-dbgsym_1.0_amd64.deb"
: > "$tmp/bd/admin/available"
dpkg_status() {	# dpkg_status PKG STATUS: its entry in the stand-in database
	printf 'Package: %s\nStatus: %s\nArchitecture: all\nVersion: 0.9\nMaintainer: x\nDescription: x\n\n' \
		"$1" "$2" >> "$tmp/bd/admin/status"
}
dpkg_status librdmacm1 'install ok installed'
dpkg_status rdma-core 'install ok installed'
dpkg_status ibacm 'deinstall ok config-files'
"$top/scripts/build/bridge-debs" --admindir "$tmp/bd/admin" --with python3-pyverbs \
	"$tmp/bd/debs" > "$tmp/out" 2>&1 &&
	[ "$(sed 's|.*/||; s|_.*||' "$tmp/out" | tr '\n' ' ')" = \
	  "ibpd-rxe-dkms ibpd-siw-dkms ibpd-tools ibverbs-providers libibpd1 libibumad3 libibverbs1 librdmacm1 python3-pyverbs rdma-core " ] &&
	dpkg_status libibverbs-dev 'install ok installed' &&
	"$top/scripts/build/bridge-debs" --admindir "$tmp/bd/admin" "$tmp/bd/debs" > "$tmp/out" 2>&1 &&
	[ "$(sed 's|.*/||; s|_.*||' "$tmp/out" | tr '\n' ' ')" = \
	  "ibpd-rxe-dkms ibpd-siw-dkms ibpd-tools ibverbs-providers libibpd-dev libibpd1 libibverbs-dev libibverbs1 librdmacm1 rdma-core " ]
ok $? "bridge-debs: the installed, the import's, --with's and their dependencies among the .debs; not ibacm (removed), no -dbgsym; libibpd-dev where libibverbs-dev is installed"
expect_rc 1 "bridge-debs: a package that no .deb has" \
	"$top/scripts/build/bridge-debs" --admindir "$tmp/bd/admin" --with no-such-pkg "$tmp/bd/debs"

tap_totals

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Static checks, kselftest-style TAP: on every kernel of $KERNELS the module
# builds with W=1 and sparse (C=2) without a warning (sid's sparse, built by
# scripts/build/sparse-fetch, where bookworm's is too old for the headers),
# checkpatch --strict is clean, the shell scripts pass shellcheck and the
# Python ones pyflakes, the bridge's backports (patches/bridge) are the
# patches they backport with a note and no other line, the bridge package's
# debian/copyright gives each patch the licence of the files it changes,
# no debian/control names a kernel headers package, the upstream series'
# patch files are git format-patch's, ibpddv_is_supported(3)
# names the matrix's rdma-cores and the one provider of them that claims a
# device by name, the paths that the docs and comments cite exist and no
# paragraph of the docs stands twice, testing.rst's table of run times is
# the recorded run's, and each uapi header compiles alone in C and in C++.
set -u
# shellcheck source=selftests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/lib/tap.sh"
# shellcheck disable=SC2119 # no plan yet: it is printed once known
tap_setup
kernels=${KERNELS:-$("$top/scripts/build/matrix" kernels)}
kdir=$("$top/scripts/build/kernel-dir" "${kernels%% *}")

hdrs=$(cd "$top/uapi" && ls rdma/*.h)

# A clean build (every file compiled) with sparse on every file (C=2).
for k in $kernels; do
	if ! kd=$("$top/scripts/build/kernel-dir" "$k") || [ ! -f "$kd/kver" ]; then
		: > "$tmp/out"
		ok 1 "module on kernel $k: the kernel could not be fetched"
		ok 1 "sparse on kernel $k: the kernel could not be fetched"
		continue
	fi
	# under the module rule's lock: make check's other lane may build too
	flock "$top/build/kmod/$(cat "$kd/kver").lock" rm -rf "$top/build/kmod/$(cat "$kd/kver")"
	check=sparse
	make -C "$top" module W=1 C=2 KERNEL="$k" > "$tmp/out" 2>&1
	rc=$?
	if grep -q 'not available or not up to date' "$tmp/out"; then
		# bookworm's sparse is too old for these headers: sid's, built
		if check=$("$top/scripts/build/sparse-fetch" 2>"$tmp/out"); then
			flock "$top/build/kmod/$(cat "$kd/kver").lock" \
				rm -rf "$top/build/kmod/$(cat "$kd/kver")"
			make -C "$top" module W=1 C=2 CHECK="$check" KERNEL="$k" \
				> "$tmp/out" 2>&1
			rc=$?
		fi
	fi
	! grep -q -E -i 'warning|error' "$tmp/out" && [ $rc = 0 ]
	ok $? "module on kernel $k: W=1 build without warnings"
	grep -q '  CHECK ' "$tmp/out" &&
		! grep -q -E -i 'warning|error' "$tmp/out" && [ $rc = 0 ]
	st=$?
	if [ "$check" = sparse ]; then
		what="sparse $(sparse --version 2>&1)"
	else
		what=$(basename "$(dirname "$check")")
	fi
	ok $st "$what on kernel $k: ran on every file, no warnings"
done

# the kernel's C only: the provider (user/provider/) is rdma-core's
perl "$kdir/source/scripts/checkpatch.pl" --no-tree --strict --terse \
	--show-types -f "$top"/kernel/*.[ch] "$top"/compat/compat.h \
	"$top"/uapi/rdma/*.h \
	> "$tmp/out" 2>&1
! grep -q -E 'ERROR|WARNING|CHECK' "$tmp/out"
ok $? "checkpatch --strict: 0 errors, 0 warnings, 0 checks"

# Every tracked script, by name or by its #! line (busybox sh's too). What
# they source is checked from their own directory (.shellcheckrc: a
# plain run on one script says the same); each exclusion sits in the
# script with its reason.
scripts=$(cd "$top" && git ls-files | while read -r f; do
	case $f in
	*.sh) echo "$f" ;;
	*.py) ;;
	*) head -c 64 "$f" 2> /dev/null | grep -q '^#!.*\(bash\|[/ ]sh\)' && echo "$f" ;;
	esac
done)
pys=$(cd "$top" && git ls-files | while read -r f; do
	case $f in
	*.py) echo "$f" ;;
	*) head -c 64 "$f" 2> /dev/null | grep -q '^#!.*python' && echo "$f" ;;
	esac
done)
# shellcheck disable=SC2086 # the lists are words: tracked paths, no blanks
(cd "$top" && shellcheck -f gcc $scripts) > "$tmp/out" 2>&1
ok $? "shellcheck: $(echo "$scripts" | wc -w) shell scripts, no finding"
# shellcheck disable=SC2086 # the lists are words: tracked paths, no blanks
(cd "$top" && pyflakes3 $pys) > "$tmp/out" 2>&1
ok $? "pyflakes: $(echo "$pys" | wc -w) Python scripts, no finding"

# The bridge's backports (patches/bridge/SERIES/*.patch) are the patch of
# next/ with their subject in the stable rules' form: its message with a
# note, exactly its lines in order (scripts/upstream/backport-check, which
# the bridge's package build runs too: packaging/ibpd-rdma-sw/debian/assemble).
for bp in "$top"/patches/bridge/*/*.patch; do
	[ -f "$bp" ] || continue
	s=$(basename "$(dirname "$bp")")
	if up=$(grep -lxF "$(head -n 1 "$bp")" "$top"/patches/core/next/*.patch); then
		(cd "$top" && scripts/upstream/backport-check "${up#"$top"/}" \
			"${bp#"$top"/}") > "$tmp/out" 2>&1
	else
		echo "no patch of patches/core/next/ has its subject" > "$tmp/out"
		false
	fi
	ok $? "patches/bridge/$s/$(basename "$bp"): next/'s patch of its subject with a note, its lines and no other"
done

# The bridge's package says of each patch the licence of the files it
# changes (the SPDX line of each in the first kernel's source): its
# debian/copyright stanza "Files: patches/DRIVER/*".
copyright=$top/packaging/ibpd-rdma-sw/debian/copyright
for p in "$top"/patches/core/next/*.patch "$top"/patches/bridge/*/*.patch; do
	[ -f "$p" ] || continue
	# the patches of a software driver: those the package carries
	drv=$(sed -n 's|^diff --git a/drivers/infiniband/sw/\([a-z]*\)/.*|\1|p' "$p" | sort -u)
	[ -n "$drv" ] || continue
	lic=$(awk -v f="patches/$drv/*" '$1 == "Files:" { on = $2 == f }
		on && $1 == "License:" { sub(/^License: */, ""); print; exit }' "$copyright")
	bad=
	# shellcheck disable=SC2013 # the kernel's paths: no blanks
	for f in $(sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "$p"); do
		spdx=$(sed -n '1,2{ /SPDX-License-Identifier:/{ s|.*SPDX-License-Identifier: *||; s| *\*/$||; p; }; }' "$kdir/source/$f")
		[ -n "$lic" ] && [ "${spdx,,}" = "${lic,,}" ] || bad="$bad $f ($spdx)"
	done
	[ -z "$bad" ]
	ok $? "${p#"$top"/}: debian/copyright's licence of patches/$drv/* (${lic:-none}) is that of the files it changes${bad:+; not:$bad}"
done

# Kernel headers: Debian's DKMS packages leave them to dkms's Recommends
# (the architecture's metapackage, linux-headers-amd64 on amd64), and
# linux-headers-generic is Ubuntu's name.
grep -n 'linux-headers' "$top"/debian/control "$top"/packaging/*/debian/control |
	grep -v ':[0-9]*:#' > "$tmp/out"
[ ! -s "$tmp/out" ]
ok $? "debian/control, packaging/*/debian/control: no kernel headers package named (dkms recommends them)"

# The bridge's install command: README's is scripts/build/bridge-debs',
# the one bridge_vm.sh runs (with --with python3-pyverbs) in make check
# shellcheck disable=SC2016,SC1003 # literal text, not expansions
grep -A 1 -xF 'sudo apt install linux-headers-$(uname -r) linux-source-$(uname -r | cut -d. -f1,2) \' "$top/README.md" |
	grep -qxF '	$(scripts/build/bridge-debs)' &&
	grep -q '^debs_list=$("$top/scripts/build/bridge-debs" --with python3-pyverbs ' \
		"$top/selftests/vm/bridge_vm.sh" &&
	grep -qxF 'series=$(uname -r | cut -d. -f1,2)' "$top/selftests/vm/bridge_vm.sh" &&
	grep -qxF 'apt_get install "$IBPD_BRIDGE_SOURCE" "${debs[@]}" > "$tap_out"' "$top/selftests/vm/bridge_vm.sh"
ok $? "README's bridge install command (linux-source-X.Y, scripts/build/bridge-debs') is the one the bridge sections run"

# The DKMS packages' version moves with what they carry: the commit that
# last changed ibpd-rdma-sw's inputs (its packaging, backport-check, the
# import patches and their backports: bridge-rxe --patches) is no later
# than the last one that changed its version (the changelog's first
# line), or the version is being changed (not committed yet), so that apt
# upgrades a rebuilt package and DKMS builds it (Documentation/ibpd.rst,
# "Versions").
chl=packaging/ibpd-rdma-sw/debian/changelog
mapfile -t carried < <("$top/scripts/build/bridge-rxe" --patches)
inputs=(packaging/ibpd-rdma-sw scripts/upstream/backport-check "${carried[@]}"
	":!$chl")
if git -C "$top" rev-parse -q --verify HEAD > /dev/null &&
	[ "$(git -C "$top" rev-parse --is-shallow-repository)" = false ]; then
	head1() { git -C "$top" show "$1:$chl" 2> /dev/null | head -n 1; }
	last_in=$(cd "$top" && git log -1 --format=%H -- "${inputs[@]}")
	last_v=
	for c in $(git -C "$top" log --format=%H -- "$chl"); do
		[ "$(head1 "$c")" = "$(head1 "$c^")" ] || { last_v=$c; break; }
	done
	dirty=$(cd "$top" && git status --porcelain -- "${inputs[@]}")
	[ "$(head -n 1 "$top/$chl")" != "$(head1 HEAD)" ] ||
		{ [ -n "$last_v" ] && [ -z "$dirty" ] &&
			git -C "$top" merge-base --is-ancestor "$last_in" "$last_v"; }
	ok $? "ibpd-rdma-sw: its version ($(dpkg-parsechangelog -l "$top/$chl" -S Version)) moved with its inputs (last changed in ${last_in:0:12}, version in ${last_v:0:12}${dirty:+, uncommitted changes})"
else
	skip "ibpd-rdma-sw's version against its inputs: no git history here"
fi

# The bridge's rdma-core version against Debian's, as ibpd.rst's
# "Versions" says: apt installs it over bookworm's (and a stable update
# of it) and Debian's 65.0-1; Debian's next revision of 65.0, every later
# release and a later suite's build of the bridge replace it; trixie's
# 56.1 does not (what it does not do: a dist-upgrade keeps it).
# (the versions of the matrix: the series' base, the next release, the
# rdma-core of trixie's suite)
bv=$("$top/scripts/build/bridge-rdma-core" --version)
m() { "$top/scripts/build/matrix" "$@"; }
base=$(m upstream-rdma-core)
next=$(m upstream-rdma-core-next)
for r in $(m rdma-cores); do
	[ "$(m "rdma-core-$r" 2)" != trixie ] || trixie=$(m "rdma-core-$r" 1)
done
while read -r other op why; do
	dpkg --compare-versions "$other" "$op" "$bv"
	ok $? "the bridge's rdma-core $bv: $other $op it ($why)"
done <<-EOF
	44.0-2 lt bookworm's: the bridge installs over it
	44.0-2+deb12u1 lt a stable update of bookworm's: does not replace it
	$base-1 lt Debian's $base it is built from
	$base-1+ibpd1~bpo12+1 lt the bridge's first: an upgrade replaces it
	$base-1.1 gt Debian's next revision of $base: replaces it
	$base-2 gt Debian's next revision of $base: replaces it
	$next-1 gt a later release: replaces it
	${bv%~*}~trixie1 gt the bridge's build for trixie: replaces it on a dist-upgrade
	${trixie:-none} lt trixie's: a dist-upgrade to trixie alone keeps the bridge's
EOF

# The upstream series' patch files are what git format-patch writes of
# them (names, diffs): opened as commits on their base (scripts/upstream/
# stage open) and written back into a copy of patches/, nothing changes.
for sr in rdma-core kernel; do
	rm -rf "$tmp/series" "$tmp/top"
	mkdir -p "$tmp/top"
	cp -a "$top/patches" "$tmp/top/"
	{ "$top/scripts/upstream/stage" open "$sr" "$tmp/series" &&
	  "$top/scripts/upstream/stage" write "$tmp/series" "$tmp/top" &&
	  diff -r "$top/patches" "$tmp/top/patches"; } > "$tmp/out" 2>&1
	ok $? "the $sr series' patch files are git format-patch's (stage open, stage write: no change)"
done
rm -rf "$tmp/series" "$tmp/top"

# ibpddv_is_supported(3) says which provider claims a device by its name
# in the matrix's rdma-cores (rdma-core-fetch: fetched on first use):
# rxe's, and no other.
vs=$("$top/scripts/build/matrix" rdma-cores)
got="" want=""
for v in $vs; do
	want="$want $v:rxe"
	b=$("$top/scripts/build/rdma-core-fetch" "$v" 2> "$tmp/out") || {
		got="$got $v:(not fetched)"
		continue
	}
	for p in $(cd "$b/../providers" && grep -rl 'VERBS_NAME_MATCH(' . |
		   cut -d/ -f2 | sort -u); do
		got="$got $v:$p"
	done
done
list=$(echo "$vs" | sed 's/ \([^ ]*\)$/ and \1/; s/ \([^ ]*\) and/, \1 and/g')
if [ "$got" = "$want" ] &&
   grep -qF "the only provider of rdma-core $list that matches by" \
	"$top/man/man3/ibpddv_is_supported.3"; then
	ok 0 "ibpddv_is_supported(3): rxe's the only provider of rdma-core $list that matches by name"
else
	ok 1 "ibpddv_is_supported(3): the providers that match by name:$got (the page: rdma-core $list, rxe)"
fi

# The paths that the docs and the comments cite are the tree's (what
# counts as a citation: scripts/tests/ibpd_check/cites.py), and no
# paragraph stands twice in the docs.
PYTHONPATH="$top/scripts/tests" PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 -m ibpd_check.cites "$top" > "$tmp/out" 2>&1
ok $? "the paths that the docs and comments cite are in the tree, no paragraph of the docs twice$([ -s "$tmp/out" ] && echo ": $(wc -l < "$tmp/out") findings")"

# testing.rst's table of a run's times is what check --times-table makes
# of the recorded run (scripts/tests/check-times), not written by hand.
"$top/scripts/tests/check" --times-table check > "$tmp/out" 2>&1
ok $? "Documentation/testing.rst's table of run times is scripts/tests/check-times'"

# Debian's docutils (python3-docutils): fail on any warning.
for d in ibpd testing; do
	PATH=/usr/bin:$PATH rst2html --halt=warning --report=warning \
		"$top/Documentation/$d.rst" > /dev/null 2> "$tmp/out"
	ok $? "Documentation/$d.rst renders with rst2html without warnings"
done

for h in $hdrs; do
	echo "#include <$h>" > "$tmp/t.c"
	gcc -Wall -Werror -fsyntax-only -I"$top/uapi" "$tmp/t.c" > "$tmp/out" 2>&1
	ok $? "uapi: $h compiles alone in C"
	g++ -Wall -Werror -fsyntax-only -x c++ -I"$top/uapi" "$tmp/t.c" > "$tmp/out" 2>&1
	ok $? "uapi: $h compiles alone in C++"
done

# the plan: the cases that ran, counted, not a sum kept by hand
echo "1..$tap_n"
tap_totals

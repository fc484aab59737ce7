# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The user-space half of the upstream series, sourced by stage-upstream:
# a git format-patch series against Debian's newest rdma-core (65.0) with
# a cover letter, in out/upstream/rdma-core/:
#   - "Update kernel headers", from the staged for-next kernel series;
#   - patches/rdma-core/*.patch (libibverbs' generic import on the core
#     methods with one cmd_fd rule, rxe and siw adopting it, the pyverbs
#     test), signed off by the caller (stage-upstream's apply_series).
#
# stage_rdma_core KREPO OUT WORK: KREPO is the staged kernel tree (git),
# OUT the output directory, WORK a scratch directory.
# check_rdma_core OUT WORK: apply the series to a pristine rdma-core 65.0
# and build it with warnings as errors (rdma_core_build; TAP lines through
# tap.sh's ok); the build is cached by the series' hash in
# $IBPD_CACHE/rdma-core/.
# rdma_core_ntests: how many TAP lines check_rdma_core prints.

rdma_core_version=65.0
rdma_core_ntests=6

# The pristine source, as a git repository, in DIR.
rdma_core_pristine() {	# rdma_core_pristine DIR
	local cache=${IBPD_CACHE:-$HOME/.cache/ibpd} top
	local orig=$cache/rdma-core/dl/rdma-core_$rdma_core_version.orig.tar.gz

	[ -f "$orig" ] || "$top/scripts/build/rdma-core-fetch" "$rdma_core_version" > /dev/null
	rm -rf "$1" "$1.unpack"
	mkdir -p "$1.unpack"
	tar -C "$1.unpack" -xzf "$orig"
	# 65.0's tarball unpacks to a directory named after a git hash
	top=$(find "$1.unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	mv "$top" "$1"
	rmdir "$1.unpack"
}

stage_rdma_core() {	# stage_rdma_core KREPO OUT WORK
	local krepo=$1 out=$2 rc=$3/rdma-core base kcommit

	rdma_core_pristine "$rc"
	rg() { git -C "$rc" -c user.name="$name" -c user.email="$email" "$@"; }
	rg init -q
	rg add -A
	rg commit -q -m "base: rdma-core $rdma_core_version as packaged"
	base=$(rg rev-parse HEAD)

	# 1. the kernel headers the for-next series changes
	cp "$krepo/include/uapi/rdma/ib_user_ioctl_cmds.h" \
		"$rc/kernel-headers/rdma/ib_user_ioctl_cmds.h"
	kcommit=$(git -C "$krepo" log -1 --abbrev=12 --format='%h ("%s")' \
		-- include/uapi/rdma/ib_user_ioctl_cmds.h)
	rg add -A
	rg commit -q -s -m "Update kernel headers" -m "To commit: $kcommit."

	# 2. libibverbs, rxe and siw, the test
	apply_series "$rc" $rc_patches

	mkdir -p "$out"
	rg format-patch -q --cover-letter --subject-prefix="PATCH rdma-core" \
		-o "$out" "$base..HEAD"
	cover_letter "$out" "Generic import of contexts, PDs and MRs" <<-EOF
	ibv_import_device(3), ibv_import_pd(3) and ibv_import_mr(3) work today
	only on mlx5, through its own kernel methods. The kernel series
	"RDMA/core: PD and context import for every device" adds a core
	UVERBS_METHOD_PD_QUERY and lets UVERBS_METHOD_QUERY_CONTEXT answer for
	drivers without query_ucontext(), so that a provider whose context, PD
	and MR carry no driver data can import them with the core's methods
	alone. This is the user-space half:

	- the kernel headers of that series (to be refreshed to the merged
	  commit once the kernel side is in);
	- libibverbs: generic import helpers for such providers (private ABI
	  66), one rule for cmd_fd when ibv_import_device() fails (it stays
	  the caller's; documented in ibv_import_device(3)), and the man pages
	  of ibv_import_device/ibv_import_pd saying which devices support the
	  import and with which errors;
	- rxe and siw adopting the helpers;
	- tests/test_import.py: a context, a PD and an MR imported through a
	  dup() of the command FD, a bad handle refused with ENOENT; skipped
	  with EOPNOTSUPP where the kernel lacks the methods.

	On kernels without the methods, the context and PD imports on rxe and
	siw keep failing with EOPNOTSUPP.

	How it was tested: applied to rdma-core $rdma_core_version and built with
	-DENABLE_WERROR=1, with buildlib/check-build, and the ABI of every
	public library compared with the pristine $rdma_core_version build
	(abi-compliance-checker). With the kernel series, in qemu: seed tests
	of ibv_import_device()/ibv_import_pd() on rxe and siw, and
	run_tests.py on rxe and siw (test_import included) against the
	results of $rdma_core_version; on kernels without the series the
	import tests skip with EOPNOTSUPP.

	Kernel side: "RDMA/core: PD and context import for every device"
	($nfeat patches, for-next), on top of "RDMA/uverbs: Two leaks on
	error paths" ($nfix patches, -rc).
	EOF
}

# What the series promises: the new private ABI with the generic import,
# rxe and siw using it.
rdma_core_exports() {	# rdma_core_exports BUILD
	local lib=$1/lib drv sym
	local import="verbs_import_pd verbs_unimport_pd verbs_import_mr
		      verbs_unimport_mr _verbs_import_and_alloc_context"

	objdump -T "$lib/libibverbs.so.1" > "$lib/../ibverbs.syms"
	for sym in ibv_cmd_query_pd $import; do
		grep -E "IBVERBS_PRIVATE_66 +$sym\$" "$lib/../ibverbs.syms" ||
			return 1
	done
	for drv in rxe siw; do
		objdump -T "$lib/lib$drv-rdmav66.so" > "$lib/../$drv.syms"
		for sym in $import; do
			grep -E " $sym\$" "$lib/../$drv.syms" || return 1
		done
	done
}

# rdma-core's own build-time tests (buildlib/check-build: the private ABI
# of every provider, the published and installed headers compiled alone in
# C and C++), less three: two fail for reasons outside the series (the
# release tarball's PACKAGE_VERSION 65.0 is older than the private ABI 66
# that the series moves to, upstream master is already 66.0; the static
# link test wants an -DENABLE_STATIC=1 build and fails on a pristine 65.0
# here too), and the ABI test, test_verbs_uapi, which rdma_core_abi runs
# in the form a stable branch would.
rdma_core_check_build() {	# rdma_core_check_build SRC
	(cd "$1/build" && nice -n 19 /usr/bin/python3 - buildlib/check-build \
		--src .. --cc gcc <<-'PY'
	import inspect, sys
	sys.argv[0] = "../" + sys.argv.pop(1)
	src = open(sys.argv[0]).read()
	g = {"__name__": "check_build", "__file__": sys.argv[0]}
	exec(compile(src[:src.index("funcs = globals();")], sys.argv[0], "exec"), g)
	for k, v in list(g.items()):
	    if k.startswith("test_") and inspect.isfunction(v) and \
	            k not in ("test_lib_names", "test_static_libs",
	                      "test_verbs_uapi"):
	        print("# check-build:", k, flush=True)
	        v(g["args"])
	PY
	)
}

# The ABI dump of a shared library as check-build's check_abi() makes it:
# abi-dumper with the version of the library's file name.
rdma_core_dump() {	# rdma_core_dump LIB DUMP
	local ver

	ver=$(basename "$1" | sed -E 's/^lib[^.]+\.so\.//')
	abi-dumper -lver "$ver" "$1" -o "$2" > "$2.log" 2>&1
}

# abi-compliance-checker as check_abi() runs it, and what it found.
rdma_core_acc() {	# rdma_core_acc NAME OLD NEW [SKIP]
	local rc=0

	(cd "$(dirname "$3")" &&
	 abi-compliance-checker -l "$1" -old "$2" -new "$3" \
		${4:+-skip-symbols "$4"}) > "$3.acc" 2>&1 || rc=$?
	echo "# $1: $(grep -E '^(Binary|Source) compatibility:' "$3.acc" |
		paste -sd' ')$( [ $rc = 0 ] || echo " (exit $rc; $(dirname "$3")/compat_reports/$1)")"
	return $rc
}

# rdma_core_abi SRC PRISTINE WORK: the ABI check of rdma-core's stable
# branches (check-build's test_verbs_uapi: every shared library dumped with
# abi-dumper and compared by abi-compliance-checker with ABI/<name>.dump).
# Every library against the pristine release's build (PRISTINE: what a stable branch's ABI files
# would hold, which the release tarball lacks), less libibverbs' private
# symbols (IBVERBS_PRIVATE_*: the series moves them on to 66; they bind
# only rdma-core's own providers, built with it).
rdma_core_abi() {	# rdma_core_abi SRC PRISTINE WORK
	local new=$1/build/lib old=$2/lib w=$3 f base name rc=0 n=0

	[ -n "$2" ] && [ -d "$old" ] ||
		{ echo "# no pristine rdma-core $rdma_core_version build"; return 1; }
	rm -rf "$w"
	mkdir -p "$w"
	for f in "$old"/lib*.so.*.*.*; do
		[ -L "$f" ] && continue
		base=$(basename "$f")
		name=${base#lib}
		name=${name%%.so.*}
		if [ ! -f "$new/$base" ]; then
			echo "# $base: not built with the series"
			rc=1
			continue
		fi
		objdump -T "$f" | awk 'NF >= 2 && $(NF - 1) ~ /_PRIVATE_/ {
			print $NF; print $NF "@@" $(NF - 1) }' > "$w/skip-$name"
		rdma_core_dump "$f" "$w/ref-$name.dump" &&
			rdma_core_dump "$new/$base" "$w/current-$name.dump" &&
			rdma_core_acc "$name" "$w/ref-$name.dump" \
				"$w/current-$name.dump" "$w/skip-$name" || rc=1
		n=$((n + 1))
	done
	echo "# $n libraries of rdma-core $rdma_core_version compared with the pristine build"
	[ "$n" -ge 10 ] || rc=1
	return $rc
}

# The check's control: a libibverbs that lost ibv_import_pd must be found
# incompatible with the pristine one.
rdma_core_abi_control() {	# rdma_core_abi_control WORK
	local w=$1 sym

	sym=$(grep -o "'ibv_import_pd@@IBVERBS_[0-9.]*' => 1" "$w/current-ibverbs.dump") ||
		{ echo "# no ibv_import_pd in $w/current-ibverbs.dump"; return 1; }
	mkdir -p "$w/control"
	grep -v -F "$sym" "$w/current-ibverbs.dump" > "$w/control/current-ibverbs.dump"
	! rdma_core_acc ibverbs "$w/ref-ibverbs.dump" "$w/control/current-ibverbs.dump" &&
		grep -q 'Total binary compatibility problems: [1-9]' \
			"$w/control/current-ibverbs.dump.acc"
}

# rdma_core_build OUT: apply the series in OUT to a pristine rdma-core and
# build it, once per series (cached by its hash);
# sets rdma_core_dir (its src/build is the build, IN_PLACE: usable as is).
# Two stagings of the same series at once would share a directory: one
# tree at a time.
rdma_core_build() {	# rdma_core_build OUT
	local out=$1 cache=${IBPD_CACHE:-$HOME/.cache/ibpd} hash dir rc=0 p

	# the diffs only: not the identity of whoever staged them, nor the
	# commit ids and dates, which follow this tree's last commit
	hash=$(for p in "$out"/0*.patch; do
		[ "$(basename "$p")" = 0000-cover-letter.patch ] ||
			sed -n '/^diff --git/,$p' "$p"
	done | sha256sum | cut -c1-12)
	dir=$cache/rdma-core/staged-$rdma_core_version-$hash
	log "rdma-core $rdma_core_version with the series ($dir)"
	if [ ! -f "$dir/.ready" ]; then
		# builds of other series unused for a day go (not sooner: another
		# tree's staging may be using one right now)
		find "$cache/rdma-core" -maxdepth 2 -path '*/staged-*/.ready' \
			-mtime +0 -printf '%h\n' | xargs -r rm -rf
		mkdir -p "$dir"
		rdma_core_pristine "$dir/src"
		for p in "$out"/0*.patch; do
			[ "$(basename "$p")" = 0000-cover-letter.patch ] && continue
			patch -p1 -s -d "$dir/src" --no-backup-if-mismatch \
				< "$p" >> "$dir/apply.log" 2>&1 || { rc=1; break; }
		done
		echo $rc > "$dir/apply.rc"
		if [ $rc = 0 ]; then
			log "building it (cmake, ninja -j2, warnings as errors; log in $dir/build.log)"
			mkdir -p "$dir/src/build"
			rc=0
			(
				cd "$dir/src/build" &&
				cmake -GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 \
					-DENABLE_WERROR=1 \
					-DPYTHON_EXECUTABLE=/usr/bin/python3 .. &&
				nice -n 19 ninja -j2
			) > "$dir/build.log" 2>&1 || rc=$?
			echo $rc > "$dir/build.rc"
		fi
		touch "$dir/.ready"
	else
		log "(cached)"
	fi
	rdma_core_dir=$dir
}

check_rdma_core() {	# check_rdma_core OUT WORK
	local out=$1 w=$2/rdma-core-check dir rc

	rdma_core_build "$out"
	dir=$rdma_core_dir
	tap_out=$dir/apply.log
	ok "$(cat "$dir/apply.rc")" "the $(ls "$out"/0*.patch | grep -vc cover-letter) rdma-core patches apply to rdma-core $rdma_core_version"

	tap_out=$dir/build.log
	[ -f "$dir/build.rc" ] && [ "$(cat "$dir/build.rc")" = 0 ] &&
		! grep -q -E -i '(warning|error):' "$dir/build.log"
	ok $? "rdma-core $rdma_core_version builds with the series (-DENABLE_WERROR=1, no warnings)"

	# what the series promises: the provider and DV library, the new
	# private ABI with the generic import, rxe and siw linking to it
	tap_out=$w.log
	rc=0
	rdma_core_exports "$dir/src/build" > "$tap_out" 2>&1 || rc=$?
	ok $rc "provider ABI 66 with the generic import (context, PD, MR), which rxe and siw use"

	tap_out=$w.check-build.log
	rc=0
	[ "$(cat "$dir/build.rc" 2>/dev/null)" = 0 ] &&
		rdma_core_check_build "$dir/src" > "$tap_out" 2>&1 || rc=1
	ok $rc "rdma-core's buildlib/check-build (private ABI, headers alone in C and C++)"

	tap_out=$w.abi.log
	rc=0
	if [ "$(cat "$dir/build.rc" 2>/dev/null)" = 0 ]; then
		rdma_core_abi "$dir/src" "$("$top/scripts/build/rdma-core-fetch" "$rdma_core_version")" \
			"$w-abi" > "$tap_out" 2>&1 || rc=1
	else
		rc=1
	fi
	cat "$tap_out"
	tap_out=
	ok $rc "ABI: every library as in $rdma_core_version (abi-compliance-checker; libibverbs' private symbols aside)"

	tap_out=$w.abi-control.log
	rc=0
	rdma_core_abi_control "$w-abi" > "$tap_out" 2>&1 || rc=1
	ok $rc "ABI check's control: a libibverbs without ibv_import_pd is found incompatible"
}

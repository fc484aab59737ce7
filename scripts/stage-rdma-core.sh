# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The user-space half of the upstream series, sourced by stage-upstream:
# a git format-patch series against Debian's newest rdma-core (65.0) with
# a cover letter, in out/upstream/rdma-core/:
#   - "Update kernel headers", from the staged kernel series;
#   - patches/rdma-core/*.patch as they are sent (libibverbs' generic
#     import on the core methods, rxe and siw adopting it);
#   - providers/ibpd: user/provider, man/man3 and the packaging entries;
#   - ABI/ibpd.dump: libibpd's ABI file for the stable branch of the
#     release that takes the series, from patches/rdma-core/ABI/ibpd.dump
#     (rdma-core's master keeps no ABI/ directory, its stable branches do).
#
# stage_rdma_core KREPO OUT WORK: KREPO is the staged kernel tree (git),
# OUT the output directory, WORK a scratch directory.
# check_rdma_core OUT WORK: apply the series to a pristine rdma-core 65.0
# and build it with warnings as errors (rdma_core_build; TAP lines through
# tap.sh's ok); the build is cached by the series' hash in
# $IBPD_CACHE/rdma-core/.
# rdma_core_update_abi OUT: build the series in OUT and write libibpd's
# ABI file, patches/rdma-core/ABI/ibpd.dump, from that build.
# rdma_core_ntests: how many TAP lines check_rdma_core prints.

rdma_core_version=65.0
rdma_core_ntests=6
rdma_core_abi_ref=$top/patches/rdma-core/ABI/ibpd.dump

# The pristine source, as a git repository, in DIR.
rdma_core_pristine() {	# rdma_core_pristine DIR
	local cache=${IBPD_CACHE:-$HOME/.cache/ibpd} top
	local orig=$cache/rdma-core/dl/rdma-core_$rdma_core_version.orig.tar.gz

	[ -f "$orig" ] || "$here/rdma-core-fetch" "$rdma_core_version" > /dev/null
	rm -rf "$1" "$1.unpack"
	mkdir -p "$1.unpack"
	tar -C "$1.unpack" -xzf "$orig"
	# 65.0's tarball unpacks to a directory named after a git hash
	top=$(find "$1.unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	mv "$top" "$1"
	rmdir "$1.unpack"
}

# providers/ibpd from user/provider: the in-tree form of what is built
# out of tree against Debian's rdma-core trees.
rdma_core_provider() {	# rdma_core_provider RCREPO
	local p=$1/providers/ibpd

	mkdir -p "$p/man"
	for f in ibpd.c verbs.c dv.c ibpd.h ibpddv.h libibpd.map; do
		cp "$top/user/provider/$f" "$p/$f"
	done
	cp "$top"/man/man3/ibpddv_*.3 "$p/man/"
	/usr/bin/python3 "$here/stage-rdma-core.py" "$1" "$name" "$email"
}

stage_rdma_core() {	# stage_rdma_core KREPO OUT WORK
	local krepo=$1 out=$2 rc=$3/rdma-core f kcommit

	rdma_core_pristine "$rc"
	rg() { git -C "$rc" -c user.name="$name" -c user.email="$email" "$@"; }
	rg init -q
	rg add -A
	rg commit -q -m "base: rdma-core $rdma_core_version as packaged"

	# 1. the kernel headers the kernel series changes or adds
	for f in ib_user_ioctl_cmds.h ib_user_ioctl_verbs.h ibpd-abi.h \
		 ibpd_user_ioctl_cmds.h; do
		cp "$krepo/include/uapi/rdma/$f" "$rc/kernel-headers/rdma/$f"
	done
	/usr/bin/python3 - "$rc/kernel-headers/CMakeLists.txt" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "  rdma/ib_user_verbs.h\n  rdma/ionic-abi.h\n"
assert s.count(old) == 2, "kernel-headers/CMakeLists.txt changed"
# published (the provider's driver response comes through UHW_OUT, so no
# kernel-abi wrapper of ibpd-abi.h is needed)
s = s.replace(old, "  rdma/ib_user_verbs.h\n  rdma/ibpd-abi.h\n"
              "  rdma/ibpd_user_ioctl_cmds.h\n  rdma/ionic-abi.h\n", 1)
open(p, "w").write(s)
PY
	kcommit=$(git -C "$krepo" log -1 --format='%h ("%s")' \
		-- include/uapi/rdma/ibpd_user_ioctl_cmds.h)
	rg add -A
	rg commit -q -s -m "Update kernel headers" -m "$(fmt -w 72 <<-EOF
	To commit $kcommit of the kernel series this one depends on, which adds UVERBS_METHOD_PD_ALLOC, UVERBS_METHOD_PD_QUERY, RDMA_DRIVER_IBPD and the ibpd uapi.
	EOF
	)"

	# 2. libibverbs and the providers that adopt its generic import
	for f in "$top"/patches/rdma-core/*.patch; do
		rg am -q "$f" || { log "$(basename "$f") does not apply"; return 1; }
	done

	# 3. the ibpd provider and DV library
	rdma_core_provider "$rc"
	rg add -A
	rg commit -q -s -F "$top/patches/rdma-core/provider.msg"

	# 4. libibpd's ABI file, for the stable branch (make rdma-core-abi
	# writes it the first time and after an intended change of the ABI)
	if [ -f "$rdma_core_abi_ref" ]; then
		mkdir -p "$rc/ABI"
		cp "$rdma_core_abi_ref" "$rc/ABI/ibpd.dump"
		rg add -A
		rg commit -q -s -F "$top/patches/rdma-core/abi.msg"
	else
		log "no $rdma_core_abi_ref: the series goes without libibpd's ABI file (make rdma-core-abi)"
	fi

	mkdir -p "$out"
	rg format-patch -q --cover-letter -o "$out" "$(rg rev-list --max-parents=0 HEAD)"
	/usr/bin/python3 - "$out"/0000-cover-letter.patch <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("*** SUBJECT HERE ***",
              "PD and context import for every device, and the ibpd provider")
s = s.replace("*** BLURB HERE ***", """\
ibv_import_pd(3) and ibv_import_device(3) work today only on mlx5,
through its own kernel methods. The kernel series this one depends on
adds to ib_core a PD query method (UVERBS_METHOD_PD_QUERY), lets
UVERBS_METHOD_QUERY_CONTEXT answer its core attributes when the driver
has no query_ucontext(), adds the ioctl PD allocation
(UVERBS_METHOD_PD_ALLOC), and adds ibpd, a software device for PD
sharing with its own driver id, RDMA_DRIVER_IBPD.

This is the user-space half:
- the kernel headers of that series;
- libibverbs: generic import of PDs, MRs and contexts on the core
  methods, for providers whose PD, MR and context hold no driver data
  (private ABI bumped to 66);
- rxe and siw adopt it, so that ibv_import_device(), ibv_import_pd()
  and ibv_import_mr() work on them; on kernels without the new methods
  the context and PD imports keep failing with EOPNOTSUPP;
- the ibpd provider and its direct-verbs library, libibpd.so.1
  (<infiniband/ibpddv.h>, man pages, packaging);
- libibpd's ABI file, ABI/ibpd.dump, for the stable branch of the
  release that takes the provider (master keeps no ABI/ directory:
  this last patch is for that branch only).

The user-space half waits on the kernel half: it should be merged only
once the kernel series is in, and "Update kernel headers" then
refreshed to the merged commit.""")
open(p, "w").write(s)
PY
}

# What the series promises: the provider and DV library, the new private
# ABI with the generic import, rxe and siw using it.
rdma_core_exports() {	# rdma_core_exports BUILD
	local lib=$1/lib drv sym
	local import="verbs_import_pd verbs_unimport_pd verbs_import_mr
		      verbs_unimport_mr _verbs_import_and_alloc_context"

	objdump -T "$lib/libibpd.so.1" | grep -E ' verbs_register_driver_66$' &&
	[ "$(objdump -T "$lib/libibpd.so.1" | grep -c ' IBPD_2.0 *ibpddv_')" = 4 ] &&
	[ -f "$1/include/infiniband/ibpddv.h" ] || return 1
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
# libibpd against the series' ABI/ibpd.dump; every other library against
# the pristine release's build (PRISTINE: what a stable branch's ABI files
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
	f=$(ls "$new"/libibpd.so.*.*.* 2> /dev/null | head -n 1)
	if [ ! -f "$1/ABI/ibpd.dump" ] || [ -z "$f" ]; then
		echo "# no libibpd.so or no ABI/ibpd.dump in the series"
		return 1
	fi
	rdma_core_dump "$f" "$w/current-ibpd.dump" &&
		rdma_core_acc ibpd "$1/ABI/ibpd.dump" "$w/current-ibpd.dump" ||
		{ echo "# an intended change of libibpd's ABI: make rdma-core-abi"; rc=1; }
	return $rc
}

# The check's control: a libibpd that lost ibpddv_query_pd must be found
# incompatible with ABI/ibpd.dump.
rdma_core_abi_control() {	# rdma_core_abi_control SRC WORK
	local w=$2

	grep -q "'ibpddv_query_pd@@IBPD_2.0' => 1" "$w/current-ibpd.dump" ||
		{ echo "# no ibpddv_query_pd@@IBPD_2.0 in $w/current-ibpd.dump"; return 1; }
	mkdir -p "$w/control"
	grep -v "'ibpddv_query_pd@@IBPD_2.0' => 1" "$w/current-ibpd.dump" \
		> "$w/control/current-ibpd.dump"
	! rdma_core_acc ibpd "$1/ABI/ibpd.dump" "$w/control/current-ibpd.dump" &&
		grep -q 'Total binary compatibility problems: [1-9]' \
			"$w/control/current-ibpd.dump.acc"
}

# make rdma-core-abi: libibpd's ABI file from the series' build.
rdma_core_update_abi() {	# rdma_core_update_abi OUT
	local f

	rdma_core_build "$1"
	[ "$(cat "$rdma_core_dir/build.rc")" = 0 ] ||
		{ log "rdma-core does not build: $rdma_core_dir/build.log"; return 1; }
	f=$(ls "$rdma_core_dir"/src/build/lib/libibpd.so.*.*.* | head -n 1)
	mkdir -p "$(dirname "$rdma_core_abi_ref")"
	rdma_core_dump "$f" "$rdma_core_abi_ref" ||
		{ cat "$rdma_core_abi_ref.log"; return 1; }
	rm -f "$rdma_core_abi_ref.log"
	log "wrote $rdma_core_abi_ref from $f; make stage-upstream puts it in the series"
}

# rdma_core_build OUT: apply the series in OUT to a pristine rdma-core and
# build it, once per series (cached by its hash, only the newest kept);
# sets rdma_core_dir (its src/build is the build, IN_PLACE: usable as is).
rdma_core_build() {	# rdma_core_build OUT
	local out=$1 cache=${IBPD_CACHE:-$HOME/.cache/ibpd} hash dir rc=0 p

	# not the commit ids and dates, which follow this tree's last commit
	hash=$(cat "$out"/0*.patch | grep -v -e '^From [0-9a-f]* ' -e '^Date: ' |
		sed 's/^To commit [0-9a-f]* /To commit /' | sha256sum | cut -c1-12)
	dir=$cache/rdma-core/staged-$rdma_core_version-$hash
	log "rdma-core $rdma_core_version with the series ($dir)"
	if [ ! -f "$dir/.ready" ]; then
		# only the newest series' build is kept
		rm -rf "$cache/rdma-core/staged-"*
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
	ok $rc "libibpd.so.1 (4 DV symbols, provider ABI 66), rxe and siw use libibverbs' generic import (context, PD, MR)"

	tap_out=$w.check-build.log
	rc=0
	[ "$(cat "$dir/build.rc" 2>/dev/null)" = 0 ] &&
		rdma_core_check_build "$dir/src" > "$tap_out" 2>&1 || rc=1
	ok $rc "rdma-core's buildlib/check-build (private ABI, headers alone in C and C++)"

	tap_out=$w.abi.log
	rc=0
	if [ "$(cat "$dir/build.rc" 2>/dev/null)" = 0 ]; then
		rdma_core_abi "$dir/src" "$("$here/rdma-core-fetch" "$rdma_core_version")" \
			"$w-abi" > "$tap_out" 2>&1 || rc=1
	else
		rc=1
	fi
	cat "$tap_out"
	tap_out=
	ok $rc "ABI: libibpd as ABI/ibpd.dump, every other library as in $rdma_core_version (abi-compliance-checker; libibverbs' private symbols aside)"

	tap_out=$w.abi-control.log
	rc=0
	rdma_core_abi_control "$dir/src" "$w-abi" > "$tap_out" 2>&1 || rc=1
	ok $rc "ABI check's control: a libibpd without ibpddv_query_pd is found incompatible"
}

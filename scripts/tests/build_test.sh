#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The top Makefile, on the host, without building anything: plain "make"
# is "make all" (the header's promise, whatever an included file's first
# rule); on a machine without a package the build needs, plain make
# installs it (as root) or names it (as a user without sudo) before it
# downloads anything; a test kernel that cannot be had stops make with the
# fetch error before anything runs; make module builds in the module's
# source tree (scripts/build/module-tree), whole, as debian/rules copies
# it for DKMS. kselftest-style TAP.
set -u
# shellcheck source=selftests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/lib/tap.sh"
tap_setup 12

# -p: the rules as read; the goal FORCE has no recipe: nothing runs
make -C "$top" -q -p FORCE > "$tmp/db" 2> "$tmp/out"
grep '^\.DEFAULT_GOAL :=' "$tmp/db" > "$tmp/out"
grep -qx '\.DEFAULT_GOAL := all' "$tmp/out"
ok $? "make: the default goal is all"

# make vm-test: TEST is required; the matrix's vm-test-kernel (a harness
# with test selection) unless KERNEL is given, for the program's vm-test
# section, which builds for it (how that section builds and runs TEST:
# ibpd_check/test_check.py); make builds nothing itself. -n and
# MAKE=true: the commands, nothing run.
expect_rc 2 "make vm-test without TEST: usage" make --no-print-directory -C "$top" vm-test
grep -q 'make vm-test TEST="PROG \[ARGS\]"' "$tmp/out"
ok $? "make vm-test without TEST: names the form"
vmtest() {	# the commands, continued lines joined
	make -n --no-print-directory -C "$top" vm-test MAKE=true \
		TEST="ibpd_test -r pd.alloc_dealloc" "$@" | sed -e :a -e '/\\$/N; s/\\\n//; ta'
}
vt=$("$top/scripts/build/matrix" vm-test-kernel)
vmtest | grep -q -- "^KERNEL=$vt scripts/tests/check vm-test\$" &&
	vmtest KERNEL=debug | grep -q -- '^KERNEL=debug scripts/tests/check vm-test$' &&
	! vmtest | grep -q -- ' all\b\| module\b\| selftests\b'
ok $? "make vm-test: runs the vm-test section on the matrix's vm-test-kernel or on KERNEL, which builds for it"

# A fresh machine, as far as make can tell: kmod (depmod) is not
# installed (dpkg-query says so) and not on PATH; apt-get records what
# it is asked and fails to install; the cache is empty.
mkdir -p "$tmp/bin" "$tmp/cache"
cat > "$tmp/bin/dpkg-query" <<-'EOF'
	#!/bin/sh
	for a; do [ "$a" = kmod ] && exit 1; done
	exec /usr/bin/dpkg-query "$@"
	EOF
# shellcheck disable=SC2016 # the $s are the fake commands' own
printf '#!/bin/sh\necho "apt-get $*" >> "%s/apt.log"\n[ "$1" = update ]\n' "$tmp" > "$tmp/bin/apt-get"
# shellcheck disable=SC2016 # the $s are the fake commands' own
printf '#!/bin/sh\n[ "$1" = -u ] && echo "$FAKE_UID" || exec /usr/bin/id "$@"\n' > "$tmp/bin/id"
printf '#!/bin/sh\necho "sudo: a password is required" >&2\nexit 1\n' > "$tmp/bin/sudo"
chmod +x "$tmp"/bin/*
fresh_make() {	# fresh_make UID: plain make there
	env PATH="$tmp/bin:/usr/bin:/bin" FAKE_UID="$1" IBPD_CACHE="$tmp/cache" \
		make --no-print-directory -C "$top"
}
expect_rc 2 "make as a user without sudo on a machine without kmod: fails" fresh_make 1000
grep -q '^install-deps: missing Debian packages: kmod$' "$tmp/out" &&
	grep -q '^install-deps: as root: apt-get install kmod$' "$tmp/out" &&
	[ ! -e "$tmp/apt.log" ] && [ -z "$(ls -A "$tmp/cache")" ] &&
	! grep -q 'kernel-fetch' "$tmp/out"
ok $? "make as a user: names the missing package, downloads nothing"
fresh_make 0 > "$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q ' install .* kmod$' "$tmp/apt.log" &&
	[ -z "$(ls -A "$tmp/cache")" ] && ! grep -q 'kernel-fetch' "$tmp/out"
ok $? "make as root: apt-get install kmod first, nothing downloaded before (exit $rc)"

# What the bug left: the per-kernel directory of an empty kernel version.
rm -rf "$top/build/kmod/compat" "$top/build/kmod/Makefile" "$top/build/kmod/uapi"
expect_rc 2 "make module KERNEL=nosuch: fails" \
	make --no-print-directory -C "$top" module KERNEL=nosuch
grep -q 'unknown series nosuch' "$tmp/out" &&
	grep -q "no test kernel 'nosuch'" "$tmp/out" &&
	! grep -q -e "-C /build" -e "Entering directory" "$tmp/out" &&
	[ ! -e "$top/build/kmod/Makefile" ]
ok $? "make module KERNEL=nosuch: the fetch error, then stops; nothing built, nothing left"

# The module's source tree (scripts/build/module-tree), as make module
# links it and as debian/rules copies it for DKMS: kernel/Makefile and
# every kernel/*.[ch] at its top, every file of compat/ under compat/,
# uapi/rdma/*.h under uapi/rdma/, nothing else. make module against a
# stand-in kernel, whose kbuild only names the directory it is given
# (M=), into $tmp (B=); its tree already there as an earlier make module
# left it, uapi/ a link (to a copy here), which must not be written
# through.
kd=$tmp/kdir
kmod=$tmp/b/kmod/tree-test
mkdir -p "$kd/include/generated" "$kmod" "$tmp/uapi"
echo '#define UTS_RELEASE "tree-test"' > "$kd/include/generated/utsrelease.h"
# shellcheck disable=SC2016 # make's $(M)
printf 'modules:\n\t@echo "kbuild M=$(M)"\n' > "$kd/Makefile"
cp -R "$top/uapi/." "$tmp/uapi/"
ln -s "$tmp/uapi" "$kmod/uapi"
want() {	# the tree's files, "PATH SOURCE" each
	(cd "$top" && for f in kernel/Makefile kernel/*.[ch] compat/* uapi/rdma/*.h; do
		echo "${f#kernel/} $top/$f"
	done) | sort
}
tree() {	# tree DIR: its files, "PATH LINK" each (LINK empty for a file)
	(cd "$1" && find . ! -type d -printf '%P %l\n') | sed 's/ $//' | sort
}
want > "$tmp/want"
make --no-print-directory -C "$top" module KDIR="$kd" \
	B="$(realpath -m --relative-to="$top" "$tmp/b")" > "$tmp/out" 2>&1 &&
	[ "$(realpath -m "$(sed -n 's/^kbuild M=//p' "$tmp/out")")" = "$kmod" ] &&
	tree "$kmod" > "$tmp/tree" && diff -u "$tmp/want" "$tmp/tree" >> "$tmp/out" &&
	diff -r "$top/uapi" "$tmp/uapi" >> "$tmp/out" && [ -z "$(find "$tmp/uapi" -type l)" ]
ok $? "make module: kbuild builds in build/kmod/KVER, a link there to each file of the module's tree, nothing else; an earlier tree's uapi/ link not written through"

# debian/rules' copy for DKMS, fresh and over make module's links: the
# same paths, each a file with its source's content
st=0
for d in "$tmp/copy" "$kmod"; do
	"$top/scripts/build/module-tree" --copy "$d" > "$tmp/out" 2>&1 &&
		tree "$d" > "$tmp/tree" && cut -d' ' -f1 "$tmp/want" | diff -u - "$tmp/tree" >> "$tmp/out" || st=1
	while read -r p s; do
		cmp -s "$s" "$d/$p" || { echo "$d/$p: not $s's content" >> "$tmp/out"; st=1; }
	done < "$tmp/want"
	[ $st = 0 ] || break
done
ok $st "module-tree --copy: the same tree, each file a copy, also over the links of make module's"
expect_rc 2 "module-tree without a mode: usage" "$top/scripts/build/module-tree" "$tmp/copy"

tap_totals

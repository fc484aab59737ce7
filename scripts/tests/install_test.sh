#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The install story, kselftest-style TAP: every public function has an
# exported symbol and a man page, the man pages render without warnings,
# `make install DESTDIR=...` puts everything where a distribution would, and
# a small program builds against the installed headers and library through
# pkg-config and runs.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_out=$tmp/out
. "$here/tap.sh"
dest=$tmp/root
prefix=/usr/local

# The functions of the public header, and the symbols of the version map.
funcs=$(sed -n 's/^[a-z].*[ *]\(ibpd_[a-z_]*\)(.*/\1/p' "$top/user/ibpd.h" | sort)
syms=$(sed -n 's/^\t\t\(ibpd_[a-z_]*\);$/\1/p' "$top/user/libibpd.map" | sort)

echo "TAP version 13"
echo "1..13"

[ -n "$funcs" ] && [ "$funcs" = "$syms" ]
diff <(echo "$funcs") <(echo "$syms") > "$tmp/out"
ok $? "every function of ibpd.h is in libibpd.map, and only those ($(echo "$funcs" | wc -l))"

: > "$tmp/out"
for f in $funcs; do
	[ -f "$top/man/man3/$f.3" ] || echo "no man page for $f" >> "$tmp/out"
done
[ ! -s "$tmp/out" ]
ok $? "a section 3 man page for every public function"

(cd "$top/man" && for p in man1/*.1 man3/*.3; do
	LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$p" 2>&1 | sed "s|^|$p: |"
done) > "$tmp/out"
[ ! -s "$tmp/out" ]
ok $? "man pages render with groff -ww without a warning"

make -s -C "$top" install DESTDIR="$dest" PREFIX="$prefix" > "$tmp/out" 2>&1
ok $? "make install DESTDIR=... PREFIX=$prefix"

kver=$(cd "$dest/lib/modules" 2>/dev/null && ls)
: > "$tmp/out"
for f in bin/ibpd include/ibpd.h include/rdma/ibpd-abi.h \
	 include/rdma/ibpd_user_ioctl_cmds.h lib/libibpd.so.1 lib/libibpd.so \
	 lib/libibpd.a lib/pkgconfig/libibpd.pc share/man/man1/ibpd.1 \
	 share/man/man3/ibpd_import_pd.3 share/man/man3/ibpd_unimport_pd.3; do
	[ -e "$dest$prefix/$f" ] || echo "missing $prefix/$f" >> "$tmp/out"
done
[ -f "$dest/lib/modules/$kver/updates/ibpd.ko" ] ||
	echo "missing /lib/modules/$kver/updates/ibpd.ko" >> "$tmp/out"
[ ! -s "$tmp/out" ]
ok $? "installed: library, headers, libibpd.pc, tool, man pages, module for $kver"

# (ib_uverbs, which it needs, is not under DESTDIR: no dependency listed)
grep -q '^updates/ibpd.ko:' "$dest/lib/modules/$kver/modules.dep" 2> "$tmp/out"
ok $? "depmod ran: modules.dep lists updates/ibpd.ko"

modinfo "$dest/lib/modules/$kver/updates/ibpd.ko" > "$tmp/out" 2>&1 &&
	grep -q '^description: *Software RDMA device for protection domain sharing' "$tmp/out" &&
	grep -q '^license: *Dual BSD/GPL' "$tmp/out" &&
	grep -q '^parm: *ndevs:Number of ibpd devices' "$tmp/out" &&
	grep -q '^parm: *max_pd:' "$tmp/out" && grep -q "^vermagic: *$kver " "$tmp/out"
ok $? "modinfo ibpd: description, license, parameters ndevs and max_pd, vermagic"

objdump -T "$dest$prefix/lib/libibpd.so.1" > "$tmp/out" 2>&1 &&
	objdump -p "$dest$prefix/lib/libibpd.so.1" | grep -q 'SONAME *libibpd.so.1' &&
	grep -q 'IBPD_1.0 *ibpd_import_pd$' "$tmp/out" &&
	grep -q 'IBPD_1.1 *ibpd_get_device_list$' "$tmp/out" &&
	! grep -q ' ibpd_nl_\| ibpd_cmd_' "$tmp/out"
ok $? "libibpd.so.1: soname, versioned symbols (IBPD_1.0, IBPD_1.1), no internals"

! readelf -d "$dest$prefix/bin/ibpd" | grep -q 'RPATH\|RUNPATH' &&
	LD_LIBRARY_PATH=$dest$prefix/lib "$dest$prefix/bin/ibpd" --help > "$tmp/out" 2>&1
ok $? "installed ibpd: no rpath, runs with the installed library"

# The issue's acceptance: only PKG_CONFIG_PATH points into DESTDIR; the
# relocatable libibpd.pc finds the headers and library next to itself.
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs libibpd 2> "$tmp/out")
flags=$(echo $flags)
pc=$dest$prefix/lib/pkgconfig
[ "$flags" = "-I$pc/../../include -L$pc/.. -libpd" ]
ok $? "pkg-config --cflags --libs libibpd: $flags"

cat > "$tmp/prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <ibpd.h>

int main(void)
{
	struct ibpd_device **list;
	int i, n;

	list = ibpd_get_device_list(&n);
	if (!list)
		return perror("ibpd_get_device_list"), 1;
	for (i = 0; i < n; i++)
		printf("%s\n", list[i]->name);
	ibpd_free_device_list(list);
	return ibpd_open_device("no-such-device") || errno != ENODEV;
}
C
# shellcheck disable=SC2086 # the flags are words
echo "gcc ... $flags" > "$tmp/out"
gcc -Wall -Werror -o "$tmp/prog" "$tmp/prog.c" $flags >> "$tmp/out" 2>&1 &&
	LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/prog" >> "$tmp/out" 2>&1
ok $? "a program using the installed header and library compiles, links, runs"

# shellcheck disable=SC2086
gcc -Wall -Werror -static -o "$tmp/prog-static" "$tmp/prog.c" \
	$(pkg-config --cflags libibpd) "$dest$prefix/lib/libibpd.a" \
	> "$tmp/out" 2>&1 && "$tmp/prog-static" >> "$tmp/out" 2>&1
ok $? "the same program links statically against libibpd.a"

MANPATH=$dest$prefix/share/man man -P cat ibpd_unimport_pd > "$tmp/out" 2>&1 &&
	grep -q 'ibpd_unimport_pd - import or' <(tr -s ' \n' ' ' < "$tmp/out")
ok $? "man ibpd_unimport_pd finds the installed page (an .so link)"

tap_totals

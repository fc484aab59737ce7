#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The install story, kselftest-style TAP: every public function has an
# exported symbol and a man page, the man pages render without warnings,
# `make install DESTDIR=...` puts everything where a distribution would, and
# a small program builds against the installed headers and library through
# pkg-config and runs.
set -u
# shellcheck source=selftests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/lib/tap.sh"
tap_setup 14
dest=$tmp/root
prefix=/usr/local

# The functions of the DV header, and the symbols of the version map.
funcs=$(sed -n 's/^[a-z].*[ *]\(ibpddv_[a-z_]*\)(.*/\1/p' "$top/user/provider/ibpddv.h" | sort)
syms=$(sed -n 's/^\t\t\(ibpddv_[a-z_]*\);$/\1/p' "$top/user/provider/libibpd.map" | sort)
abi=$("$top/scripts/build/provider-abi")

[ -n "$funcs" ] && [ "$funcs" = "$syms" ]
diff <(echo "$funcs") <(echo "$syms") > "$tmp/out"
ok $? "every function of ibpddv.h is in libibpd.map, and only those ($(echo "$funcs" | wc -l))"

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

# W=1: the flags of make check's build of the module (ibpd_check/
# builds.py, the install section's), which make install takes as built
# rather than building it a second time without them
make -s -C "$top" install DESTDIR="$dest" PREFIX="$prefix" W=1 > "$tmp/out" 2>&1
ok $? "make install DESTDIR=... PREFIX=$prefix"

kver=$(cd "$dest/lib/modules" 2>/dev/null && ls)
: > "$tmp/out"
for f in bin/ibpd include/infiniband/ibpddv.h include/rdma/ibpd-abi.h \
	 include/rdma/ibpd_user_ioctl_cmds.h lib/libibpd.so.1 lib/libibpd.so \
	 lib/libibverbs/libibpd-rdmav$abi.so lib/pkgconfig/libibpd.pc \
	 share/man/man1/ibpd.1 share/man/man3/ibpddv_import_pd.3 \
	 share/man/man3/ibpddv_query_pd.3; do
	[ -e "$dest$prefix/$f" ] || echo "missing $prefix/$f" >> "$tmp/out"
done
grep -qx "driver $prefix/lib/libibverbs/libibpd" "$dest/etc/libibverbs.d/ibpd.driver" ||
	echo "no /etc/libibverbs.d/ibpd.driver naming the provider" >> "$tmp/out"
[ "$(readlink -f "$dest$prefix/lib/libibverbs/libibpd-rdmav$abi.so")" = \
  "$(readlink -f "$dest$prefix/lib/libibpd.so.1")" ] ||
	echo "the provider link is not the library" >> "$tmp/out"
[ -f "$dest/lib/modules/$kver/updates/ibpd.ko" ] ||
	echo "missing /lib/modules/$kver/updates/ibpd.ko" >> "$tmp/out"
[ ! -s "$tmp/out" ]
ok $? "installed: library, provider link (ABI $abi), ibpd.driver, headers, libibpd.pc, tool, man pages, module for $kver"

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
	grep -q 'IBPD_2.0 *ibpddv_import_pd$' "$tmp/out" &&
	grep -q "verbs_register_driver_$abi\$" "$tmp/out" &&
	! grep -q ' ibpd_' "$tmp/out"
ok $? "libibpd.so.1: soname, versioned DV symbols (IBPD_2.0), provider ABI $abi, no internals"

! readelf -d "$dest$prefix/bin/ibpd" | grep -q 'RPATH\|RUNPATH' &&
	LD_LIBRARY_PATH=$dest$prefix/lib "$dest$prefix/bin/ibpd" --help > "$tmp/out" 2>&1
ok $? "installed ibpd: no rpath, runs with the installed library"

# The issue's acceptance: only PKG_CONFIG_PATH points into DESTDIR; the
# relocatable libibpd.pc finds the headers and library next to itself.
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig
read -ra flagv <<< "$(pkg-config --cflags --libs libibpd 2> "$tmp/out")"
flags="${flagv[*]}"
pc=$dest$prefix/lib/pkgconfig
# libibverbs.pc adds its own flags (libnl's include directory)
case " $flags " in
*" -I$pc/../../include "*" -L$pc/.. -libpd -libverbs "*) true ;;
*) false ;;
esac
ok $? "pkg-config --cflags --libs libibpd: $flags"

cat > "$tmp/prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <infiniband/ibpddv.h>

int main(void)
{
	struct ibv_device **list;
	int i, n;

	/* no uverbs on a build host: ENOSYS */
	list = ibv_get_device_list(&n);
	if (!list)
		return errno != ENOSYS;
	for (i = 0; i < n; i++)
		printf("%s %s\n", ibv_get_device_name(list[i]),
		       ibpddv_is_supported(list[i]) ? "ibpd" : "other");
	ibv_free_device_list(list);
	return ibpddv_import_pd(NULL, 0, 1) || errno != EOPNOTSUPP;
}
C
echo "gcc ... $flags" > "$tmp/out"
gcc -Wall -Werror -o "$tmp/prog" "$tmp/prog.c" "${flagv[@]}" >> "$tmp/out" 2>&1 &&
	LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/prog" >> "$tmp/out" 2>&1
ok $? "a program using the installed DV header and library compiles, links, runs"

grep -q "^$dest$prefix/lib/libibpd.so.1" <(LD_LIBRARY_PATH=$dest$prefix/lib \
	ldd "$tmp/prog" | sed -n 's/.*libibpd.so.1 => \([^ ]*\).*/\1/p') 2> "$tmp/out"
ok $? "it runs on the installed libibpd.so.1"

# In the test VM, whose root is a writable overlay over the host's: the
# DESTDIR tree copied to /, the system libibverbs finds ibpd0 through
# /etc/libibverbs.d/ibpd.driver alone (no RDMAV_DRIVERS), and the
# installed tool runs on the installed library.
# (vm-run quotes its arguments: no quotes inside; mktemp's path has none)
"$top/scripts/vm/vm-run" -- sh -c "tar -C $dest -cf - . | tar -C / -xf - --keep-directory-symlink && ldconfig && ibv_devices && ibv_devinfo -d ibpd0 && ibpd devices" \
	> "$tmp/out" 2>&1 &&
	grep -Eq '^[[:space:]]+ibpd0[[:space:]]' "$tmp/out" &&
	grep -Eq '^hca_id:[[:space:]]+ibpd0' "$tmp/out" &&
	grep -Eq '^ibpd0 +uverbs[0-9]+ +[0-9]+ +yes +yes' "$tmp/out"
ok $? "installed into the VM: ibv_devices, ibv_devinfo -d ibpd0 and ibpd devices see ibpd0"

MANPATH=$dest$prefix/share/man man -P cat ibpddv_import_pd > "$tmp/out" 2>&1 &&
	grep -q 'ibpddv_import_pd - import a protection domain' <(tr -s ' \n' ' ' < "$tmp/out")
ok $? "man ibpddv_import_pd finds the installed page"

tap_totals

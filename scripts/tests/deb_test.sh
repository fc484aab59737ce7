#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian packages, kselftest-style TAP: `make deb` builds the four
# packages with dpkg-buildpackage, lintian-clean, with the dependencies and
# files Debian expects; a changelog that disagrees with the Makefile's
# VERSION stops the build. DKMS builds the module of a second version
# (built with deb-build --version), with its package's dkms.conf, for the
# stock kernel's headers, on the host (scripts/build/dkms-prebuild: a
# throw-away root, native speed; under qemu TCG that compile was most of
# the test). Then, in the test VM on that kernel
# (selftests/vm/deb_vm.sh), apt-get installs them before the kernel's
# headers (DKMS adds the module, builds nothing); with the headers there,
# the upgrade to the second version has DKMS install that build of the
# module of that version alone (the postinst loads it from where a
# package's prebuilt modules go, dkms ldtarball), modprobe loads it,
# libibverbs finds ibpd0 through the packaged provider, the packaged tool's
# demo runs; removing libibpd1 takes ibpd.driver along (no libibverbs
# program warns about a provider it cannot load); remove and purge leave
# no file. What each package ships is checked against debian/contents
# for the version. Before all that, libibpd1 of the last version whose ibpd.driver
# was a conffile (2.0.0, built from git history) is installed, for the
# first install to upgrade.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
# shellcheck disable=SC2119 # no plan yet: it is printed once known
tap_setup
kernel=${IBPD_DEB_KERNEL:-$("$top/scripts/build/matrix" default-kernel)}
old=$top/out/deb
new=$tmp/new

t=$SECONDS
make -s -C "$top" deb > "$tmp/out" 2>&1
ok $? "make deb ($((SECONDS - t)) s)"

version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$top/Makefile")
deb() { echo "$old/${1}_${version}_$2.deb"; }
arch=$(dpkg --print-architecture)
ma=$(gcc -print-multiarch)
: > "$tmp/out"
for p in ibpd-dkms:all libibpd1:$arch libibpd-dev:$arch ibpd-tools:$arch; do
	[ -f "$(deb "${p%:*}" "${p#*:}")" ] || echo "no $(deb "${p%:*}" "${p#*:}")" >> "$tmp/out"
done
[ ! -s "$tmp/out" ]
ok $? "out/deb: ibpd-dkms, libibpd1, libibpd-dev, ibpd-tools $version"

lintian --fail-on error,warning "$old/ibpd_${version}_$arch.changes" > "$tmp/out" 2>&1
ok $? "lintian: no error, no warning ($(grep -c '^[EWIP]:' "$tmp/out") tags)"

# dkms.conf of the one version; the provider's private ABI pinned.
abi=$("$top/scripts/build/provider-abi" "/usr/lib/$ma/libibverbs.so.1")
{
	dpkg-deb --fsys-tarfile "$(deb ibpd-dkms all)" |
		tar -xOf - "./usr/src/ibpd-$version/dkms.conf" > "$tmp/dkms.conf" &&
	grep -qx "PACKAGE_VERSION=\"$version\"" "$tmp/dkms.conf" &&
	grep -qx 'AUTOINSTALL="yes"' "$tmp/dkms.conf" &&
	dpkg-deb -c "$(deb ibpd-dkms all)" | grep -q " ./usr/src/ibpd-$version/main.c$" &&
	dpkg-deb -c "$(deb ibpd-dkms all)" | grep -q " ./usr/src/ibpd-$version/Makefile$" &&
	dpkg-deb -c "$(deb ibpd-dkms all)" | grep -q " ./usr/src/ibpd-$version/compat/compat.h$" &&
	dpkg-deb -c "$(deb ibpd-dkms all)" | grep -q " ./usr/src/ibpd-$version/compat/Kbuild.include$" &&
	dpkg-deb -f "$(deb ibpd-dkms all)" Depends | grep -q '^dkms' &&
	dpkg-deb -f "$(deb ibpd-dkms all)" Recommends | grep -q 'linux-headers'
} > "$tmp/out" 2>&1
ok $? "ibpd-dkms: /usr/src/ibpd-$version with dkms.conf (PACKAGE_VERSION $version, AUTOINSTALL); Depends dkms, Recommends the kernel headers"

dep=$(dpkg-deb -f "$(deb libibpd1 "$arch")" Depends)
echo "Depends: $dep" > "$tmp/out"
dpkg-deb -c "$(deb libibpd1 "$arch")" >> "$tmp/out"
echo "$dep" | grep -Eq 'libibverbs1 \(>= [0-9.]+\)' &&
	echo "$dep" | grep -Eq 'libibverbs1 \(<< [0-9]+~\)' &&
	grep -q " ./usr/lib/$ma/libibverbs/libibpd-rdmav$abi.so -> ../libibpd.so.1$" "$tmp/out" &&
	grep -q " ./etc/libibverbs.d/ibpd.driver -> /usr/share/libibpd1/ibpd.driver$" "$tmp/out" &&
	[ "$(dpkg-deb --fsys-tarfile "$(deb libibpd1 "$arch")" |
		tar -xOf - ./usr/share/libibpd1/ibpd.driver)" = "driver ibpd" ] &&
	! dpkg-deb --ctrl-tarfile "$(deb libibpd1 "$arch")" | tar -t | grep -q conffiles
ok $? "libibpd1: provider link libibpd-rdmav$abi.so, ibpd.driver a link to /usr/share/libibpd1 (no conffile); $dep"

: > "$tmp/out"
for f in ./usr/include/infiniband/ibpddv.h ./usr/include/rdma/ibpd-abi.h \
	 "./usr/lib/$ma/libibpd.so -> libibpd.so.1" "./usr/lib/$ma/pkgconfig/libibpd.pc" \
	 ./usr/share/man/man3/ibpddv_import_pd.3.gz; do
	dpkg-deb -c "$(deb libibpd-dev "$arch")" | grep -q " $f$" || echo "libibpd-dev: no $f" >> "$tmp/out"
done
for f in ./usr/bin/ibpd ./usr/share/man/man1/ibpd.1.gz; do
	dpkg-deb -c "$(deb ibpd-tools "$arch")" | grep -q " $f$" || echo "ibpd-tools: no $f" >> "$tmp/out"
done
[ ! -s "$tmp/out" ]
ok $? "libibpd-dev: ibpddv.h, uapi headers, libibpd.so, libibpd.pc, man3; ibpd-tools: ibpd, ibpd(1)"

# What each package ships, as debian/contents records it for this version
# (a version's list is never edited once released): a change to what a
# package ships is a new version with its changelog entry and its list.
# The version and the multiarch triplet in paths are written @VERSION@ and
# @MA@. On a difference the list of this build is printed to record.
contents() {
	local p
	for p in ibpd-dkms libibpd1 libibpd-dev ibpd-tools; do
		dpkg-deb --fsys-tarfile "$(ls "$old/${p}_${version}_"*.deb)" | tar -tvf - |
			awk -v p="$p" '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print p, $0 }'
	done | sed -e "s|$version|@VERSION@|g" -e "s|$ma|@MA@|g" | sort
}
recorded() {	# recorded VERSION < CONTENTS: its list
	awk -v v="$1:" '/^#/ || !NF { next } /^[^ ]+:$/ { on = $0 == v; next } on' | sort
}
contents > "$tmp/contents"
recorded "$version" < "$top/debian/contents" > "$tmp/recorded"
# the list as the commit that added the version's changelog entry had it
entry=$(git -C "$top" log -1 --format=%H -S"ibpd ($version)" -- debian/changelog 2> /dev/null)
if [ -n "$entry" ]; then
	git -C "$top" show "$entry:debian/contents" 2> /dev/null | recorded "$version" > "$tmp/released"
else
	cp "$tmp/recorded" "$tmp/released"	# not committed yet
fi
if [ ! -s "$tmp/recorded" ]; then
	{ echo "debian/contents has no list for $version: add this one"; echo "$version:"; cat "$tmp/contents"; } > "$tmp/out"
	rc=1
elif ! diff -u "$tmp/released" "$tmp/recorded" > "$tmp/out"; then
	echo "debian/contents' list for $version changed after ${entry:0:12} added $version to debian/changelog: a new version, with its own list" >> "$tmp/out"
	rc=1
else
	diff -u "$tmp/recorded" "$tmp/contents" > "$tmp/out"
	rc=$?
	[ $rc = 0 ] || { echo "the packages ship other files than debian/contents records for $version: a new version (debian/changelog), and its list:"; echo "$version:"; cat "$tmp/contents"; } >> "$tmp/out"
fi
ok $rc "debian/contents: the packages of $version ship what it recorded with $version's changelog entry ($(grep -c . "$tmp/contents") paths)"

# One version: a Makefile VERSION without its changelog entry fails.
cp -a "$top/Makefile" "$tmp/Makefile"
git -C "$top" ls-files -z -co --exclude-standard |
	(cd "$top" && tar --null -T - -cf -) | (mkdir -p "$tmp/tree" && tar -C "$tmp/tree" -xf -)
sed -i 's/^VERSION\([[:space:]]*\):=.*/VERSION\1:= 9.9.9/' "$tmp/tree/Makefile"
(cd "$tmp/tree" && dpkg-buildpackage -us -uc -b) > "$tmp/out" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "debian/changelog says $version, the packages of the Makefile's VERSION for this libibverbs are 9.9.9" "$tmp/out"
ok $? "a Makefile VERSION (9.9.9) debian/changelog does not repeat stops the build (exit $rc)"

# The second version, for the upgrade: the last number of this one plus 1.
next=$(echo "$version" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
"$top/scripts/build/deb-build" --version "$next" --out "$new" > "$tmp/out" 2>&1
ok $? "deb-build --version $next (the upgrade's packages)"

# The last version whose ibpd.driver was a conffile: the parent of the
# newest commit that took it out of debian/libibpd1.install.
prev=$tmp/prev
gone=$(git -C "$top" log -1 --format=%H -G'^etc/libibverbs.d/ibpd.driver$' \
	-- debian/libibpd1.install 2> /dev/null)
if [ -n "$gone" ] && mkdir -p "$tmp/prev-src" &&
   git -C "$top" archive "$gone^" | tar -C "$tmp/prev-src" -xf -; then
	"$tmp/prev-src/scripts/build/deb-build" --out "$prev" > "$tmp/out" 2>&1 &&
		dpkg-deb -I "$prev"/libibpd1_*.deb conffiles >> "$tmp/out" 2>&1 &&
		dpkg-deb -I "$prev"/libibpd1_*.deb conffiles | grep -qx /etc/libibverbs.d/ibpd.driver
	ok $? "deb-build of ${gone:0:12}^ ($(dpkg-deb -f "$prev"/libibpd1_*.deb Version 2> /dev/null)): libibpd1 with the ibpd.driver conffile"
else
	prev=-
	skip "the version with the ibpd.driver conffile: no git history"
fi

# DKMS's build of the upgrade's module, the package's dkms.conf for the
# test kernel's headers, at native speed; the VM installs it. A dkms.conf
# that builds nothing (or a BUILD_EXCLUSIVE that excludes the kernel)
# fails here, and the VM does not boot.
kcache=$("$top/scripts/build/kernel-dir" "$kernel")
kver=$(cat "$kcache/kver")
built=$tmp/built
t=$SECONDS
"$top/scripts/build/dkms-prebuild" --kernel "$kernel" "$(ls "$new"/ibpd-dkms_*.deb)" \
	"$built" > "$tmp/out" 2>&1
rc=$?
ok $rc "ibpd-dkms $next: DKMS builds ibpd/$next for $kver with the package's dkms.conf (on the host, a throw-away root: $((SECONDS - t)) s)"

if [ $rc = 0 ]; then
	t=$SECONDS
	"$top/scripts/vm/vm-run" --kernel "$kernel" --no-ibpd -- \
		"$top/selftests/vm/deb_vm.sh" "$kcache" "$old" "$new" "$prev" "$built" \
		> "$tmp/vm" 2>&1
	rc=$?
	echo "# the VM: $((SECONDS - t)) s"
else
	echo "deb_test.sh: DKMS built no module: no VM" > "$tmp/vm"
	rc=125
fi
# What the VM printed, apt-get's and DKMS's lines timed: kept for reading.
logdir=${IBPD_LOG_DIR:-$top/out/logs}
mkdir -p "$logdir" && cp "$tmp/vm" "$logdir/deb-vm.log"
# deb_vm.sh's lines: a case's output, then "deb-vm: pass|fail DESC"
n=0
: > "$tmp/out"
while IFS= read -r line; do
	case $line in
	"deb-vm: "*)
		n=$((n + 1))
		line=${line#deb-vm: }
		if [ "${line%% *}" = skip ]; then
			skip "VM: ${line#* }"
		else
			[ "${line%% *}" = pass ]
			ok $? "VM: ${line#* }"
		fi
		: > "$tmp/out" ;;
	"# "*) echo "$line" ;;
	*) echo "$line" >> "$tmp/out" ;;
	esac
done < "$tmp/vm"
[ $rc = 0 ] && [ "$n" = 10 ]
st=$?
tail -n 40 "$tmp/vm" > "$tmp/out"
ok $st "VM: all 10 cases ran, no kernel splat (vm-run exit $rc)"

echo "1..$tap_n"
tap_totals

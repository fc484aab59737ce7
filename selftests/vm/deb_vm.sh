#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# deb_vm.sh KCACHE OLD NEW PREV BUILT: the deb section's part (scripts/tests/ibpd_check/deb.py) in the test VM
# (vm-run --no-ibpd), whose root is a throw-away overlay over the host's.
# Lays out the stock kernel as its Debian packages would (modules, from the
# cache KCACHE), installs PREV's libibpd1 (a directory of .debs of the last
# version whose ibpd.driver was a conffile; "-" for none), then the
# packages of OLD (a directory of .debs) with apt-get before the kernel's
# headers (DKMS adds the module, builds nothing), puts the headers in
# place, upgrades to NEW's (DKMS removes OLD, installs NEW), removes
# libibpd1 (the module still loaded: libibverbs must not warn), then the
# rest, and purges them. One line per case, "deb-vm: pass|fail|skip DESC",
# that the section turns into TAP; details (apt-get's output as it goes, a
# failed case's) go to stdout before it.
# BUILT: what scripts/build/dkms-prebuild made of NEW's ibpd-dkms on the
# host, DKMS's build of the module with the package's dkms.conf for this
# kernel at native speed (under TCG that one compile is slow:
# Documentation/testing.rst, "Debian packages"): ibpd-NEW.dkms.tar.gz, which the upgrade's postinst finds where a
# DKMS package's prebuilt modules are looked for and loads (dkms
# ldtarball) instead of compiling, and the ibpd.ko* it holds, which must
# be what DKMS installs.
set -u
kcache=$1 old=$2 new=$3 prev=$4 built=$5
kver=$(uname -r)
# (a userland with the kernel's compiler only, gcc-14 and no gcc: the
# machine's triplet)
ma=$(gcc -print-multiarch 2> /dev/null) || ma=$(uname -m)-linux-gnu
pkgs=(ibpd-dkms libibpd1 libibpd-dev ibpd-tools)
out=$(mktemp)

case_() {	# case_ STATUS DESC: the output of the case, then its line
	local st=pass
	[ "$1" = 0 ] || { st=fail; sed 's/^/    /' "$out" | tail -n 40; }
	echo "    (deb_vm.sh at ${SECONDS} s)"
	echo "deb-vm: $st $2"
	: > "$out"
}

# What a package or DKMS could leave behind (the kernel's own modules and
# headers aside). DKMS's signing key (/var/lib/dkms/mok.*), which DKMS makes
# on its first build for every module, is DKMS's and stays. /usr/include
# and /usr/share/doc, where only dpkg puts our files and nothing else
# writes, at their top level (a directory left behind shows there) but for
# the two our headers go to: walked whole over 9p they were most of
# files()' time (Documentation/testing.rst, "Run times").
files() {
	{
		find /etc /usr/bin /usr/src /usr/include/infiniband \
			/usr/include/rdma /usr/share/man/man1 /usr/share/man/man3 \
			/usr/lib/"$ma" /var/lib/dkms /lib/modules/"$kver"/ \
			-path /lib/modules/"$kver"/kernel -prune -o \
			-path /lib/modules/"$kver"/build -prune -o \
			-path /usr/src/linux-headers-"$kver" -prune -o \
			-path '/var/lib/dkms/mok.*' -prune -o -print
		find /usr/include /usr/share/doc -mindepth 1 -maxdepth 1
	} 2> /dev/null | sort -u
}

# shellcheck source=selftests/lib/apt_offline.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt_offline.sh"

# Our packages dpkg has installed, or has the conffiles of.
known() {
	dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' "${pkgs[@]}" 2> /dev/null |
		sed -n 's/^.[^n]. *//p'
}

debs() { for p in "${pkgs[@]}"; do ls "$1/${p}_"*.deb; done; }

# dkms status of ibpd: "ibpd/VERSION, KVER, ARCH: installed" lines
dkms_ibpd() { dkms status -m ibpd 2>/dev/null; }

# The device through the packaged provider: the loader opens it from
# libibverbs' provider directory, named by /etc/libibverbs.d/ibpd.driver.
device_and_demo() {	# device_and_demo WHAT
	LD_DEBUG=files ibv_devinfo -d ibpd0 > "$out" 2>&1 &&
		grep -Eq '^hca_id:[[:space:]]+ibpd0' "$out" &&
		grep -q "calling init: /usr/lib/$ma/libibverbs/libibpd-rdmav[0-9]*.so" "$out"
	case_ $? "$1: ibv_devinfo -d ibpd0 sees ibpd0 through the packaged provider"
	/usr/bin/ibpd demo > "$out" 2>&1
	case_ $? "$1: /usr/bin/ibpd demo"
}

# The stock kernel as its packages lay it out: linux-image's modules (only
# the RDMA core's: depmod over all 4000 reads 380 MB through 9p, slow
# under TCG: Documentation/testing.rst, "Run times") with modules.dep; linux-headers (/usr/src/linux-headers-KVER,
# /lib/modules/KVER/build) comes later, with headers(). Writes land in the
# overlay, the cache stays as it is. /dev/fd, which DKMS needs, is udev's to
# make on a real system.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
m=/lib/modules/$kver
mkdir -p "$m/kernel/drivers/infiniband"
cp -a "$kcache/root$m/kernel/drivers/infiniband/core" "$m/kernel/drivers/infiniband/"
cp -a "$kcache/root$m"/modules.order "$kcache/root$m"/modules.builtin* "$m/"
depmod "$kver"
headers() {
	ln -s "$kcache/root/usr/src/linux-headers-$kver" /usr/src/ &&
		ln -s /usr/src/linux-headers-"$kver" "$m/build"
}
# man-db's index is no business of this test (its trigger is slow under
# TCG: Documentation/testing.rst, "Run times"): what
# man-db/auto-update=false does.
rm -f /var/lib/man-db/auto-update
[ -f "$kcache/root/usr/src/linux-headers-$kver/Makefile" ] && [ ! -e "$m/build" ] &&
	grep -q '^kernel/drivers/infiniband/core/ib_uverbs.ko:' "$m/modules.dep" &&
	[ -z "$(known)" ] && [ ! -e /etc/libibverbs.d/ibpd.driver ]
case_ $? "kernel $kver: its RDMA core modules, its headers not installed yet; no ibpd package, no ibpd.driver"
files > /tmp/files.before
conf_before=$(find /etc/libibverbs.d -mindepth 1 | sort)

v_old=$(dpkg-deb -f "$(ls "$old"/libibpd1_*.deb)" Version)
v_new=$(dpkg-deb -f "$(ls "$new"/libibpd1_*.deb)" Version)
# The module's version in DKMS: its dkms.conf's, the sources' version, to
# which the packages of another Debian add +debNN (deb-build --dist).
modver() {
	dpkg-deb --fsys-tarfile "$(ls "$1"/ibpd-dkms_*.deb)" |
		tar -xOf - --wildcards './usr/src/ibpd-*/dkms.conf' |
		sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p'
}
m_old=$(modver "$old")
m_new=$(modver "$new")
v_prev=-
if [ "$prev" != - ]; then
	v_prev=$(dpkg-deb -f "$(ls "$prev"/libibpd1_*.deb)" Version)
	apt_get install "$(ls "$prev"/libibpd1_*.deb)" &&
		[ -f /etc/libibverbs.d/ibpd.driver ] && [ ! -L /etc/libibverbs.d/ibpd.driver ] &&
		dpkg-query -W -f='${Conffiles}\n' libibpd1 | grep -q ' /etc/libibverbs.d/ibpd.driver ' &&
		echo "# edited by the admin" >> /etc/libibverbs.d/ibpd.driver
	echo "# libibpd1 $v_prev installed, its ibpd.driver edited, rc $?"
fi
# The packages before the kernel's headers (they only Recommend them):
# DKMS adds the module and builds nothing. Only one version is compiled:
# the two are the same source, the module, device and demo cases of the
# first would be the second's again.
t=$SECONDS
# shellcheck disable=SC2046 # one path a word
apt_get install $(debs "$old")
rc=$?
echo "# apt-get install $v_old (no headers: DKMS adds, builds nothing): $((SECONDS - t)) s"
[ $rc = 0 ] && dkms_ibpd | tee -a "$out" | grep -qx "ibpd/$m_old: added" &&
	[ "$(dkms_ibpd | grep -c .)" = 1 ] &&
	[ "$(dpkg-query -W -f='${Version} ' "${pkgs[@]}")" = "$v_old $v_old $v_old $v_old " ] &&
	! ls "$m"/updates/dkms/ibpd.ko* >> "$out" 2>&1 && ! modprobe -n ibpd >> "$out" 2>&1
case_ $? "apt-get install ./*.deb ($v_old) before the kernel's headers: every package $v_old, DKMS has ibpd/$m_old added, no module built"

# The upgrade from the conffile, which the admin had edited: the link is
# the package's, not a conffile; the admin's file is kept in /etc/ibpd
# (debian/libibpd1.NEWS), nothing of it in /etc/libibverbs.d, where
# libibverbs reads every file whatever its name.
if [ "$prev" != - ]; then
	{ ls -la /etc/libibverbs.d /etc/ibpd; dpkg-query -W -f='${Conffiles}\n' libibpd1; } >> "$out" 2>&1
	[ "$(readlink /etc/libibverbs.d/ibpd.driver)" = /usr/share/libibpd1/ibpd.driver ] &&
		[ "$(find /etc/libibverbs.d -mindepth 1 ! -name ibpd.driver | sort)" = "$conf_before" ] &&
		[ "$(cat /etc/ibpd/ibpd.driver.dpkg-bak)" = "driver ibpd
# edited by the admin" ] &&
		[ -z "$(dpkg-query -W -f='${Conffiles}' libibpd1)" ]
	case_ $? "upgrade of libibpd1 $v_prev (ibpd.driver a conffile, edited) to $v_old: ibpd.driver the package's link, no conffile; the edited file kept as /etc/ibpd/ibpd.driver.dpkg-bak, nothing of it in /etc/libibverbs.d"
else
	echo "deb-vm: skip upgrade of libibpd1 from the ibpd.driver conffile: no such version given"
fi

# The upgrade once the headers are there: the prerm takes the old version
# out of DKMS; the postinst (dkms's common.postinst) loads the module DKMS
# built on the host from its TARBALL_ROOT, /usr/share/ibpd-dkms, finds it
# built for this kernel and installs it; no compile (before one, DKMS 3.0
# says "Building initial module", 3.2 "Building module(s)").
headers
tarroot=/usr/share/ibpd-dkms
ko=$(cd "$built" && ls ibpd.ko*)
[ -d "$tarroot" ] || mkdir "$tarroot"
cp "$built/ibpd-$m_new.dkms.tar.gz" "$tarroot/"
t=$SECONDS
# shellcheck disable=SC2046
apt_get install $(debs "$new") | tee /tmp/apt.upgrade
rc=${PIPESTATUS[0]}
echo "# apt-get install $v_new (upgrade; dkms remove $v_old, install $v_new's host build for $kver): $((SECONDS - t)) s"
rm -f "$tarroot/ibpd-$m_new.dkms.tar.gz"
rmdir --ignore-fail-on-non-empty "$tarroot"
[ "$rc" = 0 ] && [ "$(dkms_ibpd | tee -a "$out" | grep -c .)" = 1 ] &&
	dkms_ibpd | grep -q "^ibpd/$m_new, $kver, .*: installed" &&
	grep -Eq "Loading tarball for ibpd[-/]$m_new" /tmp/apt.upgrade &&
	! grep -Eq 'Building initial module|Building module\(s\)' /tmp/apt.upgrade &&
	ls "$m"/updates/dkms/ibpd.ko* >> "$out" 2>&1 &&
	cmp "$built/$ko" "$m/updates/dkms/$ko" >> "$out" 2>&1 &&
	[ ! -e /usr/src/ibpd-"$m_old" ] && [ -f /usr/src/ibpd-"$m_new"/dkms.conf ] &&
	[ "$(dpkg-query -W -f='${Version} ' "${pkgs[@]}")" = "$v_new $v_new $v_new $v_new " ]
case_ $? "upgrade to $v_new, the headers installed: every package $v_new, DKMS has ibpd/$m_new only, installed for $kver from its build on the host (the postinst loads it, compiles nothing; $m/updates/dkms/$ko that build's); /usr/src/ibpd-$m_old gone"

modprobe ibpd > "$out" 2>&1 && grep -q '^ibpd ' /proc/modules &&
	modinfo -n ibpd | grep -q "^$m/updates/dkms/ibpd.ko"
case_ $? "$v_new: modprobe ibpd loads the DKMS module"
device_and_demo "$v_new"

# libibpd1 alone, ibpd0 still there: its driver file goes with the
# provider, so that libibverbs, which then looks for a provider of ibpd0,
# warns about none it cannot load (it did while ibpd.driver stayed).
t=$SECONDS
apt_get remove libibpd1
rc=$?
echo "# apt-get remove libibpd1: $((SECONDS - t)) s"
ibv_devices > /dev/null 2> /tmp/ibv.err
cat /tmp/ibv.err >> "$out"
[ $rc = 0 ] && [ -e /sys/class/infiniband/ibpd0 ] && [ ! -e /etc/libibverbs.d/ibpd.driver ] &&
	[ ! -L /etc/libibverbs.d/ibpd.driver ] && [ ! -e /usr/lib/"$ma"/libibpd.so.1 ] &&
	[ ! -s /tmp/ibv.err ] && [ -z "$(dpkg-query -W -f='${Conffiles}' libibpd1)" ]
case_ $? "apt-get remove libibpd1 (ibpd0 still there): ibpd.driver gone with the provider, ibv_devices warns of nothing, no conffile left"

# the rest: libibpd-dev and ibpd-tools, which depend on libibpd1, went
# with it
rmmod ibpd
mapfile -t left < <(dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' "${pkgs[@]}" 2> /dev/null |
	sed -n 's/^ii *//p')
echo "# still installed: ${left[*]}"
t=$SECONDS
apt_get remove "${left[@]}"
rc=$?
echo "# apt-get remove: $((SECONDS - t)) s"
[ $rc = 0 ] && [ -z "$(dkms_ibpd)" ] && ! ls "$m"/updates/dkms/ibpd.ko* 2> /dev/null &&
	! modprobe -n ibpd >> "$out" 2>&1 && [ ! -e /usr/lib/"$ma"/libibpd.so.1 ] &&
	[ ! -e /usr/bin/ibpd ] && [ -z "$(ls -d /usr/src/ibpd-* 2> /dev/null)" ]
case_ $? "apt-get remove: DKMS removed the module (modprobe finds none), library, tool and source gone"

# Those that had no maintainer script are gone already (apt-get knows no
# such package); libibpd1's postrm (rm_conffile) waits for the purge.
mapfile -t left < <(known)
t=$SECONDS
apt_get purge "${left[@]}"
rc=$?
echo "# apt-get purge: $((SECONDS - t)) s"
files > /tmp/files.after
[ $rc = 0 ] && diff /tmp/files.before /tmp/files.after >> "$out" && [ -z "$(known)" ]
case_ $? "apt-get purge: no file left behind ($(wc -l < /tmp/files.after) paths compared)"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# bridge_vm.sh [--run PROG [ARGS...]]: the bridge's packages on a stock
# kernel, in the test VM (the "bridge" section of make check starts it with
# scripts/vm/vm-run, ibpd.ko loaded, no rxe), whose root is a throw-away
# overlay over the host's. What the host made comes in the environment:
# IBPD_BRIDGE_DEBS, the .debs a user installs (rdma-core with the series,
# libibpd1 for its provider ABI, ibpd-tools, ibpd-rxe-dkms, ibpd-siw-dkms);
# IBPD_BRIDGE_BUILT, the DKMS packages' modules built on the host for this
# kernel (NAME-VERSION.dkms.tar.gz, which the packages' postinst loads
# from /usr/share/NAME-dkms instead of compiling under TCG);
# IBPD_BRIDGE_SOURCE, linux-source-SERIES of this kernel's series and
# version (a stand-in made on the host, holding drivers/infiniband/sw
# alone: bridge.py's source_standin()), from which the DKMS packages build;
# IBPD_BRIDGE_DISTRO, an apt repository (a Packages index) of the
# distribution's rdma-core, to go back to, and of what a kernel's
# installation runs that the machine lacks (initramfs-tools);
# IBPD_BRIDGE_NEXT, optional, the cache of another kernel, installed
# after the packages (its headers only: DKMS's kernel hook builds the
# module for it, here, under TCG), and IBPD_BRIDGE_NEXT_SOURCE, its
# linux-source (a stand-in whose siw differs from the kernel's by a
# line); IBPD_BRIDGE_OTHER_SERIES, optional,
# the directory of a kernel's image and headers packages (made on the
# host), of a series the packages do not carry, installed after them
# with apt.
#
# Lays out the stock kernel as its packages would (its RDMA and rxe
# modules, its headers), installs the packages with apt as a user would
# (README: apt install linux-source-SERIES $(scripts/build/bridge-debs),
# with python3-pyverbs
# for rdma-core's tests: what the machine has of rdma-core and what the
# import needs; no LD_LIBRARY_PATH, no RDMAV_DRIVERS), loads the
# DKMS rdma_rxe and siw, brings up rxe0 over dummy0 and siw0 over dummy1 beside
# ibpd0, and runs on the installed libibverbs: the seed contract
# (seed_test, built against the distribution's libibverbs-dev) with
# import expected on every device, rxe0 and siw0 checked against ibpd0;
# the data-path demo on rxe0 (the packaged ibpd and ibpd-demo, built
# against the distribution's libibverbs-dev); rdma-core's own tests from
# python3-pyverbs (test_pd, test_mr, test_device, test_shared_pd) on
# ibpd0, rxe0 and siw0 as pyverbs.expect says of the staged series;
# ibpd0's verbs tests (dv_test, lifecycle_test) through the packaged
# provider; `ibpd devices`. Then a kernel of another series installed
# and purged, ibpd-rxe-dkms purged with its module running, a kernel
# installed later gets siw's module, and the way back:
# purge what the machine did not have, the distribution's rdma-core with
# apt install PKG=VERSION: the stock rdma_rxe again, import EOPNOTSUPP on
# rxe0 again, no file of the bridge left.
# kselftest TAP; exit status 0 when everything passed.
#
# --run PROG [ARGS...]: the same setup (packages installed, rxe0 up), then
# PROG with ARGS in place of the tests (make vm-test PACKAGES=1); the
# setup's cases are "# bridge:" comments, its first failure ends the run.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
verbs=$top/selftests/verbs

[ -n "${IBPD_IN_VM:-}" ] ||
	{ echo "$0: runs in the test VM (make check's bridge section, make vm-test PACKAGES=1)" >&2; exit 2; }
# shellcheck source=selftests/lib/tap.sh
. "$top/selftests/lib/tap.sh"
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"	# test_program
run=()
if [ "${1:-}" = --run ]; then
	shift
	[ $# -gt 0 ] || { echo "usage: $0 [--run PROG [ARGS...]]" >&2; exit 2; }
	run=("$@")
	# the setup's cases are no TAP of PROG's: comments, and the first
	# failure ends the run
	ok() {
		if [ "$1" = 0 ]; then
			echo "# bridge: $2"
		else
			echo "# bridge: failed: $2"
			sed 's/^/#   /' "$tap_out" | tail -n 40
			exit 1
		fi
	}
fi
kver=$(uname -r)
kcache=$IBPD_KERNEL_DIR
m=/lib/modules/$kver
ma=$(gcc -print-multiarch)
tap_out=$(mktemp)
# the .debs README's command installs on this machine, and pyverbs
debs_list=$("$top/scripts/build/bridge-debs" --with python3-pyverbs "$IBPD_BRIDGE_DEBS")
debs_rc=$?
mapfile -t debs <<< "$debs_list"

# shellcheck source=selftests/lib/apt_offline.sh
. "$top/selftests/lib/apt_offline.sh"

# What a package or DKMS could leave behind, as deb_vm.sh looks (the
# kernel's own modules and headers, DKMS's signing key and what dpkg
# writes of itself aside): the files and directories of files_roots,
# compared before the packages and after the way back (files_before,
# files_after). The root is vm-init's overlay over the host's root,
# read-only: a directory whose entries differ between two moments is one
# the upper layer (a tmpfs) has, created or copied up when an entry was
# added, removed or renamed, and the others are the host's as they were.
# So the two lists are those directories' entries, found in the upper
# layer, not the walk of every directory of files_roots over 9p (4000 of
# the host's, up to minutes under TCG: Documentation/testing.rst, "Run
# times"). They differ where the walks would; a directory gone is one
# line, not its files' too. Without those layers, the walk.
files_roots=(/etc /usr/bin /usr/sbin /usr/src /usr/include/infiniband /usr/include/rdma
	/usr/lib/"$ma" /usr/lib/python3/dist-packages /usr/share/doc
	/usr/share/man/man1 /usr/share/man/man3 /usr/share/man/man7
	/var/lib/dkms /lib/modules /lib/udev /lib/systemd)
# vm-init's layers, as its PID 1 sees them
ov_upper=/proc/1/root/rw/upper ov_lower=/proc/1/root/host ov_root=
# files_filter: the lines of stdin, paths, but those the lists leave out
files_filter() {
	awk -v m="$m" -v h="/usr/src/linux-headers-$kver" '
		function under(p, d) { return p == d || index(p, d "/") == 1 }
		!(under($0, m "/kernel") || under($0, m "/build") || under($0, h) ||
		  index($0, "/var/lib/dkms/mok.") == 1 || $0 ~ /\/__pycache__(\/|$)/ ||
		  $0 == "/etc/ld.so.cache")'
}
# files_upper: the directories of files_roots in the upper layer, named
# as files_roots name them (/lib/modules is /usr/lib/modules in the
# layers, /lib a link: /tmp/files.map, "REAL ROOT" lines)
files_upper() {
	local -a ups=()
	local real
	while read -r real _; do
		[ -d "$ov_upper$real" ] && ups+=("$ov_upper$real")
	done < /tmp/files.map
	[ ${#ups[@]} -gt 0 ] || return 0
	find "${ups[@]}" -type d | awk -v up="$ov_upper" '
		NR == FNR { real[NR] = $1; root[NR] = $2; n = NR; next }
		{
			p = substr($0, length(up) + 1)
			for (i = 1; i <= n; i++)
				if (p == real[i] || index(p, real[i] "/") == 1) {
					print root[i] substr(p, length(real[i]) + 1)
					break
				}
		}' /tmp/files.map - | files_filter
}
# files_list BASE DIR...: the entries of each DIR under BASE (the root,
# or a layer), named as under the root
files_list() {
	local base=$1
	shift
	[ $# -gt 0 ] || return 0
	find "${@/#/$base}" -mindepth 1 -maxdepth 1 2> /dev/null |
		awk -v b="$base" '{ print substr($0, length(b) + 1) }' | files_filter
}
# files_before: the upper layer's directories and their entries now
files_before() {
	local -a dirs
	local r
	if [ ! -d "$ov_upper" ] || [ ! -d "$ov_lower/etc" ]; then
		files_walk > /tmp/files.before
		return
	fi
	realpath -m "${files_roots[@]/#/$ov_root}" | sed "s|^$ov_root||" |
		paste -d' ' - <(printf '%s\n' "${files_roots[@]}") > /tmp/files.map
	files_upper | sort -u > /tmp/files.dirs
	mapfile -t dirs < /tmp/files.dirs
	{ files_list "$ov_root" "${dirs[@]}"; for r in "${files_roots[@]}"; do [ -e "$ov_root$r" ] && echo "$r"; done; } |
		sort -u > /tmp/files.before
}
# files_after: the same directories, and those that the upper layer has
# now, listed as they were (the lower layer's, for a directory the upper
# layer did not have then) and as they are
files_after() {
	local -a old new
	local r
	if [ ! -f /tmp/files.dirs ]; then
		files_walk > /tmp/files.after
		return
	fi
	mapfile -t old < /tmp/files.dirs
	mapfile -t new < <(files_upper | sort -u | comm -13 /tmp/files.dirs -)
	{ cat /tmp/files.before; files_list "$ov_lower" "${new[@]}"; } | sort -u > /tmp/files.before.all
	{ files_list "$ov_root" "${old[@]}" "${new[@]}"; for r in "${files_roots[@]}"; do [ -e "$ov_root$r" ] && echo "$r"; done; } |
		sort -u > /tmp/files.after
	mv /tmp/files.before.all /tmp/files.before
}

# files_walk: every file and directory of files_roots (the walk over
# 9p, for a root that is not vm-init's overlay)
files_walk() {
	find "${files_roots[@]}" \
		-path "$m/kernel" -prune -o -path "$m/build" -prune -o \
		-path "/usr/src/linux-headers-$kver" -prune -o \
		-path '/var/lib/dkms/mok.*' -prune -o -path '*/__pycache__' -prune -o \
		-path /etc/ld.so.cache -prune -o -print 2> /dev/null | sort
}

# The stock kernel as its packages lay it out: its RDMA core, rxe and
# rdma_ucm (rdma_cm, which connects siw's QPs) with
# what they need (modprobe --show-depends in its modules.dep), dummy, and
# its headers (DKMS builds against /lib/modules/KVER/build). Only those:
# depmod over all 4000 modules reads 380 MB through 9p.
[ ${#run[@]} -gt 0 ] || echo "TAP version 13"
echo "# bridge: kernel $kver, packages ${#debs[@]} in $IBPD_BRIDGE_DEBS"
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
rm -f /var/lib/man-db/auto-update	# man-db's trigger: slow under TCG
mkdir -p "$m"
for mod in ib_uverbs rdma_rxe siw rdma_ucm dummy crc32_generic libcrc32c; do
	modprobe -d "$kcache/root" -S "$kver" --show-depends "$mod" 2> /dev/null
done | awk '$1 == "insmod" { print $2 }' | sort -u |
while read -r f; do
	rel=${f#"$kcache"/root}
	mkdir -p "$(dirname "$rel")"
	cp -a "$f" "$rel"
done
cp -a "$kcache/root$m"/modules.order "$kcache/root$m"/modules.builtin* "$m/"
depmod "$kver"
headers() {	# headers KCACHE KVER: as linux-headers-KVER lays them out
	local h
	for h in "$1"/root/usr/src/linux-*; do
		[ -e "/usr/src/${h##*/}" ] && continue
		ln -s "$h" /usr/src/
		echo "/usr/src/${h##*/}" >> /tmp/headers.linked
	done
	mkdir -p "/lib/modules/$2"
	ln -sfn "/usr/src/linux-headers-$2" "/lib/modules/$2/build"
}
headers "$kcache" "$kver"
[ -f "$m/build/Makefile" ] && modinfo -n rdma_rxe | grep -q "^$m/kernel/"
ok $? "kernel $kver: its RDMA modules and headers laid out; modprobe finds the stock rdma_rxe ($(modinfo -n rdma_rxe 2>&1))"
files_before
installed_before=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 2> /dev/null |
	awk '$1 ~ /^ii/ { print $2, $3 }' | sort)
declare -A had	# PACKAGE: its version before the bridge, if installed
while read -r p v; do had[$p]=$v; done <<< "$installed_before"
# Each .deb's package and version ("PACKAGE VERSION", in the order of
# debs), read once: dpkg-deb a .deb, and dpkg-query parsing dpkg's
# status file, are a process each under TCG.
deb_pkgs=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package Version; echo; done |
	awk -v RS= '{ for (i = 1; i < NF; i += 2) f[$i] = $(i + 1); print f["Package:"], f["Version:"] }')
names=()
while read -r p v; do names+=("$p"); done <<< "$deb_pkgs"
# deb_status: "PACKAGE STATUS VERSION" of each of them (dpkg-query once)
deb_status() {
	dpkg-query -W -f='${Package} ${db:Status-Abbrev} ${Version}\n' "${names[@]}" 2> /dev/null
}

# The host's builds of the DKMS packages' modules, where their postinst
# looks (TARBALL_ROOT): NAME-VERSION.dkms.tar.gz in /usr/share/NAME-dkms.
prebuilt() {	# prebuilt [DIR]: those of DIR (default IBPD_BRIDGE_BUILT)
	local t n
	for t in "${1:-$IBPD_BRIDGE_BUILT}"/*.dkms.tar.gz; do
		[ -e "$t" ] || continue
		n=${t##*/}
		n=${n%.dkms.tar.gz}
		mkdir -p "/usr/share/${n%-*}-dkms"
		cp "$t" "/usr/share/${n%-*}-dkms/"
	done
}
prebuilt

t=$SECONDS
# README's linux-source-$(uname -r | cut -d. -f1,2): this kernel's own
# source, at its version (uname -v: "... Debian VERSION ...")
series=$(uname -r | cut -d. -f1,2)
kdeb=$(uname -v | sed -n 's/.* Debian \([^ ]*\) .*/\1/p')
source_pkg=$(dpkg-deb -f "$IBPD_BRIDGE_SOURCE" Package Version | sed 's/^[^:]*: //' | paste -sd' ')
[ "$source_pkg" = "linux-source-$series $kdeb" ]
ok $? "the kernel's source: linux-source-$series $kdeb (${IBPD_BRIDGE_SOURCE##*/})"
apt_get install "$IBPD_BRIDGE_SOURCE" "${debs[@]}" > "$tap_out"
rc=$?
cat "$tap_out"
echo "# apt install \$(bridge-debs): $((SECONDS - t)) s"
bad=
declare -A now
while read -r p st v; do now[$p]="$st $v"; done < <(deb_status)
while read -r p v; do
	[ "${now[$p]:-}" = "ii $v" ] || bad="$bad $p"
done <<< "$deb_pkgs"
# and none of the bridge's others (README: no daemon, no -dev package
# the machine did not have): each left out is at no version of the bridge's
also=
for f in "$IBPD_BRIDGE_DEBS"/*.deb; do
	[[ " ${debs[*]} " == *" $f "* ]] && continue
	read -r p v <<< "$(dpkg-deb -f "$f" Package Version | sed 's/^[^:]*: //' | paste -sd' ')"
	[ "$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p" 2> /dev/null)" != "ii  $v" ] ||
		also="$also $p"
done
[ $rc = 0 ] && [ $debs_rc = 0 ] && [ -z "$bad" ] && [ -z "$also" ]
ok $? "apt install \$(bridge-debs --with python3-pyverbs): each package at the bridge's version (${#debs[@]} of $(find "$IBPD_BRIDGE_DEBS" -name '*.deb' | wc -l): ${names[*]}), no other of the bridge's${bad:+; not:$bad}${also:+; also:$also}"
# the host's builds, loaded by the postinst: nothing compiled here
n=$(find "$IBPD_BRIDGE_BUILT" -name '*.dkms.tar.gz' | wc -l)
[ "$n" -gt 0 ] && [ "$(grep -c 'Loading tarball for ' "$tap_out")" = "$n" ] &&
	! grep -q 'Building module' "$tap_out"
ok $? "DKMS: the postinst loaded the host's $n builds (dkms ldtarball), compiled nothing"
for t in /usr/share/*-dkms/*.dkms.tar.gz; do rm -f "$t"; done

# The DKMS rdma_rxe: installed for this kernel by the postinst, the one
# modprobe loads, saying what it is.
dkms status > "$tap_out" 2>&1
grep -q "rxe.*$kver.*: installed" "$tap_out" &&
	case $(modinfo -n rdma_rxe) in "$m/updates/dkms/rdma_rxe.ko"*) ;; *) false ;; esac
ok $? "DKMS: rdma_rxe installed for $kver in updates/dkms: $(modinfo -n rdma_rxe 2>&1)"
rxever=$(modinfo -F version rdma_rxe 2> /dev/null)
echo "# modinfo -F version rdma_rxe: $rxever"
[[ $rxever == *import* ]]
ok $? "modinfo rdma_rxe: a version that names import ($rxever)"
import=$(modinfo -F import rdma_rxe 2> /dev/null)
[[ $import == *": linux-source-$series $kdeb with "* ]] &&
	[ -d "/var/lib/ibpd-rxe-dkms/$(dpkg-query -W -f='${Version}' ibpd-rxe-dkms)/$kdeb/rxe" ]
ok $? "rdma_rxe is the kernel's own, $kdeb, with the patch (modinfo import: $import)"

modprobe -q crc32_generic 2> /dev/null
{ modprobe rdma_rxe && modprobe dummy &&
	{ ip link show dummy0 || ip link add dummy0 type dummy; } &&
	ip link set dummy0 up && rdma link add rxe0 type rxe netdev dummy0; } > "$tap_out" 2>&1 &&
	[ -n "$rxever" ] && [ "$(cat /sys/module/rdma_rxe/version 2> /dev/null)" = "$rxever" ]
ok $? "modprobe rdma_rxe loads the DKMS module; rxe0 over dummy0 beside ibpd0"

# siw, which Debian's kernels do not build, where a package of the bridge
# brings it: siw0 over a netdev of its own, with an address for rdma_cm
# (which binds an address to the one device on its netdev and connects
# siw's QPs; a connection to a local address runs over lo).
want="ibpd0 rxe0"
if dpkg-query -W -f='${db:Status-Abbrev}' ibpd-siw-dkms 2> /dev/null | grep -q '^ii'; then
	want="ibpd0 rxe0 siw0"
	siwver=$(modinfo -F version siw 2> /dev/null)
	case $(modinfo -n siw 2> /dev/null) in "$m/updates/dkms/siw.ko"*) true ;; *) false ;; esac &&
		[[ $siwver == *import* ]] &&
		{ modprobe siw && modprobe rdma_ucm && ip link set lo up &&
			ip link add dummy1 type dummy && ip addr add 192.0.2.1/24 dev dummy1 &&
			ip link set dummy1 up && rdma link add siw0 type siw netdev dummy1; } > "$tap_out" 2>&1
	ok $? "modprobe siw loads the DKMS module ($siwver); siw0 over dummy1, 192.0.2.1/24"
fi

if [ ${#run[@]} -gt 0 ]; then
	# a name of the tests (as run_one.sh, but on the installed
	# libibverbs: nothing in the environment), else of PATH (ibpd)
	run[0]=$(test_program "${run[0]}")
	unset LD_LIBRARY_PATH RDMAV_DRIVERS
	# the verbs tests' word for what the packages make true: import
	# works on every device (seed_test expects EOPNOTSUPP on rxe0 else)
	export IBPD_TEST_IMPORT_ALL=${IBPD_TEST_IMPORT_ALL:-1}
	echo "# make vm-test PACKAGES=1: ${run[*]}"
	exec "${run[@]}"
fi

# Everything below on the installed libibverbs: no LD_LIBRARY_PATH, no
# RDMAV_DRIVERS.
echo "# bridge: the tests from $SECONDS s in the guest"
unset LD_LIBRARY_PATH RDMAV_DRIVERS
devs=$(ibv_devices 2>&1 | awk 'NR > 2 { print $1 }' | sort | paste -sd' ')
[ "$devs" = "$want" ]
ok $? "the installed libibverbs sees $want ($devs)"
ibpd devices -j > "$tap_out" 2>&1
/usr/bin/python3 -c '
import json, sys
d = {r["device"]: r for r in json.load(open(sys.argv[1]))["devices"]}
sys.exit(not (d["rxe0"]["pd_import"] and d["ibpd0"]["pd_import"] and
              d["ibpd0"]["ibpd"] and not d["rxe0"]["ibpd"]))
' "$tap_out"
ok $? "ibpd devices: rxe0 and ibpd0 import PDs"
sed 's/^/# /' "$tap_out"
# The kernel's own rdma_rxe under the bridge's rdma-core: its PDs import
# without a kernel call, its context does not (no QUERY_CONTEXT), so
# another process cannot share them: pd_import false. Then the DKMS
# module again.
stock_rxe=$(find "$m/kernel" -name 'rdma_rxe.ko*' | head -n 1)
{ rdma link delete rxe0 && rmmod rdma_rxe && insmod "$stock_rxe" &&
	rdma link add rxe0 type rxe netdev dummy0 && ibpd devices -j; } > "$tap_out" 2>&1
/usr/bin/python3 -c '
import json, sys
text = open(sys.argv[1]).read()
d = {r["device"]: r for r in json.loads(text[text.index("{"):])["devices"]}
sys.exit(d["rxe0"]["pd_import"] is not False or not d["ibpd0"]["pd_import"])
' "$tap_out" &&
	{ rdma link delete rxe0 && rmmod rdma_rxe && modprobe rdma_rxe &&
		rdma link add rxe0 type rxe netdev dummy0; } >> "$tap_out" 2>&1 &&
	[ "$(cat /sys/module/rdma_rxe/version 2> /dev/null)" = "$rxever" ]
ok $? "ibpd devices: the stock rdma_rxe under the bridge's rdma-core: rxe0 does not import PDs ($stock_rxe)"
sed 's/^/# /' "$tap_out"

# The seed contract, with import expected on rxe0 as on the patched
# kernel; the same cases and results on rxe0 as on ibpd0.
IBPD_TEST_IMPORT_ALL=1 "$build/provider/seed_test" > /tmp/seed.tap 2>&1
rc=$?
sed 's/^/# /' /tmp/seed.tap
ok $rc "seed_test (built against the distribution's libibverbs-dev) on $want, import expected on all"
for dev in ${want#ibpd0 }; do
	"$top/selftests/vm/rxe_diff.sh" /tmp/seed.tap ibpd0 "$dev" > "$tap_out" 2>&1
	grep -q '^ok ' "$tap_out" && grep -q ', 0 without import)' "$tap_out"
	ok $? "$dev against ibpd0 (seed contract differential, none without import)"
	sed 's/^/# /' "$tap_out"
done

# The data path through imported objects: the packaged tool and the one
# built against the distribution's libibverbs-dev.
for tool in /usr/bin/ibpd "$build/ibpd-demo"; do
	timeout 300 "$tool" --device rxe0 demo > "$tap_out" 2>&1 &&
		grep -q 'demo complete (RDMA WRITE, READ and SEND' "$tap_out"
	ok $? "${tool##*/} --device rxe0 demo: a QP on the imported PD, RDMA WRITE, READ and SEND through the imported MR"
	sed 's/^/# /' "$tap_out"
done
# siw0, iWARP: its QPs connect through rdma_cm only, the demo's by hand;
# it shares the PD and says why it stops there.
if [ -e /sys/class/infiniband/siw0 ]; then
	timeout 300 ibpd --device siw0 demo > "$tap_out" 2>&1 &&
		grep -q 'siw0 is an iWARP device, whose QPs connect only through the connection manager (rdma_cm): the demo shares the PD and stops there' "$tap_out" &&
		grep -q 'ibv_dealloc_pd -> 16 (Device or resource busy)' "$tap_out"
	ok $? "ibpd --device siw0 demo: the PD shared, the QP part left out as iWARP's, exit 0"
	sed 's/^/# /' "$tap_out"
fi

# rdma-core's own tests, as python3-pyverbs installs them, against what
# pyverbs.expect says of the staged series. Debian's packaging compresses
# the larger ones (dh_compress, as bookworm's 44.0-2 does): a copy,
# uncompressed, as a user runs them.
tests=/tmp/rdma-core-tests
cp -r /usr/share/doc/rdma-core/tests "$tests" && gunzip -f "$tests"/*.py.gz
for dev in $want; do
	/usr/bin/python3 "$verbs/pyverbs_run.py" "$tests" --dev "$dev" \
		test_pd test_mr test_device test_shared_pd \
		> "/tmp/pyverbs-$dev" 2> "/tmp/pyverbs-$dev.log"
	"$verbs/pyverbs_diff.py" "$verbs/pyverbs.expect" "/tmp/pyverbs-$dev" \
		staged "$dev" > "$tap_out" 2>&1
	rc=$?
	sed 's/^/# /' "$tap_out"
	[ $rc = 0 ] || { sed -n 's/^RESULT /# RESULT /p' "/tmp/pyverbs-$dev"; tail -n 20 "/tmp/pyverbs-$dev.log" | sed 's/^/# /'; }
	ok $rc "python3-pyverbs' tests on $dev as pyverbs.expect says of the staged series ($(grep -c '^RESULT .* pass$' "/tmp/pyverbs-$dev") passed, $(grep -c '^RESULT .* skip' "/tmp/pyverbs-$dev") skipped)"
done
tc=tests.test_shared_pd.SharedPDTestCase.test_imported_pd_traffic_other_process
grep -qx "RESULT $tc pass" /tmp/pyverbs-rxe0
ok $? "rxe0: $tc passes"
# on siw0 with --gid 0 (rdma-core's tests pass over siw's only GID, its
# netdev's MAC followed by zeros, as a zero GID): its QPs connected
# through rdma_cm, the importer's on the imported PD
if [ -e /sys/class/infiniband/siw0 ]; then
	/usr/bin/python3 "$verbs/pyverbs_run.py" "$tests" --dev siw0 --gid 0 \
		test_shared_pd.SharedPDTestCase > /tmp/pyverbs-siw0-gid 2> /tmp/pyverbs-siw0-gid.log
	grep -qx "RESULT $tc pass" /tmp/pyverbs-siw0-gid
	ok $? "siw0: $tc passes (--gid 0, through rdma_cm)"
	grep '^RESULT ' /tmp/pyverbs-siw0-gid | sed 's/^/# /'
	grep -q "^RESULT $tc pass" /tmp/pyverbs-siw0-gid || tail -n 20 /tmp/pyverbs-siw0-gid.log | sed 's/^/# /'
fi

# ibpd0 through the packaged provider: the DV API and the lifecycle.
for t in dv_test lifecycle_test; do
	IBPD_TEST_DEV=ibpd0 "$build/provider/$t" > "$tap_out" 2>&1
	ok $? "$t on the installed libibverbs and libibpd1"
	grep -E '^# Totals|^not ok' "$tap_out" | sed 's/^/#   /'
done

# A kernel of a series the packages have no driver source of, installed
# with apt after them: a stand-in for a Debian kernel the matrix lacks,
# its image and headers packages laid out as linux-image-KVER and
# linux-headers-KVER are (the headers those of this kernel), whose
# postinst run the kernel's hooks as theirs do (run-parts
# --exit-on-error /etc/kernel/header_postinst.d, /etc/kernel/postinst.d),
# with initramfs-tools' hook among them (from the distribution's
# repository, taken away after). DKMS leaves both modules out with a
# message, apt exits 0, the initramfs is made; then the packages' own
# postinst (as dpkg and dpkg-reconfigure run it) with those headers
# present: DKMS's "Skipped.". On the first kernel of the run
# (IBPD_BRIDGE_OTHER_SERIES: the directory of the two packages, made on
# the host, scripts/tests/ibpd_check/bridge.py's other_kernel()).
# IBPD_BRIDGE_REBUILT, optional: the DKMS packages rebuilt with a new
# version and nothing else changed, and DKMS's builds of them for this
# kernel (bridge.py's rebuilt()), installed over the first.
if [ -n "${IBPD_BRIDGE_OTHER_SERIES:-}" ]; then
	over=$(echo "$IBPD_BRIDGE_OTHER_SERIES"/linux-image-*.deb)
	over=${over##*/linux-image-}
	over=${over%.deb}
	t=$SECONDS
	printf 'deb [trusted=yes] file:%s ./\n' "$IBPD_BRIDGE_DISTRO" > "$apt_lists.list"
	pkgs_before=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 ~ /^ii/ { print $2 }' | sort)
	{ apt_get update && apt_get install initramfs-tools; } > "$tap_out" 2>&1
	ok $? "initramfs-tools installed, for its kernel hook"
	apt_get install "$IBPD_BRIDGE_OTHER_SERIES/linux-image-$over.deb" \
		"$IBPD_BRIDGE_OTHER_SERIES/linux-headers-$over.deb" > "$tap_out" 2>&1
	rc=$?
	grep -E 'ibpd-|run-parts|initramfs|dkms' "$tap_out" | sed 's/^/# /'
	[ $rc = 0 ] && dpkg-query -W -f='${db:Status-Abbrev}' "linux-image-$over" "linux-headers-$over" | grep -qx 'ii ii '
	ok $? "apt install of a kernel of a series the packages do not carry ($over): exit 0, image and headers configured"
	[ -s "/boot/initrd.img-$over" ]
	ok $? "its initramfs made (/boot/initrd.img-$over): the hooks after DKMS's ran"
	for d in rxe siw; do
		grep -q "ibpd-$d-dkms: kernel $over is not supported: this package imports on Linux .* only; nothing is built" "$tap_out"
		ok $? "ibpd-$d-dkms says why nothing is built for $over"
	done
	! ls "/lib/modules/$over/updates" > "$tap_out" 2>&1
	ok $? "nothing built or installed for $over"
	# (the host's builds where the postinst looks, as at the install: it
	# takes the module out of DKMS and loads it anew, compiling nothing)
	prebuilt
	for d in rxe siw; do
		v=$(dpkg-query -W -f='${Version}' "ibpd-$d-dkms")
		/var/lib/dpkg/info/ibpd-$d-dkms.postinst configure "$v" > "$tap_out" 2>&1 &&
			grep -q "Building for .*$over" "$tap_out" && grep -qx "Skipped." "$tap_out" &&
			grep -q "Loading tarball for ibpd-$d-" "$tap_out"
		ok $? "ibpd-$d-dkms's postinst configure with $over's headers present: that kernel skipped, exit 0"
		grep -E "Building|Skipped|BUILD_EXCLUSIVE|Loading" "$tap_out" | sed 's/^/#   /'
	done
	rm -f /usr/share/ibpd-*-dkms/*.dkms.tar.gz
	apt_get purge "linux-image-$over" "linux-headers-$over" > "$tap_out" 2>&1 &&
		[ ! -e "/boot/initrd.img-$over" ] && [ ! -e "/lib/modules/$over" ]
	ok $? "apt purge of $over's packages: its initramfs and modules directory gone"
	added=$(comm -13 <(echo "$pkgs_before") <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' |
		awk '$1 ~ /^ii/ { print $2 }' | sort))
	# shellcheck disable=SC2086 # a package a word
	[ -z "$added" ] || apt_get purge $added > "$tap_out" 2>&1
	ok $? "what it took away again (${added//$'\n'/ })"
	: > "$apt_lists.list"
	echo "# a kernel of another series: $((SECONDS - t)) s"
fi

# A rebuild of the DKMS packages (a new version, as a new make bridge-rxe
# with changed patches has) installed over them with apt: the old
# version's modules go, the new one's are installed for this kernel,
# from the sources taken out at the first install (no linux-source
# read again; the host's builds of the new version, as at the install),
# and its patched sources replace the old version's.
if [ -n "${IBPD_BRIDGE_REBUILT:-}" ]; then
	v_old=$(dpkg-query -W -f='${Version}' ibpd-rxe-dkms)
	mapfile -t again < <(ls "$IBPD_BRIDGE_REBUILT"/*.deb)
	v_new=$(dpkg-deb -f "${again[0]}" Version)
	prebuilt "$IBPD_BRIDGE_REBUILT"
	apt_get install "${again[@]}" > "$tap_out" 2>&1
	rc=$?
	grep -E 'ibpd-|Loading|Building|Error' "$tap_out" | sed 's/^/#   /'
	dpkg --compare-versions "$v_new" gt "$v_old" && [ $rc = 0 ] &&
		[ "$(dpkg-query -W -f='${Version} ' ibpd-rxe-dkms ibpd-siw-dkms)" = "$v_new $v_new " ]
	ok $? "apt install of the DKMS packages rebuilt, $v_new over $v_old: both upgraded"
	dkms status > /tmp/dkms.status 2>&1
	for d in rxe siw; do
		mod=rdma_rxe
		[ $d = rxe ] || mod=siw
		grep -q "^ibpd-$d/$v_new, $kver, .*: installed" /tmp/dkms.status &&
			! grep -q "^ibpd-$d/$v_old," /tmp/dkms.status &&
			[ "$(modinfo -F version "$mod")" = "${rxever%-import*}-import$v_new" ] &&
			[ -d "/var/lib/ibpd-$d-dkms/$v_new/$kdeb/$d" ] && [ ! -e "/var/lib/ibpd-$d-dkms/$v_old" ] &&
			! grep -q "taking drivers/infiniband/sw/$d out" "$tap_out"
		ok $? "ibpd-$d-dkms $v_new: its $mod installed for $kver ($(modinfo -F version "$mod")), $v_old's gone, from the source taken out before"
	done
	sed 's/^/#   /' /tmp/dkms.status
	rm -f /usr/share/ibpd-*-dkms/*.dkms.tar.gz
fi

# A kernel installed after the packages, its headers before its source
# (apt unpacks a kernel update's image, headers and linux-source in the
# order it chooses): DKMS's hook on its headers builds nothing, and says
# that its source is not at hand; then its linux-source (a stand-in whose
# siw has a line the kernel's has not, as a stable update that changed
# siw would): the packages' trigger on the tarball builds and installs
# the module of each DKMS package for it, from that source. One
# package proves it (the two dkms.conf are one template's,
# packaging/ibpd-rdma-sw/dkms/dkms.conf.in; DKMS builds both for every
# kernel of the matrix on the host: bridge.py's prebuild): siw, 8 files
# against rdma_rxe's 21, each minutes under TCG. So ibpd-rxe-dkms goes
# first, purged while its rdma_rxe runs rxe0, as a user may purge it: its
# modules leave updates/dkms, the loaded one keeps running.
if [ -n "${IBPD_BRIDGE_NEXT:-}" ]; then
	apt_get purge ibpd-rxe-dkms > "$tap_out" 2>&1 &&
		! ls "$m"/updates/dkms/rdma_rxe.ko* > /dev/null 2>&1 &&
		modinfo -n rdma_rxe | grep -q "^$m/kernel/" &&
		[ -e /sys/class/infiniband/rxe0 ] &&
		[ "$(cat /sys/module/rdma_rxe/version 2> /dev/null)" = "$rxever" ]
	ok $? "apt purge ibpd-rxe-dkms with its rdma_rxe running: its module gone from updates/dkms, modprobe would load the stock one, rxe0 still up"
	nver=$(cat "$IBPD_BRIDGE_NEXT/kver")
	: > /tmp/headers.linked	# its links alone, taken away at the end
	headers "$IBPD_BRIDGE_NEXT" "$nver"
	t=$SECONDS
	# its compiles are long under TCG and print nothing
	# (Documentation/testing.rst, "Run times"): a line a minute, so that
	# vm-run does not take the VM for hung
	( while sleep 60; do echo "# DKMS for $nver: building, $((SECONDS - t)) s"; done ) &
	tick=$!
	nseries=$(echo "$nver" | cut -d. -f1,2)
	read -r npkg nkdeb <<< "$(dpkg-deb -f "$IBPD_BRIDGE_NEXT_SOURCE" Package Version | sed 's/^[^:]*: //' | paste -sd' ')"
	/etc/kernel/header_postinst.d/dkms "$nver" > "$tap_out" 2>&1 &&
		grep -q "ibpd-siw-dkms: kernel $nver: its own siw source, linux-source-$nseries $nkdeb, is not at hand.*nothing is built" "$tap_out" &&
		! ls "/lib/modules/$nver/updates" >> "$tap_out" 2>&1
	ok $? "a kernel installed later ($nver), its headers first: DKMS's hook exits 0, builds nothing, says its source is not at hand"
	grep ibpd- "$tap_out" | sed 's/^/#   /'
	apt_get install "$IBPD_BRIDGE_NEXT_SOURCE" > "$tap_out" 2>&1
	rc=$?
	kill "$tick"
	wait "$tick" 2> /dev/null
	echo "# DKMS for $nver (its source installed): $((SECONDS - t)) s"
	grep -E 'ibpd-|Error|error' "$tap_out" | sed 's/^/#   /'
	siw=$(ls "/lib/modules/$nver/updates/dkms/siw.ko"* 2> /dev/null)
	[ $rc = 0 ] && [ "$npkg" = "linux-source-$nseries" ] && [ -n "$siw" ] &&
		! ls "/lib/modules/$nver/updates/dkms/rdma_rxe.ko"* >> "$tap_out" 2>&1
	ok $? "then its source ($npkg $nkdeb): the trigger builds and installs siw for it (no rdma_rxe: its package is gone)"
	stand_in=$(modinfo -F ibpd_stand_in "$siw" 2> /dev/null)
	[ "$stand_in" = "$npkg $nkdeb, changed" ] &&
		[[ $(modinfo -F import "$siw" 2> /dev/null) == *": $npkg $nkdeb with "* ]]
	ok $? "its siw has that source's code, not another's (modinfo ibpd_stand_in: $stand_in)"
else
	skip "a kernel installed later: no second kernel given"
fi

# The way back: purge the DKMS package, the distribution's rdma-core with
# apt install PKG=VERSION, the rest of ours purged.
echo "# bridge: the way back from $SECONDS s in the guest"
t=$SECONDS
rdma link delete rxe0 && rmmod rdma_rxe
[ ! -e /sys/class/infiniband/siw0 ] || { rdma link delete siw0 && rmmod siw; }
printf 'deb [trusted=yes] file:%s ./\n' "$IBPD_BRIDGE_DISTRO" > "$apt_lists.list"
apt_get update > /dev/null
back=() purge=()
now=()
while read -r p st v; do now[$p]=$st; done < <(deb_status)
# the kernels' sources, which the machine did not have
purge+=("linux-source-$series")
[ -z "${npkg:-}" ] || [ "$npkg" = "linux-source-$series" ] || purge+=("$npkg")
for p in "${names[@]}"; do
	if [ -n "${had[$p]:-}" ]; then
		back+=("$p=${had[$p]}")
	elif [[ ${now[$p]:-} == [a-z]i* ]]; then
		purge+=("$p")	# not ibpd-rxe-dkms when purged above
	fi
done
apt_get purge "${purge[@]}" > "$tap_out" && apt_get install --allow-downgrades "${back[@]}" >> "$tap_out"
ok $? "back: apt purge ${purge[*]}; apt install ${back[*]}"
echo "# apt purge, apt install: $((SECONDS - t)) s"
installed_after=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 2> /dev/null |
	awk '$1 ~ /^ii/ { print $2, $3 }' | sort)
[ "$installed_after" = "$installed_before" ]
ok $? "back: the installed packages and versions as before the bridge"
{ modprobe rdma_rxe && rdma link add rxe0 type rxe netdev dummy0; } > "$tap_out" 2>&1 &&
	modinfo -n rdma_rxe | grep -q "^$m/kernel/" &&
	[ ! -e /sys/module/rdma_rxe/version ]
ok $? "back: modprobe loads the stock rdma_rxe ($(modinfo -n rdma_rxe 2>&1))"
# The seed contract as on a stock system (run_verbs.sh): bookworm's
# rdma-core has no generic import, every import on rxe0 is EOPNOTSUPP;
# ibpd0 through the provider of its ABI, uninstalled (the bridge's
# libibpd1 is gone).
abi=$("$top/scripts/build/provider-abi")
LD_LIBRARY_PATH=$build/provider/abi$abi RDMAV_DRIVERS=$build/provider/abi$abi/libibpd \
	"$build/provider/seed_test" > /tmp/seed-back.tap 2>&1
rc=$?
grep -E '^# Totals|^not ok' /tmp/seed-back.tap | sed 's/^/#   /'
"$top/selftests/vm/rxe_diff.sh" /tmp/seed-back.tap ibpd0 rxe0 > "$tap_out" 2>&1
[ $rc = 0 ] && grep -q '^ok ' "$tap_out" && ! grep -q ', 0 without import)' "$tap_out"
ok $? "back: seed_test on the distribution's rdma-core: import EOPNOTSUPP on rxe0, the rest as on ibpd0"
sed 's/^/# /' "$tap_out"
# DKMS's modules gone from every kernel (the later one's too), then that
# kernel's headers, which were no package's
! ls /lib/modules/*/updates/dkms/* > "$tap_out" 2>&1
ok $? "back: no module in /lib/modules/*/updates/dkms"
sed 's/^/# /' "$tap_out"
if [ -n "${IBPD_BRIDGE_NEXT:-}" ]; then
	rm -rf "/lib/modules/$nver"
	xargs -r rm -f < /tmp/headers.linked
fi
files_after
diff -U 0 /tmp/files.before /tmp/files.after | grep '^[-+]/' > "$tap_out"
[ ! -s "$tap_out" ] && ! ls "$m"/updates/* > /dev/null 2>&1 &&
	! dpkg -S /etc/libibverbs.d/ibpd.driver > /dev/null 2>&1 &&
	! dpkg-query -W -f='${Conffiles}' ibverbs-providers | grep -q obsolete
ok $? "back: no file of the bridge left (dpkg, /lib/modules/$kver/updates, /etc/libibverbs.d; no obsolete conffile)"
sed 's/^/# /' "$tap_out"
echo "# bridge: $SECONDS s in the guest"
tap_totals

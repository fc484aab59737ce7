# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# apt_offline.sh, sourced by the guest halves that install packages
# (deb_vm.sh, bridge_vm.sh): apt_get ARGS... runs apt-get offline, as
# everything else is installed: a private, empty list directory
# ($apt_lists; bookworm's lists are slow to read under TCG) and the
# sources of $apt_lists.list only (none until a caller writes one
# there, e.g. a local repository): apt knows the installed packages and
# the .debs it is given. Each line of its output with the seconds since
# the start when it was written (DKMS writes a step's line when the step
# ends). Without debconf's pre-configuration (/etc/apt/apt.conf.d/
# 70debconf's hook, slow too): our packages have no debconf templates,
# and the noninteractive frontend would ask nothing of those they depend
# on. What each costs: Documentation/testing.rst, "Run times".

apt_lists=$(mktemp -d)
mkdir "$apt_lists/partial"
echo '#clear DPkg::Pre-Install-Pkgs;' > "$apt_lists.conf"
: > "$apt_lists.list"
apt_get() {
	local t0=$SECONDS
	DEBIAN_FRONTEND=noninteractive apt-get -c "$apt_lists.conf" -y -q \
		--no-install-recommends -o Dir::State::Lists="$apt_lists" \
		-o Dir::Etc::SourceList="$apt_lists.list" \
		-o Dir::Etc::SourceParts=/nonexistent -o Dpkg::Use-Pty=0 "$@" 2>&1 |
		while IFS= read -r l; do printf '    %4d %s\n' $((SECONDS - t0)) "$l"; done
	return "${PIPESTATUS[0]}"
}

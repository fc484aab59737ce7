# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The tooling tests' TAP helpers are the kselftests' own: selftests/tap.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../selftests/tap.sh"

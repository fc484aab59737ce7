#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tests of the test tooling itself, kselftest-style TAP: the splat detector
# on recorded console logs, and vm-run's exit status, working tree sharing
# and splat detection in a real VM boot.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$top"/scripts/tests/untracked-*' EXIT
tap_out=$tmp/out

echo "TAP version 13"
echo "1..11"
expect_rc 0 "splat-check: clean console log" "$top/scripts/splat-check" "$here/logs/clean.log"
for s in warning oops kasan lockdep kmemleak; do
	expect_rc 1 "splat-check: $s is a splat" "$top/scripts/splat-check" "$here/logs/$s.log"
done

expect_rc 0 "vm-run -- true" "$top/scripts/vm-run" --no-ibpd -- true
expect_rc 1 "vm-run -- false" "$top/scripts/vm-run" --no-ibpd -- false

# An untracked program in the working tree runs in the VM by its path.
prog=$(mktemp "$top/scripts/tests/untracked-XXXXXX")
printf '#!/bin/sh\necho "marker $(uname -r)"\nexit 42\n' > "$prog"
chmod +x "$prog"
expect_rc 42 "vm-run: untracked program runs, status propagates" \
	"$top/scripts/vm-run" --no-ibpd -- "$prog"
grep -q "^marker [0-9]" "$tmp/out"
ok $? "vm-run: the program's output reaches the host"

# A splat in the console fails the run even though the command succeeded.
expect_rc 1 "vm-run: kernel splat fails the run" "$top/scripts/vm-run" \
	--no-ibpd -- sh -c 'echo "WARNING: CPU: 0 PID: 1 at synthetic" > /dev/kmsg'

tap_totals

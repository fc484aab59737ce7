#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the debug VM (CONFIG_KCOV), for scripts/tests/ibpd_check/kcov.py: the
# coverage-guided fuzzer against the blind one, IBPD_KCOV_SECONDS (default
# 45) each, then on from the kept corpus (IBPD_KCOV_CORPUS, a file of
# calls, when it exists); kselftest TAP. IBPD_KCOV_CORE gives the text of
# ib_core and ib_uverbs.
dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/../.." && pwd)
# shellcheck source=selftests/lib/vm.sh
. "$top/selftests/lib/vm.sh"

set -- -m compare -t "${IBPD_KCOV_SECONDS:-45}" -C
[ -n "${IBPD_KCOV_CORPUS:-}" ] && [ -s "$IBPD_KCOV_CORPUS" ] &&
	set -- "$@" -c "$IBPD_KCOV_CORPUS"
exec "$build/selftests/stress/ibpd_kcov_fuzz" "$@"

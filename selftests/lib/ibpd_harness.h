/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The kselftest harness of the test kernel's source, as ibpd's harness
 * programs (the kselftests, the stress programs, the verbs tests) include
 * it, with what the harnesses of the test kernels do not agree on.
 */

#ifndef IBPD_HARNESS_H
#define IBPD_HARNESS_H

#include "kselftest_harness.h"

/*
 * SKIP from a fixture's setup: the test is reported skipped, and neither
 * its body nor the fixture's teardown runs, on the harness of every test
 * kernel. A plain SKIP(return, ...) in setup is not that on 6.1's, which
 * counts a skip as a pass and runs the body after any setup that passed,
 * unless setup leaves through the harness's jump buffer. The harnesses
 * with FIXTURE_TEARDOWN_PARENT (6.12, 7.x) end the test when setup returns
 * with a skip, and 7.x's has no jump buffer.
 */
#ifdef FIXTURE_TEARDOWN_PARENT
#define SETUP_SKIP(fmt, ...) SKIP(return, fmt, ##__VA_ARGS__)
#else
#define SETUP_SKIP(fmt, ...) \
	SKIP(longjmp(_metadata->env, 1), fmt, ##__VA_ARGS__)
#endif

#endif /* IBPD_HARNESS_H */

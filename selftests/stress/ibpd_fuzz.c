// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ioctl fuzzing of the ibpd methods and the core PD, MR and device methods
 * (through INVOKE_WRITE too): structure-aware random calls (ibpd_fuzz.h)
 * on a file that holds real PDs and MRs, whose handles the calls use. Bounded by
 * IBPD_FUZZ_ITERS (default 20000) and IBPD_FUZZ_SECONDS (default 60); IBPD_FUZZ_SEED replays a run. The kernel must answer every
 * call with an errno or success, and closing the file must free all.
 */

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "lib/ibpd_harness.h"
#include "ibpd_fuzz.h"

/*
 * IBPD_FUZZ_SECONDS bounds the calls, the timeout a hang: the harness's
 * default 30 s is below the fuzzer's own bound (60 s, 90 s on the debug
 * kernel), which only the iteration count kept it under.
 */
#define FUZZ_TIMEOUT 600

FIXTURE(fuzz) {};
FIXTURE_SETUP(fuzz) {}
FIXTURE_TEARDOWN(fuzz) {}

TEST_F_TIMEOUT(fuzz, ioctls, FUZZ_TIMEOUT)
{
	int iters = env_int("IBPD_FUZZ_ITERS", 20000);
	int secs = env_int("IBPD_FUZZ_SECONDS", 60);
	long long base_pds = dbg_read("num_pds");
	long long base_mrs = dbg_read("num_mrs");
	int errs[256] = {}, i, fd, done = 0;
	struct fuzz_ctx f = {};
	struct fuzz_call call;
	time_t end;

	/* the closing checks get the rest of the timeout */
	ASSERT_GT(FUZZ_TIMEOUT - 60, secs);
	f.seed = env_int("IBPD_FUZZ_SEED", time(NULL));
	ksft_print_msg("fuzz: seed %u (IBPD_FUZZ_SEED replays)\n", f.seed);

	fd = test_open(test_dev());
	ASSERT_LE(0, fd);
	f.scratch = mmap(NULL, FUZZ_SCRATCH, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, f.scratch);
	/* real objects for the handles of the calls to hit */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, test_pd_alloc(fd, &f.handles[2 * i], NULL, NULL));
		ASSERT_EQ(0, test_mr_reg(fd, f.handles[2 * i], f.scratch, 4096,
					 1, &f.handles[2 * i + 1], NULL));
	}
	for (i = 6; i < FUZZ_HANDLES; i++)
		f.handles[i] = i - 6;

	end = time(NULL) + secs;
	for (i = 0; i < iters && time(NULL) < end; i++, done++) {
		int err;

		fuzz_gen(&f, &call);
		err = fuzz_exec(&f, fd, &call);
		errs[err < 256 ? err : 255]++;
		if (!err)
			fuzz_close_event_fds();
	}

	ksft_print_msg("fuzz: %d ioctls: %d ok, EINVAL %d, ENOENT %d, EPROTONOSUPPORT %d, EOPNOTSUPP %d, EFAULT %d, other %d\n",
		       done, errs[0], errs[EINVAL], errs[ENOENT],
		       errs[EPROTONOSUPPORT], errs[EOPNOTSUPP], errs[EFAULT],
		       done - errs[0] - errs[EINVAL] - errs[ENOENT] -
		       errs[EPROTONOSUPPORT] - errs[EOPNOTSUPP] - errs[EFAULT]);
	EXPECT_GT(done, 0);

	/* whatever the fuzzer created, the close takes away */
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(base_pds, dbg_read("num_pds"));
	EXPECT_EQ(base_mrs, dbg_read("num_mrs"));
	EXPECT_EQ(base_pds, rdma_res_pds());
}

TEST_HARNESS_MAIN

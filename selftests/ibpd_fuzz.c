// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ioctl fuzzing of the ibpd methods and the core PD, MR and device methods
 * (through INVOKE_WRITE too): random objects, methods, attribute ids,
 * lengths, flags, handles and pointers, on a file that holds real PDs and
 * MRs. Bounded by IBPD_FUZZ_ITERS (default 20000) and IBPD_FUZZ_SECONDS
 * (default 60); IBPD_FUZZ_SEED replays a run. The kernel must answer every
 * call with an errno or success, and closing the file must free all.
 */

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "kselftest_harness.h"
#include "ibpd_test.h"

#define SCRATCH (64 * 1024)

static unsigned int seed;

static uint32_t rnd(void)
{
	return rand_r(&seed);
}

static uint32_t pick(const uint32_t *v, size_t n)
{
	return v[rnd() % n];
}

#define PICK(...) ({ const uint32_t _v[] = { __VA_ARGS__ };		\
		     pick(_v, sizeof(_v) / sizeof(_v[0])); })

static uint64_t fuzz_data(char *scratch, uint16_t len)
{
	switch (rnd() % 6) {
	case 0:
		return 0;
	case 1:
		return rnd() % 8;		/* a plausible handle */
	case 2:
		return (uintptr_t)0x10;		/* unmapped */
	case 3:
		return ((uint64_t)rnd() << 32) | rnd();
	default:				/* inside the scratch buffer */
		return (uintptr_t)(scratch + rnd() % (SCRATCH - 256));
	}
}

static void fuzz_one(int fd, char *scratch, int *errs)
{
	struct raw_cmd c;
	uint16_t obj, meth;
	int i, n, err;

	obj = PICK(UVERBS_OBJECT_PD, UVERBS_OBJECT_PD, UVERBS_OBJECT_MR,
		   UVERBS_OBJECT_DEVICE, rnd() & 0xffff);
	switch (obj) {
	case UVERBS_OBJECT_PD:
		meth = PICK(TEST_COMPAT_METHOD_PD_ALLOC, IBPD_METHOD_PD_IMPORT,
			    IBPD_METHOD_PD_IMPORT, UVERBS_METHOD_PD_DESTROY,
			    IBPD_METHOD_PD_IMPORT + 1, rnd() & 0xffff);
		break;
	case UVERBS_OBJECT_MR:
		meth = PICK(UVERBS_METHOD_MR_DESTROY, rnd() & 0xffff);
		break;
	default:
		meth = PICK(UVERBS_METHOD_INVOKE_WRITE,
			    UVERBS_METHOD_INVOKE_WRITE,
			    UVERBS_METHOD_QUERY_CONTEXT,
			    UVERBS_METHOD_INFO_HANDLES, rnd() & 0xffff);
	}
	raw_init(&c, obj, meth);
	if (rnd() % 64 == 0)
		c.hdr.driver_id = rnd();

	/* random payload for INVOKE_WRITE, with small handles in it */
	for (i = 0; i < 256; i += 4) {
		uint32_t v = rnd() % 4 ? rnd() % 8 : rnd();

		memcpy(scratch + i, &v, 4);
	}

	n = rnd() % 7;
	for (i = 0; i < n; i++) {
		uint16_t id, len;
		struct ib_uverbs_attr *a;

		id = PICK((1U << UVERBS_ID_NS_SHIFT) + rnd() % 5,
			  (1U << UVERBS_ID_NS_SHIFT) + rnd() % 5, rnd() % 6,
			  UVERBS_ATTR_WRITE_CMD, UVERBS_ATTR_CORE_IN,
			  UVERBS_ATTR_CORE_OUT, UVERBS_ATTR_UHW_IN,
			  UVERBS_ATTR_UHW_OUT, rnd() & 0xffff);
		len = PICK(0, 1, 2, 4, 8, 16, 24, 40, rnd() % 256);
		a = raw_attr(&c, id, len, fuzz_data(scratch, len));
		if (id == UVERBS_ATTR_WRITE_CMD) {
			a->len = 8;
			a->data = PICK(IB_USER_VERBS_CMD_ALLOC_PD,
				       IB_USER_VERBS_CMD_DEALLOC_PD,
				       IB_USER_VERBS_CMD_REG_MR,
				       IB_USER_VERBS_CMD_DEREG_MR,
				       IB_USER_VERBS_CMD_QUERY_DEVICE,
				       IB_USER_VERBS_CMD_QUERY_PORT,
				       rnd() % 64);
		} else if (id == UVERBS_ATTR_CORE_IN && len > 8) {
			a->data = (uintptr_t)scratch;
		}
		/* unknown mandatory attributes end the call early: rarely */
		a->flags = rnd() % 8 ? 0 : PICK(UVERBS_ATTR_F_MANDATORY,
						rnd() & 0xffff);
		if (rnd() % 32 == 0)
			a->attr_data.reserved = rnd();
	}
	err = raw_exec(fd, &c);
	errs[err < 256 ? err : 255]++;
}

TEST(fuzz_ioctls)
{
	int iters = getenv("IBPD_FUZZ_ITERS") ? atoi(getenv("IBPD_FUZZ_ITERS")) : 20000;
	int secs = getenv("IBPD_FUZZ_SECONDS") ? atoi(getenv("IBPD_FUZZ_SECONDS")) : 60;
	long long base_pds = dbg_read("num_pds");
	long long base_mrs = dbg_read("num_mrs");
	int errs[256] = {}, i, fd, done = 0;
	uint32_t pd, mr;
	time_t end;
	char *scratch;

	seed = getenv("IBPD_FUZZ_SEED") ? atoi(getenv("IBPD_FUZZ_SEED")) :
	       (unsigned int)time(NULL);
	ksft_print_msg("fuzz: seed %u (IBPD_FUZZ_SEED replays)\n", seed);

	fd = test_open(test_dev());
	ASSERT_LE(0, fd);
	scratch = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, scratch);
	/* real objects for the random handles to hit */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, test_pd_alloc(fd, &pd, NULL, NULL));
		ASSERT_EQ(0, test_mr_reg(fd, pd, scratch, 4096, 1, &mr, NULL));
	}

	end = time(NULL) + secs;
	for (i = 0; i < iters && time(NULL) < end; i++, done++)
		fuzz_one(fd, scratch, errs);

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

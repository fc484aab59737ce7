// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * fail-nth sweeps (after iommufd_fail_nth.c): every verb is replayed with
 * its 1st, 2nd, ... kernel slab allocation failing (failslab and
 * /proc/thread-self/fail-nth), until a run reaches no more allocations.
 * Each failed run must return a clean errno and leave nothing behind; the
 * kernel checkers (KASAN, kmemleak, lockdep) watch the error paths.
 * Needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS: skips without.
 */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_test.h"

#define MAX_NTH 2000

static int nth_fd = -1;

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

static int fail_nth_setup(void)
{
	char path[64];

	if (nth_fd >= 0)
		return 0;
	if (write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") ||
	    write_file("/sys/kernel/debug/failslab/verbose", "0"))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	nth_fd = open(path, O_RDWR);
	return nth_fd < 0 ? -1 : 0;
}

static void arm(unsigned int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	if (pwrite(nth_fd, buf, len, 0) != len)
		abort();
}

/* Disarms; true if the armed fault was injected. */
static bool disarm(void)
{
	char buf[16] = "";
	bool hit;

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	hit = buf[0] == '0';
	if (pwrite(nth_fd, "0", 1, 0) != 1)
		abort();
	return hit;
}

/* What an allocation failure may surface as: ours, the VFS's, netlink's. */
static bool clean_errno(int err)
{
	return err == ENOMEM || err == ENFILE || err == ENOBUFS ||
	       err == EFAULT || err == EAGAIN;
}

struct env {
	struct ibpd_context *ctx;
	struct ibpd_pd *pd;
	struct ibpd_mr *mr;
	char *buf;
	long long base_pds, base_mrs;
};

/*
 * SWEEP(setup, op, cleanup): for nth = 1, 2, ...: setup unarmed, run op
 * with the nth allocation failing, cleanup unarmed, check the counts.
 * op sets err: 0 on success, else the errno it saw.
 */
#define SWEEP(setup, op, cleanup)					\
	do {								\
		unsigned int nth, points = 0;				\
		bool hit = true;					\
		int err;						\
		if (fail_nth_setup())					\
			SKIP(return, "no failslab/fail-nth");		\
		for (nth = 1; hit && nth < MAX_NTH; nth++) {		\
			setup;						\
			arm(nth);					\
			op;						\
			hit = disarm();					\
			points += hit;					\
			ASSERT_TRUE(!err || clean_errno(err))		\
				TH_LOG("nth %u: errno %d", nth, err);	\
			cleanup;					\
			ASSERT_EQ(e.base_pds, dbg_read("num_pds"))	\
				TH_LOG("nth %u leaked a PD", nth);	\
			ASSERT_EQ(e.base_mrs, dbg_read("num_mrs"))	\
				TH_LOG("nth %u leaked an MR", nth);	\
		}							\
		ASSERT_LT(nth, MAX_NTH);				\
		ksft_print_msg("fail-nth %s: %u fail points swept\n",	\
			       __func__, points);			\
	} while (0)

static void env_init(struct __test_metadata *_metadata, struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, e->buf);
	e->base_pds = dbg_read("num_pds");
	e->base_mrs = dbg_read("num_mrs");
	ASSERT_LE(0, e->base_pds);
}

static void env_close(struct env *e)
{
	if (e->mr)
		ibpd_dereg_mr(e->mr);
	if (e->pd)
		ibpd_dealloc_pd(e->pd);
	if (e->ctx)
		ibpd_close_device(e->ctx);
	e->mr = NULL;
	e->pd = NULL;
	e->ctx = NULL;
}

#define OPEN(e) ((e).ctx = ibpd_open_device(test_dev()))
#define ALLOC(e) ((e).pd = ibpd_alloc_pd((e).ctx))
#define REG(e) ((e).mr = ibpd_reg_mr((e).pd, (e).buf, 4096, 1))

TEST(open_device)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(,
	      err = OPEN(e) ? 0 : errno,
	      env_close(&e));
}

TEST(import_device)
{
	struct ibpd_context *c2 = NULL;
	struct env e;
	int fd = -1;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); fd = dup(ibpd_context_cmd_fd(e.ctx)),
	      c2 = ibpd_import_device(fd); err = c2 ? 0 : errno,
	      if (c2) ibpd_close_device(c2); else close(fd); env_close(&e));
}

TEST(alloc_pd_ioctl)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)),
	      err = ALLOC(e) ? 0 : errno,
	      env_close(&e));
}

TEST(alloc_pd_write)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)),
	      err = (e.pd = ibpd_alloc_pd_write(e.ctx)) ? 0 : errno,
	      env_close(&e));
}

TEST(import_pd)
{
	struct ibpd_pd *ipd = NULL;
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); ASSERT_NE(NULL, ALLOC(e)),
	      ipd = ibpd_import_pd_checked(e.ctx, ibpd_pd_handle(e.pd),
					   ibpd_pd_pdn(e.pd));
	      err = ipd ? 0 : errno,
	      if (ipd) ibpd_unimport_pd(ipd); env_close(&e));
}

TEST(reg_mr)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); ASSERT_NE(NULL, ALLOC(e)),
	      err = REG(e) ? 0 : errno,
	      env_close(&e));
}

TEST(dereg_mr)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); ASSERT_NE(NULL, ALLOC(e));
	      ASSERT_NE(NULL, REG(e)),
	      err = ibpd_dereg_mr(e.mr); if (!err) e.mr = NULL,
	      env_close(&e));
}

TEST(dealloc_pd)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); ASSERT_NE(NULL, ALLOC(e)),
	      err = ibpd_dealloc_pd(e.pd); if (!err) e.pd = NULL,
	      env_close(&e));
}

TEST(close_with_objects)
{
	struct env e;

	env_init(_metadata, &e);
	SWEEP(ASSERT_NE(NULL, OPEN(e)); ASSERT_NE(NULL, ALLOC(e));
	      ASSERT_NE(NULL, REG(e)),
	      free(e.mr); e.mr = NULL; ibpd_unimport_pd(e.pd); e.pd = NULL;
	      err = ibpd_close_device(e.ctx); e.ctx = NULL,
	      env_close(&e));
}

TEST_HARNESS_MAIN

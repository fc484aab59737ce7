// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd direct verbs (<infiniband/ibpddv.h>) through libibverbs.
 *
 * IBPD_TEST_DEV names the device (default ibpd0). On a device that is not
 * ibpd (IBPD_TEST_DV=0, e.g. rxe0) every DV call must fail with EOPNOTSUPP
 * and send nothing: the calls run in a child whose ioctl(2) kills it
 * (seccomp), so one ioctl to the kernel fails the test.
 */

#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <pthread.h>
#include <stdatomic.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/ibpddv.h>

#include "../lib/ibpd_harness.h"
#include "verbs_test.h"
#include "../lib/ibpd_debugfs.h"

static bool test_dv(void)
{
	const char *e = getenv("IBPD_TEST_DV");

	return !e || strcmp(e, "0") != 0;
}

/* From here on, any ioctl(2) does ACTION (a SECCOMP_RET_* value). */
static int filter_ioctl(uint32_t action)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(filter),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* From here on, any ioctl(2) kills the process. */
static int forbid_ioctl(void)
{
	return filter_ioctl(SECCOMP_RET_KILL_PROCESS);
}

/* Every DV call on a foreign context: 0, or the call that misbehaved. */
static int dv_calls_foreign(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibpddv_pd_attr attr = {};
	uint32_t handles[4];
	size_t total;

	if (ibpddv_is_supported(ctx->device))
		return 20;
	errno = 0;
	if (ibpddv_import_pd(ctx, pd->handle, 1) || errno != EOPNOTSUPP)
		return 21;
	if (ibpddv_query_pd(pd, &attr) != EOPNOTSUPP)
		return 22;
	if (ibpddv_list_pds(ctx, handles, 4, &total) != EOPNOTSUPP)
		return 23;
	return 0;
}

FIXTURE(dv) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

FIXTURE_SETUP(dv)
{
	self->ctx = open_dev(test_dev());
	if (!self->ctx)
		SETUP_SKIP("no RDMA device %s", test_dev());
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(dv)
{
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		ibv_close_device(self->ctx);
}

TEST_F(dv, is_supported)
{
	ASSERT_EQ(test_dv(), ibpddv_is_supported(self->ctx->device));
}

TEST_F(dv, foreign_sends_nothing)
{
	pid_t pid;
	int status;

	if (test_dv())
		SKIP(return, "%s is an ibpd device", test_dev());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (forbid_ioctl())
			_exit(10);
		_exit(dv_calls_foreign(self->ctx, self->pd));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("killed by signal %d: an ioctl reached the kernel",
		       WTERMSIG(status));
	}
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_F(dv, query_pd)
{
	struct ibpddv_pd_attr attr = {}, attr2 = {};
	struct ibv_mr *mr;
	static char buf[4096];

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	ASSERT_NE(0, attr.pdn);
	ASSERT_EQ(0, attr.usecnt);
	mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr2));
	ASSERT_EQ(attr.pdn, attr2.pdn);
	ASSERT_EQ(attr.id, attr2.id);
	ASSERT_EQ(1, attr2.usecnt);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	attr.comp_mask = 1;
	ASSERT_EQ(EINVAL, ibpddv_query_pd(self->pd, &attr));
	ASSERT_EQ(EINVAL, ibpddv_query_pd(self->pd, NULL));
}

TEST_F(dv, list_pds)
{
	uint32_t handles[16];
	size_t total = 0, i;
	bool found = false;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_list_pds(self->ctx, handles, 16, &total));
	ASSERT_LE(1, total);
	for (i = 0; i < total; i++)
		found |= handles[i] == self->pd->handle;
	ASSERT_TRUE(found);
	ASSERT_EQ(EINVAL, ibpddv_list_pds(self->ctx, handles, 0, &total));
	ASSERT_EQ(EINVAL, ibpddv_list_pds(self->ctx, NULL, 16, &total));
	ASSERT_EQ(EINVAL, ibpddv_list_pds(self->ctx, handles, 16, NULL));
	ASSERT_EQ(EFAULT, ibpddv_list_pds(self->ctx, (uint32_t *)8, 16, &total));
}

/* A checked import names the PD by identity: a reused handle is ESTALE. */
TEST_F(dv, import_checked)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_pd *pd2, *pd3;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	if (!attr.id)
		SKIP(return, "the kernel reports no PD identity");

	pd2 = ibpddv_import_pd(self->ctx, self->pd->handle, attr.id);
	ASSERT_NE(NULL, pd2);
	ibv_unimport_pd(pd2);
	ASSERT_EQ(NULL, ibpddv_import_pd(self->ctx, self->pd->handle, 0));
	ASSERT_EQ(EINVAL, errno);

	/* the handle comes back for a new PD, the identity does not */
	ASSERT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	ASSERT_EQ(NULL, ibpddv_import_pd(self->ctx, self->pd->handle,
					 attr.id));
	ASSERT_EQ(ESTALE, errno);
	pd3 = ibv_import_pd(self->ctx, self->pd->handle);
	ASSERT_NE(NULL, pd3);
	ibv_unimport_pd(pd3);
}

/*
 * The identity is checked where the PD is named by identity: the import,
 * and every ibpddv_query_pd() of a PD whose identity the library knows
 * (allocated, or imported either way). Once another context of the file
 * destroys the PD and its handle comes back for a new PD, both the
 * imported PD and the allocated one query ESTALE; a verb that takes only
 * the handle acts on the new PD: ibv_dealloc_pd() of the old one destroys
 * it.
 */
TEST_F(dv, query_stale)
{
	struct ibpddv_pd_attr attr = {}, now = {};
	struct ibv_pd *checked, *plain, *b_pd, *b_new;
	struct ibv_context *b;
	uint32_t handle = self->pd->handle;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	if (!attr.id)
		SKIP(return, "the kernel reports no PD identity");
	b = dup_ctx(self->ctx);
	ASSERT_NE(NULL, b);
	checked = ibpddv_import_pd(b, handle, attr.id);
	ASSERT_NE(NULL, checked);
	plain = ibv_import_pd(b, handle);
	ASSERT_NE(NULL, plain);
	ASSERT_EQ(0, ibpddv_query_pd(checked, &now));
	ASSERT_EQ(attr.id, now.id);
	ASSERT_EQ(0, ibpddv_query_pd(plain, &now));
	ASSERT_EQ(attr.id, now.id);

	/* B destroys the PD through its import, then allocates on the handle */
	b_pd = ibv_import_pd(b, handle);
	ASSERT_NE(NULL, b_pd);
	ASSERT_EQ(0, ibv_dealloc_pd(b_pd));
	ASSERT_EQ(ENOENT, ibpddv_query_pd(self->pd, &now));
	b_new = ibv_alloc_pd(b);
	ASSERT_NE(NULL, b_new);
	ASSERT_EQ(handle, b_new->handle);

	ASSERT_EQ(ESTALE, ibpddv_query_pd(checked, &now));
	ASSERT_EQ(ESTALE, ibpddv_query_pd(plain, &now));
	ASSERT_EQ(ESTALE, ibpddv_query_pd(self->pd, &now));
	ASSERT_EQ(0, ibpddv_query_pd(b_new, &now));
	ASSERT_NE(attr.id, now.id);

	ibv_unimport_pd(checked);
	ibv_unimport_pd(plain);

	/* what the identity does not guard: a verb that takes the handle */
	ASSERT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;
	ASSERT_EQ(ENOENT, ibpddv_query_pd(b_new, &now));
	/* only the library's object is left of B's PD */
	ibv_unimport_pd(b_new);
	ibv_close_device(b);
}

/*
 * What an import answers on ibpd besides a PD (ibpddv_import_pd(3),
 * Documentation/ibpd.rst): ENOENT for a handle that names nothing in the
 * file; EINVAL for one that names an object of another type (an MR: the
 * objects of a file share one handle space), from ibv_import_pd() and
 * ibpddv_import_pd() alike, and for an identity of 0.
 */
TEST_F(dv, import_errors)
{
	struct ibpddv_pd_attr attr = {};
	static char buf[4096];
	struct ibv_mr *mr;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_NE(self->pd->handle, mr->handle);

	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(self->ctx, UINT32_MAX));
	EXPECT_EQ(ENOENT, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpddv_import_pd(self->ctx, UINT32_MAX, attr.id));
	EXPECT_EQ(ENOENT, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(self->ctx, mr->handle));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpddv_import_pd(self->ctx, mr->handle, attr.id));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpddv_import_pd(self->ctx, self->pd->handle, 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * A PD destroyed by another context of the file, whose handle the file
 * then gives to an MR: the query fails with EINVAL (an object of another
 * type), and so does every other use of the handle, import and verbs
 * alike (Documentation/ibpd.rst, "after a destroy").
 */
TEST_F(dv, handle_reused_by_mr)
{
	struct ibpddv_pd_attr now = {};
	struct ibv_pd *pd, *b_pd;
	struct ibv_context *b;
	static char buf[8192];
	struct ibv_mr *mr, *mr2;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	b = dup_ctx(self->ctx);
	ASSERT_NE(NULL, b);
	b_pd = ibv_import_pd(b, pd->handle);
	ASSERT_NE(NULL, b_pd);
	ASSERT_EQ(0, ibv_dealloc_pd(b_pd));
	ASSERT_EQ(ENOENT, ibpddv_query_pd(pd, &now));

	/* the lowest free handle: the destroyed PD's */
	mr = ibv_reg_mr(self->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(pd->handle, mr->handle);
	EXPECT_EQ(EINVAL, ibpddv_query_pd(pd, &now));
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(self->ctx, pd->handle));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_EQ(NULL, mr2);
	EXPECT_EQ(EINVAL, errno);
	if (mr2)
		ibv_dereg_mr(mr2);
	EXPECT_EQ(EINVAL, ibv_dealloc_pd(pd));
	/* only the library's object is left of the PD */
	ibv_unimport_pd(pd);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	ibv_close_device(b);
}

/*
 * ENOMEM from the kernel's side of an import (its fail_import knob):
 * ibv_import_pd(), ibpddv_import_pd() and ibpddv_query_pd() return it.
 */
TEST_F(dv, import_enomem)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_pd *pd, *pd2;
	int err, err2, query;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	if (dbg_write_dev(test_dev(), "fail_import", 1))
		SKIP(return, "no debugfs fail_import knob for %s", test_dev());
	errno = 0;
	pd = ibv_import_pd(self->ctx, self->pd->handle);
	err = errno;
	errno = 0;
	pd2 = ibpddv_import_pd(self->ctx, self->pd->handle, attr.id);
	err2 = errno;
	query = ibpddv_query_pd(self->pd, &attr);
	ASSERT_EQ(0, dbg_write_dev(test_dev(), "fail_import", 0));
	EXPECT_EQ(NULL, pd);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(NULL, pd2);
	EXPECT_EQ(ENOMEM, err2);
	EXPECT_EQ(ENOMEM, query);
	EXPECT_EQ(0, ibpddv_query_pd(self->pd, &attr));
}

/*
 * A destroy holds the PD exclusively for its length, and the core's lookup
 * of an import or query meanwhile fails with EBUSY: the library retries
 * it. A thread keeps failing to destroy a PD that has an MR (a real EBUSY,
 * every time) while this one imports and queries it: none of BUSY_TRIALS
 * imports, checked imports and queries may see EBUSY.
 */
#define BUSY_TRIALS 3000

struct destroyer {
	struct ibv_pd *pd;
	atomic_bool stop;
	long tries, busy;
};

static void *destroy_loop(void *arg)
{
	struct destroyer *d = arg;

	while (!atomic_load(&d->stop)) {
		d->tries++;
		if (ibv_dealloc_pd(d->pd) == EBUSY)
			d->busy++;
	}
	return NULL;
}

TEST_F(dv, busy_retried)
{
	struct destroyer d = { .pd = self->pd };
	struct ibpddv_pd_attr attr = {};
	long busy_import = 0, busy_checked = 0, busy_query = 0, other = 0;
	const char *env = getenv("IBPD_BUSY_TRIALS");
	int trials = env ? atoi(env) : BUSY_TRIALS;
	static char buf[4096];
	struct ibv_mr *mr;
	pthread_t thread;
	int i, ret;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, pthread_create(&thread, NULL, destroy_loop, &d));
	for (i = 0; i < trials; i++) {
		struct ibpddv_pd_attr now = {};
		struct ibv_pd *pd;

		pd = ibv_import_pd(self->ctx, self->pd->handle);
		if (pd)
			ibv_unimport_pd(pd);
		else if (errno == EBUSY)
			busy_import++;
		else
			other++;
		if (attr.id) {
			pd = ibpddv_import_pd(self->ctx, self->pd->handle,
					      attr.id);
			if (pd)
				ibv_unimport_pd(pd);
			else if (errno == EBUSY)
				busy_checked++;
			else
				other++;
		}
		ret = ibpddv_query_pd(self->pd, &now);
		if (ret == EBUSY)
			busy_query++;
		else if (ret)
			other++;
	}
	atomic_store(&d.stop, true);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	TH_LOG("%d trials against %ld destroys: EBUSY from ibv_import_pd %ld, ibpddv_import_pd %ld, ibpddv_query_pd %ld",
	       trials, d.tries, busy_import, busy_checked, busy_query);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	/* the PD's MR made every destroy fail with EBUSY, the real one */
	EXPECT_EQ(d.tries, d.busy);
	EXPECT_LT(0, d.tries);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, busy_import);
	EXPECT_EQ(0, busy_checked);
	EXPECT_EQ(0, busy_query);
}

/*
 * The retry is bounded: a lookup that fails with EBUSY every time (here
 * every ioctl does, through seccomp) still returns EBUSY, after
 * IBPD_IMPORT_BUSY_TRIES (100) ioctls at most.
 */
TEST_F(dv, busy_surfaces)
{
	pid_t pid;

	if (!test_dv())
		SKIP(return, "%s is not an ibpd device", test_dev());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibpddv_pd_attr attr = {};

		if (filter_ioctl(SECCOMP_RET_ERRNO | EBUSY))
			_exit(10);
		if (ibpddv_query_pd(self->pd, &attr) != EBUSY)
			_exit(11);
		if (ibpddv_import_pd(self->ctx, self->pd->handle, 1) ||
		    errno != EBUSY)
			_exit(12);
		if (ibv_import_pd(self->ctx, self->pd->handle) ||
		    errno != EBUSY)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(0, wait_child(pid));
}

TEST_HARNESS_MAIN

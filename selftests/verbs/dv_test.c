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

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/ibpddv.h>

#include "kselftest_harness.h"
#include "verbs_test.h"

static const char *test_dev(void)
{
	const char *d = getenv("IBPD_TEST_DEV");

	return d && *d ? d : "ibpd0";
}

static bool test_dv(void)
{
	const char *e = getenv("IBPD_TEST_DV");

	return !e || strcmp(e, "0") != 0;
}

/* From here on, any ioctl(2) kills the process. */
static int forbid_ioctl(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
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
	/* Older harnesses run the test after a SKIP in setup: bail out. */
	if (!self->ctx)
		SKIP(longjmp(_metadata->env, 1), "no RDMA device %s",
		     test_dev());
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

TEST_HARNESS_MAIN

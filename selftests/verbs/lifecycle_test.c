// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Device lifecycles under libibverbs contexts. Each case makes its own
 * ibpd device (rdma link add over dummy0), opens a context on it with a
 * PD, an MR and a second context imported through a dup'ed fd, and then:
 * - renames the device: the contexts go on working;
 * - moves it to another network namespace, or deletes it: the contexts
 *   are disassociated, so every verb fails with EIO, every destroy and
 *   close succeeds (the kernel destroyed the objects already: libibverbs
 *   takes EIO from a destroy as done), and the device works through a
 *   new process's context where it went;
 * - deletes the namespace it was moved to: it comes back, and works
 *   again through a new context.
 * Needs root, iproute2's rdma and ip, and dummy0 (selftests/vm/rxe_up.sh).
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/ibpddv.h>

#include "../lib/ibpd_harness.h"
#include "verbs_test.h"

#define BUF_SIZE	4096
#define DEV		"ibpdv0"
#define DEV_RENAMED	"ibpdv1"
#define NS		"ibpdv_ns"
#define USE_ENV		"IBPD_LIFECYCLE_USE"

/* A shell command's exit status, its output discarded. */
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 16, fmt, ap);
	va_end(ap);
	strcat(cmd, " >/dev/null 2>&1");
	rc = system(cmd);
	return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Whether the device NAME is in this network namespace's sysfs. */
static bool dev_present(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	return access(path, F_OK) == 0;
}

/* Waits up to SECONDS for the device NAME to be PRESENT or not. */
static bool wait_dev(const char *name, bool present, int seconds)
{
	struct timespec t = { .tv_nsec = 100 * 1000 * 1000 };
	int i;

	for (i = 0; i < seconds * 10; i++) {
		if (dev_present(name) == present)
			return true;
		nanosleep(&t, NULL);
	}
	return dev_present(name) == present;
}

/*
 * What a new process does with the device NAME: open it, allocate a PD,
 * import it through a dup'ed fd, register an MR through the imported PD
 * (which makes the PD busy), clean up. 0, or the step that failed.
 */
static int use_dev(const char *name)
{
	static char buf[BUF_SIZE];
	struct ibv_context *ctx, *ctx2;
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr;

	ctx = open_dev(name);
	if (!ctx)
		return 10;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 11;
	ctx2 = dup_ctx(ctx);
	if (!ctx2)
		return 12;
	ipd = ibv_import_pd(ctx2, pd->handle);
	if (!ipd)
		return 13;
	mr = ibv_reg_mr(ipd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 14;
	if (ibv_dealloc_pd(pd) != EBUSY)
		return 15;
	if (ibv_dereg_mr(mr))
		return 16;
	ibv_unimport_pd(ipd);
	if (ibv_dealloc_pd(pd))
		return 17;
	return ibv_close_device(ctx2) || ibv_close_device(ctx) ? 18 : 0;
}

/* The program run again in the namespace NS only runs use_dev(). */
static void __attribute__((constructor)) use_dev_only(void)
{
	const char *name = getenv(USE_ENV);

	if (name)
		exit(use_dev(name));
}

/*
 * use_dev(NAME) in a new process, in the namespace NS when there is one:
 * its exit status. A new process, for a device list of its own: libibverbs
 * keeps the devices it listed once, by uverbs file, with the names they
 * had then.
 */
static int use_dev_in(const char *name, const char *ns)
{
	char self[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if (ns)
		return sh("%s=%s ip netns exec %s %s", USE_ENV, name, ns, self);
	return sh("%s=%s %s", USE_ENV, name, self);
}

FIXTURE(lc) {
	struct ibv_context *ctx, *ctx2;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
};

/* No device, namespace or exclusive mode left from an earlier run. */
static void clean_up(void)
{
	if (!sh("ip netns del " NS))
		wait_dev(DEV, true, 30);
	sh("rdma link delete " DEV);
	sh("rdma link delete " DEV_RENAMED);
	sh("rdma system set netns shared");
}

FIXTURE_SETUP(lc)
{
	self->buf = aligned_alloc(BUF_SIZE, 2 * BUF_SIZE);
	ASSERT_NE(NULL, self->buf);
	if (geteuid())
		SETUP_SKIP("needs root");
	clean_up();
	if (sh("rdma link add " DEV " type ibpd netdev dummy0"))
		SETUP_SKIP("rdma link add " DEV " over dummy0 failed");
	self->ctx = open_dev(DEV);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	self->ctx2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, self->ctx2);
}

FIXTURE_TEARDOWN(lc)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx2)
		ibv_close_device(self->ctx2);
	if (self->ctx)
		ibv_close_device(self->ctx);
	clean_up();
	free(self->buf);
}

/*
 * The fixture's contexts after their device was taken from them: every
 * verb fails with EIO (the direct verbs' import and query too), every
 * destroy and close succeeds. A context
 * imported from their file fails with EIO too where libibverbs still
 * finds the device; with ENODEV (libibverbs' own) where it is gone.
 */
static void expect_disassociated(struct __test_metadata *_metadata,
				 FIXTURE_DATA(lc) *self, int import_errno)
{
	struct ibpddv_pd_attr pd_attr = {};
	struct ibv_device_attr attr;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_pd(self->ctx));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf + BUF_SIZE, BUF_SIZE,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(self->ctx2, self->pd->handle));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpddv_import_pd(self->ctx2, self->pd->handle, 1));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(EIO, ibpddv_query_pd(self->pd, &pd_attr));
	errno = 0;
	EXPECT_EQ(NULL, dup_ctx(self->ctx));
	EXPECT_EQ(import_errno, errno);
	EXPECT_EQ(EIO, ibv_query_device(self->ctx, &attr));

	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;
	EXPECT_EQ(0, ibv_close_device(self->ctx2));
	self->ctx2 = NULL;
	EXPECT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
}

TEST_F_TIMEOUT(lc, rename_keeps_contexts, 120)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_pd *pd, *ipd;

	ASSERT_EQ(0, sh("rdma dev set " DEV " name " DEV_RENAMED));
	EXPECT_FALSE(dev_present(DEV));
	EXPECT_TRUE(dev_present(DEV_RENAMED));

	/* the contexts opened under the old name */
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ipd = ibv_import_pd(self->ctx2, self->pd->handle);
	ASSERT_NE(NULL, ipd);
	EXPECT_EQ(0, ibpddv_query_pd(ipd, &attr));
	EXPECT_EQ(1, attr.usecnt);
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	ibv_unimport_pd(ipd);
	EXPECT_EQ(0, ibv_dealloc_pd(pd));

	/* a new process finds it under its new name only */
	EXPECT_EQ(10, use_dev_in(DEV, NULL));
	EXPECT_EQ(0, use_dev_in(DEV_RENAMED, NULL));

	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;
}

TEST_F_TIMEOUT(lc, netns_move_disassociates, 120)
{
	ASSERT_EQ(0, sh("rdma system set netns exclusive"));
	ASSERT_EQ(0, sh("ip netns add " NS));
	ASSERT_EQ(0, sh("rdma dev set " DEV " netns " NS));
	EXPECT_FALSE(dev_present(DEV));
	EXPECT_EQ(NULL, open_dev(DEV));

	expect_disassociated(_metadata, self, ENODEV);
	EXPECT_EQ(0, use_dev_in(DEV, NS));
}

TEST_F_TIMEOUT(lc, netns_delete_brings_device_back, 120)
{
	ASSERT_EQ(0, sh("rdma system set netns exclusive"));
	ASSERT_EQ(0, sh("ip netns add " NS));
	ASSERT_EQ(0, sh("rdma dev set " DEV " netns " NS));
	ASSERT_EQ(0, sh("ip netns del " NS));
	ASSERT_TRUE(wait_dev(DEV, true, 60));

	expect_disassociated(_metadata, self, EIO);
	EXPECT_EQ(0, use_dev(DEV));
}

TEST_F_TIMEOUT(lc, link_delete_disassociates, 120)
{
	ASSERT_EQ(0, sh("rdma link delete " DEV));
	EXPECT_FALSE(dev_present(DEV));
	EXPECT_EQ(NULL, open_dev(DEV));

	expect_disassociated(_metadata, self, ENODEV);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Module unload with live files and objects, load/unload cycles, and the
 * neighbours: another driver's device (rxe0, when present) must survive
 * "rmmod ibpd". Needs IBPD_KO (the module file) to load it back; run last.
 */

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_libtest.h"

static int sh(const char *fmt, const char *arg)
{
	char cmd[1024];
	int status;

	snprintf(cmd, sizeof(cmd), fmt, arg);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int ibdev_exists(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	return !stat(path, &st);
}

static const char *ko(void)
{
	const char *k = getenv("IBPD_KO");

	return k && *k ? k : NULL;
}

TEST(unload_with_open_files)
{
	struct ibpd_context *ctx, *ctx2;
	void *buf = aligned_alloc(4096, 4096);
	int rxe = ibdev_exists("rxe0");
	struct ibpd_pd *pd, *ipd;
	struct ibpd_mr *mr;

	if (!ko())
		SKIP(return, "IBPD_KO is not set");
	ctx = ibpd_open_device("ibpd0");
	ASSERT_NE(NULL, ctx);
	ctx2 = dup_ctx(ctx);
	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
	ASSERT_NE(NULL, ipd);

	/* no hang, no refusal: the files are disassociated */
	ASSERT_EQ(0, sh("rmmod ibpd", NULL));
	EXPECT_FALSE(ibdev_exists("ibpd0"));
	if (rxe)
		EXPECT_TRUE(ibdev_exists("rxe0"));

	errno = 0;
	EXPECT_EQ(NULL, ibpd_alloc_pd(ctx));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(EIO, ibpd_query_pd(ipd, NULL, NULL));
	EXPECT_EQ(0, ibpd_dereg_mr(mr));
	EXPECT_EQ(0, ibpd_dealloc_pd(ipd));
	ibpd_unimport_pd(pd);
	EXPECT_EQ(0, ibpd_close_device(ctx2));
	EXPECT_EQ(0, ibpd_close_device(ctx));

	ASSERT_EQ(0, sh("insmod %s", ko()));
	ctx = ibpd_open_device("ibpd0");
	ASSERT_NE(NULL, ctx);
	pd = ibpd_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	EXPECT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(0, ibpd_close_device(ctx));
	free(buf);
}

TEST(unload_with_runtime_devices)
{
	if (!ko())
		SKIP(return, "IBPD_KO is not set");
	ASSERT_EQ(0, sh("rdma link add ibpdu0 type ibpd netdev lo", NULL));
	ASSERT_EQ(0, sh("rdma link add ibpdu1 type ibpd netdev lo", NULL));
	EXPECT_TRUE(ibdev_exists("ibpdu1"));
	ASSERT_EQ(0, sh("rdma link delete ibpdu0", NULL));
	EXPECT_FALSE(ibdev_exists("ibpdu0"));
	ASSERT_EQ(0, sh("rmmod ibpd", NULL));
	EXPECT_FALSE(ibdev_exists("ibpdu1"));
	EXPECT_FALSE(ibdev_exists("ibpd0"));
	if (ibdev_exists("rxe0"))
		EXPECT_EQ(0, sh("rdma dev show rxe0 >/dev/null", NULL));
	ASSERT_EQ(0, sh("insmod %s", ko()));
}

static int cycles(void)
{
	const char *c = getenv("IBPD_CYCLES");

	return c && atoi(c) > 0 ? atoi(c) : 3;
}

/* The cycles take long on a KASAN kernel under TCG: a longer timeout. */
FIXTURE(cycles) {
	int unused;
};

FIXTURE_SETUP(cycles)
{
}

FIXTURE_TEARDOWN(cycles)
{
}

/* Repeated: a device with live files, objects and an importer is deleted. */
TEST_F_TIMEOUT(cycles, device_delete, 600)
{
	void *buf = aligned_alloc(4096, 4096);
	int i;

	for (i = 0; i < cycles(); i++) {
		struct ibpd_context *ctx, *ctx2;
		struct ibpd_mr *mr, *imr;
		struct ibpd_pd *pd, *ipd;

		ASSERT_EQ(0, sh("rdma link add ibpdc0 type ibpd netdev lo", NULL));
		ctx = ibpd_open_device("ibpdc0");
		ASSERT_NE(NULL, ctx);
		ctx2 = dup_ctx(ctx);
		ASSERT_NE(NULL, ctx2);
		pd = ibpd_alloc_pd(ctx);
		ASSERT_NE(NULL, pd);
		mr = ibpd_reg_mr(pd, buf, 4096, 0);
		ASSERT_NE(NULL, mr);
		ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
		ASSERT_NE(NULL, ipd);
		imr = ibpd_reg_mr(ipd, buf, 4096, 0);
		ASSERT_NE(NULL, imr);
		ASSERT_EQ(0, sh("rdma link delete ibpdc0", NULL));
		errno = 0;
		EXPECT_EQ(NULL, ibpd_alloc_pd(ctx2));
		EXPECT_EQ(EIO, errno);
		EXPECT_EQ(0, ibpd_dereg_mr(mr));
		EXPECT_EQ(0, ibpd_dereg_mr(imr));
		ibpd_unimport_pd(ipd);
		ibpd_unimport_pd(pd);
		EXPECT_EQ(0, ibpd_close_device(ctx));
		EXPECT_EQ(0, ibpd_close_device(ctx2));
	}
	free(buf);
}

TEST_F_TIMEOUT(cycles, load_unload, 600)
{
	char cmd[512];
	int i;

	if (!ko())
		SKIP(return, "IBPD_KO is not set");
	snprintf(cmd, sizeof(cmd), "%s ndevs=3", ko());
	for (i = 0; i < cycles(); i++) {
		ASSERT_EQ(0, sh("rmmod ibpd", NULL));
		ASSERT_EQ(0, sh("insmod %s", cmd));
		EXPECT_TRUE(ibdev_exists("ibpd2"));
	}
	ASSERT_EQ(0, sh("rmmod ibpd", NULL));
	ASSERT_EQ(0, sh("insmod %s", ko()));
	EXPECT_TRUE(ibdev_exists("ibpd0"));
	EXPECT_FALSE(ibdev_exists("ibpd1"));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Module unload with live files and objects, load/unload cycles, and the
 * neighbours: another driver's device (rxe0, when present) must survive
 * "rmmod ibpd". Needs IBPD_KO (the module file) to load it back; run last.
 * Raw uverbs ioctls: a second context on a file is a dup'ed fd of it.
 */

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ibpd_harness.h"
#include "ibpd_test.h"

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

/*
 * The file of device NAME with two contexts (fd and a dup'ed fd2), a PD
 * and an MR on it through fd, the PD imported through fd2.
 */
static void open_shared(struct __test_metadata *_metadata, const char *name,
			void *buf, int *fd, int *fd2, uint32_t *pd,
			uint32_t *mr)
{
	*fd = test_open(name);
	ASSERT_LE(0, *fd);
	*fd2 = dup(*fd);
	ASSERT_LE(0, *fd2);
	test_cmd_query_context(*fd2);
	test_cmd_pd_alloc(*fd, pd);
	test_cmd_mr_reg(*fd, *pd, buf, 4096, 0, mr);
	test_cmd_pd_import(*fd2, *pd);
}

TEST(unload_with_open_files)
{
	void *buf = aligned_alloc(4096, 4096);
	int rxe = ibdev_exists("rxe0");
	uint32_t pd, mr, pdn;
	int fd, fd2;

	if (!ko())
		SKIP(return, "IBPD_KO is not set");
	open_shared(_metadata, "ibpd0", buf, &fd, &fd2, &pd, &mr);

	/* no hang, no refusal: the files are disassociated */
	ASSERT_EQ(0, sh("rmmod ibpd"));
	EXPECT_FALSE(ibdev_exists("ibpd0"));
	if (rxe)
		EXPECT_TRUE(ibdev_exists("rxe0"));

	test_err_pd_alloc(EIO, fd, &pd);
	EXPECT_EQ(EIO, test_pd_import(fd2, pd, NULL, &pdn, NULL, NULL));
	EXPECT_EQ(0, test_mr_destroy(fd, mr));
	EXPECT_EQ(0, test_pd_destroy(fd2, pd));
	EXPECT_EQ(0, close(fd2));
	EXPECT_EQ(0, close(fd));

	ASSERT_EQ(0, sh("insmod %s", ko()));
	fd = test_open("ibpd0");
	ASSERT_LE(0, fd);
	test_cmd_pd_alloc(fd, &pd);
	EXPECT_EQ(0, test_pd_destroy(fd, pd));
	EXPECT_EQ(0, close(fd));
	free(buf);
}

TEST(unload_with_runtime_devices)
{
	if (!ko())
		SKIP(return, "IBPD_KO is not set");
	ASSERT_EQ(0, sh("rdma link add ibpdu0 type ibpd netdev lo"));
	ASSERT_EQ(0, sh("rdma link add ibpdu1 type ibpd netdev lo"));
	EXPECT_TRUE(ibdev_exists("ibpdu1"));
	ASSERT_EQ(0, sh("rdma link delete ibpdu0"));
	EXPECT_FALSE(ibdev_exists("ibpdu0"));
	ASSERT_EQ(0, sh("rmmod ibpd"));
	EXPECT_FALSE(ibdev_exists("ibpdu1"));
	EXPECT_FALSE(ibdev_exists("ibpd0"));
	if (ibdev_exists("rxe0"))
		EXPECT_EQ(0, sh("rdma dev show rxe0 >/dev/null"));
	ASSERT_EQ(0, sh("insmod %s", ko()));
}

static int cycles(void)
{
	int n = env_int("IBPD_CYCLES", 3);

	return n > 0 ? n : 3;
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
		uint32_t pd, mr, imr, h;
		int fd, fd2;

		ASSERT_EQ(0, sh("rdma link add ibpdc0 type ibpd netdev lo"));
		open_shared(_metadata, "ibpdc0", buf, &fd, &fd2, &pd, &mr);
		test_cmd_mr_reg(fd2, pd, buf, 4096, 0, &imr);
		ASSERT_EQ(0, sh("rdma link delete ibpdc0"));
		test_err_pd_alloc(EIO, fd2, &h);
		EXPECT_EQ(0, test_mr_destroy(fd, mr));
		EXPECT_EQ(0, test_mr_destroy(fd2, imr));
		EXPECT_EQ(0, close(fd));
		EXPECT_EQ(0, close(fd2));
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
		ASSERT_EQ(0, sh("rmmod ibpd"));
		ASSERT_EQ(0, sh("insmod %s", cmd));
		EXPECT_TRUE(ibdev_exists("ibpd2"));
	}
	ASSERT_EQ(0, sh("rmmod ibpd"));
	ASSERT_EQ(0, sh("insmod %s", ko()));
	EXPECT_TRUE(ibdev_exists("ibpd0"));
	EXPECT_FALSE(ibdev_exists("ibpd1"));
}

TEST_HARNESS_MAIN

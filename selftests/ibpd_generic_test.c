// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The generic PD tests, run against ibpd0 and against rxe0 (the upstream
 * reference) with the same expectations: open, alloc, dealloc, EBUSY while
 * an MR uses the PD, sharing through a dup'ed or inherited fd, cleanup at
 * close. Only import differs: rxe has no PD import and fails it with
 * EOPNOTSUPP, as ibv_import_pd(3) does there.
 *
 * Objects are counted with what every device has: the file's own handle
 * list (UVERBS_METHOD_INFO_HANDLES) and ib_core's resource tracking
 * (`rdma resource show`).
 */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_libtest.h"

#define BUF_LEN (4 * 4096)

static int file_pds(struct ibpd_context *ctx)
{
	uint32_t h[64];
	size_t n;
	int ret = ibpd_list_pds(ctx, h, 64, &n);

	return ret ? -ret : (int)n;
}

static uint32_t dev_driver_id(const char *dev)
{
	struct ibpd_device **list = ibpd_get_device_list(NULL);
	uint32_t id = UINT32_MAX;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(list[i]->name, dev))
			id = list[i]->driver_id;
	ibpd_free_device_list(list);
	return id;
}

/*
 * Destroys an object by handle with a raw ioctl on fd, no library object
 * involved; the header carries the device's driver id.
 */
static int raw_destroy(int fd, uint32_t driver_id, uint16_t obj,
		       uint16_t meth, uint16_t attr, uint32_t handle)
{
	struct raw_cmd c;

	raw_init(&c, obj, meth);
	c.hdr.driver_id = driver_id;
	raw_attr(&c, attr, 0, handle);
	return raw_exec(fd, &c);
}

static int destroy_pd(int fd, uint32_t driver_id, uint32_t handle)
{
	return raw_destroy(fd, driver_id, UVERBS_OBJECT_PD,
			   UVERBS_METHOD_PD_DESTROY,
			   UVERBS_ATTR_DESTROY_PD_HANDLE, handle);
}

FIXTURE(generic) {
	struct ibpd_context *ctx;
	uint32_t driver_id;
	char *buf;
	int base_pds;
	int base_mrs;
};

FIXTURE_VARIANT(generic) {
	const char *dev;
	bool imports;
};

FIXTURE_VARIANT_ADD(generic, ibpd0) {
	.dev = "ibpd0",
	.imports = true,
};

FIXTURE_VARIANT_ADD(generic, rxe0) {
	.dev = "rxe0",
	.imports = false,
};

FIXTURE_SETUP(generic)
{
	self->ctx = ibpd_open_device(variant->dev);
	ASSERT_NE(NULL, self->ctx) {
		TH_LOG("ibpd_open_device(%s): %s", variant->dev,
		       strerror(errno));
	}
	self->driver_id = dev_driver_id(variant->dev);
	ASSERT_NE(UINT32_MAX, self->driver_id);
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, BUF_LEN);
	self->base_pds = rdma_res_count("pd", variant->dev);
	self->base_mrs = rdma_res_count("mr", variant->dev);
	ASSERT_LE(0, self->base_pds);
	ASSERT_LE(0, self->base_mrs);
}

FIXTURE_TEARDOWN(generic)
{
	if (self->ctx)
		EXPECT_EQ(0, ibpd_close_device(self->ctx));
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF_LEN);
}

TEST_F(generic, open_close)
{
	struct ibpd_context *c;

	EXPECT_STREQ(variant->dev, ibpd_context_ibdev_name(self->ctx));
	EXPECT_LE(0, ibpd_context_cmd_fd(self->ctx));
	EXPECT_EQ(0, file_pds(self->ctx));
	/* every open is a new file with its own objects */
	c = ibpd_open_device(variant->dev);
	ASSERT_NE(NULL, c);
	EXPECT_NE(ibpd_context_cmd_fd(self->ctx), ibpd_context_cmd_fd(c));
	EXPECT_EQ(0, ibpd_close_device(c));
}

TEST_F(generic, alloc_dealloc)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	uint32_t h;
	size_t n;

	ASSERT_NE(NULL, pd);
	EXPECT_EQ(self->ctx, ibpd_pd_context(pd));
	EXPECT_EQ(self->base_pds + 1, rdma_res_count("pd", variant->dev));
	ASSERT_EQ(0, ibpd_list_pds(self->ctx, &h, 1, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(ibpd_pd_handle(pd), h);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(0, file_pds(self->ctx));
}

TEST_F(generic, alloc_write_path)
{
	struct ibpd_pd *pd = ibpd_alloc_pd_write(self->ctx);

	ASSERT_NE(NULL, pd);
	EXPECT_EQ(self->base_pds + 1, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(1, file_pds(self->ctx));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
}

/* uverbs hands out the lowest free handle: a destroyed PD's is reused. */
TEST_F(generic, handle_reuse)
{
	struct ibpd_pd *a, *b, *c;
	uint32_t ha;

	a = ibpd_alloc_pd(self->ctx);
	b = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_NE(ibpd_pd_handle(a), ibpd_pd_handle(b));
	ha = ibpd_pd_handle(a);
	ASSERT_EQ(0, ibpd_dealloc_pd(a));
	c = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(ha, ibpd_pd_handle(c));
	EXPECT_EQ(2, file_pds(self->ctx));
	EXPECT_EQ(0, ibpd_dealloc_pd(b));
	EXPECT_EQ(0, ibpd_dealloc_pd(c));
}

TEST_F(generic, dealloc_busy_with_mr)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ibpd_mr *mr, *mr2;

	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, BUF_LEN, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->base_mrs + 1, rdma_res_count("mr", variant->dev));
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	/* the PD is fully usable after the failed dealloc */
	EXPECT_EQ(self->base_pds + 1, rdma_res_count("pd", variant->dev));
	mr2 = ibpd_reg_mr(pd, self->buf, 4096, IBPD_ACCESS_LOCAL_WRITE |
			  IBPD_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr2);
	EXPECT_EQ(0, ibpd_dereg_mr(mr));
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	EXPECT_EQ(0, ibpd_dereg_mr(mr2));
	EXPECT_EQ(self->base_mrs, rdma_res_count("mr", variant->dev));
	EXPECT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
}

TEST_F(generic, reg_mr_bad_input)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	void *hole;

	ASSERT_NE(NULL, pd);
	/* remote write without local write: the core's access check */
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, BUF_LEN,
				    IBPD_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, 0, IBPD_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* memory that is not mapped cannot be pinned */
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, 4096);
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, hole, 4096, IBPD_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(self->base_mrs, rdma_res_count("mr", variant->dev));
	EXPECT_EQ(0, ibpd_dealloc_pd(pd));
}

/* A uverbs file nobody created a context on cannot be imported. */
TEST_F(generic, import_device_needs_context)
{
	struct ibpd_device **list = ibpd_get_device_list(NULL);
	char path[128] = "";
	int i, fd;

	ASSERT_NE(NULL, list);
	for (i = 0; list[i]; i++)
		if (!strcmp(list[i]->name, variant->dev))
			snprintf(path, sizeof(path), "/dev/infiniband/%s",
				 list[i]->dev_name);
	ibpd_free_device_list(list);
	ASSERT_NE(0, path[0]);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(NULL, ibpd_import_device(fd));
	EXPECT_EQ(EINVAL, errno);
	/* on failure the fd is still the caller's */
	EXPECT_EQ(0, close(fd));
}

/* A dup'ed fd is the same file: its objects are reachable through it. */
TEST_F(generic, dup_fd_shares_objects)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ibpd_context *c2;
	struct ibpd_mr *mr;
	int fd, ret;
	uint32_t h;
	size_t n;

	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, BUF_LEN, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	c2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, c2) {
		TH_LOG("ibpd_import_device: %s", strerror(errno));
	}
	fd = ibpd_context_cmd_fd(c2);
	EXPECT_STREQ(variant->dev, ibpd_context_ibdev_name(c2));
	ASSERT_EQ(0, ibpd_list_pds(c2, &h, 1, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(ibpd_pd_handle(pd), h);

	/* destroy through the other fd: busy while the MR is there */
	EXPECT_EQ(EBUSY, destroy_pd(fd, self->driver_id, h));
	EXPECT_EQ(0, raw_destroy(fd, self->driver_id, UVERBS_OBJECT_MR,
				 UVERBS_METHOD_MR_DESTROY,
				 UVERBS_ATTR_DESTROY_MR_HANDLE,
				 ibpd_mr_handle(mr)));
	EXPECT_EQ(self->base_mrs, rdma_res_count("mr", variant->dev));
	EXPECT_EQ(0, destroy_pd(fd, self->driver_id, h));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
	/* and the first context sees them gone */
	ret = ibpd_dereg_mr(mr);
	EXPECT_EQ(ENOENT, ret);
	if (ret)
		free(mr);
	ret = ibpd_dealloc_pd(pd);
	EXPECT_EQ(ENOENT, ret);
	if (ret)
		ibpd_unimport_pd(pd);
	EXPECT_EQ(0, file_pds(self->ctx));
	EXPECT_EQ(0, ibpd_close_device(c2));
}

/* The objects live as long as the file: the dup keeps them after close. */
TEST_F(generic, dup_fd_outlives_close)
{
	struct ibpd_context *c2;
	struct ibpd_mr *mr;
	struct ibpd_pd *pd;
	int fd;

	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, BUF_LEN, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	fd = dup(ibpd_context_cmd_fd(self->ctx));
	ASSERT_LE(0, fd);
	/* the library objects go with the context; the kernel's stay */
	EXPECT_EQ(0, ibpd_close_device(self->ctx));
	self->ctx = NULL;
	free(mr);
	ibpd_unimport_pd(pd);
	EXPECT_EQ(self->base_pds + 1, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(self->base_mrs + 1, rdma_res_count("mr", variant->dev));
	c2 = ibpd_import_device(fd);
	ASSERT_NE(NULL, c2);
	EXPECT_EQ(1, file_pds(c2));
	EXPECT_EQ(0, ibpd_close_device(c2));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(self->base_mrs, rdma_res_count("mr", variant->dev));
}

/* A forked child shares the file: it sees and destroys the parent's PD. */
TEST_F(generic, fork_shares_file)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	int status, ret;
	uint32_t handle;
	pid_t pid;

	ASSERT_NE(NULL, pd);
	handle = ibpd_pd_handle(pd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibpd_context *c = dup_ctx(self->ctx);
		uint32_t h;
		size_t n;

		if (!c || ibpd_list_pds(c, &h, 1, &n) || n != 1 || h != handle)
			_exit(1);
		if (destroy_pd(ibpd_context_cmd_fd(c), self->driver_id, h))
			_exit(2);
		_exit(ibpd_close_device(c) ? 3 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
	ret = ibpd_dealloc_pd(pd);
	EXPECT_EQ(ENOENT, ret);
	if (ret)
		ibpd_unimport_pd(pd);
}

/* Closing the last fd destroys everything left in the file, MRs first. */
TEST_F(generic, close_cleans_up)
{
	struct ibpd_context *c = ibpd_open_device(variant->dev);
	struct ibpd_mr *mr[8] = {};
	struct ibpd_pd *pd[8];
	int i;

	ASSERT_NE(NULL, c);
	for (i = 0; i < 8; i++) {
		pd[i] = ibpd_alloc_pd(c);
		ASSERT_NE(NULL, pd[i]);
		if (i % 2)
			mr[i] = ibpd_reg_mr(pd[i], self->buf, BUF_LEN,
					    IBPD_ACCESS_LOCAL_WRITE);
		if (i % 2)
			ASSERT_NE(NULL, mr[i]);
	}
	EXPECT_EQ(self->base_pds + 8, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(self->base_mrs + 4, rdma_res_count("mr", variant->dev));
	/* the library objects go with the context: no kernel call for them */
	EXPECT_EQ(0, ibpd_close_device(c));
	for (i = 0; i < 8; i++) {
		free(mr[i]);
		ibpd_unimport_pd(pd[i]);
	}
	EXPECT_EQ(self->base_pds, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(self->base_mrs, rdma_res_count("mr", variant->dev));
}

/* The one difference: rxe cannot import a PD (upstream: only mlx5 can). */
TEST_F(generic, import_pd)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ibpd_context *c2;
	struct ibpd_pd *ipd;

	ASSERT_NE(NULL, pd);
	c2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, c2);
	ipd = ibpd_import_pd(c2, ibpd_pd_handle(pd));
	if (variant->imports) {
		ASSERT_NE(NULL, ipd);
		EXPECT_EQ(ibpd_pd_pdn(pd), ibpd_pd_pdn(ipd));
		EXPECT_EQ(ibpd_pd_handle(pd), ibpd_pd_handle(ipd));
		ibpd_unimport_pd(ipd);
	} else {
		EXPECT_EQ(NULL, ipd);
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(NULL, ibpd_import_pd_checked(c2, ibpd_pd_handle(pd),
						       1));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(EOPNOTSUPP, ibpd_query_pd(pd, NULL, NULL));
	}
	/* import made no kernel object */
	EXPECT_EQ(self->base_pds + 1, rdma_res_count("pd", variant->dev));
	EXPECT_EQ(0, ibpd_close_device(c2));
	EXPECT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_HARNESS_MAIN

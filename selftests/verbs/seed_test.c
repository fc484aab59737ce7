// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The seed contract, as a plain libibverbs program: no ibpd header, only
 * ibv_alloc_pd(3), ibv_dealloc_pd(3), ibv_import_device(3),
 * ibv_import_pd(3), ibv_unimport_pd(3) and ibv_reg_mr(3).
 *
 * The rxe differential: every case runs on ibpd0 and on rxe0, upstream's
 * software device, one fixture variant each ("seed.ibpd0.CASE",
 * "seed.rxe0.CASE"), with the same expectations except import: rxe cannot
 * import (stock kernels), so every import there must fail with EOPNOTSUPP
 * and the rest of such a case is skipped. selftests/vm/rxe_diff.sh then checks
 * that both devices gave the same results. IBPD_TEST_DEV=NAME runs only
 * the variant of that device. siw0, where there is one, is like rxe0.
 * IBPD_TEST_IMPORT_ALL=1 expects import to work on every device: a kernel
 * whose QUERY_CONTEXT answers for drivers without query_ucontext(), and an
 * rdma-core with the generic import (make upstream-proof). Its
 * PD import calls no kernel method: on rxe0 and siw0 a handle that names no
 * PD is imported unchecked, and the first verb that uses the PD fails with
 * ENOENT, where ibpd0 refuses the import with ENOENT. A failed import
 * leaves the caller's command fd open and no other fd behind.
 * IBPD_TEST_PD_IMPORT=1 expects the PD import alone to work on every device
 * (that rdma-core on a kernel whose QUERY_CONTEXT does not answer for rxe:
 * a PD can be imported into its own context, not into an imported one).
 * "Closing the last fd frees all" is read back with iproute2's
 * "rdma resource show pd", when there is one.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../lib/ibpd_harness.h"
#include "scm_rights.h"
#include "verbs_test.h"

#define BUF_SIZE 4096

/* Whether IBPD_TEST_DEV leaves out the variant of DEV. */
static bool dev_left_out(const char *dev)
{
	const char *d = getenv("IBPD_TEST_DEV");

	return d && *d && strcmp(d, dev);
}

/*
 * What a process that got the file through FD does with the PD of
 * PD_HANDLE: import both, register an MR through the imported PD, clean
 * up. Returns 0 or the step that failed, for an exit status.
 */
static int use_shared_pd(int fd, uint32_t pd_handle)
{
	static char buf[BUF_SIZE];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	ctx = ibv_import_device(fd);
	if (!ctx)
		return 10;
	pd = ibv_import_pd(ctx, pd_handle);
	if (!pd || pd->handle != pd_handle)
		return 11;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 12;
	if (ibv_dereg_mr(mr))
		return 13;
	ibv_unimport_pd(pd);
	return ibv_close_device(ctx) ? 14 : 0;
}

/* PDs "rdma resource show pd" lists for DEV and this process; -1: no tool. */
static int rdma_pd_count(const char *dev)
{
	char cmd[128], line[512], pid[32];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show pd dev %s 2>/dev/null",
		 dev);
	snprintf(pid, sizeof(pid), " pid %d ", getpid());
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, pid) != NULL;
	return pclose(f) ? -1 : n;
}

FIXTURE(seed) {
	struct ibv_context *ctx;
	const char *dev;
	bool import;
	bool checked;
	char *buf;
};

FIXTURE_VARIANT(seed) {
	const char *dev;
	bool import;
	/* the PD import asks the kernel whether the handle names a PD */
	bool checked;
};

FIXTURE_VARIANT_ADD(seed, ibpd0) {
	.dev = "ibpd0",
	.import = true,
	.checked = true,
};

FIXTURE_VARIANT_ADD(seed, rxe0) {
	.dev = "rxe0",
	.import = false,
};

FIXTURE_VARIANT_ADD(seed, siw0) {
	.dev = "siw0",
	.import = false,
};

FIXTURE_SETUP(seed)
{
	self->dev = variant->dev;
	self->import = variant->import || getenv("IBPD_TEST_IMPORT_ALL");
	self->checked = variant->checked;
	self->buf = aligned_alloc(BUF_SIZE, 4 * BUF_SIZE);
	ASSERT_NE(NULL, self->buf);
	if (dev_left_out(self->dev))
		SETUP_SKIP("IBPD_TEST_DEV leaves %s out", self->dev);
	self->ctx = open_dev(self->dev);
	if (!self->ctx)
		SETUP_SKIP("no RDMA device %s", self->dev);
}

FIXTURE_TEARDOWN(seed)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->buf);
}

/* The number of open fds of this process */
static int count_fds(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dp;

	dp = opendir("/proc/self/fd");
	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		n += d->d_name[0] != '.';
	closedir(dp);
	return n;
}

/*
 * Import is unsupported where expected: then the test stops here. The
 * failed import leaves the fd it was given open (ibv_import_device(3): the
 * caller's) and no other fd behind.
 */
#define EXPECT_NO_IMPORT(_self)						\
	do {								\
		int _fd, _nfds;						\
									\
		if (!(_self)->import) {					\
			_fd = dup((_self)->ctx->cmd_fd);		\
			ASSERT_LE(0, _fd);				\
			_nfds = count_fds();				\
			ASSERT_EQ(NULL, ibv_import_device(_fd));	\
			ASSERT_EQ(EOPNOTSUPP, errno);			\
			ASSERT_EQ(_nfds, count_fds());			\
			ASSERT_EQ(0, close(_fd));			\
			SKIP(return, "%s: import is EOPNOTSUPP",	\
			     (_self)->dev);				\
		}							\
	} while (0)

/*
 * handle names no PD of the file of ctx: a checked import fails with
 * ENOENT; an unchecked one gives a PD that the first verb refuses with
 * ENOENT, and is unimported.
 */
#define ASSERT_NO_PD(_self, _ctx, _handle)				\
	do {								\
		struct ibv_pd *_pd = ibv_import_pd((_ctx), (_handle));	\
									\
		if ((_self)->checked) {					\
			ASSERT_EQ(NULL, _pd);				\
			ASSERT_EQ(ENOENT, errno);			\
		} else {						\
			ASSERT_NE(NULL, _pd);				\
			errno = 0;					\
			ASSERT_EQ(NULL, ibv_reg_mr(_pd, (_self)->buf,	\
						   BUF_SIZE,		\
						   IBV_ACCESS_LOCAL_WRITE)); \
			ASSERT_EQ(ENOENT, errno);			\
			ibv_unimport_pd(_pd);				\
		}							\
	} while (0)

TEST_F(seed, device_list)
{
	struct ibv_device **list;
	bool found = false;
	int i, n;

	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	for (i = 0; i < n; i++)
		found |= !strcmp(ibv_get_device_name(list[i]), self->dev);
	ibv_free_device_list(list);
	ASSERT_TRUE(found);
}

TEST_F(seed, query)
{
	struct ibv_device_attr attr;
	struct ibv_port_attr port;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &attr));
	ASSERT_GT(attr.max_pd, 0);
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
}

TEST_F(seed, alloc_dealloc)
{
	struct ibv_pd *pd;

	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(self->ctx, pd->context);
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

/*
 * A uverbs file nobody made a context on cannot be imported, and a failed
 * ibv_import_device() leaves the fd open and the caller's, and no other fd
 * behind: ibpd's import_context closes only the duplicate that a
 * libibverbs with the generic import helpers gives it (rxe's provider has
 * none on stock libibverbs: EOPNOTSUPP).
 */
TEST_F(seed, import_device_failure_keeps_fd)
{
	int fd, lowest, after;
	char path[128];

	snprintf(path, sizeof(path), "/dev/infiniband/%s",
		 self->ctx->device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	lowest = dup(fd);
	ASSERT_LE(0, lowest);
	ASSERT_EQ(0, close(lowest));
	errno = 0;
	ASSERT_EQ(NULL, ibv_import_device(fd));
	ASSERT_NE(0, errno);
	ASSERT_LE(0, fcntl(fd, F_GETFD));
	after = dup(fd);
	ASSERT_LE(0, after);
	ASSERT_EQ(0, close(after));
	ASSERT_EQ(lowest, after);
	ASSERT_EQ(0, close(fd));
}

/* uverbs gives a destroyed PD's handle to the next PD (lowest free). */
TEST_F(seed, handle_reuse)
{
	struct ibv_pd *a, *b, *c;
	uint32_t ha;

	a = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, a);
	b = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, b);
	ASSERT_NE(a->handle, b->handle);
	ha = a->handle;
	ASSERT_EQ(0, ibv_dealloc_pd(a));
	c = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(ha, c->handle);
	ASSERT_EQ(0, ibv_dealloc_pd(b));
	ASSERT_EQ(0, ibv_dealloc_pd(c));
}

/* The core's checks, the same on every device. */
TEST_F(seed, reg_mr_bad_input)
{
	struct ibv_pd *pd;
	void *hole;

	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	/* remote write without local write */
	ASSERT_EQ(NULL, ibv_reg_mr(pd, self->buf, BUF_SIZE,
				   IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(NULL, ibv_reg_mr(pd, self->buf, 0, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(EINVAL, errno);
	/* memory that is not mapped cannot be pinned */
	hole = mmap(NULL, BUF_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, BUF_SIZE);
	ASSERT_EQ(NULL, ibv_reg_mr(pd, hole, BUF_SIZE,
				   IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(seed, dealloc_busy)
{
	struct ibv_mr *mr, *mr2;
	struct ibv_pd *pd;

	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	mr = ibv_reg_mr(pd, self->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);

	ASSERT_EQ(EBUSY, ibv_dealloc_pd(pd));
	/* intact: it still takes MRs, and goes once they are gone */
	mr2 = ibv_reg_mr(pd, self->buf + BUF_SIZE, BUF_SIZE,
			 IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr2);
	ASSERT_EQ(0, ibv_dereg_mr(mr2));
	ASSERT_EQ(EBUSY, ibv_dealloc_pd(pd));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(seed, import_dup)
{
	struct ibv_context *ctx2;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr;

	EXPECT_NO_IMPORT(self);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ctx2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, ctx2);
	pd2 = ibv_import_pd(ctx2, pd->handle);
	ASSERT_NE(NULL, pd2);
	ASSERT_EQ(pd->handle, pd2->handle);
	ASSERT_EQ(ctx2, pd2->context);

	/* an MR through the imported PD holds the owner's PD */
	mr = ibv_reg_mr(pd2, self->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(EBUSY, ibv_dealloc_pd(pd));
	ASSERT_EQ(0, ibv_dereg_mr(mr));

	ibv_unimport_pd(pd2);
	ASSERT_EQ(0, ibv_close_device(ctx2));
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(seed, import_pd_of_own_context)
{
	struct ibv_pd *pd, *pd2;
	uint32_t handle;

	if (!self->import && !getenv("IBPD_TEST_PD_IMPORT")) {
		pd = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pd);
		ASSERT_EQ(NULL, ibv_import_pd(self->ctx, pd->handle));
		ASSERT_EQ(EOPNOTSUPP, errno);
		ASSERT_EQ(0, ibv_dealloc_pd(pd));
		SKIP(return, "%s: import is EOPNOTSUPP", self->dev);
	}
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	pd2 = ibv_import_pd(self->ctx, pd->handle);
	ASSERT_NE(NULL, pd2);
	ibv_unimport_pd(pd2);
	handle = pd->handle;
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
	/* a handle that names nothing in the file */
	ASSERT_NO_PD(self, self->ctx, handle);
}

TEST_F(seed, import_fork)
{
	struct ibv_pd *pd;
	pid_t pid;
	int fd;

	EXPECT_NO_IMPORT(self);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(use_shared_pd(fd, pd->handle));
	close(fd);
	ASSERT_EQ(0, wait_child(pid));
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(seed, import_scm_rights)
{
	struct ibv_pd *pd;
	uint32_t handle;
	int sv[2], fd;
	pid_t pid;

	EXPECT_NO_IMPORT(self);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* the child gets the file through the socket only */
		close(sv[0]);
		ibv_close_device(self->ctx);
		fd = ibpd_recv_fd(sv[1], &handle, sizeof(handle));
		_exit(fd < 0 ? 9 : use_shared_pd(fd, handle));
	}
	close(sv[1]);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, ibpd_send_fd(sv[0], self->ctx->cmd_fd, &pd->handle,
				 sizeof(pd->handle)));
	close(sv[0]);
	ASSERT_EQ(0, wait_child(pid));
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

/* Unimport makes no kernel call: the PD lives on for its owner. */
TEST_F(seed, unimport_keeps_pd)
{
	struct ibv_context *ctx2;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr;

	EXPECT_NO_IMPORT(self);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ctx2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, ctx2);
	pd2 = ibv_import_pd(ctx2, pd->handle);
	ASSERT_NE(NULL, pd2);
	ibv_unimport_pd(pd2);

	mr = ibv_reg_mr(pd, self->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	pd2 = ibv_import_pd(ctx2, pd->handle);
	ASSERT_NE(NULL, pd2);
	ibv_unimport_pd(pd2);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, ibv_close_device(ctx2));
	ASSERT_EQ(0, ibv_dealloc_pd(pd));
}

/* Once the owner destroys the PD, other uses fail cleanly; unimport works. */
TEST_F(seed, use_after_destroy)
{
	struct ibv_context *ctx2;
	struct ibv_pd *pd, *pd2;
	uint32_t handle;

	EXPECT_NO_IMPORT(self);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	handle = pd->handle;
	ctx2 = dup_ctx(self->ctx);
	ASSERT_NE(NULL, ctx2);
	pd2 = ibv_import_pd(ctx2, handle);
	ASSERT_NE(NULL, pd2);
	ASSERT_EQ(0, ibv_dealloc_pd(pd));

	errno = 0;
	ASSERT_EQ(NULL, ibv_reg_mr(pd2, self->buf, BUF_SIZE,
				   IBV_ACCESS_LOCAL_WRITE));
	ASSERT_NE(0, errno);
	ASSERT_NO_PD(self, ctx2, handle);
	ASSERT_NE(0, ibv_dealloc_pd(pd2));
	ibv_unimport_pd(pd2);
	ASSERT_EQ(0, ibv_close_device(ctx2));
}

/*
 * Objects outlive the context that made them while the file is open
 * elsewhere, and go with the file's last fd, MRs first.
 */
TEST_F(seed, close_last_fd_frees_all)
{
	struct ibv_context *a, *b;
	struct ibv_pd *pd, *pd_b;
	struct ibv_mr *mr;
	int before, i;

	before = rdma_pd_count(self->dev);
	a = open_dev(self->dev);
	ASSERT_NE(NULL, a);
	for (i = 0; i < 3; i++) {
		pd = ibv_alloc_pd(a);
		ASSERT_NE(NULL, pd);
		mr = ibv_reg_mr(pd, self->buf + i * BUF_SIZE, BUF_SIZE,
				IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(NULL, mr);
	}
	if (before >= 0)
		ASSERT_EQ(before + 3, rdma_pd_count(self->dev));
	if (self->import) {
		b = dup_ctx(a);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, ibv_close_device(a));
		/* the file is still open: the last PD still takes MRs */
		pd_b = ibv_import_pd(b, pd->handle);
		ASSERT_NE(NULL, pd_b);
		mr = ibv_reg_mr(pd_b, self->buf + 3 * BUF_SIZE, BUF_SIZE,
				IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(NULL, mr);
		ibv_unimport_pd(pd_b);
		a = b;
	}
	/* the last fd: no dereg, no dealloc before it */
	ASSERT_EQ(0, ibv_close_device(a));
	if (before < 0)
		SKIP(return, "no 'rdma' tool: the frees were not counted");
	ASSERT_EQ(before, rdma_pd_count(self->dev));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd kselftests: PD alloc/dealloc/import semantics (the kernel side of
 * ibv_alloc_pd(3) and ibv_import_pd(3)), in one process and across
 * processes sharing a uverbs file, and the uverbs ABI checks of the ibpd
 * methods. Runs in the test VM against IBPD_DEV (default ibpd0).
 *
 * Raw uverbs ioctls (ibpd_test.h), no library: a "context" is an fd of the
 * uverbs file, and a dup'ed fd is a second context on the same file.
 * What only a library does (unimport, which makes no kernel call; device
 * lookup by name; argument checks before any call) is covered by the
 * libibverbs tests in selftests/verbs.
 */

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/ibpd_harness.h"
#include "ibpd_test.h"
#include "scm_rights.h"

#define BUF_LEN (16 * 4096)

/* A PD as the tests keep it: what the allocation answered. */
struct pd {
	uint32_t handle;
	uint32_t pdn;
	uint64_t id;
};

/* ibpd's ioctl allocation */
static int pd_alloc(int fd, struct pd *pd)
{
	return test_pd_alloc(fd, &pd->handle, &pd->pdn, &pd->id);
}

/* the core's write-path ALLOC_PD, the pdn and id in the driver response */
static int pd_alloc_write(int fd, struct pd *pd)
{
	struct ibpd_alloc_pd_resp drv = {};
	int err = test_pd_alloc_write(fd, &pd->handle, &drv);

	pd->pdn = drv.pdn;
	pd->id = drv.id;
	return err;
}

/* The use count of the PD behind handle h: 0 or the errno. */
static int pd_usecnt(int fd, uint32_t h, uint32_t *usecnt)
{
	return test_pd_import(fd, h, NULL, NULL, NULL, usecnt);
}

/* A second context on fd's file: a dup'ed fd. -1 on failure. */
static int dup_ctx(int fd)
{
	int fd2 = dup(fd);

	if (fd2 >= 0 && test_query_context(fd2)) {
		close(fd2);
		return -1;
	}
	return fd2;
}

/* A buffer to register: BUF_LEN bytes of 0x5a, MAP_FAILED on failure. */
static char *test_buf(void)
{
	char *buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf != MAP_FAILED)
		memset(buf, 0x5a, BUF_LEN);
	return buf;
}

/*
 * The fixtures' common setup once their file on IBPD_DEV is open (fd):
 * a buffer to register (where buf), the PDs and the MRs (where base_mrs)
 * live before the test; and their teardown.
 */
static void file_setup(struct __test_metadata *_metadata, int fd,
		       char **buf, long long *base_pds, long long *base_mrs)
{
	ASSERT_LE(0, fd);
	if (buf) {
		*buf = test_buf();
		ASSERT_NE(MAP_FAILED, *buf);
	}
	*base_pds = dbg_read("num_pds");
	if (base_mrs)
		*base_mrs = dbg_read("num_mrs");
	ASSERT_LE(0, *base_pds);
}

static void file_teardown(struct __test_metadata *_metadata, int fd,
			  char *buf)
{
	if (fd >= 0)
		EXPECT_EQ(0, close(fd));
	if (buf && buf != MAP_FAILED)
		munmap(buf, BUF_LEN);
}

/*
 * SETUP_SKIP ends the test on the harness of every test kernel: neither
 * the body nor the teardown runs. (A plain SKIP(return) in setup does not
 * on 6.1's: the fixtures' tests then ran without a device.)
 */
FIXTURE(setup_skip) {
	int unused;
};

FIXTURE_SETUP(setup_skip)
{
	SETUP_SKIP("skipped from setup, as it must be");
}

FIXTURE_TEARDOWN(setup_skip)
{
	EXPECT_TRUE(false) TH_LOG("the teardown ran after its setup skipped");
}

TEST_F(setup_skip, body_not_run)
{
	ASSERT_TRUE(false) TH_LOG("the body ran after its setup skipped");
}

/*
 * The fixtures, one per object as in the kernel's iommufd selftests, each
 * on a uverbs file of IBPD_DEV with the live PDs (and MRs) before the
 * test. pd: allocation, destruction and identity of PDs, the import and
 * listing of their handles.
 */
FIXTURE(pd) {
	int fd;
	long long base_pds;
};

FIXTURE_SETUP(pd)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	file_setup(_metadata, self->fd, NULL, &self->base_pds, NULL);
}

FIXTURE_TEARDOWN(pd)
{
	file_teardown(_metadata, self->fd, NULL);
}

TEST_F(pd, alloc_dealloc)
{
	struct pd pd;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	EXPECT_NE(0, pd.pdn);
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds + 1, rdma_res_pds());
	test_cmd_pd_destroy(self->fd, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
}

TEST_F(pd, alloc_write_path)
{
	uint32_t pdn, usecnt;
	struct pd pd;

	ASSERT_EQ(0, pd_alloc_write(self->fd, &pd));
	/* The driver's udata response carries the pdn on the write path. */
	EXPECT_NE(0, pd.pdn);
	ASSERT_EQ(0, test_pd_import(self->fd, pd.handle, &pd.id, &pdn, NULL,
				    &usecnt));
	EXPECT_EQ(pd.pdn, pdn);
	EXPECT_EQ(0, usecnt);
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	test_cmd_pd_destroy(self->fd, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

/*
 * udata rules: driver input the driver does not define must be zero
 * (EOPNOTSUPP otherwise); a response buffer longer than the driver's
 * response is zero-filled.
 */
TEST_F(pd, alloc_udata)
{
	int fd = self->fd;
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	uint8_t uin[16] = {}, uout[32];
	struct ibpd_alloc_pd_resp *drv = (void *)uout;
	struct ib_uverbs_dealloc_pd dreq = {};
	uint32_t pdn;
	uint64_t id;
	int i;

	uin[15] = 1;
	EXPECT_EQ(EOPNOTSUPP, raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
					sizeof(req), &resp, sizeof(resp), uin,
					sizeof(uin), NULL, 0));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));

	uin[15] = 0;
	memset(uout, 0xff, sizeof(uout));
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
			       sizeof(req), &resp, sizeof(resp), uin,
			       sizeof(uin), uout, sizeof(uout)));
	ASSERT_EQ(0, test_pd_import(fd, resp.pd_handle, NULL, &pdn, &id,
				    NULL));
	EXPECT_EQ(pdn, drv->pdn);
	EXPECT_EQ(0, drv->reserved);
	EXPECT_EQ(id, drv->id);
	for (i = sizeof(*drv); i < sizeof(uout); i++)
		EXPECT_EQ(0, uout[i]);

	/* a short buffer gets the leading fields */
	memset(uout, 0xff, sizeof(uout));
	dreq.pd_handle = resp.pd_handle;
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &dreq,
			       sizeof(dreq), NULL, 0, NULL, 0, NULL, 0));
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
			       sizeof(req), &resp, sizeof(resp), NULL, 0,
			       uout, 4));
	EXPECT_NE(0xffffffff, drv->pdn);
	EXPECT_EQ(0xffffffff, drv->reserved);
	dreq.pd_handle = resp.pd_handle;
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &dreq,
			       sizeof(dreq), NULL, 0, NULL, 0, NULL, 0));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(pd, pdn_unique_and_cyclic)
{
	struct pd a, b, c;

	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	ASSERT_EQ(0, pd_alloc_write(self->fd, &b));
	EXPECT_NE(a.pdn, b.pdn);
	EXPECT_NE(a.handle, b.handle);
	test_cmd_pd_destroy(self->fd, b.handle);
	/* the handle is reused (lowest free), the pdn is not */
	ASSERT_EQ(0, pd_alloc(self->fd, &c));
	EXPECT_NE(a.pdn, c.pdn);
	test_cmd_pd_destroy(self->fd, a.handle);
	test_cmd_pd_destroy(self->fd, c.handle);
}

TEST_F(pd, stale_handle_estale)
{
	uint32_t h, old_pdn, pdn;
	struct pd a, b;

	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	h = a.handle;
	old_pdn = a.pdn;
	test_cmd_pd_destroy(self->fd, h);

	ASSERT_EQ(0, pd_alloc(self->fd, &b));
	ASSERT_EQ(h, b.handle);		/* ABA: same handle, new PD */
	ASSERT_NE(old_pdn, b.pdn);

	/* unchecked import silently names the new PD ... */
	ASSERT_EQ(0, test_pd_import(self->fd, h, NULL, &pdn, NULL, NULL));
	EXPECT_EQ(b.pdn, pdn);

	/* ... the checked one refuses it */
	test_err_pd_import_pdn(ESTALE, self->fd, h, old_pdn);
	EXPECT_EQ(0, test_pd_import_pdn(self->fd, h, b.pdn));
	test_cmd_pd_destroy(self->fd, b.handle);
}

/*
 * pdns wrap after 2^24 allocations (here at once, through the pdn_next
 * knob), and a reused handle can then name a new PD with the old pdn: the
 * pdn check cannot tell, the identity can.
 */
TEST_F(pd, stale_handle_after_pdn_wrap)
{
	uint32_t h, old_pdn;
	uint64_t old_id, id, zero = 0;
	struct pd a, b;

	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	h = a.handle;
	old_pdn = a.pdn;
	old_id = a.id;
	ASSERT_NE(0, old_id);
	test_cmd_pd_destroy(self->fd, h);

	ASSERT_EQ(0, dbg_write("pdn_next", old_pdn));
	ASSERT_EQ(0, pd_alloc_write(self->fd, &b));
	ASSERT_EQ(h, b.handle);
	ASSERT_EQ(old_pdn, b.pdn);	/* same handle, same pdn */
	EXPECT_LT(old_id, b.id);

	/* the pdn check is fooled ... */
	EXPECT_EQ(0, test_pd_import_pdn(self->fd, h, old_pdn));
	/* ... the identity is not */
	test_err_pd_import_id(ESTALE, self->fd, h, &old_id);
	ASSERT_EQ(0, test_pd_import(self->fd, h, &b.id, NULL, &id, NULL));
	EXPECT_EQ(b.id, id);
	/* no PD has the identity 0 */
	test_err_pd_import_id(ESTALE, self->fd, h, &zero);
	test_cmd_pd_destroy(self->fd, b.handle);
}

/*
 * An allocation that fails before the driver answers takes no identity:
 * at max_pd, through the fault knob, or with driver input the command
 * does not define. The next PD's identity follows the last one's.
 */
TEST_F(pd, failed_alloc_keeps_identity)
{
	long long old_max = dbg_read("max_pd");
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	uint8_t uin[8] = { 1 };
	struct pd a, b;

	ASSERT_LT(0, old_max);
	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	ASSERT_EQ(0, dbg_write("max_pd", self->base_pds + 1));
	EXPECT_EQ(ENOMEM, pd_alloc(self->fd, &b));
	EXPECT_EQ(ENOMEM, pd_alloc_write(self->fd, &b));
	ASSERT_EQ(0, dbg_write("max_pd", old_max));
	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 1));
	EXPECT_EQ(ENOMEM, pd_alloc(self->fd, &b));
	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 0));
	EXPECT_EQ(EOPNOTSUPP,
		  raw_write(self->fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
			    sizeof(req), &resp, sizeof(resp), uin, sizeof(uin),
			    NULL, 0));
	ASSERT_EQ(0, pd_alloc(self->fd, &b));
	EXPECT_EQ(a.id + 1, b.id);
	EXPECT_EQ(self->base_pds + 2, dbg_read("num_pds"));
	test_cmd_pd_destroy(self->fd, b.handle);
	test_cmd_pd_destroy(self->fd, a.handle);
}

/*
 * Once the driver has drawn an identity for its answer, the identity is
 * used up, whatever becomes of the call: five write-path allocations whose
 * driver response goes where nothing is mapped (the driver's copy fails),
 * three ioctl allocations and one write-path ALLOC_PD whose responses go
 * to a read-only page (the core's copy fails; the write path's driver
 * response is empty) all fail, and the next PD's identity is one further
 * for each. Nor is a destroyed PD's identity given again, the newest's
 * either.
 */
TEST_F(pd, failed_response_uses_identity)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	struct pd a, b;
	uint32_t h;
	void *ro;
	int i;

	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(EFAULT,
			  raw_write(self->fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
				    sizeof(req), &resp, sizeof(resp), NULL, 0,
				    (void *)8, 16));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(EFAULT, test_pd_alloc_resp(self->fd, &h, ro));
	EXPECT_EQ(EFAULT,
		  raw_write(self->fd, IB_USER_VERBS_CMD_ALLOC_PD, &req,
			    sizeof(req), ro,
			    sizeof(struct ib_uverbs_alloc_pd_resp), NULL, 0,
			    NULL, 0));
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	ASSERT_EQ(0, pd_alloc(self->fd, &b));
	EXPECT_EQ(a.id + 1 + 5 + 3 + 1, b.id);
	test_cmd_pd_destroy(self->fd, b.handle);
	test_cmd_pd_destroy(self->fd, a.handle);

	/* a destroyed PD's identity is not given again, even the newest's */
	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	EXPECT_EQ(b.id + 1, a.id);
	test_cmd_pd_destroy(self->fd, a.handle);
	munmap(ro, 4096);
}

TEST_F(pd, import_bad_handle)
{
	test_err_pd_import(ENOENT, self->fd, 0xdead);
	test_err_pd_import_pdn(ENOENT, self->fd, 0xdead, 1);
}

/* A list of at most 0 handles is the library's EINVAL (selftests/verbs). */
TEST_F(pd, list_pds)
{
	uint32_t handles[16], total = 0, i, j, found = 0;
	struct pd pds[3];

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pd_alloc(self->fd, &pds[i]));
	test_cmd_list_pds(self->fd, handles, 16, &total);
	EXPECT_EQ(3, total);
	for (i = 0; i < 3; i++)
		for (j = 0; j < total; j++)
			found += handles[j] == pds[i].handle;
	EXPECT_EQ(3, found);
	for (i = 0; i < 3; i++)
		test_cmd_pd_destroy(self->fd, pds[i].handle);
	test_cmd_list_pds(self->fd, handles, 16, &total);
	EXPECT_EQ(0, total);
}

/*
 * One INFO_HANDLES call lists TEST_LIST_PDS_MAX handles at most (the
 * list's length in bytes is 16-bit), and no more than asked for. 16384
 * allocations and their destruction at close are slow on the debug
 * kernel under TCG, for the harness's default 30 s
 * (Documentation/testing.rst, "Run times"): 120 s.
 */
TEST_F_TIMEOUT(pd, list_pds_limit, 120)
{
	const size_t n = TEST_LIST_PDS_MAX + 1;
	uint32_t *handles = calloc(n + 1, sizeof(*handles));
	int c = test_open(test_dev());
	uint32_t total, h;
	size_t i;

	ASSERT_LE(0, c);
	ASSERT_NE(NULL, handles);
	for (i = 0; i < n; i++)
		test_cmd_pd_alloc(c, &h);
	test_cmd_list_pds(c, handles, n + 1, &total);
	EXPECT_EQ(TEST_LIST_PDS_MAX, total);
	test_cmd_list_pds(c, handles, 10, &total);
	EXPECT_EQ(10, total);
	/* the last close destroys them */
	EXPECT_EQ(0, close(c));
	free(handles);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

/* mr: the registration of MRs, and the PDs they hold. */
FIXTURE(mr) {
	int fd;
	char *buf;
	long long base_pds;
	long long base_mrs;
};

FIXTURE_SETUP(mr)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	file_setup(_metadata, self->fd, &self->buf, &self->base_pds,
		   &self->base_mrs);
}

FIXTURE_TEARDOWN(mr)
{
	file_teardown(_metadata, self->fd, self->buf);
}

TEST_F(mr, reg_udata)
{
	int fd = self->fd;
	struct ib_uverbs_reg_mr req = {};
	struct ib_uverbs_reg_mr_resp resp;
	struct ib_uverbs_dereg_mr dreq = {};
	uint8_t uin[8] = { 1 }, uout[16];
	struct pd pd;
	int i;

	ASSERT_EQ(0, pd_alloc(fd, &pd));
	req.start = (uintptr_t)self->buf;
	req.hca_va = req.start;
	req.length = 4096;
	req.pd_handle = pd.handle;
	EXPECT_EQ(EOPNOTSUPP, raw_write(fd, IB_USER_VERBS_CMD_REG_MR, &req,
					sizeof(req), &resp, sizeof(resp), uin,
					sizeof(uin), NULL, 0));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	uin[0] = 0;
	memset(uout, 0xff, sizeof(uout));
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_REG_MR, &req, sizeof(req),
			       &resp, sizeof(resp), uin, sizeof(uin), uout,
			       sizeof(uout)));
	for (i = 0; i < sizeof(uout); i++)
		EXPECT_EQ(0, uout[i]);
	dreq.mr_handle = resp.mr_handle;
	ASSERT_EQ(0, raw_write(fd, IB_USER_VERBS_CMD_DEREG_MR, &dreq,
			       sizeof(dreq), NULL, 0, NULL, 0, NULL, 0));
	test_cmd_pd_destroy(fd, pd.handle);
}

/* The device's max_mr_size is what reg_mr enforces. */
TEST_F(mr, reg_max_size)
{
	void *hole = (void *)(1UL << 40);	/* nothing mapped there */
	struct pd pd;
	uint32_t mr;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_err_mr_reg(EINVAL, self->fd, pd.handle, hole,
			(size_t)UINT32_MAX + 1, 0, &mr);
	test_err_mr_reg(EINVAL, self->fd, pd.handle, hole, (size_t)1 << 40, 0,
			&mr);
	/* within the limit: the pages are missing, not the size wrong */
	test_err_mr_reg(EFAULT, self->fd, pd.handle, hole, UINT32_MAX, 0, &mr);
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	test_cmd_pd_destroy(self->fd, pd.handle);
}

TEST_F(mr, reg_bad_args)
{
	uint32_t mr;
	struct pd pd;
	void *hole;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_err_mr_reg(EINVAL, self->fd, pd.handle, self->buf, 0, 0, &mr);
	/* remote write needs local write */
	test_err_mr_reg(EINVAL, self->fd, pd.handle, self->buf, 4096,
			TEST_ACCESS_REMOTE_WRITE, &mr);
	test_err_mr_reg(EINVAL, self->fd, pd.handle, self->buf, 4096, 1 << 12,
			&mr);

	hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 4096));
	test_err_mr_reg(EFAULT, self->fd, pd.handle, hole, 4096, 0, &mr);

	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	test_cmd_pd_destroy(self->fd, pd.handle);
}

TEST_F(mr, pd_dealloc_busy)
{
	uint32_t mr, mr2, lkey, usecnt;
	struct pd pd;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, test_mr_reg(self->fd, pd.handle, self->buf, 4096,
				 TEST_ACCESS_LOCAL_WRITE, &mr, &lkey));
	EXPECT_NE(0, lkey);
	EXPECT_EQ(self->base_mrs + 1, dbg_read("num_mrs"));

	test_err_pd_destroy(EBUSY, self->fd, pd.handle);
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(1, usecnt);

	/* still fully usable after the failed dealloc */
	test_cmd_mr_reg(self->fd, pd.handle, self->buf + 4096, 8192,
			TEST_ACCESS_LOCAL_WRITE | TEST_ACCESS_REMOTE_READ,
			&mr2);
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(2, usecnt);
	test_err_pd_destroy(EBUSY, self->fd, pd.handle);

	test_cmd_mr_destroy(self->fd, mr);
	test_err_pd_destroy(EBUSY, self->fd, pd.handle);
	test_cmd_mr_destroy(self->fd, mr2);
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	test_cmd_pd_destroy(self->fd, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

/*
 * Every object of a file has its handle in one space: a handle that names
 * an object of another type (an MR) is EINVAL, checked or not, and a
 * destroyed PD's handle that the file then gives to an MR is too.
 */
TEST_F(mr, import_wrong_object_type)
{
	uint32_t mr, mr2;
	struct pd pd, gone;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_cmd_mr_reg(self->fd, pd.handle, self->buf, 4096, 0, &mr);
	ASSERT_NE(pd.handle, mr);
	test_err_pd_import(EINVAL, self->fd, mr);
	test_err_pd_import_id(EINVAL, self->fd, mr, &pd.id);
	test_err_pd_import_pdn(EINVAL, self->fd, mr, pd.pdn);

	ASSERT_EQ(0, pd_alloc(self->fd, &gone));
	test_cmd_pd_destroy(self->fd, gone.handle);
	test_cmd_mr_reg(self->fd, pd.handle, self->buf, 4096, 0, &mr2);
	ASSERT_EQ(gone.handle, mr2);
	test_err_pd_import(EINVAL, self->fd, gone.handle);
	test_err_pd_import_id(EINVAL, self->fd, gone.handle, &gone.id);
	test_cmd_mr_destroy(self->fd, mr2);
	test_cmd_mr_destroy(self->fd, mr);
	test_cmd_pd_destroy(self->fd, pd.handle);
}

/*
 * A destroy holds the PD's uobject exclusively while it runs, and a lookup
 * meanwhile fails with EBUSY at once: a child keeps failing to destroy a
 * PD that has an MR (EBUSY, the real one) while this process imports it,
 * plain and checked, until an import sees the core's EBUSY (a minute at
 * most; libibpd retries it: dv_test).
 */
TEST_F(mr, import_busy_during_destroy)
{
	int i, err, busy = 0, other = 0, status;
	time_t start = time(NULL);
	uint32_t mr;
	struct pd pd;
	pid_t pid;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_cmd_mr_reg(self->fd, pd.handle, self->buf, 4096, 0, &mr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		while (test_pd_destroy(self->fd, pd.handle) == EBUSY)
			;
		_exit(1);
	}
	for (i = 0; !busy && time(NULL) < start + 60; i++) {
		err = test_pd_import(self->fd, pd.handle, i % 2 ? &pd.id : NULL,
				     NULL, NULL, NULL);
		if (err == EBUSY)
			busy++;
		else if (err)
			other++;
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d imports during destroys in %lds: %d EBUSY, %d other errors",
	       i, (long)(time(NULL) - start), busy, other);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, other);
	EXPECT_LT(0, busy);
	test_cmd_mr_destroy(self->fd, mr);
	test_cmd_pd_destroy(self->fd, pd.handle);
}

/* debugfs: its views of the device and its fault and limit knobs. */
FIXTURE(debugfs) {
	int fd;
	char *buf;
	long long base_pds;
	long long base_mrs;
};

FIXTURE_SETUP(debugfs)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	file_setup(_metadata, self->fd, &self->buf, &self->base_pds,
		   &self->base_mrs);
}

FIXTURE_TEARDOWN(debugfs)
{
	file_teardown(_metadata, self->fd, self->buf);
}

/* Whether debugfs' pds lists "PDN USECNT". */
static int dbg_pds_has(uint32_t pdn, int usecnt)
{
	char path[256], line[128];
	unsigned int p;
	int u, found = 0;
	FILE *f;

	dbg_path(path, sizeof(path), "pds");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %d", &p, &u) == 2 && p == pdn &&
		    u == usecnt)
			found++;
	fclose(f);
	return found;
}

TEST_F(debugfs, lists_pds)
{
	struct pd a, b;
	uint32_t mr;

	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	ASSERT_EQ(0, pd_alloc_write(self->fd, &b));
	test_cmd_mr_reg(self->fd, b.handle, self->buf, BUF_LEN,
			TEST_ACCESS_LOCAL_WRITE, &mr);
	EXPECT_EQ(1, dbg_pds_has(a.pdn, 0));
	EXPECT_EQ(1, dbg_pds_has(b.pdn, 1));
	/* a header line and one per live PD */
	EXPECT_EQ(self->base_pds + 3, dbg_count_lines("pds"));
	EXPECT_EQ(0, test_mr_destroy(self->fd, mr));
	EXPECT_EQ(1, dbg_pds_has(b.pdn, 0));
	EXPECT_EQ(0, test_pd_destroy(self->fd, a.handle));
	EXPECT_EQ(0, dbg_pds_has(a.pdn, 0));
	EXPECT_EQ(0, test_pd_destroy(self->fd, b.handle));
	EXPECT_EQ(self->base_pds + 1, dbg_count_lines("pds"));
}

/*
 * The pds listing reads a buffer at a time and goes on where it stopped:
 * in reads of any size, every live PD is listed once.
 */
TEST_F(debugfs, pds_in_small_reads)
{
	const int n = 3000;
	struct pd *pds = calloc(n, sizeof(*pds));
	static char seen[IBPD_PDN_MAX + 1];
	size_t sizes[] = { 1, 7, 100, 4096, 65536 };
	char path[256], *text = malloc(1 << 20);
	unsigned int pdn, k;
	int i, fd, dups, mine;
	ssize_t len, r;
	char *line;

	ASSERT_NE(NULL, pds);
	ASSERT_NE(NULL, text);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pd_alloc(self->fd, &pds[i]));
	dbg_path(path, sizeof(path), "pds");
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		len = 0;
		while ((r = read(fd, text + len, sizes[k])) > 0)
			len += r;
		close(fd);
		ASSERT_LE(0, r);
		text[len] = 0;
		memset(seen, 0, sizeof(seen));
		dups = 0;
		for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			if (sscanf(line, "%u", &pdn) == 1 && pdn <= IBPD_PDN_MAX)
				dups += seen[pdn]++ > 0;
		mine = 0;
		for (i = 0; i < n; i++)
			mine += seen[pds[i].pdn] == 1;
		EXPECT_EQ(0, dups);
		EXPECT_EQ(n, mine);
		TH_LOG("reads of %zu bytes: %d PDs listed once, %d twice",
		       sizes[k], mine, dups);
	}
	for (i = 0; i < n; i++)
		test_cmd_pd_destroy(self->fd, pds[i].handle);
	free(pds);
	free(text);
}

/*
 * Reads the pds listing whole, in reads of size bytes, into text (of
 * cap bytes): its length, or -errno. With first, reads that many bytes
 * first and seeks back to the start.
 */
static ssize_t dbg_read_pds(char *text, size_t cap, size_t size,
			    size_t first)
{
	char path[256];
	ssize_t len = 0, r;
	int fd;

	dbg_path(path, sizeof(path), "pds");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (first && (read(fd, text, first) < 0 || lseek(fd, 0, SEEK_SET))) {
		close(fd);
		return -EIO;
	}
	while (len + size < cap && (r = read(fd, text + len, size)) > 0)
		len += r;
	close(fd);
	if (len + size >= cap)
		return -EFBIG;
	if (r < 0)
		return -errno;
	text[len] = 0;
	return len;
}

/*
 * Allocates and destroys PDs of a file of its own, up to 64 live, until
 * killed; *ops counts them.
 */
static void pd_churn(volatile unsigned long *ops)
{
	uint32_t h[64];
	int fd = test_open(test_dev()), i = 0, n = 0;

	if (fd < 0)
		_exit(1);
	for (;;) {
		if (n == 64) {
			if (test_pd_destroy(fd, h[i % 64]))
				_exit(2);
			n--;
		}
		if (test_pd_alloc(fd, &h[i % 64], NULL, NULL))
			_exit(3);
		n++;
		i++;
		(*ops)++;
	}
}

/*
 * The listing resumes at its cursor, not at a count: with 600 PDs held
 * and others made and destroyed by two processes meanwhile, each listing,
 * in reads of 16 bytes and of 4096, has each held PD exactly once and no
 * PD twice; also one started over by a seek to the start after 1000
 * bytes. A PD being made is listed only once it has its identity: no
 * line has identity 0.
 */
TEST_F_TIMEOUT(debugfs, pds_under_churn, 300)
{
	const int n = 600, listings = 100, nchurn = 2;
	static unsigned char seen[IBPD_PDN_MAX + 1];
	volatile unsigned long *ops;
	int i, l, missing = 0, dups = 0, churned = 0, no_id = 0;
	unsigned long long id;
	size_t cap = 1 << 20;
	char *text = malloc(cap), *line;
	struct pd *pds = calloc(n, sizeof(*pds));
	pid_t churn[2];
	unsigned int pdn;
	ssize_t len;

	ASSERT_NE(NULL, pds);
	ASSERT_NE(NULL, text);
	ops = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ops);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pd_alloc(self->fd, &pds[i]));
	for (i = 0; i < nchurn; i++) {
		churn[i] = fork();
		ASSERT_LE(0, churn[i]);
		if (!churn[i])
			pd_churn(&ops[i]);
	}
	while (ops[0] < 100 || ops[1] < 100)
		usleep(1000);

	for (l = 0; l < listings; l++) {
		len = dbg_read_pds(text, cap, l % 2 ? 4096 : 16,
				   l % 4 == 1 ? 1000 : 0);
		ASSERT_LE(0, len);
		memset(seen, 0, sizeof(seen));
		for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (sscanf(line, "%u %*d %llu", &pdn, &id) != 2 ||
			    pdn > IBPD_PDN_MAX)
				continue;
			no_id += !id;
			dups += seen[pdn]++ == 1;
			churned++;
		}
		for (i = 0; i < n; i++) {
			missing += !seen[pds[i].pdn];
			churned -= !!seen[pds[i].pdn];
		}
	}
	for (i = 0; i < nchurn; i++) {
		int status;

		kill(churn[i], SIGKILL);
		ASSERT_EQ(churn[i], waitpid(churn[i], &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	TH_LOG("%d listings of %d held PDs beside %lu allocations and destroys: %d missing, %d listed twice, %d churned PDs listed, %d without an identity",
	       listings, n, ops[0] + ops[1], missing, dups, churned, no_id);
	EXPECT_EQ(0, no_id);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, dups);
	EXPECT_LT(0, churned);
	for (i = 0; i < n; i++)
		test_cmd_pd_destroy(self->fd, pds[i].handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	munmap((void *)ops, 4096);
	free(pds);
	free(text);
}

/*
 * A read of the listing after its end of file returns the PDs made since,
 * and nothing more: the listing goes on as a log file does.
 */
TEST_F(debugfs, pds_read_after_eof)
{
	char path[256], buf[4096], want[64];
	struct pd a, b;
	ssize_t r;
	int fd;

	ASSERT_EQ(0, pd_alloc(self->fd, &a));
	dbg_path(path, sizeof(path), "pds");
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		;
	ASSERT_EQ(0, r);
	ASSERT_EQ(0, pd_alloc(self->fd, &b));
	r = read(fd, buf, sizeof(buf) - 1);
	ASSERT_LT(0, r);
	buf[r] = 0;
	snprintf(want, sizeof(want), "%u 0 %llu\n", b.pdn,
		 (unsigned long long)b.id);
	EXPECT_STREQ(want, buf);
	EXPECT_EQ(0, read(fd, buf, sizeof(buf)));
	close(fd);
	test_cmd_pd_destroy(self->fd, a.handle);
	test_cmd_pd_destroy(self->fd, b.handle);
}

/* How the reader of pds_seek_readers reads the listing. */
enum pds_reader { PDS_SEQUENTIAL, PDS_PREAD, PDS_LSEEK, PDS_READERS };

static const char *const pds_reader_name[] = {
	[PDS_SEQUENTIAL] = "sequential reads",
	[PDS_PREAD] = "pread at the end",
	[PDS_LSEEK] = "lseek to the middle",
};

/*
 * Reads the pds listing (of about len bytes) the way given, until killed;
 * *reads counts the reads. A pread or a seek elsewhere than where the last
 * read stopped makes seq_file count the lines up to the offset again.
 */
static void pds_reader(enum pds_reader how, off_t len,
		       volatile unsigned long *reads)
{
	char path[256], buf[4096];
	ssize_t r;
	int fd;

	dbg_path(path, sizeof(path), "pds");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(1);
	for (;;) {
		switch (how) {
		case PDS_SEQUENTIAL:
			r = read(fd, buf, sizeof(buf));
			if (!r && lseek(fd, 0, SEEK_SET))
				_exit(2);
			break;
		case PDS_PREAD:
			r = pread(fd, buf, sizeof(buf), len - sizeof(buf));
			break;
		default:
			if (lseek(fd, len / 2, SEEK_SET) != len / 2)
				_exit(3);
			r = read(fd, buf, sizeof(buf));
			break;
		}
		if (r < 0)
			_exit(4);
		(*reads)++;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The listing holds the table's lock for one PD at a time, also while
 * seq_file counts the lines up to a pread()'s or a seek's offset, so no
 * way of reading it stalls the device: with 100,000 PDs listed, a process
 * allocating and destroying PDs gets as far beside a reader that preads at
 * the end, or seeks to the middle, as beside one that reads the listing
 * in order (at least a quarter as many; a reader that held the lock for
 * the whole walk up to its offset left it a ninth to a fiftieth).
 * IBPD_TEST_SEEK_PDS lists as many PDs instead: the debug kernel's boot
 * lists 10,000 (under KASAN, allocating 100,000 took most of two minutes),
 * where the walks are what it checks, the stock kernels' the stall.
 */
TEST_F_TIMEOUT(debugfs, pds_seek_readers, 600)
{
	const char *e = getenv("IBPD_TEST_SEEK_PDS");
	const int n = e ? atoi(e) : 100000;
	const double window = 1.5;
	long long old_max = dbg_read("max_pd");
	unsigned long ops[PDS_READERS], nreads[PDS_READERS];
	volatile unsigned long *reads;
	double worst[PDS_READERS], t, t0;
	struct pd *pds = calloc(n, sizeof(*pds)), p;
	char path[256], buf[65536];
	off_t len = 0;
	ssize_t r;
	int i, k, fd, status;
	pid_t reader;

	ASSERT_NE(NULL, pds);
	ASSERT_LT(0, old_max);
	reads = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, reads);
	ASSERT_EQ(0, dbg_write("max_pd", self->base_pds + n + 16));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pd_alloc(self->fd, &pds[i]));
	dbg_path(path, sizeof(path), "pds");
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		len += r;
	close(fd);
	ASSERT_LT((off_t)(2 * sizeof(buf)), len);

	/* the readers in turn, twice: a machine whose load drifts meets each */
	memset(ops, 0, sizeof(ops));
	memset(worst, 0, sizeof(worst));
	memset(nreads, 0, sizeof(nreads));
	for (k = 0; k < 2 * PDS_READERS; k++) {
		i = k % PDS_READERS;
		*reads = 0;
		reader = fork();
		ASSERT_LE(0, reader);
		if (!reader)
			pds_reader(i, len, reads);
		while (!*reads)
			usleep(1000);
		for (t0 = now_s(); (t = now_s()) - t0 < window; ops[i]++) {
			ASSERT_EQ(0, pd_alloc(self->fd, &p));
			ASSERT_EQ(0, test_pd_destroy(self->fd, p.handle));
			t = now_s() - t;
			if (t > worst[i])
				worst[i] = t;
		}
		kill(reader, SIGKILL);
		ASSERT_EQ(reader, waitpid(reader, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		nreads[i] += *reads;
	}
	for (i = 0; i < PDS_READERS; i++)
		TH_LOG("%d PDs listed (%lld bytes), a reader doing %s: %lu reads; beside it %lu PD allocations and destroys in 2 x %.1f s, the slowest %.1f ms",
		       n, (long long)len, pds_reader_name[i], nreads[i],
		       ops[i], window, worst[i] * 1e3);
	EXPECT_LE(ops[PDS_SEQUENTIAL], 4 * ops[PDS_PREAD]);
	EXPECT_LE(ops[PDS_SEQUENTIAL], 4 * ops[PDS_LSEEK]);
	for (i = 0; i < n; i++)
		test_cmd_pd_destroy(self->fd, pds[i].handle);
	EXPECT_EQ(0, dbg_write("max_pd", old_max));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	munmap((void *)reads, 4096);
	free(pds);
}

TEST_F(debugfs, max_pd_enomem)
{
	long long old_max = dbg_read("max_pd");
	struct pd pds[3], extra;
	int i;

	ASSERT_LT(0, old_max);
	ASSERT_EQ(0, dbg_write("max_pd", self->base_pds + 3));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, i ? pd_alloc(self->fd, &pds[i]) :
				 pd_alloc_write(self->fd, &pds[i]));
	EXPECT_EQ(ENOMEM, pd_alloc(self->fd, &extra));
	EXPECT_EQ(ENOMEM, pd_alloc_write(self->fd, &extra));
	EXPECT_EQ(self->base_pds + 3, dbg_read("num_pds"));

	/* a freed slot can be used again */
	test_cmd_pd_destroy(self->fd, pds[2].handle);
	ASSERT_EQ(0, pd_alloc(self->fd, &pds[2]));

	ASSERT_EQ(0, dbg_write("max_pd", old_max));
	for (i = 0; i < 3; i++)
		test_cmd_pd_destroy(self->fd, pds[i].handle);
	EXPECT_EQ(-1, dbg_write("max_pd", 0));
}

/* Writes val to the max_pd module parameter: 0 or the errno. */
static int param_write_max_pd(const char *val)
{
	return write_str("/sys/module/ibpd/parameters/max_pd", val);
}

/*
 * One rule for max_pd, the module parameter (the default of new devices,
 * also at load) as the debugfs knob: 1 to IBPD_PDN_MAX, EINVAL otherwise.
 */
TEST(max_pd_param_bounds)
{
	char old[32] = "", max[32];
	FILE *f = fopen("/sys/module/ibpd/parameters/max_pd", "r");
	long long knob_max_pd, knob_pdn_next;

	if (!f)
		SKIP(return, "no ibpd module parameters");
	ASSERT_NE(NULL, fgets(old, sizeof(old), f));
	fclose(f);
	snprintf(max, sizeof(max), "%u", IBPD_PDN_MAX + 1);
	EXPECT_EQ(EINVAL, param_write_max_pd("0"));
	EXPECT_EQ(EINVAL, param_write_max_pd(max));
	EXPECT_EQ(EINVAL, param_write_max_pd("-1"));
	/* past the parser's range: EINVAL all the same, not ERANGE */
	EXPECT_EQ(EINVAL, param_write_max_pd("4294967296"));
	EXPECT_EQ(EINVAL, param_write_max_pd("99999999999999999999999"));
	EXPECT_EQ(EINVAL, dbg_write_str("max_pd", "0"));
	snprintf(max, sizeof(max), "%u", IBPD_PDN_MAX + 1);
	EXPECT_EQ(EINVAL, dbg_write_str("max_pd", max));
	EXPECT_EQ(EINVAL, dbg_write_str("max_pd", "4294967296"));
	EXPECT_EQ(EINVAL, dbg_write_str("max_pd", "18446744073709551616"));
	EXPECT_EQ(EINVAL, dbg_write_str("pdn_next", "18446744073709551616"));
	EXPECT_EQ(EINVAL, dbg_write_str("pdn_next", "0"));
	/*
	 * Longer than simple_attr_write() reads (23 bytes): 2^24 with leading
	 * zeros, not cut to "...01", which would set 1.
	 */
	knob_max_pd = dbg_read("max_pd");
	knob_pdn_next = dbg_read("pdn_next");
	EXPECT_EQ(EINVAL, dbg_write_str("max_pd", "000000000000000000000016777216"));
	EXPECT_EQ(EINVAL, dbg_write_str("pdn_next", "000000000000000000000016777216"));
	EXPECT_EQ(knob_max_pd, dbg_read("max_pd"));
	EXPECT_EQ(knob_pdn_next, dbg_read("pdn_next"));
	dbg_write("max_pd", knob_max_pd);
	snprintf(max, sizeof(max), "%u", IBPD_PDN_MAX);
	EXPECT_EQ(0, param_write_max_pd(max));
	EXPECT_EQ(0, param_write_max_pd("1"));
	EXPECT_EQ(0, param_write_max_pd(old));
}

TEST_F(debugfs, fault_alloc_pd)
{
	struct pd pd;
	int err, err_write;

	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 1));
	err = pd_alloc(self->fd, &pd);
	err_write = pd_alloc_write(self->fd, &pd);
	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 0));
	EXPECT_EQ(ENOMEM, err);
	EXPECT_NE(0, err_write);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_cmd_pd_destroy(self->fd, pd.handle);
}

TEST_F(debugfs, fault_reg_mr)
{
	uint32_t mr, usecnt;
	struct pd pd;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, dbg_write("fail_reg_mr", 1));
	test_err_mr_reg(ENOMEM, self->fd, pd.handle, self->buf, 4096, 0, &mr);
	ASSERT_EQ(0, dbg_write("fail_reg_mr", 0));
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(0, usecnt);
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	test_cmd_pd_destroy(self->fd, pd.handle);
}

TEST_F(debugfs, fault_import)
{
	struct pd pd;
	int err;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, dbg_write("fail_import", 1));
	err = test_pd_import(self->fd, pd.handle, NULL, NULL, NULL, NULL);
	ASSERT_EQ(0, dbg_write("fail_import", 0));
	EXPECT_EQ(ENOMEM, err);
	test_cmd_pd_destroy(self->fd, pd.handle);
}

/*
 * files: the objects of a uverbs file through its other fds (dup), in
 * another process (fork, SCM_RIGHTS), from another file, and at close.
 */
FIXTURE(files) {
	int fd;
	char *buf;
	long long base_pds;
	long long base_mrs;
};

FIXTURE_SETUP(files)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	file_setup(_metadata, self->fd, &self->buf, &self->base_pds,
		   &self->base_mrs);
}

FIXTURE_TEARDOWN(files)
{
	file_teardown(_metadata, self->fd, self->buf);
}

/* The library's device name of a context is libibverbs' (selftests/verbs). */
TEST_F(files, import_through_dup_fd)
{
	int fd2 = dup_ctx(self->fd);
	uint32_t mr, pdn, usecnt;
	struct pd pd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));

	ASSERT_EQ(0, test_pd_import(fd2, pd.handle, NULL, &pdn, NULL, NULL));
	EXPECT_EQ(pd.pdn, pdn);
	/* import creates no kernel object and takes no reference */
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(0, usecnt);

	/* the imported PD works in a verb that takes a PD */
	test_cmd_mr_reg(fd2, pd.handle, self->buf, BUF_LEN,
			TEST_ACCESS_LOCAL_WRITE, &mr);
	test_err_pd_destroy(EBUSY, self->fd, pd.handle);
	test_err_pd_destroy(EBUSY, fd2, pd.handle);
	test_cmd_mr_destroy(fd2, mr);

	test_cmd_pd_destroy(self->fd, pd.handle);
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(files, dealloc_through_imported_pd)
{
	int fd2 = dup_ctx(self->fd);
	struct pd pd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_cmd_pd_import(fd2, pd.handle);
	test_cmd_pd_destroy(fd2, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	/* the allocator's handle now names nothing */
	test_err_pd_destroy(ENOENT, self->fd, pd.handle);
	ASSERT_EQ(0, close(fd2));
}

TEST_F(files, use_after_destroy)
{
	int fd2 = dup_ctx(self->fd);
	uint32_t mr;
	struct pd pd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	test_cmd_pd_import(fd2, pd.handle);
	test_cmd_pd_destroy(self->fd, pd.handle);

	test_err_mr_reg(ENOENT, fd2, pd.handle, self->buf, 4096, 0, &mr);
	test_err_pd_import_id(ENOENT, fd2, pd.handle, &pd.id);
	test_err_pd_destroy(ENOENT, fd2, pd.handle);
	test_err_pd_import(ENOENT, fd2, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	ASSERT_EQ(0, close(fd2));
}

TEST_F(files, import_from_another_file)
{
	int other = test_open(test_dev());
	struct pd pd, opd;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));

	/* handles are per file: the other file has no such object */
	test_err_pd_import(ENOENT, other, pd.handle);

	/* once it has one, the same number names a different PD */
	ASSERT_EQ(0, pd_alloc(other, &opd));
	ASSERT_EQ(pd.handle, opd.handle);
	test_err_pd_import_pdn(ESTALE, other, pd.handle, pd.pdn);

	test_cmd_pd_destroy(other, opd.handle);
	test_cmd_pd_destroy(self->fd, pd.handle);
	ASSERT_EQ(0, close(other));
}

TEST_F(files, close_of_one_fd_keeps_objects)
{
	int fd2 = dup_ctx(self->fd);
	uint32_t mr;
	struct pd pd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	/* the MR is left behind, on purpose */
	test_cmd_mr_reg(self->fd, pd.handle, self->buf, 4096, 0, &mr);

	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs + 1, dbg_read("num_mrs"));

	EXPECT_EQ(0, test_pd_import_pdn(fd2, pd.handle, pd.pdn));

	/* the last fd: everything left in the file is destroyed */
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
}

TEST_F(files, exit_without_cleanup_frees_everything)
{
	pid_t pid = fork();
	int status, i;

	ASSERT_LE(0, pid);
	if (!pid) {
		int c = test_open(test_dev());
		uint32_t h, mr;

		if (c < 0)
			_exit(1);
		for (i = 0; i < 8; i++)
			if (test_pd_alloc(c, &h, NULL, NULL) ||
			    test_mr_reg(c, h, self->buf, 4096, 0, &mr, NULL))
				_exit(2);
		_exit(dbg_read("num_pds") == self->base_pds + 8 ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
}

TEST_F(files, fork_child_imports_inherited_file)
{
	uint32_t usecnt;
	int status, sync[2];
	struct pd pd;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int c2 = dup_ctx(self->fd);
		uint32_t mr;

		if (c2 < 0)
			_exit(1);
		if (test_pd_import_pdn(c2, pd.handle, pd.pdn))
			_exit(2);
		if (test_mr_reg(c2, pd.handle, self->buf, 4096, 0, &mr, NULL))
			_exit(3);
		/* keep the MR: the parent sees it through the shared file */
		if (write(sync[1], "x", 1) != 1)
			_exit(4);
		_exit(close(c2) ? 5 : 0);
	}
	close(sync[1]);
	ASSERT_EQ(1, read(sync[0], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the child's MR lives on in the file the parent still holds */
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(1, usecnt);
	test_err_pd_destroy(EBUSY, self->fd, pd.handle);
	close(sync[0]);
}

/* Two processes, the file passed over a unix socket with SCM_RIGHTS. */
TEST_F(files, share_over_scm_rights)
{
	struct { uint32_t handle, pdn; } msg;
	uint32_t usecnt;
	int sv[2], status;
	struct pd pd;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint32_t mr;
		void *buf;
		int fd;

		/* a fresh process image would not have the parent's fd */
		close(self->fd);
		close(sv[0]);
		fd = ibpd_recv_fd(sv[1], &msg, sizeof(msg));
		if (fd < 0)
			_exit(1);
		if (test_query_context(fd))
			_exit(2);
		if (test_pd_import_pdn(fd, msg.handle, msg.pdn))
			_exit(3);
		buf = aligned_alloc(4096, 4096);
		if (test_mr_reg(fd, msg.handle, buf, 4096,
				TEST_ACCESS_LOCAL_WRITE, &mr, NULL))
			_exit(4);
		if (write(sv[1], "r", 1) != 1 || read(sv[1], &c, 1) != 1)
			_exit(5);
		if (test_mr_destroy(fd, mr))
			_exit(6);
		if (close(fd))
			_exit(7);
		_exit(write(sv[1], "d", 1) == 1 ? 0 : 8);
	}
	close(sv[1]);
	msg.handle = pd.handle;
	msg.pdn = pd.pdn;
	ASSERT_EQ(0, ibpd_send_fd(sv[0], self->fd, &msg, sizeof(msg)));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ('r', c);

	/* the child's MR, registered through its imported PD, pins ours */
	test_err_pd_destroy(EBUSY, self->fd, pd.handle);
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(1, usecnt);
	ASSERT_EQ(1, write(sv[0], "g", 1));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ('d', c);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* the child is done: our PD is intact and now free to go */
	ASSERT_EQ(0, pd_usecnt(self->fd, pd.handle, &usecnt));
	EXPECT_EQ(0, usecnt);
	test_cmd_pd_destroy(self->fd, pd.handle);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	close(sv[0]);
}

/*
 * aborted_alloc: allocations that fail, some after userspace was told the
 * new PD's identity, and what becomes of that identity.
 */
FIXTURE(aborted_alloc) {
	int fd;
	long long base_pds;
};

FIXTURE_SETUP(aborted_alloc)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	file_setup(_metadata, self->fd, NULL, &self->base_pds, NULL);
}

FIXTURE_TEARDOWN(aborted_alloc)
{
	file_teardown(_metadata, self->fd, NULL);
}

/*
 * Allocations that fail after the driver wrote its response, the pdn and
 * identity in it, so that userspace has seen the identity of a PD that
 * never was (the core aborts it):
 */
enum abort_path {
	/* the ioctl path: the handle, pdn and identity are written, then
	 * setting the VALID_OUTPUT flag of RESP_ID, the last attribute,
	 * faults (the attributes' tail lies on a read-only page)
	 */
	ABORT_IOCTL,
	/* the write path (INVOKE_WRITE): the driver response is written,
	 * then the core's copy of the handle faults (a read-only page)
	 */
	ABORT_WRITE,
	/* the same through write(2), where the driver response follows the
	 * core's in one buffer: the core's part on a read-only page, the
	 * driver's on the next, writable one
	 */
	ABORT_WRITE_SYSCALL,
	/* the write path, a driver response buffer longer than the response
	 * whose tail lies on a PROT_NONE page: the driver writes its response,
	 * then its zero-filling of the rest faults and alloc_pd fails
	 */
	ABORT_DRIVER_TAIL,
	ABORT_PATHS
};

#define TEST_PAGE 4096

/*
 * The buffers of those allocations, two pages for each path, made once
 * (so that threads can fail allocations without changing the address
 * space, which under TCG costs more than the calls).
 */
struct abort_pages {
	char *p[ABORT_PATHS];
	struct raw_cmd *cmd;			/* ABORT_IOCTL's command */
	struct ibpd_alloc_pd_resp out;		/* its pdn and identity */
};

/*
 * ABORT_IOCTL: the command's three attributes end on the read-only
 * p + TEST_PAGE (built before that page is made read-only).
 */
static void abort_ioctl_cmd(struct abort_pages *ap, char *p)
{
	struct raw_cmd *c;

	c = (void *)(p + TEST_PAGE - sizeof(c->hdr) - 2 * sizeof(c->attrs[0]));
	raw_pd_alloc_cmd(c, &(union raw_pd_alloc_args){
		.handle = RAW_NEW, .resp_pdn = &ap->out.pdn,
		.resp_id = (uint64_t *)&ap->out.id });
	ap->cmd = c;
}

/* 0, or the errno of mmap() or mprotect(). */
static int abort_pages_init(struct abort_pages *ap)
{
	int i, err = 0;

	memset(ap, 0, sizeof(*ap));
	for (i = 0; i < ABORT_PATHS && !err; i++) {
		ap->p[i] = mmap(NULL, 2 * TEST_PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ap->p[i] == MAP_FAILED) {
			ap->p[i] = NULL;
			err = errno;
		}
	}
	if (err)
		return err;
	abort_ioctl_cmd(ap, ap->p[ABORT_IOCTL]);
	if (mprotect(ap->p[ABORT_IOCTL] + TEST_PAGE, TEST_PAGE, PROT_READ) ||
	    mprotect(ap->p[ABORT_WRITE], TEST_PAGE, PROT_READ) ||
	    mprotect(ap->p[ABORT_WRITE_SYSCALL], TEST_PAGE, PROT_READ) ||
	    mprotect(ap->p[ABORT_DRIVER_TAIL] + TEST_PAGE, TEST_PAGE,
		     PROT_NONE))
		return errno;
	return 0;
}

static void abort_pages_fini(struct abort_pages *ap)
{
	int i;

	for (i = 0; i < ABORT_PATHS; i++)
		if (ap->p[i])
			munmap(ap->p[i], 2 * TEST_PAGE);
}

/* ABORT_IOCTL */
static int alloc_ioctl_tail_ro(int fd, struct abort_pages *ap, struct pd *seen)
{
	struct raw_cmd *c = ap->cmd;
	int err;

	raw_find(c, IBPD_ATTR_PD_ALLOC_HANDLE)->data = 0;
	raw_find(c, IBPD_ATTR_PD_ALLOC_RESP_PDN)->flags =
		UVERBS_ATTR_F_MANDATORY;
	memset(&ap->out, 0, sizeof(ap->out));
	err = raw_exec(fd, c);
	seen->handle = raw_find(c, IBPD_ATTR_PD_ALLOC_HANDLE)->data;
	seen->pdn = ap->out.pdn;
	seen->id = ap->out.id;
	return err;
}

/* ABORT_WRITE: the core's response on the read-only first page. */
static int alloc_write_core_ro(int fd, char *p, struct pd *seen)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ibpd_alloc_pd_resp drv = {};
	int err;

	err = raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req), p,
			sizeof(struct ib_uverbs_alloc_pd_resp), NULL, 0, &drv,
			sizeof(drv));
	seen->pdn = drv.pdn;
	seen->id = drv.id;
	return err;
}

/*
 * ABORT_WRITE_SYSCALL: one response buffer across p + TEST_PAGE, the
 * core's part on the read-only first page, the driver's on the second.
 */
static int alloc_write_syscall(int fd, char *p, struct pd *seen)
{
	const size_t core = sizeof(struct ib_uverbs_alloc_pd_resp);
	struct ibpd_alloc_pd_resp *drv = (void *)(p + TEST_PAGE);
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd cmd;
	} w = {
		.hdr.command = IB_USER_VERBS_CMD_ALLOC_PD,
		.hdr.in_words = sizeof(w) / 4,
		.hdr.out_words = (core + sizeof(*drv)) / 4,
		.cmd.response = (uintptr_t)(p + TEST_PAGE - core),
	};
	int err;

	memset(drv, 0, sizeof(*drv));
	err = write(fd, &w, sizeof(w)) < 0 ? errno : 0;
	seen->pdn = drv->pdn;
	seen->id = drv->id;
	return err;
}

/*
 * ABORT_DRIVER_TAIL: a driver response buffer 8 bytes longer than the
 * response, its tail on the PROT_NONE second page.
 */
static int alloc_write_driver_tail(int fd, char *p, struct pd *seen)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibpd_alloc_pd_resp *drv;
	int err;

	drv = (void *)(p + TEST_PAGE - sizeof(*drv));
	memset(drv, 0, sizeof(*drv));
	err = raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req),
			&resp, sizeof(resp), NULL, 0, drv, sizeof(*drv) + 8);
	seen->pdn = drv->pdn;
	seen->id = drv->id;
	return err;
}

/*
 * An allocation by PATH that fails (EFAULT, returned) after the driver
 * wrote its response: what userspace was told in *seen, 0 where nothing.
 */
static int pd_alloc_aborted(int fd, struct abort_pages *ap,
			    enum abort_path path, struct pd *seen)
{
	memset(seen, 0, sizeof(*seen));
	switch (path) {
	case ABORT_IOCTL:
		return alloc_ioctl_tail_ro(fd, ap, seen);
	case ABORT_WRITE:
		return alloc_write_core_ro(fd, ap->p[path], seen);
	case ABORT_WRITE_SYSCALL:
		return alloc_write_syscall(fd, ap->p[path], seen);
	case ABORT_DRIVER_TAIL:
		return alloc_write_driver_tail(fd, ap->p[path], seen);
	default:
		return EINVAL;
	}
}

/*
 * The identity a failed allocation reported is never another PD's: not
 * the next PD's, which on the ioctl path gets the reported handle too, so
 * that a checked import of what the failed call reported, handle and
 * identity, would name it.
 */
static void aborted_alloc_identity(struct __test_metadata *_metadata,
				   FIXTURE_DATA(aborted_alloc) *self,
				   enum abort_path path)
{
	struct abort_pages ap;
	struct pd seen, b;
	int i;

	ASSERT_EQ(0, abort_pages_init(&ap));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(EFAULT, pd_alloc_aborted(self->fd, &ap, path, &seen));
		ASSERT_NE(0, seen.pdn);
		ASSERT_NE(0, seen.id);
		EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
		ASSERT_EQ(0, pd_alloc(self->fd, &b));
		if (path == ABORT_IOCTL)
			EXPECT_EQ(seen.handle, b.handle);
		EXPECT_LT(seen.id, b.id);
		test_err_pd_import_id(ESTALE, self->fd, b.handle, &seen.id);
		test_cmd_pd_destroy(self->fd, b.handle);
	}
	abort_pages_fini(&ap);
}

TEST_F(aborted_alloc, ioctl_identity_not_reused)
{
	aborted_alloc_identity(_metadata, self, ABORT_IOCTL);
}

TEST_F(aborted_alloc, write_identity_not_reused)
{
	aborted_alloc_identity(_metadata, self, ABORT_WRITE);
}

TEST_F(aborted_alloc, write_syscall_identity_not_reused)
{
	aborted_alloc_identity(_metadata, self, ABORT_WRITE_SYSCALL);
}

TEST_F(aborted_alloc, driver_response_identity_not_reused)
{
	aborted_alloc_identity(_metadata, self, ABORT_DRIVER_TAIL);
}

/*
 * The same from 4 threads at once on one file: each in turn fails an
 * allocation on every path of enum abort_path, keeping the identity it
 * was told, and allocates and destroys a PD. No identity may come twice.
 */
#define ABORT_THREADS 4
#define ABORT_ROUNDS 100

struct abort_thread {
	int fd;
	int n, bad;
	struct abort_pages ap;
	uint64_t ids[ABORT_ROUNDS * (ABORT_PATHS + 1)];
};

static void *abort_loop(void *arg)
{
	struct abort_thread *t = arg;
	enum abort_path path;
	struct pd pd;
	int i;

	for (i = 0; i < ABORT_ROUNDS; i++) {
		for (path = 0; path < ABORT_PATHS; path++) {
			if (pd_alloc_aborted(t->fd, &t->ap, path, &pd) != EFAULT ||
			    !pd.id)
				t->bad++;
			else
				t->ids[t->n++] = pd.id;
		}
		if (pd_alloc(t->fd, &pd) || test_pd_destroy(t->fd, pd.handle))
			t->bad++;
		else
			t->ids[t->n++] = pd.id;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F_TIMEOUT(aborted_alloc, identity_not_reused_threads, 120)
{
	static struct abort_thread t[ABORT_THREADS];
	pthread_t th[ABORT_THREADS];
	uint64_t *all;
	int i, n = 0, bad = 0, dups = 0;

	all = calloc(ABORT_THREADS, sizeof(t[0].ids));
	ASSERT_NE(NULL, all);
	for (i = 0; i < ABORT_THREADS; i++) {
		t[i].fd = self->fd;
		ASSERT_EQ(0, abort_pages_init(&t[i].ap));
	}
	for (i = 0; i < ABORT_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, abort_loop, &t[i]));
	for (i = 0; i < ABORT_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		memcpy(all + n, t[i].ids, t[i].n * sizeof(*all));
		n += t[i].n;
		bad += t[i].bad;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	for (i = 1; i < n; i++)
		dups += all[i] == all[i - 1];
	TH_LOG("%d threads: %d identities, %d of them twice; %d unexpected answers",
	       ABORT_THREADS, n, dups, bad);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, dups);
	EXPECT_EQ(ABORT_THREADS * ABORT_ROUNDS * (ABORT_PATHS + 1), n);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	for (i = 0; i < ABORT_THREADS; i++)
		abort_pages_fini(&t[i].ap);
	free(all);
}

/* GET_CONTEXT has no driver data either way. */
TEST(alloc_ucontext_udata)
{
	uint8_t uin[8] = { 0, 0, 0, 1 }, uout[16];
	struct raw_cmd c;
	uint32_t vecs;
	int fd, i;

	fd = open_uverbs(test_dev());
	if (fd < 0)
		SKIP(return, "no uverbs device for %s", test_dev());
	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	raw_attr(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 4,
		 (uintptr_t)&vecs);
	raw_in(&c, UVERBS_ATTR_UHW_IN, uin, sizeof(uin));
	EXPECT_EQ(EOPNOTSUPP, raw_exec(fd, &c));
	raw_find(&c, UVERBS_ATTR_UHW_IN)->data = 0;	/* inline: all zero */
	memset(uout, 0xff, sizeof(uout));
	raw_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(uout), (uintptr_t)uout);
	c.hdr.length = 0;
	ASSERT_EQ(0, raw_exec(fd, &c));
	for (i = 0; i < sizeof(uout); i++)
		EXPECT_EQ(0, uout[i]);
	close(fd);
}

/*
 * Opening a device by name is the library's (open_unknown_device moved to
 * selftests/verbs); what the kernel says of a file that is not uverbs:
 */
TEST(import_device_bad_fd)
{
	int fd = open("/dev/null", O_RDWR);

	ASSERT_LE(0, fd);
	test_err_query_context(ENOTTY, fd);
	EXPECT_EQ(0, close(fd));
	test_err_query_context(EBADF, -1);
}

TEST(import_device_without_context)
{
	int fd = open_uverbs(test_dev());

	ASSERT_LE(0, fd);
	/* the header is right: the EINVAL is QUERY_CONTEXT's own */
	ASSERT_TRUE(test_driver_id_ok(fd));
	test_err_query_context(EINVAL, fd);
	EXPECT_EQ(0, close(fd));
}

/*
 * Deletes device NAME with a file open (a second context, a PD imported
 * there, an MR) by running DEL: no hang, the file is disassociated, later
 * calls fail with EIO, destroy and close still work.
 */
static void delete_with_open_files(struct __test_metadata *_metadata,
				   const char *name, const char *del)
{
	void *buf = aligned_alloc(4096, 4096);
	uint32_t mr, mr2, h;
	int fd, fd2;
	struct pd pd;

	fd = test_open(name);
	ASSERT_LE(0, fd);
	fd2 = dup_ctx(fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, pd_alloc(fd, &pd));
	test_cmd_mr_reg(fd, pd.handle, buf, 4096, 0, &mr);
	test_cmd_pd_import(fd2, pd.handle);

	/* must not hang: the files are disassociated */
	ASSERT_EQ(0, sh("%s", del));

	test_err_pd_alloc(EIO, fd, &h);
	EXPECT_EQ(EIO, test_pd_alloc_write(fd, &h, NULL));
	test_err_pd_import(EIO, fd2, pd.handle);
	test_err_pd_import_id(EIO, fd2, pd.handle, &pd.id);
	test_err_mr_reg(EIO, fd, pd.handle, buf, 4096, 0, &mr2);

	/* destroy still answers, so that userspace can clean up */
	EXPECT_EQ(0, test_mr_destroy(fd, mr));
	EXPECT_EQ(0, test_pd_destroy(fd, pd.handle));
	test_err_pd_destroy(ENOENT, fd2, pd.handle);
	EXPECT_EQ(0, close(fd2));
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(-ENODEV, test_open(name));
	free(buf);
}

TEST(device_delete_with_open_files)
{
	if (sh("rdma link add ibpdt0 type ibpd netdev lo"))
		SKIP(return, "rdma link add failed");
	ASSERT_NE(0, sh("rdma link add ibpdt0 type ibpd netdev lo 2>/dev/null"));
	delete_with_open_files(_metadata, "ibpdt0", "rdma link delete ibpdt0");
}

/*
 * As rxe and siw: the unregistration of its netdev takes the device with
 * it. "ip link del" returns once the device has let the netdev go, that
 * is, once it is unregistered and its files disassociated.
 */
TEST(netdev_delete_with_open_files)
{
	if (sh("ip link add ibpdtn0 type dummy"))
		SKIP(return, "no dummy netdev");
	if (sh("rdma link add ibpdt1 type ibpd netdev ibpdtn0")) {
		sh("ip link del ibpdtn0");
		SKIP(return, "rdma link add failed");
	}
	delete_with_open_files(_metadata, "ibpdt1", "ip link del ibpdtn0");
	EXPECT_NE(0, sh("rdma dev show ibpdt1 2>/dev/null"));
}

/* ABI checks with raw ioctls: the kernel's answers, not the library's. */
FIXTURE(abi) {
	struct pd pd;
	int fd;
	uint32_t pdn, usecnt;
};

FIXTURE_SETUP(abi)
{
	self->fd = test_open(test_dev());
	if (self->fd == -ENODEV)
		SETUP_SKIP("no RDMA device %s", test_dev());
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pd_alloc(self->fd, &self->pd));
}

FIXTURE_TEARDOWN(abi)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

/* The import that the ABI tests change: handle, RESP_PDN, RESP_USECNT. */
static void import_cmd(struct raw_cmd *c, uint32_t handle, uint32_t *pdn,
		       uint32_t *usecnt)
{
	raw_pd_import_cmd(c, &(union raw_pd_import_args){
		.handle = &handle, .resp_pdn = pdn, .resp_usecnt = usecnt });
}

TEST_F(abi, import_ok)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(self->pd.pdn, self->pdn);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_PDN, 4, self->pdn);
	c.hdr.length = 0;
	EXPECT_EQ(0, raw_exec(self->fd, &c));
}

/* The use count is optional: import without it, as libibpd does. */
TEST_F(abi, import_without_usecnt)
{
	struct raw_cmd c;

	self->usecnt = 0xdead;
	import_cmd(&c, self->pd.handle, &self->pdn, NULL);
	self->pdn = 0;
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(self->pd.pdn, self->pdn);
	EXPECT_EQ(0xdead, self->usecnt);
}

TEST_F(abi, import_by_id)
{
	uint64_t id = 0, want;
	struct ib_uverbs_attr *a;
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_RESP_ID, 8, (uintptr_t)&id);
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(self->pd.id, id);
	want = id;
	a = raw_attr(&c, IBPD_ATTR_PD_IMPORT_ID, 8, want);
	c.hdr.length = 0;
	EXPECT_EQ(0, raw_exec(self->fd, &c));
	a->data = want + 1;
	EXPECT_EQ(ESTALE, raw_exec(self->fd, &c));
	a->data = 0;
	EXPECT_EQ(ESTALE, raw_exec(self->fd, &c));
	a->len = 4;	/* the identity is a __u64 */
	a->data = want;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	raw_find(&c, IBPD_ATTR_PD_IMPORT_RESP_ID)->len = 4;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, alloc_returns_id)
{
	uint64_t id = 0;
	uint32_t pdn = 0;
	struct raw_cmd c;

	raw_pd_alloc_cmd(&c, &(union raw_pd_alloc_args){
		.handle = RAW_NEW, .resp_pdn = &pdn, .resp_id = &id });
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_LT(self->pd.id, id);
}

TEST_F(abi, unknown_method)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	c.hdr.method_id = IBPD_METHOD_PD_IMPORT + 16;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	c.hdr.object_id = 0x3ff;
	c.hdr.method_id = IBPD_METHOD_PD_IMPORT;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
}

TEST_F(abi, short_and_long_in_attr)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_PDN, 2, self->pdn);
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	raw_find(&c, IBPD_ATTR_PD_IMPORT_PDN)->len = 8;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, short_out_attr)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	raw_find(&c, IBPD_ATTR_PD_IMPORT_RESP_PDN)->len = 2;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

/*
 * Every attribute of each method's table (lib/ibpd_uverbs.h) given, v:
 * each method called with them all, then without each, then with each
 * input or output a byte short and a byte long.
 */
static void table_args(struct __test_metadata *_metadata,
		       FIXTURE_DATA(abi) *self, uint16_t meth,
		       const void **v)
{
	static uint32_t pdn, usecnt;
	static uint64_t id;
	union raw_pd_alloc_args alloc = {
		.handle = RAW_NEW, .resp_pdn = &pdn, .resp_id = &id,
	};
	union raw_pd_import_args import = {
		.handle = &self->pd.handle, .resp_pdn = &pdn, .resp_id = &id,
		.id = &self->pd.id, .resp_usecnt = &usecnt,
		.pdn = &self->pd.pdn,
	};

	switch (meth) {
	case IBPD_METHOD_PD_ALLOC:
		memcpy(v, alloc.v, sizeof(alloc.v));
		break;
	case IBPD_METHOD_PD_IMPORT:
		memcpy(v, import.v, sizeof(import.v));
		break;
	default:
		ASSERT_TRUE(0) TH_LOG("method 0x%x: no arguments here", meth);
	}
}

/*
 * The kernel's spec of each method (kernel/std_types.c) is its table's:
 * the method succeeds with all its attributes and without an optional
 * one, fails with EINVAL without a mandatory one (UA_MANDATORY).
 */
TEST_F(abi, missing_mandatory_attr)
{
	const void *v[RAW_ATTRS], *keep;
	const struct raw_method *m;
	unsigned int i, j;
	struct raw_cmd c;

	for (i = 0; i < RAW_NMETHODS; i++) {
		m = raw_methods[i];
		memset(v, 0, sizeof(v));
		table_args(_metadata, self, m->meth, v);
		raw_method_cmd(&c, m, v);
		ASSERT_EQ(m->nattrs, c.hdr.num_attrs)
			TH_LOG("%s: not every attribute given", m->name);
		EXPECT_EQ(0, raw_exec(self->fd, &c)) TH_LOG("%s", m->name);
		for (j = 0; j < m->nattrs; j++) {
			keep = v[j];
			v[j] = NULL;
			raw_method_cmd(&c, m, v);
			EXPECT_EQ(m->attrs[j].mandatory ? EINVAL : 0,
				  raw_exec(self->fd, &c))
				TH_LOG("%s without %s (%s)", m->name,
				       m->attrs[j].name, m->attrs[j].mandatory ?
				       "mandatory" : "optional");
			v[j] = keep;
		}
	}
}

/* The length of each input and output is its table's, no more or less. */
TEST_F(abi, attr_lengths)
{
	const void *v[RAW_ATTRS];
	const struct raw_method *m;
	const struct raw_attr_spec *s;
	unsigned int i, j;
	struct raw_cmd c;
	int d;

	for (i = 0; i < RAW_NMETHODS; i++) {
		m = raw_methods[i];
		memset(v, 0, sizeof(v));
		table_args(_metadata, self, m->meth, v);
		for (j = 0; j < m->nattrs; j++) {
			s = &m->attrs[j];
			if (s->dir != RAW_IN && s->dir != RAW_OUT)
				continue;
			for (d = -1; d <= 1; d += 2) {
				raw_method_cmd(&c, m, v);
				raw_find(&c, s->id)->len = s->len + d;
				EXPECT_EQ(EINVAL, raw_exec(self->fd, &c))
					TH_LOG("%s: %s of %u bytes", m->name,
					       s->name, s->len + d);
			}
		}
	}
}

TEST_F(abi, unknown_attr)
{
	struct raw_cmd c;
	struct ib_uverbs_attr *a;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	a = raw_attr(&c, IBPD_ATTR_PD_IMPORT_RESP_USECNT + 8, 4, 0);
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	a->flags = 0;	/* not mandatory: ignored */
	EXPECT_EQ(0, raw_exec(self->fd, &c));
}

TEST_F(abi, bad_header)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	c.hdr.driver_id = 99;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	c.hdr.driver_id = 0;
	c.hdr.reserved1 = 1;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	c.hdr.reserved1 = 0;
	c.hdr.reserved2 = 1;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	c.hdr.reserved2 = 0;
	EXPECT_EQ(0, raw_exec(self->fd, &c));
	c.hdr.length = sizeof(c.hdr) + sizeof(c.attrs[0]);
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, bad_attr_reserved)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, &self->pdn, &self->usecnt);
	raw_find(&c, IBPD_ATTR_PD_IMPORT_RESP_PDN)->attr_data.reserved = 1;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, out_pointer_fault)
{
	struct raw_cmd c;

	import_cmd(&c, self->pd.handle, (uint32_t *)8, &self->usecnt);
	EXPECT_EQ(EFAULT, raw_exec(self->fd, &c));
}

TEST_F(abi, alloc_needs_new_handle_and_pdn)
{
	struct raw_cmd c;
	uint32_t pdn = 0;

	raw_pd_alloc_cmd(&c, &(union raw_pd_alloc_args){ .handle = RAW_NEW });
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	raw_pd_alloc_cmd(&c, &(union raw_pd_alloc_args){
		.handle = RAW_NEW, .resp_pdn = &pdn });
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_NE(0, pdn);
	EXPECT_NE(self->pd.handle,
		  raw_find(&c, IBPD_ATTR_PD_ALLOC_HANDLE)->data);
}

TEST_F(abi, destroy_wrong_type)
{
	struct raw_cmd c;
	char *buf = aligned_alloc(4096, 4096);
	uint32_t mr;

	test_cmd_mr_reg(self->fd, self->pd.handle, buf, 4096, 0, &mr);
	raw_pd_destroy_cmd(&c, mr);
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	test_cmd_mr_destroy(self->fd, mr);
	free(buf);
}

TEST_HARNESS_MAIN

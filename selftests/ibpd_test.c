// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd kselftests: PD alloc/dealloc/import/unimport semantics (the contract
 * of ibv_alloc_pd(3) and ibv_import_pd(3)), in one process and across
 * processes sharing a uverbs file, and the uverbs ABI checks of the ibpd
 * methods. Runs in the test VM against IBPD_DEV (default ibpd0).
 */

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_libtest.h"

#define BUF_LEN (16 * 4096)

FIXTURE(pd) {
	struct ibpd_context *ctx;
	char *buf;
	long long base_pds;
	long long base_mrs;
};

FIXTURE_SETUP(pd)
{
	self->ctx = ibpd_open_device(test_dev());
	if (!self->ctx && errno == ENODEV)
		SKIP(return, "no RDMA device %s", test_dev());
	ASSERT_NE(NULL, self->ctx);
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, BUF_LEN);
	self->base_pds = dbg_read("num_pds");
	self->base_mrs = dbg_read("num_mrs");
	ASSERT_LE(0, self->base_pds);
}

FIXTURE_TEARDOWN(pd)
{
	if (self->ctx)
		EXPECT_EQ(0, ibpd_close_device(self->ctx));
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF_LEN);
}

TEST_F(pd, alloc_dealloc)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);

	ASSERT_NE(NULL, pd);
	EXPECT_NE(0, ibpd_pd_pdn(pd));
	EXPECT_EQ(self->ctx, ibpd_pd_context(pd));
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds + 1, rdma_res_pds());
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
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

TEST_F(pd, debugfs_lists_pds)
{
	struct ibpd_pd *a = ibpd_alloc_pd(self->ctx);
	struct ibpd_pd *b = ibpd_alloc_pd_write(self->ctx);
	struct ibpd_mr *mr;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	mr = ibpd_reg_mr(b, self->buf, BUF_LEN, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(1, dbg_pds_has(ibpd_pd_pdn(a), 0));
	EXPECT_EQ(1, dbg_pds_has(ibpd_pd_pdn(b), 1));
	/* a header line and one per live PD */
	EXPECT_EQ(self->base_pds + 3, dbg_count_lines("pds"));
	EXPECT_EQ(0, ibpd_dereg_mr(mr));
	EXPECT_EQ(1, dbg_pds_has(ibpd_pd_pdn(b), 0));
	EXPECT_EQ(0, ibpd_dealloc_pd(a));
	EXPECT_EQ(0, dbg_pds_has(ibpd_pd_pdn(a), 0));
	EXPECT_EQ(0, ibpd_dealloc_pd(b));
	EXPECT_EQ(self->base_pds + 1, dbg_count_lines("pds"));
}

/* One call lists IBPD_LIST_PDS_MAX handles at most, whatever max says. */
TEST_F(pd, list_pds_limit)
{
	const size_t n = IBPD_LIST_PDS_MAX + 1;
	struct ibpd_context *c = ibpd_open_device(test_dev());
	struct ibpd_pd **pds = calloc(n, sizeof(*pds));
	uint32_t *handles = calloc(n + 1, sizeof(*handles));
	size_t i, total;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, pds);
	ASSERT_NE(NULL, handles);
	for (i = 0; i < n; i++) {
		pds[i] = ibpd_alloc_pd(c);
		ASSERT_NE(NULL, pds[i]);
	}
	ASSERT_EQ(0, ibpd_list_pds(c, handles, n + 1, &total));
	EXPECT_EQ(IBPD_LIST_PDS_MAX, total);
	ASSERT_EQ(0, ibpd_list_pds(c, handles, 10, &total));
	EXPECT_EQ(10, total);
	/* the last close destroys them; the library objects are ours */
	EXPECT_EQ(0, ibpd_close_device(c));
	for (i = 0; i < n; i++)
		ibpd_unimport_pd(pds[i]);
	free(pds);
	free(handles);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(pd, alloc_write_path)
{
	struct ibpd_pd *pd = ibpd_alloc_pd_write(self->ctx);
	uint32_t pdn, usecnt;

	ASSERT_NE(NULL, pd);
	/* The driver's udata response carries the pdn on the write path. */
	EXPECT_NE(0, ibpd_pd_pdn(pd));
	ASSERT_EQ(0, ibpd_query_pd(pd, &pdn, &usecnt));
	EXPECT_EQ(ibpd_pd_pdn(pd), pdn);
	EXPECT_EQ(0, usecnt);
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(pd, pdn_unique_and_cyclic)
{
	struct ibpd_pd *a, *b, *c;

	a = ibpd_alloc_pd(self->ctx);
	b = ibpd_alloc_pd_write(self->ctx);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_NE(ibpd_pd_pdn(a), ibpd_pd_pdn(b));
	EXPECT_NE(ibpd_pd_handle(a), ibpd_pd_handle(b));
	ASSERT_EQ(0, ibpd_dealloc_pd(b));
	/* the handle is reused (lowest free), the pdn is not */
	c = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, c);
	EXPECT_NE(ibpd_pd_pdn(a), ibpd_pd_pdn(c));
	ASSERT_EQ(0, ibpd_dealloc_pd(a));
	ASSERT_EQ(0, ibpd_dealloc_pd(c));
}

TEST_F(pd, stale_handle_estale)
{
	struct ibpd_pd *a, *b, *imp;
	uint32_t h, old_pdn;

	a = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, a);
	h = ibpd_pd_handle(a);
	old_pdn = ibpd_pd_pdn(a);
	ASSERT_EQ(0, ibpd_dealloc_pd(a));

	b = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(h, ibpd_pd_handle(b));	/* ABA: same handle, new PD */
	ASSERT_NE(old_pdn, ibpd_pd_pdn(b));

	/* unchecked import silently names the new PD ... */
	imp = ibpd_import_pd(self->ctx, h);
	ASSERT_NE(NULL, imp);
	EXPECT_EQ(ibpd_pd_pdn(b), ibpd_pd_pdn(imp));
	ibpd_unimport_pd(imp);

	/* ... the checked one refuses it */
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd_checked(self->ctx, h, old_pdn));
	EXPECT_EQ(ESTALE, errno);
	imp = ibpd_import_pd_checked(self->ctx, h, ibpd_pd_pdn(b));
	ASSERT_NE(NULL, imp);
	ibpd_unimport_pd(imp);
	ASSERT_EQ(0, ibpd_dealloc_pd(b));
}

/*
 * pdns wrap after 2^24 allocations (here at once, through the pdn_next
 * knob), and a reused handle can then name a new PD with the old pdn: the
 * pdn check cannot tell, the identity can.
 */
TEST_F(pd, stale_handle_after_pdn_wrap)
{
	struct ibpd_pd *a, *b, *imp;
	uint32_t h, old_pdn;
	uint64_t old_id;

	a = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, a);
	h = ibpd_pd_handle(a);
	old_pdn = ibpd_pd_pdn(a);
	old_id = ibpd_pd_id(a);
	ASSERT_NE(0, old_id);
	ASSERT_EQ(0, ibpd_dealloc_pd(a));

	ASSERT_EQ(0, dbg_write("pdn_next", old_pdn));
	b = ibpd_alloc_pd_write(self->ctx);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(h, ibpd_pd_handle(b));
	ASSERT_EQ(old_pdn, ibpd_pd_pdn(b));	/* same handle, same pdn */
	EXPECT_LT(old_id, ibpd_pd_id(b));

	imp = ibpd_import_pd_checked(self->ctx, h, old_pdn);
	EXPECT_NE(NULL, imp);		/* the pdn check is fooled ... */
	if (imp)
		ibpd_unimport_pd(imp);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd_id(self->ctx, h, old_id));
	EXPECT_EQ(ESTALE, errno);	/* ... the identity is not */
	imp = ibpd_import_pd_id(self->ctx, h, ibpd_pd_id(b));
	ASSERT_NE(NULL, imp);
	EXPECT_EQ(ibpd_pd_id(b), ibpd_pd_id(imp));
	ibpd_unimport_pd(imp);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd_id(self->ctx, h, 0));
	EXPECT_EQ(ESTALE, errno);	/* no PD has the identity 0 */
	ASSERT_EQ(0, ibpd_dealloc_pd(b));
}

/* A failed allocation, here a response the kernel cannot write, uses up
 * no identity: the next PD's follows the last one's.
 */
TEST_F(pd, failed_alloc_keeps_identity)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibpd_pd *a, *b;
	int i;

	a = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, a);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(EFAULT,
			  raw_write(ibpd_context_cmd_fd(self->ctx),
				    IB_USER_VERBS_CMD_ALLOC_PD, &req,
				    sizeof(req), &resp, sizeof(resp), NULL, 0,
				    (void *)8, 16));
	b = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(ibpd_pd_id(a) + 1, ibpd_pd_id(b));
	EXPECT_EQ(self->base_pds + 2, dbg_read("num_pds"));
	ASSERT_EQ(0, ibpd_dealloc_pd(b));
	ASSERT_EQ(0, ibpd_dealloc_pd(a));
}

/*
 * udata rules: driver input the driver does not define must be zero
 * (EOPNOTSUPP otherwise); a response buffer longer than the driver's
 * response is zero-filled.
 */
TEST_F(pd, alloc_pd_udata)
{
	int fd = ibpd_context_cmd_fd(self->ctx);
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	uint8_t uin[16] = {}, uout[32];
	struct ibpd_alloc_pd_resp *drv = (void *)uout;
	struct ib_uverbs_dealloc_pd dreq = {};
	struct ibpd_pd *pd;
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
	pd = ibpd_import_pd(self->ctx, resp.pd_handle);
	ASSERT_NE(NULL, pd);
	EXPECT_EQ(ibpd_pd_pdn(pd), drv->pdn);
	EXPECT_EQ(0, drv->reserved);
	EXPECT_EQ(ibpd_pd_id(pd), drv->id);
	for (i = sizeof(*drv); i < sizeof(uout); i++)
		EXPECT_EQ(0, uout[i]);
	ibpd_unimport_pd(pd);

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

TEST_F(pd, reg_mr_udata)
{
	int fd = ibpd_context_cmd_fd(self->ctx);
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ib_uverbs_reg_mr req = {};
	struct ib_uverbs_reg_mr_resp resp;
	struct ib_uverbs_dereg_mr dreq = {};
	uint8_t uin[8] = { 1 }, uout[16];
	int i;

	ASSERT_NE(NULL, pd);
	req.start = (uintptr_t)self->buf;
	req.hca_va = req.start;
	req.length = 4096;
	req.pd_handle = ibpd_pd_handle(pd);
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
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

/* The device's max_mr_size is what reg_mr enforces. */
TEST_F(pd, reg_mr_max_size)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	void *hole = (void *)(1UL << 40);	/* nothing mapped there */

	ASSERT_NE(NULL, pd);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, hole, (size_t)UINT32_MAX + 1, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, hole, (size_t)1 << 40, 0));
	EXPECT_EQ(EINVAL, errno);
	/* within the limit: the pages are missing, not the size wrong */
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, hole, UINT32_MAX, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

/*
 * The pds listing reads a buffer at a time and goes on where it stopped:
 * in reads of any size, every live PD is listed once.
 */
TEST_F(pd, debugfs_pds_in_small_reads)
{
	const int n = 3000;
	struct ibpd_pd **pds = calloc(n, sizeof(*pds));
	static char seen[IBPD_PDN_MAX + 1];
	size_t sizes[] = { 1, 7, 100, 4096, 65536 };
	char path[256], *text = malloc(1 << 20);
	unsigned int pdn, k;
	int i, fd, dups, mine;
	ssize_t len, r;
	char *line;

	ASSERT_NE(NULL, pds);
	ASSERT_NE(NULL, text);
	for (i = 0; i < n; i++) {
		pds[i] = ibpd_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pds[i]);
	}
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
			mine += seen[ibpd_pd_pdn(pds[i])] == 1;
		EXPECT_EQ(0, dups);
		EXPECT_EQ(n, mine);
		TH_LOG("reads of %zu bytes: %d PDs listed once, %d twice",
		       sizes[k], mine, dups);
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ibpd_dealloc_pd(pds[i]));
	free(pds);
	free(text);
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
	c.attrs[1].data = 0;	/* inline: all zero */
	memset(uout, 0xff, sizeof(uout));
	raw_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(uout), (uintptr_t)uout);
	c.hdr.length = 0;
	ASSERT_EQ(0, raw_exec(fd, &c));
	for (i = 0; i < sizeof(uout); i++)
		EXPECT_EQ(0, uout[i]);
	close(fd);
}

TEST_F(pd, dealloc_busy_with_mr)
{
	struct ibpd_mr *mr, *mr2;
	struct ibpd_pd *pd;
	uint32_t usecnt;

	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, 4096, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_NE(0, ibpd_mr_lkey(mr));
	EXPECT_EQ(self->base_mrs + 1, dbg_read("num_mrs"));

	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(1, usecnt);

	/* still fully usable after the failed dealloc */
	mr2 = ibpd_reg_mr(pd, self->buf + 4096, 8192,
			  IBPD_ACCESS_LOCAL_WRITE | IBPD_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr2);
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(2, usecnt);
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));

	ASSERT_EQ(0, ibpd_dereg_mr(mr));
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_dereg_mr(mr2));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(pd, import_through_dup_fd)
{
	struct ibpd_context *ctx2 = dup_ctx(self->ctx);
	struct ibpd_pd *pd, *ipd;
	struct ibpd_mr *mr;
	uint32_t usecnt;

	ASSERT_NE(NULL, ctx2);
	EXPECT_STREQ(test_dev(), ibpd_context_ibdev_name(ctx2));
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);

	ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
	ASSERT_NE(NULL, ipd);
	EXPECT_EQ(ibpd_pd_pdn(pd), ibpd_pd_pdn(ipd));
	EXPECT_EQ(ibpd_pd_handle(pd), ibpd_pd_handle(ipd));
	/* import creates no kernel object and takes no reference */
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(0, usecnt);

	/* the imported PD works in a verb that takes a PD */
	mr = ibpd_reg_mr(ipd, self->buf, BUF_LEN, IBPD_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(ipd));
	ASSERT_EQ(0, ibpd_dereg_mr(mr));

	ibpd_unimport_pd(ipd);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_close_device(ctx2));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
}

TEST_F(pd, dealloc_through_imported_pd)
{
	struct ibpd_context *ctx2 = dup_ctx(self->ctx);
	struct ibpd_pd *pd, *ipd;

	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
	ASSERT_NE(NULL, ipd);
	ASSERT_EQ(0, ibpd_dealloc_pd(ipd));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	/* the original is now only fit for unimport-like cleanup */
	EXPECT_EQ(ENOENT, ibpd_dealloc_pd(pd));
	ibpd_unimport_pd(pd);
	ASSERT_EQ(0, ibpd_close_device(ctx2));
}

TEST_F(pd, unimport_leaves_kernel_pd)
{
	struct ibpd_context *ctx2 = dup_ctx(self->ctx);
	struct ibpd_pd *pd, *ipd;
	struct ibpd_mr *mr;
	uint32_t usecnt;

	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
	ASSERT_NE(NULL, ipd);
	ibpd_unimport_pd(ipd);

	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds + 1, rdma_res_pds());
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(1, usecnt);
	ASSERT_EQ(0, ibpd_dereg_mr(mr));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_close_device(ctx2));
}

TEST_F(pd, use_after_destroy)
{
	struct ibpd_context *ctx2 = dup_ctx(self->ctx);
	struct ibpd_pd *pd, *ipd;
	uint32_t h;

	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	h = ibpd_pd_handle(pd);
	ipd = ibpd_import_pd(ctx2, h);
	ASSERT_NE(NULL, ipd);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));

	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(ipd, self->buf, 4096, 0));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(ENOENT, ibpd_query_pd(ipd, NULL, NULL));
	EXPECT_EQ(ENOENT, ibpd_dealloc_pd(ipd));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd(ctx2, h));
	EXPECT_EQ(ENOENT, errno);
	ibpd_unimport_pd(ipd);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	ASSERT_EQ(0, ibpd_close_device(ctx2));
}

TEST_F(pd, import_bad_handle)
{
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd(self->ctx, 0xdead));
	EXPECT_EQ(ENOENT, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd_checked(self->ctx, 0xdead, 1));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(pd, import_wrong_object_type)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ibpd_mr *mr;

	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	ASSERT_NE(ibpd_pd_handle(pd), ibpd_mr_handle(mr));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd(self->ctx, ibpd_mr_handle(mr)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ibpd_dereg_mr(mr));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_F(pd, import_from_another_file)
{
	struct ibpd_context *other = ibpd_open_device(test_dev());
	struct ibpd_pd *pd, *opd;

	ASSERT_NE(NULL, other);
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);

	/* handles are per file: the other file has no such object */
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd(other, ibpd_pd_handle(pd)));
	EXPECT_EQ(ENOENT, errno);

	/* once it has one, the same number names a different PD */
	opd = ibpd_alloc_pd(other);
	ASSERT_NE(NULL, opd);
	ASSERT_EQ(ibpd_pd_handle(pd), ibpd_pd_handle(opd));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd_checked(other, ibpd_pd_handle(pd),
					       ibpd_pd_pdn(pd)));
	EXPECT_EQ(ESTALE, errno);

	ASSERT_EQ(0, ibpd_dealloc_pd(opd));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_close_device(other));
}

TEST_F(pd, list_pds)
{
	struct ibpd_pd *pds[3];
	uint32_t handles[16];
	size_t total = 0, i, j, found = 0;

	for (i = 0; i < 3; i++) {
		pds[i] = ibpd_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pds[i]);
	}
	ASSERT_EQ(0, ibpd_list_pds(self->ctx, handles, 16, &total));
	EXPECT_EQ(3, total);
	for (i = 0; i < 3; i++)
		for (j = 0; j < total; j++)
			found += handles[j] == ibpd_pd_handle(pds[i]);
	EXPECT_EQ(3, found);
	EXPECT_EQ(EINVAL, ibpd_list_pds(self->ctx, handles, 0, &total));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, ibpd_dealloc_pd(pds[i]));
	ASSERT_EQ(0, ibpd_list_pds(self->ctx, handles, 16, &total));
	EXPECT_EQ(0, total);
}

TEST_F(pd, max_pd_enomem)
{
	long long old_max = dbg_read("max_pd");
	struct ibpd_pd *pds[3];
	int i;

	ASSERT_LT(0, old_max);
	ASSERT_EQ(0, dbg_write("max_pd", self->base_pds + 3));
	for (i = 0; i < 3; i++) {
		pds[i] = i ? ibpd_alloc_pd(self->ctx) :
			     ibpd_alloc_pd_write(self->ctx);
		ASSERT_NE(NULL, pds[i]);
	}
	errno = 0;
	EXPECT_EQ(NULL, ibpd_alloc_pd(self->ctx));
	EXPECT_EQ(ENOMEM, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_alloc_pd_write(self->ctx));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(self->base_pds + 3, dbg_read("num_pds"));

	/* a freed slot can be used again */
	ASSERT_EQ(0, ibpd_dealloc_pd(pds[2]));
	pds[2] = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pds[2]);

	ASSERT_EQ(0, dbg_write("max_pd", old_max));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, ibpd_dealloc_pd(pds[i]));
	EXPECT_EQ(-1, dbg_write("max_pd", 0));
}

TEST_F(pd, fault_alloc_pd)
{
	struct ibpd_pd *pd;

	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 1));
	errno = 0;
	pd = ibpd_alloc_pd(self->ctx);
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(NULL, ibpd_alloc_pd_write(self->ctx));
	ASSERT_EQ(0, dbg_write("fail_alloc_pd", 0));
	EXPECT_EQ(NULL, pd);
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_F(pd, fault_reg_mr)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	uint32_t usecnt;

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, dbg_write("fail_reg_mr", 1));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, 4096, 0));
	EXPECT_EQ(ENOMEM, errno);
	ASSERT_EQ(0, dbg_write("fail_reg_mr", 0));
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(0, usecnt);
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_F(pd, fault_import)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	struct ibpd_pd *ipd;

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, dbg_write("fail_import", 1));
	errno = 0;
	ipd = ibpd_import_pd(self->ctx, ibpd_pd_handle(pd));
	ASSERT_EQ(0, dbg_write("fail_import", 0));
	EXPECT_EQ(NULL, ipd);
	EXPECT_EQ(ENOMEM, errno);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_F(pd, reg_mr_bad_args)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	void *hole;

	ASSERT_NE(NULL, pd);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* remote write needs local write */
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, 4096,
				    IBPD_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, self->buf, 4096, 1 << 12));
	EXPECT_EQ(EINVAL, errno);

	hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 4096));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, hole, 4096, 0));
	EXPECT_EQ(EFAULT, errno);

	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
}

TEST_F(pd, close_of_one_fd_keeps_objects)
{
	struct ibpd_context *ctx2 = dup_ctx(self->ctx);
	struct ibpd_pd *pd, *ipd;
	struct ibpd_mr *mr;
	uint32_t h, pdn;

	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	h = ibpd_pd_handle(pd);
	pdn = ibpd_pd_pdn(pd);
	mr = ibpd_reg_mr(pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	ibpd_unimport_pd(pd);	/* drop our view, the kernel keeps it */
	free(mr);		/* a leaked handle, on purpose */

	ASSERT_EQ(0, ibpd_close_device(self->ctx));
	self->ctx = NULL;
	EXPECT_EQ(self->base_pds + 1, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs + 1, dbg_read("num_mrs"));

	ipd = ibpd_import_pd_checked(ctx2, h, pdn);
	ASSERT_NE(NULL, ipd);
	ibpd_unimport_pd(ipd);

	/* the last fd: everything left in the file is destroyed */
	ASSERT_EQ(0, ibpd_close_device(ctx2));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
	EXPECT_EQ(self->base_pds, rdma_res_pds());
}

TEST_F(pd, exit_without_cleanup_frees_everything)
{
	pid_t pid = fork();
	int status, i;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibpd_context *c = ibpd_open_device(test_dev());

		if (!c)
			_exit(1);
		for (i = 0; i < 8; i++) {
			struct ibpd_pd *p = ibpd_alloc_pd(c);

			if (!p || !ibpd_reg_mr(p, self->buf, 4096, 0))
				_exit(2);
		}
		_exit(dbg_read("num_pds") == self->base_pds + 8 ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	EXPECT_EQ(self->base_mrs, dbg_read("num_mrs"));
}

TEST_F(pd, fork_child_imports_inherited_file)
{
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	uint32_t usecnt;
	int status, sync[2];
	char c;
	pid_t pid;

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibpd_context *c2 = dup_ctx(self->ctx);
		struct ibpd_pd *ipd;
		struct ibpd_mr *mr;

		if (!c2)
			_exit(1);
		ipd = ibpd_import_pd_checked(c2, ibpd_pd_handle(pd),
					     ibpd_pd_pdn(pd));
		if (!ipd)
			_exit(2);
		mr = ibpd_reg_mr(ipd, self->buf, 4096, 0);
		if (!mr)
			_exit(3);
		/* keep the MR: the parent sees it through the shared file */
		ibpd_unimport_pd(ipd);
		if (write(sync[1], "x", 1) != 1)
			_exit(4);
		_exit(ibpd_close_device(c2) ? 5 : 0);
	}
	close(sync[1]);
	ASSERT_EQ(1, read(sync[0], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the child's MR lives on in the file the parent still holds */
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(1, usecnt);
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	close(sync[0]);
}

/* Two processes, the file passed over a unix socket with SCM_RIGHTS. */
TEST_F(pd, share_over_scm_rights)
{
	struct { uint32_t handle, pdn; } msg;
	struct ibpd_pd *pd = ibpd_alloc_pd(self->ctx);
	uint32_t usecnt;
	int sv[2], status;
	char c;
	pid_t pid;

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibpd_context *c2;
		struct ibpd_pd *ipd;
		struct ibpd_mr *mr;
		void *buf;
		int fd;

		/* a fresh process image would not have the parent's ctx */
		ibpd_unimport_pd(pd);
		close(sv[0]);
		fd = ibpd_recv_fd(sv[1], &msg, sizeof(msg));
		if (fd < 0)
			_exit(1);
		c2 = ibpd_import_device(fd);
		if (!c2)
			_exit(2);
		ipd = ibpd_import_pd_checked(c2, msg.handle, msg.pdn);
		if (!ipd)
			_exit(3);
		buf = aligned_alloc(4096, 4096);
		mr = ibpd_reg_mr(ipd, buf, 4096, IBPD_ACCESS_LOCAL_WRITE);
		if (!mr)
			_exit(4);
		if (write(sv[1], "r", 1) != 1 || read(sv[1], &c, 1) != 1)
			_exit(5);
		if (ibpd_dereg_mr(mr))
			_exit(6);
		ibpd_unimport_pd(ipd);
		if (ibpd_close_device(c2))
			_exit(7);
		_exit(write(sv[1], "d", 1) == 1 ? 0 : 8);
	}
	close(sv[1]);
	msg.handle = ibpd_pd_handle(pd);
	msg.pdn = ibpd_pd_pdn(pd);
	ASSERT_EQ(0, ibpd_send_fd(sv[0], ibpd_context_cmd_fd(self->ctx), &msg,
				  sizeof(msg)));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ('r', c);

	/* the child's MR, registered through its imported PD, pins ours */
	EXPECT_EQ(EBUSY, ibpd_dealloc_pd(pd));
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(1, usecnt);
	ASSERT_EQ(1, write(sv[0], "g", 1));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ('d', c);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* the child unimported: our PD is intact and now free to go */
	ASSERT_EQ(0, ibpd_query_pd(pd, NULL, &usecnt));
	EXPECT_EQ(0, usecnt);
	ASSERT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(self->base_pds, dbg_read("num_pds"));
	close(sv[0]);
}

TEST(open_unknown_device)
{
	errno = 0;
	EXPECT_EQ(NULL, ibpd_open_device("ibpd_no_such_dev"));
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_open_device(NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST(import_device_bad_fd)
{
	int fd = open("/dev/null", O_RDWR);

	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_device(fd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, close(fd));	/* still ours after the failure */
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_device(-1));
	EXPECT_EQ(EBADF, errno);
}

static int uverbs_path(char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir("/sys/class/infiniband_verbs");
	int ret = -1;

	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		char p[512], name[64] = "";
		FILE *f;

		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/%s/ibdev",
			 de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, test_dev())) {
			snprintf(buf, len, "/dev/infiniband/%s", de->d_name);
			ret = 0;
		}
		fclose(f);
	}
	closedir(d);
	return ret;
}

TEST(import_device_without_context)
{
	char path[300];
	int fd;

	ASSERT_EQ(0, uverbs_path(path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_device(fd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, close(fd));
}

static int sh(const char *cmd)
{
	int status = system(cmd);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(device_delete_with_open_files)
{
	struct ibpd_context *ctx, *ctx2;
	struct ibpd_pd *pd, *ipd;
	struct ibpd_mr *mr;
	void *buf = aligned_alloc(4096, 4096);

	if (sh("rdma link add ibpdt0 type ibpd netdev lo"))
		SKIP(return, "rdma link add failed");
	ASSERT_NE(0, sh("rdma link add ibpdt0 type ibpd netdev lo 2>/dev/null"));
	ctx = ibpd_open_device("ibpdt0");
	ASSERT_NE(NULL, ctx);
	ctx2 = dup_ctx(ctx);
	ASSERT_NE(NULL, ctx2);
	pd = ibpd_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	mr = ibpd_reg_mr(pd, buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	ipd = ibpd_import_pd(ctx2, ibpd_pd_handle(pd));
	ASSERT_NE(NULL, ipd);

	/* must not hang: the files are disassociated */
	ASSERT_EQ(0, sh("rdma link delete ibpdt0"));

	errno = 0;
	EXPECT_EQ(NULL, ibpd_alloc_pd(ctx));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_alloc_pd_write(ctx));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibpd_import_pd(ctx2, ibpd_pd_handle(pd)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(EIO, ibpd_query_pd(ipd, NULL, NULL));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_reg_mr(pd, buf, 4096, 0));
	EXPECT_EQ(EIO, errno);

	/* destroy still answers, so that userspace can clean up */
	EXPECT_EQ(0, ibpd_dereg_mr(mr));
	EXPECT_EQ(0, ibpd_dealloc_pd(pd));
	EXPECT_EQ(ENOENT, ibpd_dealloc_pd(ipd));
	ibpd_unimport_pd(ipd);
	EXPECT_EQ(0, ibpd_close_device(ctx2));
	EXPECT_EQ(0, ibpd_close_device(ctx));
	errno = 0;
	EXPECT_EQ(NULL, ibpd_open_device("ibpdt0"));
	EXPECT_EQ(ENODEV, errno);
	free(buf);
}

/* ABI checks with raw ioctls: the kernel's answers, not the library's. */
FIXTURE(abi) {
	struct ibpd_context *ctx;
	struct ibpd_pd *pd;
	int fd;
	uint32_t pdn, usecnt;
};

FIXTURE_SETUP(abi)
{
	self->ctx = ibpd_open_device(test_dev());
	if (!self->ctx && errno == ENODEV)
		SKIP(return, "no RDMA device %s", test_dev());
	ASSERT_NE(NULL, self->ctx);
	self->fd = ibpd_context_cmd_fd(self->ctx);
	self->pd = ibpd_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(abi)
{
	if (self->ctx)
		EXPECT_EQ(0, ibpd_close_device(self->ctx));
}

static void import_cmd(struct raw_cmd *c, uint32_t handle, uint32_t *pdn,
		       uint32_t *usecnt)
{
	raw_init(c, UVERBS_OBJECT_PD, IBPD_METHOD_PD_IMPORT);
	raw_attr(c, IBPD_ATTR_PD_IMPORT_HANDLE, 0, handle);
	raw_attr(c, IBPD_ATTR_PD_IMPORT_RESP_PDN, 4, (uintptr_t)pdn);
	raw_attr(c, IBPD_ATTR_PD_IMPORT_RESP_USECNT, 4, (uintptr_t)usecnt);
}

TEST_F(abi, import_ok)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(ibpd_pd_pdn(self->pd), self->pdn);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_PDN, 4, self->pdn);
	c.hdr.length = 0;
	EXPECT_EQ(0, raw_exec(self->fd, &c));
}

/* The use count is optional: import without it, as libibpd does. */
TEST_F(abi, import_without_usecnt)
{
	struct raw_cmd c;

	self->usecnt = 0xdead;
	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.hdr.num_attrs = 2;
	self->pdn = 0;
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(ibpd_pd_pdn(self->pd), self->pdn);
	EXPECT_EQ(0xdead, self->usecnt);
}

TEST_F(abi, import_by_id)
{
	uint64_t id = 0, want;
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_RESP_ID, 8, (uintptr_t)&id);
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_EQ(ibpd_pd_id(self->pd), id);
	want = id;
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_ID, 8, want);
	c.hdr.length = 0;
	EXPECT_EQ(0, raw_exec(self->fd, &c));
	c.attrs[4].data = want + 1;
	EXPECT_EQ(ESTALE, raw_exec(self->fd, &c));
	c.attrs[4].data = 0;
	EXPECT_EQ(ESTALE, raw_exec(self->fd, &c));
	c.attrs[4].len = 4;	/* the identity is a __u64 */
	c.attrs[4].data = want;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	c.attrs[3].len = 4;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, alloc_returns_id)
{
	uint64_t id = 0;
	uint32_t pdn = 0;
	struct raw_cmd c;

	raw_init(&c, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC);
	raw_attr(&c, IBPD_ATTR_PD_ALLOC_HANDLE, 0, 0);
	raw_attr(&c, IBPD_ATTR_PD_ALLOC_RESP_PDN, 4, (uintptr_t)&pdn);
	raw_attr(&c, IBPD_ATTR_PD_ALLOC_RESP_ID, 8, (uintptr_t)&id);
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_LT(ibpd_pd_id(self->pd), id);
}

TEST_F(abi, unknown_method)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.hdr.method_id = IBPD_METHOD_PD_IMPORT + 16;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	c.hdr.object_id = 0x3ff;
	c.hdr.method_id = IBPD_METHOD_PD_IMPORT;
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
}

TEST_F(abi, short_and_long_in_attr)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	raw_attr(&c, IBPD_ATTR_PD_IMPORT_PDN, 2, self->pdn);
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	c.attrs[3].len = 8;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, short_out_attr)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.attrs[1].len = 2;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, missing_mandatory_attr)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.attrs[1] = c.attrs[2];
	c.hdr.num_attrs = 2;	/* no RESP_PDN */
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.attrs[0] = c.attrs[2];
	c.hdr.num_attrs = 2;	/* no handle */
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, unknown_attr)
{
	struct raw_cmd c;
	struct ib_uverbs_attr *a;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	a = raw_attr(&c, IBPD_ATTR_PD_IMPORT_RESP_USECNT + 8, 4, 0);
	EXPECT_EQ(EPROTONOSUPPORT, raw_exec(self->fd, &c));
	a->flags = 0;	/* not mandatory: ignored */
	EXPECT_EQ(0, raw_exec(self->fd, &c));
}

TEST_F(abi, bad_header)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
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

	import_cmd(&c, ibpd_pd_handle(self->pd), &self->pdn, &self->usecnt);
	c.attrs[1].attr_data.reserved = 1;
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
}

TEST_F(abi, out_pointer_fault)
{
	struct raw_cmd c;

	import_cmd(&c, ibpd_pd_handle(self->pd), (uint32_t *)8, &self->usecnt);
	EXPECT_EQ(EFAULT, raw_exec(self->fd, &c));
}

TEST_F(abi, alloc_needs_new_handle_and_pdn)
{
	struct raw_cmd c;
	uint32_t pdn = 0;

	raw_init(&c, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC);
	raw_attr(&c, IBPD_ATTR_PD_ALLOC_HANDLE, 0, 0);
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	raw_attr(&c, IBPD_ATTR_PD_ALLOC_RESP_PDN, 4, (uintptr_t)&pdn);
	c.hdr.length = 0;
	ASSERT_EQ(0, raw_exec(self->fd, &c));
	EXPECT_NE(0, pdn);
	EXPECT_NE(ibpd_pd_handle(self->pd), c.attrs[0].data);
}

TEST_F(abi, destroy_wrong_type)
{
	struct raw_cmd c;
	char *buf = aligned_alloc(4096, 4096);
	struct ibpd_mr *mr = ibpd_reg_mr(self->pd, buf, 4096, 0);

	ASSERT_NE(NULL, mr);
	raw_init(&c, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY);
	raw_attr(&c, UVERBS_ATTR_DESTROY_PD_HANDLE, 0, ibpd_mr_handle(mr));
	EXPECT_EQ(EINVAL, raw_exec(self->fd, &c));
	ASSERT_EQ(0, ibpd_dereg_mr(mr));
	free(buf);
}

TEST_HARNESS_MAIN

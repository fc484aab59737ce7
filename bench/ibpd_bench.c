// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd_bench: the cost of every PD verb, measured in one run on ibpd0 and on
 * rxe0 (the upstream reference). Each figure is one line on stdout,
 * "IBPD-BENCH " and a JSON object (progress goes to stderr, which the test
 * VM mixes in). bench/report.py turns them into a table of ratios, a JSON
 * file and a plot; absolute times under qemu TCG mean little, ratios taken
 * in one run do.
 *
 * - per-op cost: a null uverbs ioctl (the floor: a method the core looks up
 *   and rejects), ioctl-path alloc+destroy, write-path alloc+destroy,
 *   import (+unimport, userspace only), reg+dereg of a 4 KiB MR; and what
 *   an import is made of: the system call floor, the import method as a
 *   bare ioctl, the same with a handle the core does not find, without
 *   the identity libibpd asks for, and the library object's calloc+free;
 * - each verb through libibverbs and ibpd's provider (ibv_alloc_pd +
 *   ibv_dealloc_pd, ibv_import_pd + ibv_unimport_pd, ibv_reg_mr +
 *   ibv_dereg_mr) against the same command, attribute for attribute, as a
 *   bare ioctl or write command on the context's fd: how thin the
 *   provider is;
 * - alloc/import/destroy cost with 1, 1k, 100k and 1M live PDs in one file
 *   (import of a random live PD, and of one PD again and again);
 * - kernel memory per live PD (slab before and after each slice of a fill
 *   up to 100k PDs), and the cost of closing a file per PD;
 * - ibpd0's max_pd, raised through debugfs to what 1M live PDs need (in
 *   every run, so that a short one shows the full one can run);
 * - alloc+destroy and import throughput of 1, 2 and 4 processes sharing
 *   one file;
 * - rxe's send doorbell (a POST_SEND without work requests) by write(), as
 *   rdma-core's rxe provider rings it, and by INVOKE_WRITE ioctl, as it
 *   does with the upstream series, beside a posted and completed send;
 * - the data path through imported objects on rxe0: RDMA WRITE and SEND of
 *   4 KiB, and RC QP creation, through a context, PD and MR imported from
 *   the process's own file against the same through the originals, in the
 *   same rounds (skipped, with the reason, where rxe imports nothing:
 *   scripts/tests/ibpd_check/bench.py runs it again where it does).
 *
 * How: the bench runs pinned to one vCPU and times with that vCPU's TSC
 * (qemu TCG gives the host's, cheap to read, where the guest's
 * clocksource, the HPET, costs a system call and an MMIO exit:
 * Documentation/testing.rst, "How it measures"). The ops
 * of a group are warmed up, then measured in rounds: in each round every
 * op runs one batch of about 2 ms, the ops in a shuffled order, so that
 * the ops a ratio compares run within milliseconds of each other. Each
 * iteration is timed: one more than 10 times the median of its batch
 * (and over 250 us) is the host's (qemu's vCPU thread was preempted) and
 * is dropped, and counted; a batch's figure is the mean of the others.
 * Every batch's figure is printed; bench/report.py takes the median of
 * the rounds with its 95% interval, and of a ratio of two ops of one
 * group the median and interval of the per-round ratios. Memory is
 * measured over slices of a fill, a close over many small files, the
 * throughput of processes in rounds as well, each process stamping the
 * completion of its ops: the gaps the host left in a vCPU's progress are
 * left out the same way. The kernel (nokaslr) and the bench (setarch -R)
 * run at the same addresses in every run: scripts/tests/ibpd_check/bench.py.
 *
 * Environment: IBPD_BENCH_MAX_LIVE (default 1000000) caps the scale test,
 * IBPD_BENCH_QUICK=1 makes every measurement short (for a smoke test),
 * IBPD_BENCH_GROUPS=datapath or doorbell runs that group alone, on rxe0
 * (ibpd0 need not exist: scripts/tests/ibpd_check/bench.py runs the data
 * path alone where rxe imports, the doorbell on the newest kernel),
 * IBPD_BENCH_ROUNDS and IBPD_BENCH_BATCH_US override the rounds of a
 * group and the length of a batch; IBPD_BENCH_CLOCK names the clock
 * the VM gives (scripts/tests/ibpd_check/bench.py: "icount", guest instructions, or
 * "host"), and IBPD_VM_CPU the vCPU model (scripts/vm/vm-run), for the
 * report and for bench/compare.py, which tells runs on other vCPUs apart.
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <infiniband/ibpddv.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "../selftests/lib/ibpd_debugfs.h"
#include "../selftests/lib/ibpd_uverbs.h"

#define MAX_ROUNDS 401
#define MAX_GROUP 32	/* ops measured together */

static int rounds = 101;	/* measured rounds of a group */
static double batch_ns = 2e6;	/* target length of one op's batch */
static double warm_ns = 100e6;	/* warm-up of each op */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The timer of the iterations: the TSC of the vCPU the bench is pinned to
 * (in ticks), and what reading it costs (subtracted from every time).
 */
#if defined(__x86_64__) || defined(__i386__)
static double ns_per_tick;

static uint64_t ticks(void)
{
	return __rdtsc();
}

static void calibrate_ticks(void)
{
	double t0 = now_ns(), c0 = ticks();

	usleep(200 * 1000);
	ns_per_tick = (now_ns() - t0) / (ticks() - c0);
}
#else
static double ns_per_tick = 1;

static uint64_t ticks(void)
{
	return now_ns();
}

static void calibrate_ticks(void)
{
}
#endif

static double ticks_ns(void)
{
	return ticks() * ns_per_tick;
}

static void die(const char *what)
{
	fprintf(stderr, "ibpd_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Pins the calling process to one vCPU: the bench runs on the last one,
 * away from the console's interrupts, and reads its TSC.
 */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

struct dev {
	const char *name;
	struct ibv_context *ctx;
	uint32_t driver_id;	/* of the bare ioctls' header */
	struct ibv_pd *pd;	/* a live PD to import and to register on */
	void *buf;
};

/* One measured operation: fn runs one iteration on d and returns 0. */
struct op {
	struct dev *d;
	const char *name;
	int (*fn)(struct dev *d);
	long iters;
	long dropped;	/* iterations not counted, of iters * rounds */
	double ns[MAX_ROUNDS];
};

/*
 * Sends command c, built by selftests/lib/ibpd_uverbs.h, on d's file with
 * d's driver id: 0 or the errno.
 */
static int dev_exec(struct dev *d, struct raw_cmd *c)
{
	c->hdr.driver_id = d->driver_id;
	return raw_exec(d->ctx->cmd_fd, c);
}

static int op_null(struct dev *d)
{
	struct raw_cmd c;

	raw_init(&c, UVERBS_OBJECT_DEVICE, 0x7fff);	/* no such method */
	return dev_exec(d, &c) == EPROTONOSUPPORT ? 0 : -1;
}

/* The system call floor under the uverbs one. */
static int op_syscall(struct dev *d)
{
	return getppid() < 0;
}

/*
 * The import method as a bare ioctl, as libibpd sends it, with nothing
 * of the library around it: no library object. With a handle no file
 * holds, the core parses the attributes and fails the lookup: what the
 * import costs before the driver's handler runs. with_id: the identity
 * too, as libibpd asks for it.
 */
static int import_ioctl(struct dev *d, uint32_t handle, bool with_id,
			int want)
{
	uint32_t pdn;
	uint64_t id;
	struct raw_cmd c;

	raw_pd_import_cmd(&c, &(union raw_pd_import_args){
		.handle = &handle, .resp_pdn = &pdn,
		.resp_id = with_id ? &id : NULL });
	return dev_exec(d, &c) == want ? 0 : -1;
}

static int op_import_ioctl(struct dev *d)
{
	return import_ioctl(d, d->pd->handle, true, 0);
}

static int op_import_ioctl_pdn(struct dev *d)
{
	return import_ioctl(d, d->pd->handle, false, 0);
}

static int op_import_enoent(struct dev *d)
{
	return import_ioctl(d, INT32_MAX, true, ENOENT);
}

/* A calloc() and free() of the library's PD object, no kernel. */
static int op_calloc_free(struct dev *d)
{
	void *p = calloc(1, sizeof(struct ibv_pd) + 16);

	free(p);
	return !p;
}

/*
 * A core write() command as libibverbs sends it: through the core's
 * INVOKE_WRITE ioctl, which (unlike write(2)) also works in a process
 * that did not open the file, as the forked workers below. 0 or the errno.
 */
static int write_cmd(struct dev *d, uint32_t command, const void *in,
		     uint16_t in_len, void *out, uint16_t out_len)
{
	struct raw_cmd c;

	raw_write_cmd(&c, command, in, in_len, out, out_len, NULL, 0, NULL, 0);
	return dev_exec(d, &c);
}

static int dealloc_write(struct dev *d, uint32_t handle)
{
	struct ib_uverbs_dealloc_pd c = { .pd_handle = handle };

	return write_cmd(d, IB_USER_VERBS_CMD_DEALLOC_PD, &c, sizeof(c),
			 NULL, 0);
}

/* Bare write-path ALLOC_PD + DEALLOC_PD: no library at all. */
static int op_alloc_write(struct dev *d)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ib_uverbs_alloc_pd c = {};

	if (write_cmd(d, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), &resp,
		      sizeof(resp)))
		return -1;
	return dealloc_write(d, resp.pd_handle);
}

/* Bare ibpd PD_ALLOC ioctl + the core's PD_DESTROY, as libibpd sends them. */
static int op_alloc_ioctl(struct dev *d)
{
	struct raw_cmd c;
	uint32_t pdn;
	uint64_t id;

	raw_pd_alloc_cmd(&c, &(union raw_pd_alloc_args){
		.handle = RAW_NEW, .resp_pdn = &pdn, .resp_id = &id });
	if (dev_exec(d, &c))
		return -1;
	raw_pd_destroy_cmd(&c, raw_find(&c, IBPD_ATTR_PD_ALLOC_HANDLE)->data);
	return dev_exec(d, &c);
}

/* ibv_alloc_pd + ibv_dealloc_pd: ibpd's provider, or rxe's (write path). */
static int op_alloc_verbs(struct dev *d)
{
	struct ibv_pd *pd = ibv_alloc_pd(d->ctx);

	return pd ? ibv_dealloc_pd(pd) : -1;
}

static uint32_t *import_handles;
static size_t import_nhandles, import_next;

/* Imports the same PD again and again. */
static int op_import_same(struct dev *d)
{
	struct ibv_pd *pd = ibv_import_pd(d->ctx, d->pd->handle);

	if (!pd)
		return -1;
	ibv_unimport_pd(pd);
	return 0;
}

/* Imports live PDs in a random order, or d->pd when none are listed. */
static int op_import(struct dev *d)
{
	uint32_t h = d->pd->handle;
	struct ibv_pd *pd;

	if (import_nhandles) {
		h = import_handles[import_next++];
		if (import_next == import_nhandles)
			import_next = 0;
	}
	pd = ibv_import_pd(d->ctx, h);
	if (!pd)
		return -1;
	ibv_unimport_pd(pd);
	return 0;
}

static int op_reg_mr(struct dev *d)
{
	struct ibv_mr *mr = ibv_reg_mr(d->pd, d->buf, 4096,
				       IBV_ACCESS_LOCAL_WRITE);

	return mr ? ibv_dereg_mr(mr) : -1;
}

/* Bare write-path REG_MR + DEREG_MR. */
static int op_reg_mr_write(struct dev *d)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ib_uverbs_reg_mr c = {
		.start = (uintptr_t)d->buf,
		.length = 4096,
		.hca_va = (uintptr_t)d->buf,
		.pd_handle = d->pd->handle,
		.access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	struct ib_uverbs_dereg_mr dc = {};

	if (write_cmd(d, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), &resp,
		      sizeof(resp)))
		return -1;
	dc.mr_handle = resp.mr_handle;
	return write_cmd(d, IB_USER_VERBS_CMD_DEREG_MR, &dc, sizeof(dc),
			 NULL, 0);
}

/*
 * rxe's send doorbell: a POST_SEND with no work request on an RC QP in
 * RTS (connected to itself), sent by write() on the command FD, as
 * rdma-core's rxe provider rang it before the upstream series (the kernel
 * refuses that write() to every process but the file's opener), and
 * through INVOKE_WRITE, as libibverbs' ibv_cmd_post_send() sends it,
 * which the series' provider calls. The posted send: one signaled 64-byte
 * RDMA WRITE to the QP itself through the system's libibverbs (whose rxe
 * provider rings by write()), and its completion.
 */
static struct {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
} loop;

static int doorbell(struct dev *d, bool by_write)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_cmd_hdr *hdr;
	struct ib_uverbs_post_send *c;
	uint64_t buf[(sizeof(*hdr) + sizeof(*c) + 7) / 8] = {};

	hdr = (struct ib_uverbs_cmd_hdr *)buf;
	c = (struct ib_uverbs_post_send *)(hdr + 1);
	c->response = (uintptr_t)&resp;
	c->qp_handle = loop.qp->handle;
	c->wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (!by_write)
		return write_cmd(d, IB_USER_VERBS_CMD_POST_SEND, c, sizeof(*c),
				 &resp, sizeof(resp));
	hdr->command = IB_USER_VERBS_CMD_POST_SEND;
	hdr->in_words = (sizeof(*hdr) + sizeof(*c)) / 4;
	hdr->out_words = sizeof(resp) / 4;
	return write(d->ctx->cmd_fd, buf, sizeof(*hdr) + sizeof(*c)) !=
	       (ssize_t)(sizeof(*hdr) + sizeof(*c));
}

static int op_doorbell_write(struct dev *d)
{
	return doorbell(d, true);
}

static int op_doorbell_ioctl(struct dev *d)
{
	return doorbell(d, false);
}

static int op_post_send(struct dev *d)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)d->buf, .length = 64, .lkey = loop.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)d->buf + 2048,
			     .rkey = loop.mr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(loop.qp, &wr, &bad))
		return -1;
	/* rxe completes it in a kernel thread: leave it the vCPU */
	while (!(n = ibv_poll_cq(loop.cq, 1, &wc)))
		sched_yield();
	return n < 0 || wc.status != IBV_WC_SUCCESS;
}

/*
 * An RC QP in RESET to INIT, RTR and RTS, connected to itself over gid on
 * port 1: NULL, or the step that failed.
 */
static const char *qp_self_connect(struct ibv_qp *qp, const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return "INIT";
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return "RTR";
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return "RTS";
	return NULL;
}

/* An RC QP on d's PD, in RTS, connected to itself over GID 0. */
static void loop_open(struct dev *d)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	const char *step;
	union ibv_gid gid;

	loop.cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	if (!loop.cq)
		die("ibv_create_cq");
	ia.send_cq = ia.recv_cq = loop.cq;
	loop.qp = ibv_create_qp(d->pd, &ia);
	if (!loop.qp)
		die("ibv_create_qp");
	loop.mr = ibv_reg_mr(d->pd, d->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!loop.mr)
		die("ibv_reg_mr");
	if (ibv_query_gid(d->ctx, 1, 0, &gid))
		die("ibv_query_gid");
	step = qp_self_connect(loop.qp, &gid);
	if (step)
		die(step);
}

static void loop_close(void)
{
	ibv_destroy_qp(loop.qp);
	ibv_dereg_mr(loop.mr);
	ibv_destroy_cq(loop.cq);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define MAX_ITERS 65536
/*
 * An iteration this much longer than the median of its batch (and longer
 * than OUTLIER_MIN_NS) is not the op's: the host ran something else on
 * the vCPU's thread meanwhile. It is dropped, and counted.
 */
#define OUTLIER_X 10
#define OUTLIER_MIN_NS 250000

static uint64_t iter_ticks[MAX_ITERS], sorted_ticks[MAX_ITERS];
static uint64_t timer_ticks;	/* what reading the timer costs */

/*
 * Runs n iterations of op (at most MAX_ITERS), each timed: their mean cost
 * in ns, the dropped ones left out (added to *dropped when not NULL).
 */
static double run_batch(struct op *op, long n, long *dropped)
{
	uint64_t limit, sum = 0;
	long i, kept = 0;

	if (n > MAX_ITERS)
		n = MAX_ITERS;
	for (i = 0; i < n; i++) {
		uint64_t t = ticks();

		if (op->fn(op->d)) {
			fprintf(stderr, "ibpd_bench: %s on %s: %s\n", op->name,
				op->d->name, strerror(errno));
			exit(1);
		}
		t = ticks() - t;
		iter_ticks[i] = t > timer_ticks ? t - timer_ticks : 0;
	}
	memcpy(sorted_ticks, iter_ticks, n * sizeof(*iter_ticks));
	qsort(sorted_ticks, n, sizeof(*sorted_ticks), cmp_u64);
	limit = OUTLIER_X * sorted_ticks[n / 2];
	if (limit < OUTLIER_MIN_NS / ns_per_tick)
		limit = OUTLIER_MIN_NS / ns_per_tick;
	for (i = 0; i < n; i++)
		if (iter_ticks[i] <= limit) {
			sum += iter_ticks[i];
			kept++;
		}
	if (dropped)
		*dropped += n - kept;
	return sum * ns_per_tick / kept;
}

/* The cost of reading the timer: the median of many back-to-back reads. */
static void calibrate_timer(void)
{
	long i;

	for (i = 0; i < 10001; i++) {
		uint64_t t = ticks();

		sorted_ticks[i] = ticks() - t;
	}
	qsort(sorted_ticks, 10001, sizeof(*sorted_ticks), cmp_u64);
	timer_ticks = sorted_ticks[5000];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * Warms each op up for warm_ns and sizes its batch to about batch_ns (by
 * the median of its warm-up batches), runs two rounds of all that are not
 * kept (the steady state of the ops taking turns), then measures the
 * rounds. Each round runs the ops in an order of its own (random, the
 * same in every run), so that what one op leaves behind (deferred frees,
 * a cold cache) falls on each of the others alike.
 */
static void measure(struct op *ops, int nops)
{
	double warm[MAX_ROUNDS];
	int i, k, r;

	for (i = 0; i < nops; i++) {
		double t = run_batch(&ops[i], 10, NULL), end;
		int n = 0;

		/* sized by the op's own cost, the host's gaps left out */
		end = ticks_ns() + warm_ns;
		do {
			t = run_batch(&ops[i], batch_ns / t + 1, NULL);
			warm[n++ % MAX_ROUNDS] = t;
		} while (ticks_ns() < end);
		t = median(warm, n < MAX_ROUNDS ? n : MAX_ROUNDS);
		ops[i].iters = batch_ns / t + 0.5;
		if (ops[i].iters < 1)
			ops[i].iters = 1;
		if (ops[i].iters > MAX_ITERS)
			ops[i].iters = MAX_ITERS;
		ops[i].dropped = 0;
	}
	for (r = -2; r < rounds; r++) {
		int order[MAX_GROUP];

		for (k = 0; k < nops; k++)
			order[k] = k;
		for (k = nops - 1; k > 0; k--) {
			int j = random() % (k + 1), t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
		for (k = 0; k < nops; k++) {
			i = order[k];
			ops[i].ns[r < 0 ? 0 : r] =
				run_batch(&ops[i], ops[i].iters,
					  r < 0 ? NULL : &ops[i].dropped);
		}
	}
}

/* Prints values as a JSON array. */
static void print_array(const double *v, int n)
{
	int i;

	printf("[");
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? ", " : "", v[i]);
	printf("]");
}

static void record(const char *group, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void record(const char *group, const char *fmt, ...)
{
	va_list ap;

	printf("IBPD-BENCH {\"group\": \"%s\", ", group);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("}\n");
	fflush(stdout);
}

/* One record per op: the median and every round's cost per op (ns). */
static void record_ops(const char *group, struct op *ops, int nops,
		       long live)
{
	int i;

	for (i = 0; i < nops; i++) {
		printf("IBPD-BENCH {\"group\": \"%s\", \"device\": \"%s\", "
		       "\"op\": \"%s\", \"live_pds\": %ld, \"ns\": %.1f, "
		       "\"iters\": %ld, \"dropped\": %ld, \"rounds\": %d, "
		       "\"rounds_ns\": ", group, ops[i].d->name, ops[i].name,
		       live, median(ops[i].ns, rounds), ops[i].iters,
		       ops[i].dropped, rounds);
		print_array(ops[i].ns, rounds);
		printf("}\n");
	}
	fflush(stdout);
}

/*
 * The bare ioctls carry the driver id of the device (uverbs checks it):
 * none for ibpd, rxe's for the reference.
 */
static void dev_open(struct dev *d, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	if (!list)
		die("ibv_get_device_list");
	d->name = name;
	d->ctx = NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			d->ctx = ibv_open_device(list[i]);
			d->driver_id = ibpddv_is_supported(list[i]) ?
				RDMA_DRIVER_UNKNOWN : RDMA_DRIVER_RXE;
			break;
		}
	ibv_free_device_list(list);
	if (!d->ctx)
		die(name);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		die("ibv_alloc_pd");
	d->buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d->buf == MAP_FAILED)
		die("mmap");
}

/*
 * Closing the file destroys the PDs left in it; their library objects
 * cannot be released after the context is gone: they stay until exit.
 */
static void dev_close(struct dev *d)
{
	ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
	munmap(d->buf, 4096);
}

/*
 * The per-op costs on ibpd and on rxe, measured together: the PD verbs in
 * one group, MR registration (which pins pages, and disturbs what runs
 * after it) in another.
 */
static void bench_ops(struct dev *ib, struct dev *rxe)
{
	struct op pd_ops[] = {
		{ ib, "syscall", op_syscall },
		{ ib, "null_ioctl", op_null },
		{ rxe, "null_ioctl", op_null },
		{ ib, "alloc_destroy_ioctl", op_alloc_ioctl },
		{ ib, "alloc_destroy_verbs", op_alloc_verbs },
		{ rxe, "alloc_destroy_write", op_alloc_write },
		{ rxe, "alloc_destroy_verbs", op_alloc_verbs },
		{ ib, "alloc_destroy_write", op_alloc_write },
		{ ib, "import_ioctl_enoent", op_import_enoent },
		{ ib, "import_ioctl", op_import_ioctl },
		{ ib, "import_ioctl_pdn", op_import_ioctl_pdn },
		{ ib, "import", op_import },
		{ ib, "calloc_free", op_calloc_free },
	};
	struct op mr_ops[] = {
		{ ib, "reg_dereg_mr_4k", op_reg_mr },
		{ ib, "reg_dereg_mr_4k_write", op_reg_mr_write },
		{ rxe, "reg_dereg_mr_4k", op_reg_mr },
		{ rxe, "reg_dereg_mr_4k_write", op_reg_mr_write },
	};
	int npd = sizeof(pd_ops) / sizeof(pd_ops[0]);
	int nmr = sizeof(mr_ops) / sizeof(mr_ops[0]);

	fprintf(stderr, "ibpd_bench: per-op cost on %s and %s\n", ib->name,
		rxe->name);
	measure(pd_ops, npd);
	record_ops("ops", pd_ops, npd, 1);
	measure(mr_ops, nmr);
	record_ops("ops", mr_ops, nmr, 1);
}

/*
 * The doorbell on rxe0 by write() and by ioctl(), with the null ioctl
 * beside them and the posted send they are part of, in one group.
 */
static void bench_doorbell(struct dev *rxe)
{
	struct op ops[] = {
		{ rxe, "null_ioctl", op_null },
		{ rxe, "doorbell_write", op_doorbell_write },
		{ rxe, "doorbell_ioctl", op_doorbell_ioctl },
		{ rxe, "post_send_rdma_write", op_post_send },
	};
	int n = sizeof(ops) / sizeof(ops[0]);

	fprintf(stderr, "ibpd_bench: the send doorbell on %s\n", rxe->name);
	loop_open(rxe);
	measure(ops, n);
	record_ops("doorbell", ops, n, 1);
	loop_close();
}

/*
 * The data path through imported objects on rxe0: one side the process's
 * own context, PD and MR, the other a context imported from a dup of the
 * command fd, the PD imported into it and the MR imported onto that PD.
 * Each side has a CQ and an RC QP (on its PD) connected to itself; the
 * ops post one signaled work request of DP_LEN bytes from the first half
 * of one buffer to its second half, through that side's MR (its lkey and
 * rkey: an imported MR's are the original's), and reap its completion.
 */
#define DP_LEN 4096

struct dp_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct {
	struct dp_side own, imp;
	void *buf;
	union ibv_gid gid;
} dp;

/* Completions awaited at most this long (TCG is slow, but not this slow). */
#define DP_POLL_NS 10e9

static int dp_poll(struct ibv_cq *cq, int want)
{
	double end = ticks_ns() + DP_POLL_NS;
	struct ibv_wc wc[2];
	int i, n, got = 0;

	while (got < want) {
		n = ibv_poll_cq(cq, want - got, wc);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				errno = EIO;
				return -1;
			}
		got += n;
		if (n)
			continue;
		if (ticks_ns() > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		/* rxe completes it in a kernel thread: leave it the vCPU */
		sched_yield();
	}
	return 0;
}

static int dp_post(struct dp_side *s, enum ibv_wr_opcode op)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)dp.buf, .length = DP_LEN,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dp.buf + DP_LEN,
			     .rkey = s->mr->rkey },
	}, *bad;
	struct ibv_sge rsge = {
		.addr = (uintptr_t)dp.buf + DP_LEN, .length = DP_LEN,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	int err;

	if (op == IBV_WR_SEND) {
		err = ibv_post_recv(s->qp, &rwr, &rbad);
		if (err) {
			errno = err;
			return -1;
		}
	}
	err = ibv_post_send(s->qp, &wr, &bad);
	if (err) {
		errno = err;
		return -1;
	}
	return dp_poll(s->cq, op == IBV_WR_SEND ? 2 : 1);
}

static int op_dp_write_own(struct dev *d)
{
	return dp_post(&dp.own, IBV_WR_RDMA_WRITE);
}

static int op_dp_write_imp(struct dev *d)
{
	return dp_post(&dp.imp, IBV_WR_RDMA_WRITE);
}

static int op_dp_send_own(struct dev *d)
{
	return dp_post(&dp.own, IBV_WR_SEND);
}

static int op_dp_send_imp(struct dev *d)
{
	return dp_post(&dp.imp, IBV_WR_SEND);
}

static const struct ibv_qp_init_attr dp_qp_attr = {
	.cap = { .max_send_wr = 4, .max_recv_wr = 4,
		 .max_send_sge = 1, .max_recv_sge = 1 },
	.qp_type = IBV_QPT_RC,
};

/* ibv_create_qp + ibv_destroy_qp of an RC QP on the side's PD. */
static int dp_qp_create(struct dp_side *s)
{
	struct ibv_qp_init_attr ia = dp_qp_attr;
	struct ibv_qp *qp;

	ia.send_cq = ia.recv_cq = s->cq;
	qp = ibv_create_qp(s->pd, &ia);
	return qp ? ibv_destroy_qp(qp) : -1;
}

static int op_dp_qp_own(struct dev *d)
{
	return dp_qp_create(&dp.own);
}

static int op_dp_qp_imp(struct dev *d)
{
	return dp_qp_create(&dp.imp);
}

/* The side's CQ and RC QP, in RTS, connected to itself over dp.gid. */
static const char *dp_side_open(struct dp_side *s)
{
	struct ibv_qp_init_attr ia = dp_qp_attr;

	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (!s->cq)
		return "ibv_create_cq";
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	if (!s->qp)
		return "ibv_create_qp";
	return qp_self_connect(s->qp, &dp.gid);
}

/*
 * The two sides on d: NULL, or what failed (errno set): the group is then
 * skipped, with that reason (import unavailable: EOPNOTSUPP).
 */
static const char *dp_open(struct dev *d)
{
	const char *what;
	int fd;

	dp.buf = mmap(NULL, 2 * DP_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dp.buf == MAP_FAILED) {
		dp.buf = NULL;
		return "mmap";
	}
	if (ibv_query_gid(d->ctx, 1, 0, &dp.gid))
		return "ibv_query_gid";
	dp.own.ctx = d->ctx;
	dp.own.pd = d->pd;
	dp.own.mr = ibv_reg_mr(d->pd, dp.buf, 2 * DP_LEN,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE);
	if (!dp.own.mr)
		return "ibv_reg_mr";
	fd = dup(d->ctx->cmd_fd);
	if (fd < 0)
		return "dup";
	dp.imp.ctx = ibv_import_device(fd);
	if (!dp.imp.ctx) {
		/* the fd stays the caller's when the import fails */
		close(fd);
		return "ibv_import_device";
	}
	dp.imp.pd = ibv_import_pd(dp.imp.ctx, d->pd->handle);
	if (!dp.imp.pd)
		return "ibv_import_pd";
	dp.imp.mr = ibv_import_mr(dp.imp.pd, dp.own.mr->handle);
	if (!dp.imp.mr)
		return "ibv_import_mr";
	what = dp_side_open(&dp.own);
	return what ? what : dp_side_open(&dp.imp);
}

static void dp_side_close(struct dp_side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
}

static void dp_close(void)
{
	dp_side_close(&dp.imp);
	dp_side_close(&dp.own);
	if (dp.imp.mr)
		ibv_unimport_mr(dp.imp.mr);
	if (dp.imp.pd)
		ibv_unimport_pd(dp.imp.pd);
	if (dp.imp.ctx)
		ibv_close_device(dp.imp.ctx);
	if (dp.own.mr)
		ibv_dereg_mr(dp.own.mr);
	if (dp.buf)
		munmap(dp.buf, 2 * DP_LEN);
	memset(&dp, 0, sizeof(dp));
}

/*
 * RDMA WRITE and SEND of 4 KiB, and RC QP creation, through the imported
 * context, PD and MR against the same through the originals, in the same
 * rounds. Where the import is not there (a kernel whose rxe answers no
 * QUERY_CONTEXT, an rdma-core whose rxe provider imports nothing), one
 * record says why the group was skipped, and no figure.
 */
static void bench_datapath(struct dev *rxe)
{
	struct op ops[] = {
		{ rxe, "write_4k_own", op_dp_write_own },
		{ rxe, "write_4k_imported", op_dp_write_imp },
		{ rxe, "send_4k_own", op_dp_send_own },
		{ rxe, "send_4k_imported", op_dp_send_imp },
		{ rxe, "qp_create_own", op_dp_qp_own },
		{ rxe, "qp_create_imported", op_dp_qp_imp },
	};
	int n = sizeof(ops) / sizeof(ops[0]);
	struct utsname u;
	const char *what;

	uname(&u);
	what = dp_open(rxe);
	if (what) {
		fprintf(stderr,
			"ibpd_bench: the data path through imported objects on %s: skipped: %s: %s\n",
			rxe->name, what, strerror(errno));
		record("datapath", "\"device\": \"%s\", \"kernel\": \"%s\", "
		       "\"skipped\": \"%s: %s\"", rxe->name, u.release, what,
		       strerror(errno));
		dp_close();
		return;
	}
	fprintf(stderr,
		"ibpd_bench: the data path through imported objects on %s\n",
		rxe->name);
	measure(ops, n);
	record_ops("datapath", ops, n, 1);
	record("datapath", "\"device\": \"%s\", \"kernel\": \"%s\", "
	       "\"measured\": true", rxe->name, u.release);
	dp_close();
}

/* Kernel memory: Slab of /proc/meminfo, in bytes. */
static long long slab_bytes(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * Lets the slab settle: frees through RCU and deferred work land after the
 * objects are gone (an array that grew is freed after an RCU grace
 * period, which under TCG can take long). Waits until two readings 0.3 s
 * apart agree to 64 KiB.
 */
static long long settled_slab(void)
{
	long long prev = -1, cur = slab_bytes();
	int i;

	for (i = 0; i < 20 && (prev < 0 || llabs(cur - prev) > 65536); i++) {
		FILE *f = fopen("/proc/sys/vm/drop_caches", "w");

		sync();
		if (f) {
			fputs("3\n", f);
			fclose(f);
		}
		usleep(300 * 1000);
		prev = cur;
		cur = slab_bytes();
	}
	return cur;
}

static struct ibv_pd **fill(struct dev *d, struct ibv_pd **pds, long have,
			    long want)
{
	long i;

	if (want <= have)
		return pds;
	pds = realloc(pds, want * sizeof(*pds));
	if (!pds)
		die("realloc");
	for (i = have; i < want; i++) {
		pds[i] = ibv_alloc_pd(d->ctx);
		if (!pds[i])
			die("filling the file with PDs");
		if (i % 100000 == 99999)
			fprintf(stderr, "ibpd_bench:   %ld live PDs\n", i + 1);
	}
	return pds;
}

static void shuffle_handles(struct ibv_pd **pds, long n)
{
	long i;

	free(import_handles);
	import_handles = malloc(n * sizeof(*import_handles));
	if (!import_handles)
		die("malloc");
	for (i = 0; i < n; i++)
		import_handles[i] = pds[i]->handle;
	for (i = n - 1; i > 0; i--) {
		long j = random() % (i + 1);
		uint32_t t = import_handles[i];

		import_handles[i] = import_handles[j];
		import_handles[j] = t;
	}
	import_nhandles = n;
	import_next = 0;
}

#define FULL_SCALE 1000000L	/* the scale test's largest step */

/*
 * A device's max_pd (default 65536) is below the full scale: raise it
 * through its debugfs knob, /sys/kernel/debug/ibpd/<index>/max_pd (the
 * directory whose name file says NAME), to what the full scale needs,
 * also in a short run, which so checks that the full one can run. Dies
 * when the limit cannot be had.
 */
static void raise_max_pd(const char *name, struct ibv_context *ctx)
{
	long need = FULL_SCALE + 16, was = -1, now = -1;
	struct ibv_device_attr attr;
	char path[PATH_MAX];

	if (dbg_path_dev(path, sizeof(path), name, "max_pd")) {
		errno = ENOENT;
		die("max_pd: no debugfs directory for the device");
	}
	was = dbg_read_dev(name, "max_pd");
	if (was < 0 || (was < need && dbg_write_dev(name, "max_pd", need)))
		die(path);
	if (ibv_query_device(ctx, &attr))
		die("ibv_query_device");
	now = attr.max_pd;
	fprintf(stderr, "ibpd_bench: %s: max_pd %ld, raised to %ld through %s: "
		"the scale test holds up to %ld live PDs\n", name, was, now,
		path, FULL_SCALE);
	record("limits", "\"device\": \"%s\", \"max_pd_was\": %ld, "
	       "\"max_pd\": %ld, \"max_pd_needed\": %ld", name, was, now,
	       need);
	if (now < need) {
		errno = ENOMEM;
		die("max_pd: below what the full scale needs");
	}
}

static int mem_slices = 10;	/* slices of a memory measurement */
static int close_rounds = 61;	/* files closed to time a close */
static long close_pds = 200;	/* PDs in each of them */
static int procs_rounds = 9;	/* rounds of the throughput test */
static double procs_secs = 0.3;	/* length of each of its runs */

/*
 * Fills the file from have to want PDs in mem_slices equal slices, the
 * slab settled before and after each: the kernel memory per PD of each
 * slice, one record. Their mean is the memory per PD of the whole fill:
 * what grows in steps (an array doubled, a new slab) lands in one slice.
 */
static struct ibv_pd **fill_measured(struct dev *d, struct ibv_pd **pds,
				     long have, long want)
{
	double per_pd[MAX_ROUNDS];
	long long first = settled_slab(), slab0 = first, slab = first;
	int k;

	for (k = 0; k < mem_slices; k++) {
		long to = have + (want - have) * (k + 1) / mem_slices;
		long from = have + (want - have) * k / mem_slices;

		pds = fill(d, pds, from, to);
		slab = settled_slab();
		per_pd[k] = (double)(slab - slab0) / (to - from);
		slab0 = slab;
	}
	printf("IBPD-BENCH {\"group\": \"memory\", \"device\": \"%s\", "
	       "\"live_pds\": %ld, \"from_pds\": %ld, \"bytes_per_pd\": %.1f, "
	       "\"rounds\": %d, \"rounds_bytes_per_pd\": ", d->name, want,
	       have, (double)(slab - first) / (want - have), mem_slices);
	print_array(per_pd, mem_slices);
	printf("}\n");
	fflush(stdout);
	return pds;
}

/*
 * The cost of the PD verbs as the file fills up, on a file of its own;
 * the memory per PD on the way (from 1k to 100k live PDs, or up to the
 * largest step below 100k).
 */
static void bench_scale(const char *name, long max_live)
{
	static const long steps[] = { 1, 1000, 100000, FULL_SCALE };
	struct dev d;
	struct op ops[] = {
		{ &d, "null_ioctl", op_null },
		{ &d, "alloc_destroy_ioctl", op_alloc_ioctl },
		{ &d, "import", op_import },
		{ &d, "import_same", op_import_same },
		{ &d, "alloc_destroy_write", op_alloc_write },
	};
	int nops = sizeof(ops) / sizeof(ops[0]);
	struct ibv_pd **pds = NULL;
	long have = 0, mem_live = 1;
	unsigned int s;

	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++)
		if (steps[s] <= max_live && steps[s] <= 100000)
			mem_live = steps[s];
	dev_open(&d, name);
	raise_max_pd(name, d.ctx);
	/* d.pd is live PD number 1 */
	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		long live = steps[s];

		if (live > max_live)
			break;
		fprintf(stderr, "ibpd_bench: scale on %s: %ld live PDs\n",
			name, live);
		if (live == mem_live && live > 1)
			pds = fill_measured(&d, pds, have, live - 1);
		else
			pds = fill(&d, pds, have, live - 1);
		have = live - 1;
		if (have)
			shuffle_handles(pds, have);
		else
			import_nhandles = 0;
		measure(ops, nops);
		record_ops("scale", ops, nops, live);
	}
	fprintf(stderr, "ibpd_bench: closing a file with %ld PDs\n", have + 1);
	dev_close(&d);
	free(pds);
	import_nhandles = 0;
}

/* Memory per PD on rxe, whose provider allocates PDs by the write path. */
static void bench_memory(const char *name, long n)
{
	struct ibv_pd **pds;
	struct dev d;

	fprintf(stderr, "ibpd_bench: memory of %ld PDs on %s\n", n, name);
	dev_open(&d, name);
	pds = fill_measured(&d, NULL, 0, n);
	dev_close(&d);
	free(pds);
}

/*
 * Closing a file frees its PDs: the cost per PD, over close_rounds files
 * of close_pds PDs each. The files are small, so that a close is short
 * (Documentation/testing.rst, "How it measures") and the host's
 * preemptions of the vCPU fall on a few of them, outliers the median
 * leaves out. The core frees their uobjects
 * after an RCU grace period: each close is followed by a pause, so that
 * those frees do not land in the next one.
 */
static void bench_close(const char *name)
{
	double per_pd[MAX_ROUNDS];
	struct ibv_pd **pds;
	int r;

	fprintf(stderr, "ibpd_bench: closing %d files of %ld PDs on %s\n",
		close_rounds, close_pds, name);
	for (r = 0; r < close_rounds; r++) {
		struct dev d;
		double t;

		dev_open(&d, name);
		pds = fill(&d, NULL, 0, close_pds - 1);
		t = ticks_ns();
		dev_close(&d);
		per_pd[r] = (ticks_ns() - t) / close_pds;
		free(pds);
		usleep(20 * 1000);
	}
	printf("IBPD-BENCH {\"group\": \"close\", \"device\": \"%s\", "
	       "\"live_pds\": %ld, \"ns_per_pd\": %.1f, \"rounds\": %d, "
	       "\"rounds_ns_per_pd\": ", name, close_pds,
	       median(per_pd, close_rounds), close_rounds);
	print_array(per_pd, close_rounds);
	printf("}\n");
	fflush(stdout);
}

#define PROCS_MAX 4
#define PROC_STAMPS 131072

/* When each worker's ops completed, in its vCPU's ticks: shared with them. */
static uint64_t *stamps;	/* PROCS_MAX rows of PROC_STAMPS */
static uint64_t merged[PROCS_MAX * PROC_STAMPS];

/*
 * The ops per second of the workers on one vCPU (their completion times
 * merged in t, n of them, the first the start): the completions over the
 * time the vCPU made progress. A gap between two completions more than
 * OUTLIER_X times the median gap, and over OUTLIER_MIN_NS, is time the
 * host did not run the vCPU: it is left out, and added to *lost (ms).
 */
static double vcpu_rate(uint64_t *t, long n, double *lost)
{
	uint64_t limit, active = 0;
	long i;

	if (n < 2)
		return 0;
	qsort(t, n, sizeof(*t), cmp_u64);
	for (i = 0; i < n - 1; i++)
		sorted_ticks[i % MAX_ITERS] = t[i + 1] - t[i];
	qsort(sorted_ticks, n - 1 < MAX_ITERS ? n - 1 : MAX_ITERS,
	      sizeof(*sorted_ticks), cmp_u64);
	limit = OUTLIER_X * sorted_ticks[(n - 1 < MAX_ITERS ? n - 1 :
					  MAX_ITERS) / 2];
	if (limit < OUTLIER_MIN_NS / ns_per_tick)
		limit = OUTLIER_MIN_NS / ns_per_tick;
	for (i = 0; i < n - 1; i++)
		if (t[i + 1] - t[i] <= limit)
			active += t[i + 1] - t[i];
	*lost += (t[n - 1] - t[0] - active) * ns_per_tick / 1e6;
	return (n - 1) / (active * ns_per_tick / 1e9);
}

/*
 * n processes share d's file, each doing fn for secs on a vCPU of its
 * own (while there are vCPUs, from the last one down): their ops per
 * second, vCPU by vCPU over the time the host ran it (vcpu_rate()), and
 * in *lost the milliseconds it did not.
 */
static double run_procs(struct dev *d, const char *opname,
			int (*fn)(struct dev *d), int n, double secs,
			double *lost)
{
	int go[2], p, c, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double total = 0;

	/* a row ends at its first 0 */
	memset(stamps, 0, n * PROC_STAMPS * sizeof(*stamps));
	if (pipe(go))
		die("pipe");
	for (p = 0; p < n; p++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			uint64_t *t = stamps + p * PROC_STAMPS, end;
			long k = 0;
			char c;

			close(go[1]);
			pin(ncpu - 1 - p % ncpu);
			if (read(go[0], &c, 1) != 0)
				_exit(1);
			t[k++] = ticks();
			end = t[0] + secs * 1e9 / ns_per_tick;
			do {
				if (fn(d))
					die(opname);
				t[k++] = ticks();
			} while (t[k - 1] < end && k < PROC_STAMPS - 1);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);	/* start */
	for (p = 0; p < n; p++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("a worker failed");
	}
	*lost = 0;
	for (c = 0; c < ncpu; c++) {
		long m = 0;

		for (p = 0; p < n; p++) {
			uint64_t *t = stamps + p * PROC_STAMPS;
			long cnt = 0;

			if (ncpu - 1 - p % ncpu != c)
				continue;
			while (t[cnt])
				cnt++;
			memcpy(merged + m, t, cnt * sizeof(*t));
			m += cnt;
		}
		total += vcpu_rate(merged, m, lost);
	}
	return total;
}

/*
 * Throughput of 1, 2 and 4 processes sharing one file, in rounds: each
 * round runs the three, in a rotating order.
 */
static void bench_procs(const char *name, const char *opname,
			int (*fn)(struct dev *d))
{
	static const int nprocs[] = { 1, 2, 4 };
	const int nn = sizeof(nprocs) / sizeof(nprocs[0]);
	double rate[3][MAX_ROUNDS], lost[3][MAX_ROUNDS];
	struct dev d;
	int k, r;

	fprintf(stderr, "ibpd_bench: 1, 2 and 4 processes on %s: %s\n", name,
		opname);
	if (!stamps) {
		stamps = mmap(NULL, PROCS_MAX * PROC_STAMPS * sizeof(*stamps),
			      PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (stamps == MAP_FAILED)
			die("mmap");
	}
	dev_open(&d, name);
	/* a warm-up, not kept */
	run_procs(&d, opname, fn, 1, procs_secs / 2, &lost[0][0]);
	for (r = 0; r < procs_rounds; r++)
		for (k = 0; k < nn; k++) {
			int i = (r + k) % nn;

			rate[i][r] = run_procs(&d, opname, fn, nprocs[i],
					       procs_secs, &lost[i][r]);
		}
	for (k = 0; k < nn; k++) {
		printf("IBPD-BENCH {\"group\": \"procs\", \"device\": \"%s\", "
		       "\"op\": \"%s\", \"procs\": %d, \"secs\": %.3f, "
		       "\"ops_per_s\": %.1f, \"rounds\": %d, "
		       "\"rounds_ops_per_s\": ", name, opname, nprocs[k],
		       procs_secs, median(rate[k], procs_rounds),
		       procs_rounds);
		print_array(rate[k], procs_rounds);
		printf(", \"rounds_lost_ms\": ");
		print_array(lost[k], procs_rounds);
		printf("}\n");
	}
	fflush(stdout);
	dev_close(&d);
}

/*
 * The groups IBPD_BENCH_GROUPS runs alone, on rxe0: the data path where rxe
 * imports (the patched kernel), the doorbell on a kernel of its own.
 */
static const struct {
	const char *name;
	void (*run)(struct dev *rxe);
} alone[] = {
	{ "datapath", bench_datapath },
	{ "doorbell", bench_doorbell },
};

/* Whether the kernel was booted with its address space laid out anew. */
static bool kaslr(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return !strstr(line, "nokaslr");
}

static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);

	return v && *v ? atof(v) : dflt;
}

int main(void)
{
	const char *env = getenv("IBPD_BENCH_MAX_LIVE");
	long max_live = env ? atol(env) : FULL_SCALE;
	bool quick = getenv("IBPD_BENCH_QUICK") != NULL;
	const char *groups = getenv("IBPD_BENCH_GROUPS");
	int group, n_alone = sizeof(alone) / sizeof(alone[0]);
	const char *clock, *vcpu;
	struct utsname u;
	struct dev ib, rxe;

	/* the group of alone[] named, or n_alone: the whole bench */
	group = n_alone;
	if (groups && *groups) {
		for (group = 0; group < n_alone; group++)
			if (!strcmp(groups, alone[group].name))
				break;
		if (group == n_alone) {
			errno = EINVAL;
			die("IBPD_BENCH_GROUPS: datapath, doorbell or unset");
		}
	}
	if (quick) {
		rounds = 15;
		batch_ns = 0.2e6;
		warm_ns = 5e6;
		mem_slices = 4;
		close_rounds = 5;
		close_pds = 100;
		procs_rounds = 3;
		procs_secs = 0.1;
	}
	rounds = env_num("IBPD_BENCH_ROUNDS", rounds);
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		errno = EINVAL;
		die("IBPD_BENCH_ROUNDS");
	}
	batch_ns = env_num("IBPD_BENCH_BATCH_US", batch_ns / 1e3) * 1e3;
	pin(sysconf(_SC_NPROCESSORS_ONLN) - 1);
	calibrate_ticks();
	calibrate_timer();
	srandom(1);
	uname(&u);
	clock = getenv("IBPD_BENCH_CLOCK");
	vcpu = getenv("IBPD_VM_CPU");
	record("run", "\"kernel\": \"%s\", \"clock\": \"%s\", "
	       "\"vcpu\": \"%s\", \"cpus\": %ld, \"rounds\": %d, "
	       "\"batch_ms\": %.2f, \"warm_ms\": %.0f, \"max_live\": %ld, "
	       "\"timer_ns\": %.1f, \"outlier_x\": %d, "
	       "\"outlier_min_us\": %d, \"kaslr\": %s, \"aslr\": %s",
	       u.release, clock && *clock ? clock : "host",
	       vcpu && *vcpu && !strpbrk(vcpu, "\"\\") ? vcpu : "unknown",
	       sysconf(_SC_NPROCESSORS_ONLN), rounds, batch_ns / 1e6,
	       warm_ns / 1e6, max_live, timer_ticks * ns_per_tick, OUTLIER_X,
	       OUTLIER_MIN_NS / 1000, kaslr() ? "true" : "false",
	       personality(0xffffffff) & ADDR_NO_RANDOMIZE ? "false" : "true");

	/* one group alone on rxe0: scripts/tests/ibpd_check/bench.py */
	if (group < n_alone) {
		dev_open(&rxe, "rxe0");
		alone[group].run(&rxe);
		dev_close(&rxe);
		return 0;
	}
	dev_open(&ib, "ibpd0");
	dev_open(&rxe, "rxe0");
	bench_ops(&ib, &rxe);
	bench_doorbell(&rxe);
	bench_datapath(&rxe);
	dev_close(&rxe);
	dev_close(&ib);

	/* before the scale test, whose million frees take a while to settle */
	bench_memory("rxe0", max_live < 100000 ? max_live : 100000);
	bench_scale("ibpd0", max_live);
	bench_close("ibpd0");
	bench_close("rxe0");

	bench_procs("ibpd0", "alloc_destroy_ioctl", op_alloc_ioctl);
	bench_procs("ibpd0", "import", op_import);
	bench_procs("rxe0", "alloc_destroy_write", op_alloc_write);

	return 0;
}

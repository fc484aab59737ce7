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
 *   bare ioctl, and the same with a handle the core does not find;
 * - each verb through libibverbs and ibpd's provider (ibv_alloc_pd +
 *   ibv_dealloc_pd, ibv_import_pd + ibv_unimport_pd, ibv_reg_mr +
 *   ibv_dereg_mr) against the same verb as a bare ioctl or write(2) on the
 *   context's command fd: how thin the provider is;
 * - alloc/import/destroy cost with 1, 1k, 100k and 1M live PDs in one file
 *   (import of a random live PD, and of one PD again and again);
 * - kernel memory per live PD (slab before and after 100k PDs);
 * - ibpd0's max_pd, raised through debugfs to what 1M live PDs need (in
 *   every run, so that a short one shows the full one can run);
 * - alloc+destroy throughput of 1, 2 and 4 processes sharing one file.
 *
 * Each figure is the median of ROUNDS batches; the ops of a group are
 * measured round-robin, so that a slow moment of the host hits all alike.
 *
 * Environment: IBPD_BENCH_MAX_LIVE (default 1000000) caps the scale test,
 * IBPD_BENCH_QUICK=1 shortens every batch (for a smoke test).
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/ibpddv.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

#define ROUNDS 9
#define MAX_OPS 10

static double batch_ns = 30e6;	/* target length of one batch */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "ibpd_bench: %s: %s\n", what, strerror(errno));
	exit(1);
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
	double ns[ROUNDS];
};

static int op_null(struct dev *d)
{
	struct ib_uverbs_ioctl_hdr hdr = {
		.length = sizeof(hdr),
		.object_id = UVERBS_OBJECT_DEVICE,
		.method_id = 0x7fff,	/* no such method */
		.driver_id = d->driver_id,
	};

	if (!ioctl(d->ctx->cmd_fd, RDMA_VERBS_IOCTL, &hdr) ||
	    errno != EPROTONOSUPPORT)
		return -1;
	return 0;
}

/* The system call floor under the uverbs one. */
static int op_syscall(struct dev *d)
{
	return getppid() < 0;
}

/*
 * A bare ioctl on the PD object: its handle attribute (in, or out for a
 * new PD: *handle is set) and, when pdn_attr is not 0, the PD number out.
 */
static int pd_ioctl(struct dev *d, uint16_t method, uint16_t handle_attr,
		    uint32_t *handle, uint16_t pdn_attr)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[2];
	} c = {
		.hdr = {
			.length = sizeof(c.hdr) +
				  (pdn_attr ? 2 : 1) * sizeof(c.attrs[0]),
			.object_id = UVERBS_OBJECT_PD,
			.method_id = method,
			.num_attrs = pdn_attr ? 2 : 1,
			.driver_id = d->driver_id,
		},
	};
	uint32_t pdn;

	c.attrs[0].attr_id = handle_attr;
	c.attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
	c.attrs[0].data = *handle;
	c.attrs[1].attr_id = pdn_attr;
	c.attrs[1].flags = UVERBS_ATTR_F_MANDATORY;
	c.attrs[1].len = sizeof(pdn);
	c.attrs[1].data = (uintptr_t)&pdn;
	if (ioctl(d->ctx->cmd_fd, RDMA_VERBS_IOCTL, &c.hdr))
		return -1;
	*handle = c.attrs[0].data;
	return 0;
}

/*
 * The import method as a bare ioctl: no library object. With a handle no
 * file holds, the core parses the attributes and fails the lookup: what
 * the import costs before the driver's handler runs.
 */
static int import_ioctl(struct dev *d, uint32_t handle, int want)
{
	if (pd_ioctl(d, IBPD_METHOD_PD_IMPORT, IBPD_ATTR_PD_IMPORT_HANDLE,
		     &handle, IBPD_ATTR_PD_IMPORT_RESP_PDN))
		return errno == want ? 0 : -1;
	return want ? -1 : 0;
}

static int op_import_ioctl(struct dev *d)
{
	return import_ioctl(d, d->pd->handle, 0);
}

static int op_import_enoent(struct dev *d)
{
	return import_ioctl(d, INT32_MAX, ENOENT);
}

/*
 * A core write() command as libibverbs sends it: through the core's
 * INVOKE_WRITE ioctl, which (unlike write(2)) also works in a process
 * that did not open the file, as the forked workers below.
 */
static int write_cmd(struct dev *d, uint32_t command, const void *in,
		     uint16_t in_len, void *out, uint16_t out_len)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} c = {
		.hdr = {
			.length = sizeof(c.hdr) +
				  (out_len ? 3 : 2) * sizeof(c.attrs[0]),
			.object_id = UVERBS_OBJECT_DEVICE,
			.method_id = UVERBS_METHOD_INVOKE_WRITE,
			.num_attrs = out_len ? 3 : 2,
			.driver_id = d->driver_id,
		},
		.attrs = {
			{ .attr_id = UVERBS_ATTR_WRITE_CMD, .len = 8,
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = command },
			{ .attr_id = UVERBS_ATTR_CORE_IN, .len = in_len,
			  .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)in },
			{ .attr_id = UVERBS_ATTR_CORE_OUT, .len = out_len,
			  .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)out },
		},
	};

	/* inputs of up to 8 bytes travel in the data field itself */
	if (in_len <= sizeof(c.attrs[1].data)) {
		c.attrs[1].data = 0;
		memcpy(&c.attrs[1].data, in, in_len);
	}
	return ioctl(d->ctx->cmd_fd, RDMA_VERBS_IOCTL, &c.hdr);
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

/* Bare ibpd PD_ALLOC ioctl + the core's PD_DESTROY. */
static int op_alloc_ioctl(struct dev *d)
{
	uint32_t handle = 0;

	if (pd_ioctl(d, IBPD_METHOD_PD_ALLOC, IBPD_ATTR_PD_ALLOC_HANDLE,
		     &handle, IBPD_ATTR_PD_ALLOC_RESP_PDN))
		return -1;
	return pd_ioctl(d, UVERBS_METHOD_PD_DESTROY,
			UVERBS_ATTR_DESTROY_PD_HANDLE, &handle, 0);
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

static double run_batch(struct op *op, long n)
{
	double t = now_ns();
	long i;

	for (i = 0; i < n; i++)
		if (op->fn(op->d)) {
			fprintf(stderr, "ibpd_bench: %s on %s: %s\n", op->name,
				op->d->name, strerror(errno));
			exit(1);
		}
	return (now_ns() - t) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * Warms each op up for about two batches and calibrates it to a batch of
 * ~batch_ns, then measures ROUNDS batches of every op, round-robin.
 */
static void measure(struct op *ops, int nops)
{
	int i, r;

	for (i = 0; i < nops; i++) {
		double t = run_batch(&ops[i], 50);
		long warm = 2 * batch_ns / t;

		t = run_batch(&ops[i], warm > 50 ? warm : 50);
		ops[i].iters = batch_ns / t;
		if (ops[i].iters < 20)
			ops[i].iters = 20;
	}
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < nops; i++)
			ops[i].ns[r] = run_batch(&ops[i], ops[i].iters);
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

static void record_ops(const char *group, struct op *ops, int nops,
		       long live)
{
	int i;

	for (i = 0; i < nops; i++) {
		double lo = ops[i].ns[0], hi = ops[i].ns[0];
		int r;

		for (r = 1; r < ROUNDS; r++) {
			lo = ops[i].ns[r] < lo ? ops[i].ns[r] : lo;
			hi = ops[i].ns[r] > hi ? ops[i].ns[r] : hi;
		}
		record(group,
		       "\"device\": \"%s\", \"op\": \"%s\", \"live_pds\": %ld, "
		       "\"ns\": %.1f, \"min_ns\": %.1f, \"max_ns\": %.1f, "
		       "\"iters\": %ld, \"rounds\": %d",
		       ops[i].d->name, ops[i].name, live,
		       median(ops[i].ns, ROUNDS),
		       lo, hi, ops[i].iters, ROUNDS);
	}
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
		{ ib, "import", op_import },
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
 * objects are gone. Waits until two readings 0.3 s apart agree to 64 KiB.
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
	static const char root[] = "/sys/kernel/debug/ibpd";
	long need = FULL_SCALE + 16, was = -1, now = -1;
	struct ibv_device_attr attr;
	char path[PATH_MAX], buf[80];
	struct dirent *e;
	FILE *f;
	DIR *d;

	d = opendir(root);
	if (!d)
		die(root);
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s/name", root, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, name))
			break;
	}
	closedir(d);
	if (!e) {
		errno = ENOENT;
		die("max_pd: no debugfs directory for the device");
	}
	snprintf(strrchr(path, '/'), sizeof(path) - strlen(path), "/max_pd");
	/* a debugfs attribute does not seek: one open to read, one to write */
	f = fopen(path, "r");
	if (!f || fscanf(f, "%ld", &was) != 1)
		die(path);
	fclose(f);
	if (was < need) {
		f = fopen(path, "w");
		if (!f || fprintf(f, "%ld\n", need) < 0 || fclose(f))
			die(path);
	}
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

/*
 * The cost of the PD verbs as the file fills up, on a file of its own;
 * the memory of 100k PDs on the way.
 */
static void bench_scale(const char *name, long max_live)
{
	static const long steps[] = { 1, 1000, 100000, FULL_SCALE };
	struct dev d;
	struct op ops[MAX_OPS] = {
		{ &d, "null_ioctl", op_null },
		{ &d, "alloc_destroy_ioctl", op_alloc_ioctl },
		{ &d, "import", op_import },
		{ &d, "import_same", op_import_same },
		{ &d, "alloc_destroy_write", op_alloc_write },
	};
	struct ibv_pd **pds = NULL;
	long have = 0;
	long long slab0 = 0;
	long mem_live = 1;
	unsigned int s;
	double t;

	/* memory is measured at the largest step up to 100k */
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
		if (live == 1)
			slab0 = settled_slab();
		fprintf(stderr, "ibpd_bench: scale on %s: %ld live PDs\n",
			name, live);
		pds = fill(&d, pds, have, live - 1);
		have = live - 1;
		if (live == mem_live && live > 1) {
			long long slab = settled_slab();

			record("memory",
			       "\"device\": \"%s\", \"live_pds\": %ld, "
			       "\"slab_before\": %lld, \"slab_after\": %lld, "
			       "\"bytes_per_pd\": %.1f", name, live, slab0,
			       slab, (double)(slab - slab0) / (live - 1));
		}
		if (have)
			shuffle_handles(pds, have);
		else
			import_nhandles = 0;
		measure(ops, 5);
		record_ops("scale", ops, 5, live);
	}
	fprintf(stderr, "ibpd_bench: closing a file with %ld PDs\n", have + 1);
	t = now_ns();
	dev_close(&d);
	record("close", "\"device\": \"%s\", \"live_pds\": %ld, "
	       "\"ns_per_pd\": %.1f", name, have + 1,
	       (now_ns() - t) / (have + 1));
	free(pds);
	import_nhandles = 0;
}

/* Memory per PD on rxe, whose provider allocates PDs by the write path. */
static void bench_memory(const char *name, long n)
{
	struct ibv_pd **pds;
	long long slab0, slab;
	struct dev d;

	fprintf(stderr, "ibpd_bench: memory of %ld PDs on %s\n", n, name);
	dev_open(&d, name);
	slab0 = settled_slab();
	pds = fill(&d, NULL, 0, n);
	slab = settled_slab();
	record("memory", "\"device\": \"%s\", \"live_pds\": %ld, "
	       "\"slab_before\": %lld, \"slab_after\": %lld, "
	       "\"bytes_per_pd\": %.1f", name, n, slab0, slab,
	       (double)(slab - slab0) / n);
	dev_close(&d);
	free(pds);
}

/* nproc processes share one file, each allocating and destroying PDs. */
static void bench_procs(const char *name, const char *opname,
			int (*fn)(struct dev *d), double secs)
{
	static const int nprocs[] = { 1, 2, 4 };
	unsigned int k;
	struct dev d;

	dev_open(&d, name);
	for (k = 0; k < sizeof(nprocs) / sizeof(nprocs[0]); k++) {
		int go[2], res[2], p, n = nprocs[k];
		long total = 0;
		double t0;

		fprintf(stderr, "ibpd_bench: %d process(es) on %s: %s\n", n,
			name, opname);
		if (pipe(go) || pipe(res))
			die("pipe");
		for (p = 0; p < n; p++) {
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (!pid) {
				long ops = 0;
				double end;
				char c;

				close(go[1]);
				if (read(go[0], &c, 1) != 0)
					_exit(1);
				end = now_ns() + secs * 1e9;
				do {
					int i;

					for (i = 0; i < 16; i++)
						if (fn(&d))
							die(opname);
					ops += 16;
				} while (now_ns() < end);
				if (write(res[1], &ops, sizeof(ops)) !=
				    sizeof(ops))
					_exit(3);
				_exit(0);
			}
		}
		close(go[0]);
		close(res[1]);
		t0 = now_ns();
		close(go[1]);	/* start */
		for (p = 0; p < n; p++) {
			long ops;
			int status;

			if (read(res[0], &ops, sizeof(ops)) != sizeof(ops))
				die("a worker failed");
			total += ops;
			if (wait(&status) < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status))
				die("a worker failed");
		}
		close(res[0]);
		record("procs", "\"device\": \"%s\", \"op\": \"%s\", "
		       "\"procs\": %d, \"ops\": %ld, \"secs\": %.3f, "
		       "\"ops_per_s\": %.1f", name, opname, n, total,
		       (now_ns() - t0) / 1e9, total / ((now_ns() - t0) / 1e9));
	}
	dev_close(&d);
}

int main(void)
{
	const char *env = getenv("IBPD_BENCH_MAX_LIVE");
	long max_live = env ? atol(env) : FULL_SCALE;
	bool quick = getenv("IBPD_BENCH_QUICK") != NULL;
	double secs = quick ? 0.3 : 2;
	struct utsname u;
	struct dev ib, rxe;

	if (quick)
		batch_ns = 2e6;
	srandom(1);
	uname(&u);
	record("run", "\"kernel\": \"%s\", \"cpus\": %ld, \"rounds\": %d, "
	       "\"batch_ms\": %.0f, \"max_live\": %ld", u.release,
	       sysconf(_SC_NPROCESSORS_ONLN), ROUNDS, batch_ns / 1e6,
	       max_live);

	dev_open(&ib, "ibpd0");
	dev_open(&rxe, "rxe0");
	bench_ops(&ib, &rxe);
	dev_close(&rxe);
	dev_close(&ib);

	/* before the scale test, whose million frees take a while to settle */
	bench_memory("rxe0", max_live < 100000 ? max_live : 100000);
	bench_scale("ibpd0", max_live);

	bench_procs("ibpd0", "alloc_destroy_ioctl", op_alloc_ioctl, secs);
	bench_procs("ibpd0", "import", op_import, secs);
	bench_procs("rxe0", "alloc_destroy_write", op_alloc_write, secs);

	return 0;
}

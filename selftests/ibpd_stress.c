// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Concurrent stress: N processes share one uverbs file (passed over
 * SCM_RIGHTS) and allocate (ioctl and write paths), import each other's
 * PDs, register and deregister MRs through them, unimport and destroy,
 * at random. Every call must succeed or fail with an errno the race
 * explains; at the end no object may be lost or left over: the file, the
 * driver's counts and `rdma resource` agree. IBPD_STRESS_PROCS and
 * IBPD_STRESS_OPS size the run (default 4 x 3000).
 */

#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_libtest.h"

#define MAX_OBJS 32

struct counts {
	unsigned long ops, allocs, deallocs, busy, imports, stale_or_gone;
	unsigned long mrs, deregs;
};

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

/* errnos a racing peer can explain */
static int expected_race(int err)
{
	return err == ENOENT || err == EINVAL || err == ESTALE || err == EBUSY;
}

static int worker(int sock, unsigned int seed, int ops, struct counts *c)
{
	struct ibpd_pd *own[MAX_OBJS] = {}, *imp[MAX_OBJS] = {};
	struct ibpd_mr *mrs[MAX_OBJS] = {};
	struct ibpd_context *ctx;
	char *buf, msg;
	int fd, i, k;

	fd = ibpd_recv_fd(sock, &msg, 1);
	if (fd < 0)
		return 10;
	ctx = ibpd_import_device(fd);
	if (!ctx)
		return 11;
	buf = mmap(NULL, MAX_OBJS * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return 12;

	for (i = 0; i < ops; i++) {
		int slot = rand_r(&seed) % MAX_OBJS;
		uint32_t handles[256];
		size_t n;

		c->ops++;
		/* debugfs walks the PDs while everybody allocates and frees */
		if (!(i % 64) && dbg_count_lines("pds") < 1)
			return 13;
		switch (rand_r(&seed) % 6) {
		case 0:		/* alloc, either path */
			if (own[slot])
				break;
			own[slot] = rand_r(&seed) & 1 ? ibpd_alloc_pd(ctx) :
				    ibpd_alloc_pd_write(ctx);
			if (!own[slot] && errno != ENOMEM)
				return 20;
			c->allocs += !!own[slot];
			break;
		case 1:		/* destroy our own PD */
			if (!own[slot])
				break;
			k = ibpd_dealloc_pd(own[slot]);
			if (k == EBUSY) {
				c->busy++;
				break;
			}
			if (k)
				return 21;
			own[slot] = NULL;
			c->deallocs++;
			break;
		case 2:		/* import a PD somebody has in the file */
			if (imp[slot] || ibpd_list_pds(ctx, handles, 256, &n))
				break;
			if (!n)
				break;
			imp[slot] = ibpd_import_pd(ctx, handles[rand_r(&seed) % n]);
			if (!imp[slot] && !expected_race(errno))
				return 22;
			c->imports += !!imp[slot];
			c->stale_or_gone += !imp[slot];
			break;
		case 3:		/* MR through an imported PD */
			if (mrs[slot] || !imp[slot])
				break;
			mrs[slot] = ibpd_reg_mr(imp[slot], buf + slot * 4096,
						4096, IBPD_ACCESS_LOCAL_WRITE);
			if (!mrs[slot] && !expected_race(errno))
				return 23;
			c->mrs += !!mrs[slot];
			c->stale_or_gone += !mrs[slot];
			break;
		case 4:		/* deregister */
			if (!mrs[slot])
				break;
			if (ibpd_dereg_mr(mrs[slot]))
				return 24;
			mrs[slot] = NULL;
			c->deregs++;
			break;
		case 5:		/* unimport (no kernel call) or check it */
			if (!imp[slot])
				break;
			if (rand_r(&seed) & 1) {
				k = ibpd_query_pd(imp[slot], NULL, NULL);
				if (k && !expected_race(k))
					return 25;
			} else {
				ibpd_unimport_pd(imp[slot]);
				imp[slot] = NULL;
			}
			break;
		}
	}

	/* Drain: our MRs first, then (once every peer's MRs are gone) PDs. */
	for (i = 0; i < MAX_OBJS; i++) {
		if (mrs[i] && ibpd_dereg_mr(mrs[i]))
			return 30;
		c->deregs += !!mrs[i];
		if (imp[i])
			ibpd_unimport_pd(imp[i]);
	}
	msg = 'm';
	if (write(sock, &msg, 1) != 1 || read(sock, &msg, 1) != 1)
		return 31;
	for (i = 0; i < MAX_OBJS; i++)
		if (own[i] && ibpd_dealloc_pd(own[i]))
			return 32;
	if (ibpd_close_device(ctx))
		return 33;
	return 0;
}

TEST(shared_file_stress)
{
	int procs = env_int("IBPD_STRESS_PROCS", 4);
	int ops = env_int("IBPD_STRESS_OPS", 3000);
	struct counts *c, total = {};
	struct ibpd_context *ctx;
	long long base_pds = dbg_read("num_pds");
	long long base_mrs = dbg_read("num_mrs");
	int (*sv)[2], i, status;
	uint32_t handles[4];
	struct timespec t0, t1;
	size_t n;
	pid_t *pids;
	char m;

	ctx = ibpd_open_device(test_dev());
	ASSERT_NE(NULL, ctx);
	c = mmap(NULL, sizeof(*c) * procs, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	sv = calloc(procs, sizeof(*sv));
	pids = calloc(procs, sizeof(*pids));
	ASSERT_NE(NULL, sv);
	ASSERT_NE(NULL, pids);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < procs; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv[i]));
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(sv[i][0]);
			_exit(worker(sv[i][1], 1234 + i, ops, &c[i]));
		}
		close(sv[i][1]);
		m = 'f';
		ASSERT_EQ(0, ibpd_send_fd(sv[i][0], ibpd_context_cmd_fd(ctx),
					  &m, 1));
	}
	/* every worker has dropped its MRs: let them destroy their PDs */
	for (i = 0; i < procs; i++)
		ASSERT_EQ(1, read(sv[i][0], &m, 1));
	for (i = 0; i < procs; i++)
		ASSERT_EQ(1, write(sv[i][0], "g", 1));
	for (i = 0; i < procs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
		total.ops += c[i].ops;
		total.allocs += c[i].allocs;
		total.deallocs += c[i].deallocs;
		total.busy += c[i].busy;
		total.imports += c[i].imports;
		total.stale_or_gone += c[i].stale_or_gone;
		total.mrs += c[i].mrs;
		total.deregs += c[i].deregs;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	/* nothing lost, nothing left */
	ASSERT_EQ(0, ibpd_list_pds(ctx, handles, 4, &n));
	EXPECT_EQ(0, n);
	EXPECT_EQ(base_pds, dbg_read("num_pds"));
	EXPECT_EQ(base_mrs, dbg_read("num_mrs"));
	EXPECT_EQ(base_pds, rdma_res_pds());
	EXPECT_EQ(total.mrs, total.deregs);

	ksft_print_msg("stress: %d processes x %d ops = %lu ops in %.1fs: %lu allocs, %lu deallocs (+%lu EBUSY), %lu imports, %lu MRs, %lu raced (ENOENT/EINVAL/ESTALE)\n",
		       procs, ops, total.ops,
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		       total.allocs, total.deallocs, total.busy,
		       total.imports, total.mrs, total.stale_or_gone);
	EXPECT_EQ(0, ibpd_close_device(ctx));
}

TEST_HARNESS_MAIN

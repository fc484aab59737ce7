// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Concurrent stress: N processes share one uverbs file (passed over
 * SCM_RIGHTS) and allocate (ioctl and write paths), import each other's
 * PDs, register and deregister MRs through them, forget imports and
 * destroy, at random, with raw uverbs ioctls. Every call must succeed or fail with an errno the race
 * explains; at the end no object may be lost or left over: the file, the
 * driver's counts and `rdma resource` agree. IBPD_STRESS_PROCS and
 * IBPD_STRESS_OPS size the run (default 4 x 3000).
 */

#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/ibpd_harness.h"
#include "ibpd_test.h"
#include "scm_rights.h"

#define MAX_OBJS 32

struct counts {
	unsigned long ops, allocs, deallocs, busy, imports, stale_or_gone;
	unsigned long mrs, deregs;
};

/* errnos a racing peer can explain */
static int expected_race(int err)
{
	return err == ENOENT || err == EINVAL || err == ESTALE || err == EBUSY;
}

/* A slot of the worker's tables: a handle, or NONE. */
#define NONE (-1L)

static int worker(int sock, unsigned int seed, int ops, struct counts *c)
{
	long own[MAX_OBJS], imp[MAX_OBJS], mrs[MAX_OBJS];
	uint64_t imp_id[MAX_OBJS];
	char *buf, msg;
	int fd, i, k;

	for (i = 0; i < MAX_OBJS; i++)
		own[i] = imp[i] = mrs[i] = NONE;
	fd = ibpd_recv_fd(sock, &msg, 1);
	if (fd < 0)
		return 10;
	/* a second context on the shared file */
	if (test_query_context(fd))
		return 11;
	buf = mmap(NULL, MAX_OBJS * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return 12;

	for (i = 0; i < ops; i++) {
		int slot = rand_r(&seed) % MAX_OBJS;
		uint32_t handles[256], n, h;
		uint64_t id;

		c->ops++;
		/* debugfs walks the PDs while everybody allocates and frees */
		if (!(i % 64) && dbg_count_lines("pds") < 1)
			return 13;
		switch (rand_r(&seed) % 6) {
		case 0:		/* alloc, either path */
			if (own[slot] != NONE)
				break;
			k = rand_r(&seed) & 1 ?
				test_pd_alloc(fd, &h, NULL, NULL) :
				test_pd_alloc_write(fd, &h, NULL);
			if (k && k != ENOMEM)
				return 20;
			if (!k)
				own[slot] = h;
			c->allocs += !k;
			break;
		case 1:		/* destroy our own PD */
			if (own[slot] == NONE)
				break;
			k = test_pd_destroy(fd, own[slot]);
			if (k == EBUSY) {
				c->busy++;
				break;
			}
			if (k)
				return 21;
			own[slot] = NONE;
			c->deallocs++;
			break;
		case 2:		/* import a PD somebody has in the file */
			if (imp[slot] != NONE ||
			    test_list_pds(fd, handles, 256, &n))
				break;
			if (!n)
				break;
			h = handles[rand_r(&seed) % (n < 256 ? n : 256)];
			k = test_pd_import(fd, h, NULL, NULL, &id, NULL);
			if (k && !expected_race(k))
				return 22;
			if (!k) {
				imp[slot] = h;
				imp_id[slot] = id;
			}
			c->imports += !k;
			c->stale_or_gone += !!k;
			break;
		case 3:		/* MR through an imported PD */
			if (mrs[slot] != NONE || imp[slot] == NONE)
				break;
			k = test_mr_reg(fd, imp[slot], buf + slot * 4096, 4096,
					TEST_ACCESS_LOCAL_WRITE, &h, NULL);
			if (k && !expected_race(k))
				return 23;
			if (!k)
				mrs[slot] = h;
			c->mrs += !k;
			c->stale_or_gone += !!k;
			break;
		case 4:		/* deregister */
			if (mrs[slot] == NONE)
				break;
			if (test_mr_destroy(fd, mrs[slot]))
				return 24;
			mrs[slot] = NONE;
			c->deregs++;
			break;
		case 5:		/* forget the import (no kernel call) or check it */
			if (imp[slot] == NONE)
				break;
			if (rand_r(&seed) & 1) {
				k = test_pd_import(fd, imp[slot], &imp_id[slot],
						   NULL, NULL, NULL);
				if (k && !expected_race(k))
					return 25;
			} else {
				imp[slot] = NONE;
			}
			break;
		}
	}

	/* Drain: our MRs first, then (once every peer's MRs are gone) PDs. */
	for (i = 0; i < MAX_OBJS; i++) {
		if (mrs[i] != NONE && test_mr_destroy(fd, mrs[i]))
			return 30;
		c->deregs += mrs[i] != NONE;
	}
	msg = 'm';
	if (write(sock, &msg, 1) != 1 || read(sock, &msg, 1) != 1)
		return 31;
	for (i = 0; i < MAX_OBJS; i++)
		if (own[i] != NONE && test_pd_destroy(fd, own[i]))
			return 32;
	if (close(fd))
		return 33;
	return 0;
}

/*
 * The harness's 30 s for a test is a speed limit under the debug kernel
 * (KASAN, lockdep) on a slow machine (Documentation/testing.rst, "Run
 * times"). 600 s guards against a hang.
 */
FIXTURE(stress) {};
FIXTURE_SETUP(stress) {}
FIXTURE_TEARDOWN(stress) {}

TEST_F_TIMEOUT(stress, shared_file_stress, 600)
{
	int procs = env_int("IBPD_STRESS_PROCS", 4);
	int ops = env_int("IBPD_STRESS_OPS", 3000);
	struct counts *c, total = {};
	long long base_pds = dbg_read("num_pds");
	long long base_mrs = dbg_read("num_mrs");
	int (*sv)[2], i, status;
	uint32_t handles[4], n;
	struct timespec t0, t1;
	int fd;
	pid_t *pids;
	char m;

	fd = test_open(test_dev());
	ASSERT_LE(0, fd);
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
		ASSERT_EQ(0, ibpd_send_fd(sv[i][0], fd, &m, 1));
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
	ASSERT_EQ(0, test_list_pds(fd, handles, 4, &n));
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
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN

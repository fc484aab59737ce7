// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * fail-nth sweeps, in the manner of iommufd_fail_nth.c: a test body runs a
 * sequence of raw uverbs calls that succeeds, then runs again, from a
 * fresh fixture, with its 1st, 2nd, ... kernel allocation after
 * fail_nth_enable() failing (failslab and /proc/thread-self/fail-nth),
 * until a run reaches no more allocations. Every failed call must return a
 * clean errno; every teardown must find the device's PD and MR counts back
 * where they were; the kernel checkers (KASAN, kmemleak, lockdep) watch the
 * error paths. Needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS:
 * skips without.
 */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ibpd_test.h"

#define MAX_NTH 2000

static bool have_fault_injection;

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

/* Any slab allocation may fail; the log stays quiet. */
static __attribute__((constructor)) void setup_fault_injection(void)
{
	have_fault_injection =
		!write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") &&
		!write_file("/sys/kernel/debug/failslab/verbose", "0");
}

struct fail_nth_state {
	int proc_fd;
	unsigned int iteration;
};

static void fail_nth_first(struct __test_metadata *_metadata,
			   struct fail_nth_state *nth_state)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	nth_state->proc_fd = open(path, O_RDWR);
	ASSERT_NE(-1, nth_state->proc_fd);
}

/* Disarms; whether another run is needed (the armed fault was injected). */
static bool fail_nth_next(struct __test_metadata *_metadata,
			  struct fail_nth_state *nth_state)
{
	char buf[16] = "";

	ASSERT_GT(MAX_NTH, nth_state->iteration);
	if (nth_state->iteration) {
		ASSERT_LT(0, pread(nth_state->proc_fd, buf, sizeof(buf) - 1, 0));
		ASSERT_EQ(1, pwrite(nth_state->proc_fd, "0", 1, 0));
		/* still armed: the run made fewer allocations than that */
		if (buf[0] != '0')
			return false;
	}
	nth_state->iteration++;
	return true;
}

/* Arms the current iteration's fault: the calls after this may fail. */
static void __fail_nth_enable(struct __test_metadata *_metadata,
			      struct fail_nth_state *nth_state)
{
	char buf[16];
	int len;

	if (!nth_state->iteration)
		return;
	len = snprintf(buf, sizeof(buf), "%u", nth_state->iteration);
	ASSERT_EQ(len, pwrite(nth_state->proc_fd, buf, len, 0));
}

#define fail_nth_enable() __fail_nth_enable(_metadata, _nth_state)

/* What an allocation failure may surface as: ours, the VFS's, the core's. */
static bool clean_errno(int err)
{
	return err == ENOMEM || err == ENFILE || err == EFAULT ||
	       err == EAGAIN || err == ENODEV;
}

/* The result of a call in a test body: 0, or a clean errno. */
#define nth_check(err)							\
	({								\
		int __err = (err);					\
		ASSERT_TRUE(!__err || clean_errno(__err))		\
			TH_LOG("nth %u: errno %d", _nth_state->iteration, \
			       __err);					\
		__err;							\
	})

/*
 * TEST_FAIL_NTH(fixture, name) { body }: the body is a function of the
 * fixture (struct _test_data_<fixture>, what FIXTURE_DATA() names); it
 * returns 0 when every call succeeded.
 */
#define TEST_FAIL_NTH(fixture, name)					\
	static int test_nth_##name(struct __test_metadata *_metadata,	\
				   struct _test_data_##fixture *self,	\
				   struct fail_nth_state *_nth_state);	\
	TEST_F(fixture, name)						\
	{								\
		struct fail_nth_state nth_state = {};			\
		int test_result = 0;					\
									\
		if (!have_fault_injection)				\
			SKIP(return, "no failslab/fail-nth");		\
		fail_nth_first(_metadata, &nth_state);			\
		ASSERT_EQ(0, test_nth_##name(_metadata, self, &nth_state)); \
		while (fail_nth_next(_metadata, &nth_state)) {		\
			fixture##_teardown(_metadata, self, variant);	\
			fixture##_setup(_metadata, self, variant);	\
			test_result = test_nth_##name(_metadata, self,	\
						      &nth_state);	\
		}							\
		ASSERT_EQ(0, test_result);				\
		ksft_print_msg("fail-nth %s: %u fail points swept\n",	\
			       #name, nth_state.iteration - 1);		\
	}								\
	static int test_nth_##name(struct __test_metadata *_metadata,	\
				   struct _test_data_##fixture *self,	\
				   struct fail_nth_state *_nth_state)

/* What a sweep opens and allocates; closing fd destroys the rest. */
struct sweep_objs {
	int fd;		/* a uverbs file with a context */
	int fd2;	/* another fd of the same file */
	uint32_t pd, mr;
	void *buf;
};

FIXTURE(sweep) {
	struct sweep_objs o;
	long long base_pds, base_mrs;
};

FIXTURE_SETUP(sweep)
{
	self->o.fd = -1;
	self->o.fd2 = -1;
	self->o.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->o.buf);
	self->base_pds = dbg_read("num_pds");
	self->base_mrs = dbg_read("num_mrs");
	ASSERT_LE(0, self->base_pds);
}

/* Closing the file destroys what is left in it: nothing may stay behind. */
FIXTURE_TEARDOWN(sweep)
{
	if (self->o.fd2 >= 0)
		close(self->o.fd2);
	if (self->o.fd >= 0)
		close(self->o.fd);
	munmap(self->o.buf, 4096);
	ASSERT_EQ(self->base_pds, dbg_read("num_pds"));
	ASSERT_EQ(self->base_mrs, dbg_read("num_mrs"));
}

/* The file and the PD (and MR) that the sweeps start from, unarmed. */
static int open_pd(struct sweep_objs *o, bool mr)
{
	o->fd = test_open(test_dev());
	if (o->fd < 0)
		return -1;
	if (test_pd_alloc(o->fd, &o->pd, NULL, NULL))
		return -1;
	if (mr && test_mr_reg(o->fd, o->pd, o->buf, 4096, 1, &o->mr, NULL))
		return -1;
	return 0;
}

TEST_FAIL_NTH(sweep, open_device)
{
	fail_nth_enable();
	self->o.fd = test_open(test_dev());
	return nth_check(self->o.fd < 0 ? -self->o.fd : 0);
}

/* What ibv_import_device() does with a dup'ed fd. */
TEST_FAIL_NTH(sweep, import_device)
{
	self->o.fd = test_open(test_dev());
	if (self->o.fd < 0)
		return -1;
	fail_nth_enable();
	self->o.fd2 = dup(self->o.fd);
	if (self->o.fd2 < 0)
		return nth_check(errno);
	return nth_check(test_query_context(self->o.fd2));
}

TEST_FAIL_NTH(sweep, alloc_pd_ioctl)
{
	uint64_t id;
	uint32_t pdn;

	self->o.fd = test_open(test_dev());
	if (self->o.fd < 0)
		return -1;
	fail_nth_enable();
	return nth_check(test_pd_alloc(self->o.fd, &self->o.pd, &pdn, &id));
}

TEST_FAIL_NTH(sweep, alloc_pd_write)
{
	struct ibpd_alloc_pd_resp drv;

	self->o.fd = test_open(test_dev());
	if (self->o.fd < 0)
		return -1;
	fail_nth_enable();
	return nth_check(test_pd_alloc_write(self->o.fd, &self->o.pd, &drv));
}

TEST_FAIL_NTH(sweep, import_pd)
{
	uint32_t pdn, usecnt;
	uint64_t id;

	if (open_pd(&self->o, false))
		return -1;
	ASSERT_EQ(0, test_pd_import(self->o.fd, self->o.pd, NULL, NULL, &id, NULL));
	self->o.fd2 = dup(self->o.fd);
	ASSERT_LE(0, self->o.fd2);
	fail_nth_enable();
	return nth_check(test_pd_import(self->o.fd2, self->o.pd, &id, &pdn, NULL,
					&usecnt));
}

TEST_FAIL_NTH(sweep, reg_mr)
{
	uint32_t lkey;

	if (open_pd(&self->o, false))
		return -1;
	fail_nth_enable();
	return nth_check(test_mr_reg(self->o.fd, self->o.pd, self->o.buf, 4096, 1,
				     &self->o.mr, &lkey));
}

TEST_FAIL_NTH(sweep, dereg_mr)
{
	if (open_pd(&self->o, true))
		return -1;
	fail_nth_enable();
	return nth_check(test_mr_destroy(self->o.fd, self->o.mr));
}

TEST_FAIL_NTH(sweep, dealloc_pd)
{
	if (open_pd(&self->o, false))
		return -1;
	fail_nth_enable();
	return nth_check(test_pd_destroy(self->o.fd, self->o.pd));
}

/* The cleanup of a file that still holds a PD and an MR. */
TEST_FAIL_NTH(sweep, close_with_objects)
{
	int fd;

	if (open_pd(&self->o, true))
		return -1;
	fd = self->o.fd;
	self->o.fd = -1;
	fail_nth_enable();
	return nth_check(close(fd) ? errno : 0);
}

TEST_HARNESS_MAIN

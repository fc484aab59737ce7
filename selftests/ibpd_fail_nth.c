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
 * error paths. The link sweeps do the same to "rdma link add" and "rdma
 * link delete" (RDMA_NLDEV_CMD_NEWLINK and _DELLINK, sent over netlink by
 * the test itself, so that the faults hit the kernel's work for it): the
 * device either is registered and works or is not there at all, and
 * nothing of it stays behind. Needs CONFIG_FAILSLAB and
 * CONFIG_FAULT_INJECTION_DEBUG_FS: skips without; the link sweeps need
 * dummy0 as the link's netdev.
 */

#include <fcntl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/ibpd_harness.h"
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

/*
 * What an allocation failure may surface as: ours, the VFS's, the core's,
 * netlink's.
 */
static bool clean_errno(int err)
{
	return err == ENOMEM || err == ENFILE || err == EFAULT ||
	       err == EAGAIN || err == ENODEV || err == ENOBUFS;
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
 * returns 0 when every call succeeded. A sweep has 300 s (the harness's
 * default 30 s is a speed limit under the debug kernel on a slow
 * machine: a hang guard, not that); TEST_FAIL_NTH_TIMEOUT: one that may
 * take longer. A fixture
 * whose sweeps cannot run here skips from its setup (SETUP_SKIP).
 */
#define TEST_FAIL_NTH(fixture, name)					\
	TEST_FAIL_NTH_TIMEOUT(fixture, name, 300)

#define TEST_FAIL_NTH_TIMEOUT(fixture, name, timeout)			\
	static int test_nth_##name(struct __test_metadata *_metadata,	\
				   struct _test_data_##fixture *self,	\
				   struct fail_nth_state *_nth_state);	\
	TEST_F_TIMEOUT(fixture, name, timeout)				\
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

/* RDMA netlink (nldev), as iproute2's rdma speaks it. */
#define LINK_DEV	"ibpdf0"
#define LINK_NETDEV	"dummy0"

struct nl_req {
	struct nlmsghdr nlh;
	char attrs[256];
};

static void nl_init(struct nl_req *r, int cmd, int flags)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = NLMSG_LENGTH(0);
	r->nlh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	r->nlh.nlmsg_flags = NLM_F_REQUEST | flags;
}

static void nl_put(struct nl_req *r, uint16_t type, const void *data,
		   size_t len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->nlh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nlh.nlmsg_len = NLMSG_ALIGN(r->nlh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_put_str(struct nl_req *r, uint16_t type, const char *str)
{
	nl_put(r, type, str, strlen(str) + 1);
}

/*
 * Sends R on a new RDMA netlink socket and reads the answer to its end,
 * calling EACH on every message of a dump. 0, or the errno of the socket
 * calls or of the kernel's answer.
 */
static int nl_request(struct nl_req *r,
		      void (*each)(struct nlmsghdr *h, void *arg), void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint32_t buf[4096];
	struct nlmsghdr *h;
	bool done = false;
	int fd, err = 0;
	ssize_t n, left;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return errno;
	if (sendto(fd, r, r->nlh.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		err = errno;
		goto out;
	}
	while (!done) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			err = errno;
			break;
		}
		left = n;
		for (h = (void *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (each)
				each(h, arg);
		}
		if (!n)
			break;
	}
out:
	close(fd);
	return err;
}

/* rdma link add NAME type ibpd netdev dummy0 */
static int link_add(const char *name)
{
	struct nl_req r;

	nl_init(&r, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	nl_put_str(&r, RDMA_NLDEV_ATTR_DEV_NAME, name);
	nl_put_str(&r, RDMA_NLDEV_ATTR_LINK_TYPE, "ibpd");
	nl_put_str(&r, RDMA_NLDEV_ATTR_NDEV_NAME, LINK_NETDEV);
	return nl_request(&r, NULL, NULL);
}

struct dev_lookup {
	const char *name;
	int index;
};

static void dev_lookup_one(struct nlmsghdr *h, void *arg)
{
	int len = h->nlmsg_len - NLMSG_HDRLEN, index = -1;
	struct dev_lookup *l = arg;
	struct nlattr *a = NLMSG_DATA(h);
	bool match = false;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		void *data = (char *)a + NLA_HDRLEN;

		if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
			index = *(uint32_t *)data;
		else if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
			match = !strncmp(data, l->name,
					 a->nla_len - NLA_HDRLEN);
		len -= NLA_ALIGN(a->nla_len);
		a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	if (match)
		l->index = index;
}

/* The ib_core index of device NAME (rdma dev show), -1 if none. */
static int link_index(const char *name)
{
	struct dev_lookup l = { .name = name, .index = -1 };
	struct nl_req r;

	nl_init(&r, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	if (nl_request(&r, dev_lookup_one, &l))
		return -1;
	return l.index;
}

/* rdma link delete, by the device's index */
static int link_del(int index)
{
	uint32_t idx = index;
	struct nl_req r;

	nl_init(&r, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
	nl_put(&r, RDMA_NLDEV_ATTR_DEV_INDEX, &idx, sizeof(idx));
	return nl_request(&r, NULL, NULL);
}

/* rdma link delete NAME, when there is such a device: 0 or the errno. */
static int link_remove(const char *name)
{
	int index = link_index(name);

	return index < 0 ? 0 : link_del(index);
}

/* The devices that ibpd's debugfs has a directory for. */
static int dbg_count_devs(void)
{
	DIR *d = opendir(IBPD_DBG_ROOT);
	char dir[256];
	int n = 0;

	if (!d)
		return -1;
	while (!dbg_dir_next(d, dir, sizeof(dir)))
		n++;
	closedir(d);
	return n;
}

FIXTURE(link) {
	int base_devs;
};

FIXTURE_SETUP(link)
{
	if (access("/sys/class/net/" LINK_NETDEV, F_OK))
		SETUP_SKIP("no " LINK_NETDEV);
	ASSERT_EQ(0, link_remove(LINK_DEV));
	self->base_devs = dbg_count_devs();
	ASSERT_LE(0, self->base_devs);
}

/* Registered and then deleted, or never there: nothing of it stays. */
FIXTURE_TEARDOWN(link)
{
	ASSERT_EQ(0, link_remove(LINK_DEV));
	ASSERT_EQ(-1, link_index(LINK_DEV));
	ASSERT_NE(0, access("/sys/class/infiniband/" LINK_DEV, F_OK));
	ASSERT_EQ(self->base_devs, dbg_count_devs());
}

/*
 * A new device, which must then work: a context and a PD. Most of the
 * faults here hit allocations that registration may do without (uevents,
 * debugfs): the device is then registered all the same.
 */
TEST_FAIL_NTH_TIMEOUT(link, newlink, 900)
{
	uint32_t pd;
	int fd, err;

	fail_nth_enable();
	err = nth_check(link_add(LINK_DEV));
	if (err)
		return err;
	fd = test_open(LINK_DEV);
	if (fd < 0)
		return nth_check(-fd);
	err = nth_check(test_pd_alloc(fd, &pd, NULL, NULL));
	close(fd);
	return err;
}

/* The deletion of a device with a file, a PD and an MR open on it. */
TEST_FAIL_NTH_TIMEOUT(link, dellink, 900)
{
	struct sweep_objs o = { .fd = -1 };
	int index, err;

	ASSERT_EQ(0, link_add(LINK_DEV));
	index = link_index(LINK_DEV);
	ASSERT_LE(0, index);
	o.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, o.buf);
	o.fd = test_open(LINK_DEV);
	ASSERT_LE(0, o.fd);
	test_cmd_pd_alloc(o.fd, &o.pd);
	test_cmd_mr_reg(o.fd, o.pd, o.buf, 4096, 1, &o.mr);
	fail_nth_enable();
	err = nth_check(link_del(index));
	close(o.fd);
	munmap(o.buf, 4096);
	return err;
}

TEST_HARNESS_MAIN

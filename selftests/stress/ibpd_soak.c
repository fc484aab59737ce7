// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The soak (make soak; a short one in make check): for IBPD_SOAK_SECONDS,
 * IBPD_SOAK_PROCS worker processes of IBPD_SOAK_THREADS threads each and
 * IBPD_SOAK_FUZZERS fuzzing processes share uverbs files of every ibpd
 * device: the supervisor opens files and passes them over SCM_RIGHTS,
 * workers dup them, fork children that use them, close them while other
 * threads are inside an ioctl on them, and get killed (SIGKILL) at random.
 * Workers allocate (ioctl and write paths), import (plain and checked),
 * destroy, register and deregister MRs; fuzzers send structure-aware calls
 * (ibpd_fuzz.h). Meanwhile one thread of the supervisor drives the device
 * lifecycle in cycles: rdma link add, rename, a move to a network namespace
 * and back, a move into a namespace that is then deleted, rdma link delete,
 * a pdn counter about to wrap, and rmmod + insmod (IBPD_KO) with every
 * file open (retried while a debugfs file of the module is open: the
 * kernel refuses the unload then, cleanly); a cycle starts at most every
 * IBPD_SOAK_CYCLE_SECONDS (default 20; 0: one after the other).
 *
 * Every answer must be success or an errno the races explain; at the end,
 * with every process gone, every ibpd device must hold no PD and no MR.
 * Progress goes to the TAP stream once a minute; "IBPD-SOAK-SAMPLE {json}"
 * lines every 10 s and one "IBPD-SOAK {json}" line at the end carry the
 * figures (ops by kind, errnos by kind, events, peaks) for scripts/tests/ibpd_check/soak.py.
 */

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "ibpd_fuzz.h"
#include "scm_rights.h"

#define NSLOTS 4
#define MAX_PROCS 32
#define MAX_ERRNO 134
#define MAX_DEVS 64
#define TRACK 32

enum op {
	OP_ALLOC_IOCTL, OP_ALLOC_WRITE, OP_DESTROY, OP_IMPORT,
	OP_IMPORT_CHECKED, OP_MR_REG, OP_MR_DEREG, OP_LIST, OP_QUERY_CONTEXT,
	OP_DUP_CLOSE, OP_RECV_FILE, OP_REOPEN, OP_FORK, OP_EXIT, OP_KILL,
	OP_DEBUGFS, OP_MAX
};

static const char *const op_names[OP_MAX] = {
	"alloc_ioctl", "alloc_write", "destroy", "import", "import_checked",
	"mr_reg", "mr_dereg", "list", "query_context", "dup_close",
	"recv_file", "reopen", "fork", "exit", "kill", "debugfs",
};

enum event {
	EV_LINK_ADD, EV_RENAME, EV_NETNS_MOVE, EV_NETNS_DELETE, EV_LINK_DELETE,
	EV_PDN_WRAP, EV_RMMOD_INSMOD, EV_MAX
};

static const char *const ev_names[EV_MAX] = {
	"link_add", "rename", "netns_move", "netns_delete", "link_delete",
	"pdn_wrap", "rmmod_insmod",
};

/* Counters shared by every process (MAP_SHARED), updated atomically. */
struct shared {
	unsigned long ops[OP_MAX];
	unsigned long errs[OP_MAX][MAX_ERRNO + 1];
	unsigned long unexpected[OP_MAX];
	unsigned long fuzz_calls;
	unsigned long fuzz_errs[MAX_ERRNO + 1];
	unsigned long events[EV_MAX], events_failed[EV_MAX];
	double event_secs[EV_MAX];
	int stop;
	int unloading;	/* no debugfs reads: an open one refuses rmmod */
};

static struct shared *shm;

#define ADD(x, n) __atomic_fetch_add(&(x), (n), __ATOMIC_RELAXED)
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * What the races explain: the object went (ENOENT, EINVAL for a handle
 * of the wrong type once reused), a stale identity (ESTALE), a PD in use
 * (EBUSY), max_pd (ENOMEM), a device gone under the file (EIO, ENODEV), an
 * fd closed or reused by another thread (EBADF, ENOTTY), a device
 * in another namespace (ENXIO, EPERM).
 */
static bool expected(int err)
{
	switch (err) {
	case 0: case ENOENT: case EINVAL: case ESTALE: case EBUSY:
	case ENOMEM: case EIO: case ENODEV: case EBADF: case ENOTTY:
	case ENXIO: case EPERM:
		return true;
	}
	return false;
}

static void count(enum op op, int err)
{
	ADD(shm->ops[op], 1);
	ADD(shm->errs[op][err > 0 && err <= MAX_ERRNO ? err : 0], !!err);
	if (!expected(err)) {
		ADD(shm->unexpected[op], 1);
		fprintf(stderr, "# soak: %s: unexpected %s\n", op_names[op],
			strerror(err));
	}
}

/* The ibpd devices in this namespace (hca_type "ibpd"). */
static int ibpd_devices(char names[][IB_DEVICE_NAME_MAX], int max)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/sys/class/infiniband");
	if (!d)
		return 0;
	while (n < max && (de = readdir(d)))
		if (de->d_name[0] != '.' && test_is_ibpd(de->d_name))
			snprintf(names[n++], IB_DEVICE_NAME_MAX, "%.63s",
				 de->d_name);
	closedir(d);
	return n;
}

/* A new file with a context on a random ibpd device; -errno if none. */
static int open_any(unsigned int *seed)
{
	char names[MAX_DEVS][IB_DEVICE_NAME_MAX];
	int n = ibpd_devices(names, MAX_DEVS);

	if (!n)
		return -ENODEV;
	return test_open(names[rand_r(seed) % n]);
}

/*
 * A process's files: NSLOTS fds, each with a generation that changes
 * whenever the slot gets another fd. Threads read a slot without a lock
 * and may be inside an ioctl on an fd another thread is closing.
 */
struct slot {
	int fd;
	unsigned int gen;
};

struct proc {
	struct slot slots[NSLOTS];
	int sock;
	bool fuzzer;
	unsigned int seed;
};

/* Puts fd in slot k and closes what was there. */
static void slot_set(struct proc *p, int k, int fd)
{
	int old = __atomic_exchange_n(&p->slots[k].fd, fd, __ATOMIC_SEQ_CST);

	__atomic_fetch_add(&p->slots[k].gen, 1, __ATOMIC_SEQ_CST);
	if (old >= 0)
		close(old);
}

/* The slot's file is dead (device gone): a new one, if any device is. */
static void slot_reopen(struct proc *p, int k, unsigned int *seed)
{
	int fd = open_any(seed);

	if (fd >= 0) {
		slot_set(p, k, fd);
		count(OP_REOPEN, 0);
	}
}

static bool gone(int err)
{
	return err == EIO || err == ENODEV;
}

/* The files the supervisor passes come in here, into a random slot. */
static void *receiver(void *arg)
{
	struct proc *p = arg;
	unsigned int seed = p->seed ^ 0x5eed;
	char m;
	int fd;

	for (;;) {
		fd = ibpd_recv_fd(p->sock, &m, 1);
		if (fd < 0)
			return NULL;
		/* importing the device: the file has a context */
		test_query_context(fd);
		slot_set(p, rand_r(&seed) % NSLOTS, fd);
		count(OP_RECV_FILE, 0);
	}
}

/* What a thread keeps of the objects it made or imported. */
struct obj {
	int slot;
	unsigned int gen;
	uint32_t handle;
	uint64_t id;
	bool mr;
	bool own;
};

struct thr {
	struct proc *p;
	unsigned int seed;
	char *buf;
	struct obj objs[TRACK];
};

static struct obj *obj_find(struct thr *t, int k, bool mr, bool own)
{
	int i, start = rand_r(&t->seed) % TRACK;

	for (i = 0; i < TRACK; i++) {
		struct obj *o = &t->objs[(start + i) % TRACK];

		if (o->slot != k || o->mr != mr || (own && !o->own))
			continue;
		if (o->gen != LOAD(t->p->slots[k].gen)) {
			o->slot = -1;	/* the file went: forget it */
			continue;
		}
		return o;
	}
	return NULL;
}

static struct obj *obj_free(struct thr *t)
{
	int i;

	for (i = 0; i < TRACK; i++)
		if (t->objs[i].slot < 0 ||
		    t->objs[i].gen != LOAD(t->p->slots[t->objs[i].slot].gen))
			return &t->objs[i];
	return NULL;
}

static void obj_add(struct thr *t, int k, unsigned int gen, uint32_t h,
		    uint64_t id, bool mr, bool own)
{
	struct obj *o = obj_free(t);

	if (o)
		*o = (struct obj){ .slot = k, .gen = gen, .handle = h,
				   .id = id, .mr = mr, .own = own };
}

/* A forked child: a few verbs on the files it inherited, then exit. */
static void child(struct proc *p, unsigned int seed, char *buf)
{
	uint32_t handles[64], n, h, mr;
	int i;

	for (i = 0; i < 20; i++) {
		int fd = p->slots[rand_r(&seed) % NSLOTS].fd, err;

		err = test_list_pds(fd, handles, 64, &n);
		if (err || !n)
			continue;
		h = handles[rand_r(&seed) % (n < 64 ? n : 64)];
		err = test_pd_import(fd, h, NULL, NULL, NULL, NULL);
		count(OP_IMPORT, err);
		if (err)
			continue;
		err = test_mr_reg(fd, h, buf, 4096, TEST_ACCESS_LOCAL_WRITE,
				  &mr, NULL);
		count(OP_MR_REG, err);
		/* sometimes left for the exit to clean up */
		if (!err && rand_r(&seed) % 2)
			count(OP_MR_DEREG, test_mr_destroy(fd, mr));
	}
	count(OP_EXIT, 0);
	_exit(0);
}

static void worker_op(struct thr *t)
{
	struct proc *p = t->p;
	int k = rand_r(&t->seed) % NSLOTS, err = 0, j;
	unsigned int gen = LOAD(p->slots[k].gen);
	int fd = LOAD(p->slots[k].fd);
	uint32_t handles[256], n, h, pdn;
	struct obj *o;
	uint64_t id;
	pid_t pid;

	switch (rand_r(&t->seed) % 16) {
	case 0: case 1:
		err = test_pd_alloc(fd, &h, &pdn, &id);
		count(OP_ALLOC_IOCTL, err);
		if (!err)
			obj_add(t, k, gen, h, id, false, true);
		break;
	case 2:
		err = test_pd_alloc_write(fd, &h, NULL);
		count(OP_ALLOC_WRITE, err);
		if (!err)
			obj_add(t, k, gen, h, 0, false, true);
		break;
	case 3: case 4:
		o = obj_find(t, k, false, true);
		if (!o)
			break;
		err = test_pd_destroy(fd, o->handle);
		count(OP_DESTROY, err);
		if (err != EBUSY)
			o->slot = -1;
		break;
	case 5: case 6:
		err = test_list_pds(fd, handles, 256, &n);
		count(OP_LIST, err);
		if (err || !n)
			break;
		h = handles[rand_r(&t->seed) % (n < 256 ? n : 256)];
		o = obj_find(t, k, false, false);
		if (o && o->id && rand_r(&t->seed) % 2) {
			/* checked: ESTALE once the handle names another PD */
			err = test_pd_import(fd, o->handle, &o->id, NULL,
					     NULL, NULL);
			count(OP_IMPORT_CHECKED, err);
			if (err)
				o->slot = -1;
			break;
		}
		err = test_pd_import(fd, h, NULL, NULL, &id, NULL);
		count(OP_IMPORT, err);
		if (!err)
			obj_add(t, k, gen, h, id, false, false);
		break;
	case 7: case 8:
		o = obj_find(t, k, false, false);
		if (!o)
			break;
		err = test_mr_reg(fd, o->handle,
				  t->buf + (rand_r(&t->seed) % 16) * 4096,
				  4096 * (1 + rand_r(&t->seed) % 4),
				  TEST_ACCESS_LOCAL_WRITE, &h, NULL);
		count(OP_MR_REG, err);
		if (!err)
			obj_add(t, k, gen, h, 0, true, true);
		break;
	case 9: case 10:
		o = obj_find(t, k, true, true);
		if (!o)
			break;
		err = test_mr_destroy(fd, o->handle);
		count(OP_MR_DEREG, err);
		o->slot = -1;
		break;
	case 11:
		err = test_query_context(fd);
		count(OP_QUERY_CONTEXT, err);
		break;
	case 12:		/* replace the slot by a dup of another one */
		j = rand_r(&t->seed) % NSLOTS;
		fd = dup(LOAD(p->slots[j].fd));
		if (fd >= 0)
			slot_set(p, k, fd);
		count(OP_DUP_CLOSE, fd < 0 ? errno : 0);
		break;
	case 13:
		if (rand_r(&t->seed) % 8)
			break;
		pid = fork();
		if (!pid)
			child(p, t->seed, t->buf);
		count(OP_FORK, pid < 0 ? errno : 0);
		break;
	case 14:
		if (rand_r(&t->seed) % 16 == 0 && !LOAD(shm->unloading))
			count(OP_DEBUGFS, dbg_count_lines("pds") < 0 ? ENOENT : 0);
		break;
	default:		/* a checked import of our own PD */
		o = obj_find(t, k, false, true);
		if (!o || !o->id)
			break;
		err = test_pd_import(fd, o->handle, &o->id, NULL, NULL, NULL);
		count(OP_IMPORT_CHECKED, err);
		break;
	}
	if (gone(err))
		slot_reopen(p, k, &t->seed);
}

static void *worker_thread(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < TRACK; i++)
		t->objs[i].slot = -1;
	while (!LOAD(shm->stop))
		worker_op(t);
	return NULL;
}

/* The fuzzer's loop: calls on the shared files, with their handles. */
static void fuzz_loop(struct proc *p)
{
	struct fuzz_ctx f = { .seed = p->seed };
	struct fuzz_call call;
	unsigned long i;

	f.scratch = mmap(NULL, FUZZ_SCRATCH, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (f.scratch == MAP_FAILED)
		_exit(3);
	for (i = 0; !LOAD(shm->stop); i++) {
		int k = fuzz_rnd(&f) % NSLOTS, fd = LOAD(p->slots[k].fd), err;

		if (i % 256 == 0) {
			uint32_t n;

			/* the file's PDs, an MR of our own, small numbers */
			if (!test_list_pds(fd, f.handles, 8, &n) && n)
				test_mr_reg(fd, f.handles[0], f.scratch, 4096,
					    0, &f.handles[8], NULL);
			for (n = 9; n < FUZZ_HANDLES; n++)
				f.handles[n] = fuzz_rnd(&f) % 8;
		}
		fuzz_gen(&f, &call);
		err = fuzz_exec(&f, fd, &call);
		if (!err)
			fuzz_close_event_fds();
		ADD(shm->fuzz_calls, 1);
		ADD(shm->fuzz_errs[err > 0 && err <= MAX_ERRNO ? err : 0], !!err);
		if (gone(err))
			slot_reopen(p, k, &f.seed);
	}
}

/* A worker or fuzzer process; its files arrive over sock. */
static void proc_main(int sock, bool fuzzer, unsigned int seed)
{
	struct proc p = { .sock = sock, .fuzzer = fuzzer, .seed = seed };
	int threads = env_int("IBPD_SOAK_THREADS", 3), i;
	pthread_t tid[16], rx;
	struct thr *t;
	char m;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * The lifecycle events first: they wait for the verbs in flight. A
	 * fuzzer, one thread against the workers' many, gets a larger share
	 * of what is left.
	 */
	if (nice(fuzzer ? 5 : 10) < 0)
		_exit(2);
	/* forked children are reaped by the kernel */
	signal(SIGCHLD, SIG_IGN);
	for (i = 0; i < NSLOTS; i++) {
		p.slots[i].fd = ibpd_recv_fd(sock, &m, 1);
		if (p.slots[i].fd < 0)
			_exit(2);
	}
	if (pthread_create(&rx, NULL, receiver, &p))
		_exit(2);
	if (fuzzer) {
		fuzz_loop(&p);
		_exit(0);
	}
	if (threads > 16)
		threads = 16;
	t = calloc(threads, sizeof(*t));
	for (i = 0; i < threads; i++) {
		t[i].p = &p;
		t[i].seed = seed * 31 + i;
		t[i].buf = mmap(NULL, 20 * 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				-1, 0);
		if (t[i].buf == MAP_FAILED ||
		    pthread_create(&tid[i], NULL, worker_thread, &t[i]))
			_exit(2);
	}
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	count(OP_EXIT, 0);
	_exit(0);
}

struct child_proc {
	pid_t pid;
	int sock;
	bool fuzzer;
};

/* Sends a new file on a random ibpd device to process c. */
static int send_file(struct child_proc *c, unsigned int *seed)
{
	int fd = open_any(seed), ret;

	if (fd < 0)
		return fd;
	ret = ibpd_send_fd(c->sock, fd, "f", 1);
	close(fd);
	return ret;
}

static void spawn(struct child_proc *c, bool fuzzer, unsigned int seed)
{
	int sv[2], i, tries;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return;
	c->fuzzer = fuzzer;
	c->pid = fork();
	if (!c->pid) {
		close(sv[0]);
		proc_main(sv[1], fuzzer, seed);
	}
	close(sv[1]);
	c->sock = sv[0];
	/* its first files; a device may be away for a moment */
	for (i = 0; i < NSLOTS; i++)
		for (tries = 0; tries < 2000; tries++) {
			if (!send_file(c, &seed))
				break;
			usleep(10000);
		}
}

static void reap(struct child_proc *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->sock);
}

/* The lifecycle driver: a shell command, counted as event ev. */
static int run(enum event ev, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int status;
	double t;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	t = now();
	status = sh("%s", cmd);
	shm->event_secs[ev] += now() - t;
	if (status) {
		ADD(shm->events_failed[ev], 1);
		fprintf(stderr, "# soak: event %s failed: %s\n", ev_names[ev],
			cmd);
		return -1;
	}
	ADD(shm->events[ev], 1);
	return 0;
}

/* Waits up to 30 s for a device to be in this namespace. */
static bool wait_dev(const char *name)
{
	char path[128];
	int i;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	for (i = 0; i < 300; i++) {
		if (!access(path, F_OK))
			return true;
		usleep(100000);
	}
	return false;
}

static void *lifecycle(void *arg)
{
	double period = env_int("IBPD_SOAK_CYCLE_SECONDS", 20), start;
	const char *ko = getenv("IBPD_KO");
	unsigned long cycle;

	for (cycle = 0; !LOAD(shm->stop); cycle++) {
		char a[32], b[32];

		/* a cycle at most every period seconds */
		while (cycle && now() - start < period && !LOAD(shm->stop))
			usleep(100000);
		if (LOAD(shm->stop))
			break;
		start = now();

		snprintf(a, sizeof(a), "ibpdS%lu", cycle % 4);
		snprintf(b, sizeof(b), "ibpdR%lu", cycle % 4);
		run(EV_LINK_ADD, "rdma link add %s type ibpd netdev lo", a);
		run(EV_RENAME, "rdma dev set %s name %s", a, b);
		/* there and back, with the workers' files on it */
		run(EV_NETNS_MOVE, "ip netns add ibpd_soak1 && rdma dev set %s netns ibpd_soak1", b);
		run(EV_NETNS_MOVE, "ip netns exec ibpd_soak1 rdma dev set %s netns ibpd_soak_init", b);
		/* the namespace dies with the device in it: it comes back */
		if (!run(EV_NETNS_DELETE, "rdma dev set %s netns ibpd_soak1 && ip netns del ibpd_soak1", b) &&
		    !wait_dev(b)) {
			ADD(shm->events_failed[EV_NETNS_DELETE], 1);
			fprintf(stderr, "# soak: %s did not come back\n", b);
		}
		run(EV_PDN_WRAP, "for d in " IBPD_DBG_ROOT "/*/; do echo 16777200 > $d/pdn_next || exit 1; done");
		run(EV_LINK_DELETE, "rdma link delete %s", b);
		if (!ko || !*ko)
			continue;
		__atomic_store_n(&shm->unloading, 1, __ATOMIC_SEQ_CST);
		run(EV_RMMOD_INSMOD,
			    "for i in $(seq 100); do timeout 120 rmmod ibpd 2>/dev/null && break; sleep 0.05; done;"
			    "! test -d /sys/module/ibpd && insmod %s && test -e /sys/class/infiniband/ibpd0",
			    ko);
		__atomic_store_n(&shm->unloading, 0, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/* A number from a file of debugfs directory DIR; 0 if it cannot be read. */
static long long read_num(const char *dir, const char *file)
{
	char path[300];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%.256s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lld", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The PDs and MRs of every ibpd device, from debugfs. */
static void objects(long long *pds, long long *mrs)
{
	char dir[256];
	DIR *d;

	*pds = *mrs = 0;
	d = opendir(IBPD_DBG_ROOT);
	if (!d)
		return;
	while (!dbg_dir_next(d, dir, sizeof(dir))) {
		*pds += read_num(dir, "num_pds");
		*mrs += read_num(dir, "num_mrs");
	}
	closedir(d);
}

static unsigned long total_ops(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < OP_MAX; i++)
		n += LOAD(shm->ops[i]);
	return n;
}

static unsigned long total_events(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < EV_MAX; i++)
		n += LOAD(shm->events[i]);
	return n;
}

static void json_errnos(FILE *o, const unsigned long *errs)
{
	const char *sep = "";
	int e;

	fputc('{', o);
	for (e = 1; e <= MAX_ERRNO; e++) {
		if (!errs[e])
			continue;
		fprintf(o, "%s\"%s\":%lu", sep, strerrorname_np(e) ?: "?",
			errs[e]);
		sep = ",";
	}
	fputc('}', o);
}

static void report(double secs, int procs, int threads, int fuzzers,
		   long long peak_pds, long long peak_mrs, long long pds,
		   long long mrs, unsigned long kills, unsigned long files)
{
	const char *sep = "";
	int i;

	printf("IBPD-SOAK {\"seconds\":%.0f,\"procs\":%d,\"threads\":%d,\"fuzzers\":%d,",
	       secs, procs, threads, fuzzers);
	printf("\"ops_total\":%lu,\"ops\":{", total_ops());
	for (i = 0; i < OP_MAX; i++, sep = ",")
		printf("%s\"%s\":%lu", sep, op_names[i], shm->ops[i]);
	printf("},\"errnos\":{");
	for (i = 0, sep = ""; i < OP_MAX; i++, sep = ",") {
		printf("%s\"%s\":", sep, op_names[i]);
		json_errnos(stdout, shm->errs[i]);
	}
	printf("},\"unexpected\":{");
	for (i = 0, sep = ""; i < OP_MAX; i++, sep = ",")
		printf("%s\"%s\":%lu", sep, op_names[i], shm->unexpected[i]);
	printf("},\"fuzz_calls\":%lu,\"fuzz_errnos\":", shm->fuzz_calls);
	json_errnos(stdout, shm->fuzz_errs);
	printf(",\"events\":{");
	for (i = 0, sep = ""; i < EV_MAX; i++, sep = ",")
		printf("%s\"%s\":%lu", sep, ev_names[i], shm->events[i]);
	printf("},\"events_failed\":{");
	for (i = 0, sep = ""; i < EV_MAX; i++, sep = ",")
		printf("%s\"%s\":%lu", sep, ev_names[i], shm->events_failed[i]);
	printf("},\"event_seconds\":{");
	for (i = 0, sep = ""; i < EV_MAX; i++, sep = ",")
		printf("%s\"%s\":%.1f", sep, ev_names[i], shm->event_secs[i]);
	printf("},\"files_passed\":%lu,\"processes_killed\":%lu,", files, kills);
	printf("\"peak\":{\"pds\":%lld,\"mrs\":%lld},\"left\":{\"pds\":%lld,\"mrs\":%lld}}\n",
	       peak_pds, peak_mrs, pds, mrs);
	fflush(stdout);
}

int main(void)
{
	int secs = env_int("IBPD_SOAK_SECONDS", 60);
	int procs = env_int("IBPD_SOAK_PROCS", 4);
	int fuzzers = env_int("IBPD_SOAK_FUZZERS", 3);
	int threads = env_int("IBPD_SOAK_THREADS", 3);
	int lifecycle_on = env_int("IBPD_SOAK_LIFECYCLE", 1);
	unsigned int seed = env_int("IBPD_SOAK_SEED", time(NULL));
	const char *ko = getenv("IBPD_KO");
	struct child_proc cp[MAX_PROCS];
	long long pds = 0, mrs = 0, peak_pds = 0, peak_mrs = 0;
	unsigned long kills = 0, files = 0, bad = 0;
	double t0, next_sample, next_progress, next_objects = 0, end;
	int n = procs + fuzzers, i, res;
	pthread_t lc;

	ksft_print_header();
	if (access("/sys/class/infiniband/ibpd0", F_OK))
		ksft_exit_skip("no ibpd0\n");
	if (procs < 4 || n > MAX_PROCS || threads < 1)
		ksft_exit_fail_msg("4 to %d processes, 1 thread or more\n",
				   MAX_PROCS);
	ksft_set_plan(9);
	/* the races want two CPUs: the debug VM once had one (no ACPI) */
	ksft_test_result(sysconf(_SC_NPROCESSORS_ONLN) >= 2,
			 "%ld CPUs online (2 or more for the races)\n",
			 sysconf(_SC_NPROCESSORS_ONLN));
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	ksft_print_msg("soak: %d s, %d processes x %d threads, %d fuzzers, seed %u (IBPD_SOAK_SEED replays the choices)\n",
		       secs, procs, threads, fuzzers, seed);

	/* the namespace mode changes only while no other namespace exists */
	res = system("rdma system set netns exclusive && ip netns attach ibpd_soak_init 1");
	ksft_test_result(res == 0, "exclusive netns mode, init_net named\n");

	for (i = 0; i < n; i++)
		spawn(&cp[i], i >= procs, seed + i * 7919);
	if (lifecycle_on && pthread_create(&lc, NULL, lifecycle, NULL))
		ksft_exit_fail_msg("pthread_create\n");

	t0 = now();
	end = t0 + secs;
	next_sample = t0;
	next_progress = t0 + 60;
	while (now() < end) {
		struct child_proc *c = &cp[rand_r(&seed) % n];

		usleep(200000);
		/* a new file for somebody */
		if (!send_file(c, &seed))
			files++;
		/* SIGKILL at a random point, then a new process */
		if (rand_r(&seed) % 10 == 0) {
			reap(c);
			count(OP_KILL, 0);
			kills++;
			spawn(c, c->fuzzer, seed + kills);
		}
		if (now() >= next_objects && !LOAD(shm->unloading)) {
			objects(&pds, &mrs);
			next_objects = now() + 1;
		}
		if (pds > peak_pds)
			peak_pds = pds;
		if (mrs > peak_mrs)
			peak_mrs = mrs;
		if (now() >= next_sample) {
			printf("IBPD-SOAK-SAMPLE {\"t\":%.1f,\"ops\":%lu,\"fuzz_calls\":%lu,\"events\":%lu,\"pds\":%lld,\"mrs\":%lld}\n",
			       now() - t0, total_ops(), LOAD(shm->fuzz_calls),
			       total_events(), pds, mrs);
			fflush(stdout);
			next_sample += 10;
		}
		if (now() >= next_progress) {
			ksft_print_msg("soak: %.0f/%d s: %lu ops, %lu fuzzed calls, %lu lifecycle events, %lu kills, %lld PDs (peak %lld)\n",
				       now() - t0, secs, total_ops(),
				       LOAD(shm->fuzz_calls), total_events(),
				       kills, pds, peak_pds);
			fflush(stdout);
			next_progress += 60;
		}
	}

	/* stop: the processes and everything they forked go */
	__atomic_store_n(&shm->stop, 1, __ATOMIC_SEQ_CST);
	if (lifecycle_on)
		pthread_join(lc, NULL);
	for (i = 0; i < n; i++)
		reap(&cp[i]);
	/* orphaned fork children finish their few verbs */
	for (i = 0; i < 300; i++) {
		objects(&pds, &mrs);
		if (!pds && !mrs)
			break;
		usleep(100000);
	}
	/* a deleted namespace goes away in a workqueue: retry the mode */
	res = system("ip netns del ibpd_soak1 2>/dev/null; ip netns del ibpd_soak_init;"
		     "for d in ibpdS0 ibpdS1 ibpdS2 ibpdS3 ibpdR0 ibpdR1 ibpdR2 ibpdR3; do"
		     " rdma link delete $d 2>/dev/null; done;"
		     "for i in $(seq 300); do rdma system set netns shared 2>/dev/null && exit 0;"
		     " sleep 0.1; done; exit 1");
	ksft_test_result(res == 0, "namespaces deleted, shared netns mode again\n");
	report(now() - t0, procs, threads, fuzzers, peak_pds, peak_mrs, pds,
	       mrs, kills, files);
	ksft_print_msg("soak: %lu ops, %lu fuzzed calls, %lu lifecycle events, %lu files passed, %lu processes killed; peak %lld PDs %lld MRs\n",
		       total_ops(), shm->fuzz_calls, total_events(), files,
		       kills, peak_pds, peak_mrs);

	ksft_test_result(!pds && !mrs && !rdma_res_pds(),
			 "no object left: %lld PDs, %lld MRs (debugfs), %d PDs (rdma resource)\n",
			 pds, mrs, rdma_res_pds());
	for (i = 0; i < OP_MAX; i++)
		bad += shm->unexpected[i];
	ksft_test_result(!bad, "every verb answered 0 or an errno the races explain (%lu others)\n",
			 bad);
	for (i = 0, bad = 0; i < EV_MAX; i++)
		bad += shm->events_failed[i];
	ksft_test_result(!bad, "every lifecycle event succeeded (%lu failed)\n",
			 bad);
	for (i = 0, bad = 0; i < EV_MAX; i++)
		if (!shm->events[i] && lifecycle_on &&
		    (i != EV_RMMOD_INSMOD || (ko && *ko)))
			bad++;
	ksft_test_result(!bad, "every kind of lifecycle event happened%s\n",
			 ko && *ko ? "" : " (no rmmod: IBPD_KO is not set)");
	ksft_test_result(shm->ops[OP_MR_REG] && shm->ops[OP_IMPORT] &&
			 shm->ops[OP_ALLOC_WRITE] && shm->ops[OP_FORK] &&
			 shm->ops[OP_RECV_FILE],
			 "the verbs ran: %lu MRs, %lu imports, %lu forks\n",
			 shm->ops[OP_MR_REG], shm->ops[OP_IMPORT],
			 shm->ops[OP_FORK]);
	ksft_test_result(shm->fuzz_calls > 0, "%lu fuzzed calls\n",
			 shm->fuzz_calls);
	ksft_finished();
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd: PD sharing from the command line, on libibverbs and ibpd's direct
 * verbs (<infiniband/ibpddv.h>).
 *
 *   ibpd devices         the RDMA devices libibverbs drives
 *   ibpd pds             the PDs of a uverbs file: handle, pdn, use count
 *   ibpd demo            share a PD between two processes over SCM_RIGHTS;
 *                        on a device with QPs, RDMA WRITE, READ and SEND
 *                        through the imported PD and MR
 *
 * Built with IBPD_VERBS_ONLY, it links libibverbs alone (no libibpd) and
 * runs the demo only: PDs are imported unchecked, with ibv_import_pd().
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <infiniband/ibpddv.h>
#include <infiniband/verbs.h>

#include "scm_rights.h"

#ifdef IBPD_VERBS_ONLY
/*
 * No libibpd: its calls fail as on a device that is not ibpd, and no
 * symbol of its name is defined here (a provider loaded beside would
 * bind to it).
 */
#define ibpddv_is_supported(d)		((void)(d), false)
#define ibpddv_query_pd(pd, a)		((void)(pd), (void)(a), EOPNOTSUPP)
#define ibpddv_import_pd(c, h, i)	\
	((void)(c), (void)(h), (void)(i), errno = EOPNOTSUPP, NULL)
#define ibpddv_list_pds(c, h, m, t)	\
	((void)(c), (void)(h), (void)(m), (void)(t), EOPNOTSUPP)
#define PROG "ibpd-demo"
#else
#define PROG "ibpd"
#endif

/* How long the demo waits for a completion, and for the other process. */
#define DEMO_CQ_TIMEOUT_MS	10000
#define DEMO_PEER_TIMEOUT_S	60
/*
 * The parent's buffer: the window the child writes and reads, then the
 * parent's receive buffer.
 */
#define DEMO_WIN	4096
#define DEMO_RECV	256
#define DEMO_BUF	(DEMO_WIN + DEMO_RECV)

/* What the other side's ibv_modify_qp() needs of a QP. */
struct qp_dest {
	uint32_t qpn;
	uint32_t psn;
	uint32_t gid_index;
	uint32_t mtu;		/* enum ibv_mtu */
	uint16_t lid;
	uint8_t port;
	uint8_t global;		/* RoCE: the GID, a GRH */
	union ibv_gid gid;
};

/* What the parent sends beside the command fd. */
struct share_msg {
	uint32_t handle;	/* the PD */
	uint32_t pdn;
	uint64_t id;
	uint32_t qps;		/* 1: the data path follows */
	uint32_t mr_handle;	/* the parent's MR, for ibv_import_mr() */
	uint64_t addr;		/* its buffer in the parent */
	uint32_t rkey;
	uint32_t pad;
	struct qp_dest dest;	/* the parent's QP */
};

#define EXIT_USAGE 2

static const char *dev = "ibpd0";
static const char *role = "parent";
static bool json, pretty, details;
static FILE *out;	/* -j: the JSON, printed whole at the end */
static pid_t opt_pid;
static int opt_fd = -1;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	printf("[%-6s %5d] ", role, getpid());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * ib_core's view of the device's PDs, from "rdma resource show pd dev DEV"
 * run without a shell (the device name is any string), indented. Its pdn
 * column is ib_core's resource id, not ibpd's PD number; users counts the
 * MRs and QPs on the PD.
 */
static void show_pds(void)
{
	char *argv[] = { "rdma", "resource", "show", "pd", "dev", (char *)dev,
			 NULL };
	static bool noted;
	char *line = NULL;
	size_t cap = 0;
	int pipefd[2], status = -1;
	pid_t pid = -1;
	FILE *f;

	printf("  $ rdma resource show pd dev %s\n", dev);
	fflush(stdout);
	if (!pipe2(pipefd, O_CLOEXEC)) {
		pid = fork();
		if (!pid) {
			if (dup2(pipefd[1], STDOUT_FILENO) >= 0)
				execvp(argv[0], argv);
			_exit(127);
		}
		close(pipefd[1]);
		f = fdopen(pipefd[0], "r");
		while (f && getline(&line, &cap, f) > 0)
			printf("  %s", line);
		free(line);
		if (f)
			fclose(f);
		else
			close(pipefd[0]);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		say("(rdma resource show failed)");
	if (!noted)
		printf("  (rdma's pdn is ib_core's resource id; users: MRs and QPs on the PD)\n");
	noted = true;
	fflush(stdout);
}

/*
 * Says why a read of n bytes from the other process is not what was
 * waited for (errno, when n < 0): -1.
 */
static int peer_failed(ssize_t n)
{
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		say("no word from the other process in %d s", DEMO_PEER_TIMEOUT_S);
	else if (n < 0)
		say("waiting for the other process: %s", strerror(errno));
	else if (!n)
		say("the other process has gone");
	else
		say("the other process failed");
	return -1;
}

/*
 * One step of the protocol between the two processes: sends SEND (unless
 * 0), then waits for EXPECT (unless 0), at most DEMO_PEER_TIMEOUT_S
 * seconds (the socket's timeout). -1 when it failed, said.
 */
static int step(int sock, char send, char expect)
{
	ssize_t n;
	char c;

	if (send && write(sock, &send, 1) != 1) {
		say("telling the other process '%c': %s", send, strerror(errno));
		return -1;
	}
	if (!expect)
		return 0;
	n = read(sock, &c, 1);
	if (n == 1 && c == expect)
		return 0;
	return peer_failed(n);
}

/* A message of len bytes from the other process, as step() waits. */
static int recv_msg(int sock, void *buf, size_t len)
{
	ssize_t n = read(sock, buf, len);

	return n == (ssize_t)len ? 0 : peer_failed(n);
}

static void peer_timeout(int sock)
{
	struct timeval tv = { .tv_sec = DEMO_PEER_TIMEOUT_S };

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	errno = ENODEV;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	ibv_free_device_list(list);
	return ctx;
}

/* Byte i of what one process writes for the other to check. */
static unsigned char pattern(unsigned int seed, size_t i)
{
	return seed * 2654435761u + i * 31 + (i >> 8);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

/* The first byte of p that fill() would not have written, or -1. */
static ssize_t mismatch(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return -1;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool ipv4_mapped(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

/*
 * The address of PORT of ctx for an RC QP into *d: its LID, and on
 * Ethernet (RoCE) a RoCE v2 GID, an IPv4-mapped one if the port has one,
 * else the first (as rdma-core's tests pick theirs). 0, or -1 said.
 */
static int port_dest(struct ibv_context *ctx, uint8_t port, struct qp_dest *d)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	bool found = false;
	int i, err;

	err = ibv_query_port(ctx, port, &pa);
	if (err) {
		say("ibv_query_port(%u): %s", port, strerror(err));
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		say("port %u is %s, not ACTIVE: no traffic", port,
		    ibv_port_state_str(pa.state));
		return -1;
	}
	d->port = port;
	d->lid = pa.lid;
	d->mtu = pa.active_mtu < IBV_MTU_1024 ? pa.active_mtu : IBV_MTU_1024;
	d->global = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (!d->global)
		return 0;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, port, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (!found || ipv4_mapped(&e.gid)) {
			d->gid_index = i;
			d->gid = e.gid;
		}
		found = true;
		if (ipv4_mapped(&e.gid))
			break;
	}
	if (!found) {
		say("port %u has no RoCE v2 GID (is its netdev up?)", port);
		return -1;
	}
	return 0;
}

static const char *gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	int i, n = 0;

	for (i = 0; i < 16; i += 2)
		n += snprintf(buf + n, len - n, "%s%02x%02x", i ? ":" : "",
			      gid->raw[i], gid->raw[i + 1]);
	return buf;
}

/* An RC QP on pd, in INIT, remote access as given: NULL and errno. */
static struct ibv_qp *qp_make(struct ibv_pd *pd, struct ibv_cq *cq,
			      uint8_t port, unsigned int access)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = port,
		.qp_access_flags = access,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	int err;

	if (!qp)
		return NULL;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err) {
		ibv_destroy_qp(qp);
		errno = err;
		return NULL;
	}
	return qp;
}

/* INIT -> RTR -> RTS towards remote: 0, or -1 said. */
static int qp_connect(struct ibv_qp *qp, const struct qp_dest *local,
		      const struct qp_dest *remote)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = local->mtu,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.dlid = remote->lid,
			.port_num = local->port,
			.is_global = remote->global,
			.grh = {
				.dgid = remote->gid,
				.sgid_index = local->gid_index,
				.hop_limit = 1,
			},
		},
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err) {
		say("ibv_modify_qp(RTR): %s", strerror(err));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = local->psn;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err) {
		say("ibv_modify_qp(RTS): %s", strerror(err));
		return -1;
	}
	return 0;
}

/*
 * One completion of cq within DEMO_CQ_TIMEOUT_MS, successful and of
 * opcode op, into *wc: 0, or -1 said.
 */
static int poll_one(struct ibv_cq *cq, enum ibv_wc_opcode op,
		    struct ibv_wc *wc, const char *what)
{
	double end = mono_ms() + DEMO_CQ_TIMEOUT_MS;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc))) {
		if (mono_ms() > end) {
			say("%s: no completion in %d s", what,
			    DEMO_CQ_TIMEOUT_MS / 1000);
			return -1;
		}
		usleep(100);
	}
	if (n < 0) {
		say("%s: ibv_poll_cq failed (%d)", what, n);
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		say("%s: completion with status %s (%d)", what,
		    ibv_wc_status_str(wc->status), wc->status);
		return -1;
	}
	if (wc->opcode != op) {
		say("%s: completion of opcode %d, not %d", what, wc->opcode, op);
		return -1;
	}
	return 0;
}

/* One signaled work request of one SGE: 0, or -1 said. */
static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		     uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int err = ibv_post_send(qp, &wr, &bad);

	if (err)
		say("ibv_post_send: %s", strerror(err));
	return err ? -1 : 0;
}

/* The message the child SENDs; the parent knows the child's pid. */
static int send_text(char *buf, size_t len, pid_t child)
{
	return snprintf(buf, len,
			"hello from pid %d, over an RC QP on an imported PD",
			child);
}

/*
 * The child's data path: imports the parent's MR, makes its own CQ, RC
 * QP and MR on the imported PD, connects to the parent's QP, RDMA WRITEs
 * the parent's window with the imported MR's rkey, READs it back (half of
 * it rewritten by the parent meanwhile) and SENDs a message; then tears
 * down, its imports last.
 */
static int child_qp(int sock, struct ibv_context *ctx, struct ibv_pd *pd,
		    const struct share_msg *m)
{
	struct qp_dest me = m->dest;
	struct ibv_mr *pmr, *mr = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	unsigned char *buf;
	struct ibv_wc wc;
	ssize_t bad;
	int ret = 1, err, n;

	buf = aligned_alloc(4096, DEMO_WIN);
	if (!buf) {
		say("%s", strerror(ENOMEM));
		return 1;
	}
	pmr = ibv_import_mr(pd, m->mr_handle);
	if (!pmr) {
		say("ibv_import_mr(handle %u): %s", m->mr_handle,
		    strerror(errno));
		goto out;
	}
	say("ibv_import_mr(handle %u) -> the parent's MR: lkey 0x%x rkey 0x%x, addr %p (the buffer's address came beside the handles: 0x%" PRIx64 ")",
	    m->mr_handle, pmr->lkey, pmr->rkey, pmr->addr, m->addr);
	if (pmr->rkey != m->rkey) {
		say("the imported MR's rkey is not the parent's (0x%x)",
		    m->rkey);
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, DEMO_WIN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		say("ibv_reg_mr: %s", strerror(errno));
		goto out;
	}
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq) {
		say("ibv_create_cq: %s", strerror(errno));
		goto out;
	}
	qp = qp_make(pd, cq, me.port, 0);
	if (!qp) {
		say("ibv_create_qp(RC, imported PD): %s", strerror(errno));
		goto out;
	}
	me.qpn = qp->qp_num;
	me.psn = (getpid() * 2654435761u) & 0xffffff;
	say("ibv_reg_mr, ibv_create_cq, ibv_create_qp on the imported PD -> RC QP %u (INIT)",
	    me.qpn);
	if (qp_connect(qp, &me, &m->dest))
		goto out;
	say("QP %u -> RTS, connected to the parent's QP %u", me.qpn,
	    m->dest.qpn);
	if (write(sock, &me, sizeof(me)) != sizeof(me)) {
		say("telling the parent the QP: %s", strerror(errno));
		goto out;
	}
	if (step(sock, 0, 'g'))
		goto out;

	fill(buf, DEMO_WIN, getpid());
	if (post_send(qp, IBV_WR_RDMA_WRITE, buf, DEMO_WIN, mr->lkey, m->addr,
		      pmr->rkey) ||
	    poll_one(cq, IBV_WC_RDMA_WRITE, &wc, "RDMA WRITE"))
		goto out;
	say("RDMA WRITE of %d bytes to 0x%" PRIx64 " with the imported rkey 0x%x: completed",
	    DEMO_WIN, m->addr, pmr->rkey);
	if (step(sock, 'w', 'r'))
		goto out;

	memset(buf, 0, DEMO_WIN);
	if (post_send(qp, IBV_WR_RDMA_READ, buf, DEMO_WIN, mr->lkey, m->addr,
		      pmr->rkey) ||
	    poll_one(cq, IBV_WC_RDMA_READ, &wc, "RDMA READ"))
		goto out;
	bad = mismatch(buf, DEMO_WIN / 2, getpid());
	if (bad < 0) {
		bad = mismatch(buf + DEMO_WIN / 2, DEMO_WIN / 2, getppid());
		if (bad >= 0)
			bad += DEMO_WIN / 2;
	}
	if (bad >= 0) {
		say("RDMA READ: byte %zd is not what the parent's buffer holds",
		    bad);
		goto out;
	}
	say("RDMA READ of %d bytes: the first half is what this process wrote, the second what the parent wrote since: checked",
	    DEMO_WIN);

	n = send_text((char *)buf, DEMO_RECV, getpid()) + 1;
	if (post_send(qp, IBV_WR_SEND, buf, n, mr->lkey, 0, 0) ||
	    poll_one(cq, IBV_WC_SEND, &wc, "SEND"))
		goto out;
	say("SEND of %d bytes: completed (\"%s\")", n, (char *)buf);
	if (step(sock, 's', 'd'))
		goto out;
	ret = 0;
out:
	if (ret)
		step(sock, 'x', 0);
	if (qp) {
		err = ibv_destroy_qp(qp);
		say("ibv_destroy_qp -> %d", err);
		ret |= !!err;
	}
	if (cq) {
		err = ibv_destroy_cq(cq);
		say("ibv_destroy_cq -> %d", err);
		ret |= !!err;
	}
	if (mr) {
		err = ibv_dereg_mr(mr);
		say("ibv_dereg_mr (this process's MR) -> %d", err);
		ret |= !!err;
	}
	if (pmr) {
		ibv_unimport_mr(pmr);
		say("ibv_unimport_mr: userspace object freed, the parent's MR stays");
	}
	free(buf);
	return ret;
}

/*
 * The second process: gets the file, imports the PD (checked against its
 * identity where the device has one), uses it, lets go.
 */
static int demo_child(int sock)
{
	struct ibv_context *ctx;
	struct ibpddv_pd_attr attr = {};
	const char *how;
	struct share_msg m;
	struct ibv_pd *pd;
	struct ibv_mr *mr = NULL;
	size_t len = 64 * 1024;
	void *buf = NULL;
	int fd, ret;

	role = "child";
	fd = ibpd_recv_fd(sock, &m, sizeof(m));
	if (fd < 0) {
		say("receiving the command fd failed");
		return 1;
	}
	say("received the uverbs command fd %d over SCM_RIGHTS", fd);
	ctx = ibv_import_device(fd);
	if (!ctx) {
		say("ibv_import_device: %s", strerror(errno));
		return 1;
	}
	say("ibv_import_device(%d) -> context on %s", fd,
	    ibv_get_device_name(ctx->device));

	how = m.id ? "ibpddv_import_pd" : "ibv_import_pd";
	pd = m.id ? ibpddv_import_pd(ctx, m.handle, m.id) :
		    ibv_import_pd(ctx, m.handle);
	if (!pd) {
		say("%s: %s", how, strerror(errno));
		return 1;
	}
	if (ibpddv_query_pd(pd, &attr))
		say("ibv_import_pd(handle %u) -> PD, no new kernel object",
		    m.handle);
	else
		say("ibpddv_import_pd(handle %u, id %" PRIu64 ") -> PD pdn %u, no new kernel object  [ibv_import_pd, and the handle must still name that PD]",
		    m.handle, m.id, attr.pdn);

	if (m.qps) {
		ret = child_qp(sock, ctx, pd, &m);
	} else {
		ret = 1;
		buf = aligned_alloc(4096, len);
		if (!buf)
			return 1;
		mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			say("ibv_reg_mr: %s", strerror(errno));
			return 1;
		}
		say("ibv_reg_mr(imported PD, %zu KiB) -> lkey 0x%x rkey 0x%x",
		    len / 1024, mr->lkey, mr->rkey);
		if (step(sock, 'm', 'd'))
			return 1;
		ret = ibv_dereg_mr(mr);
		say("ibv_dereg_mr -> %d", ret);
	}
	ibv_unimport_pd(pd);
	say("ibv_unimport_pd: userspace object freed, no kernel call");
	ret |= ibv_close_device(ctx);
	say("ibv_close_device -> done (the parent still holds the file)");
	free(buf);
	if (ret)
		return 1;
	return step(sock, 'u', 0) ? 1 : 0;
}

/* The parent's objects of the data path. */
struct demo_qp {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct qp_dest dest;
};

/*
 * Whether the device runs QPs: NULL, or why not. It has none when
 * max_qp is 0, or when it cannot create a CQ or a QP (EOPNOTSUPP); any
 * other failure is an error (*err set).
 */
static const char *demo_qp_open(struct ibv_context *ctx, struct ibv_pd *pd,
				struct demo_qp *q, int *err)
{
	struct ibv_device_attr da;
	static char why[160];

	*err = ibv_query_device(ctx, &da);
	if (*err) {
		snprintf(why, sizeof(why), "ibv_query_device: %s",
			 strerror(*err));
		return why;
	}
	if (!da.max_qp) {
		snprintf(why, sizeof(why),
			 "%s has no queue pairs (ibv_query_device: max_qp 0)",
			 dev);
		return why;
	}
	/* connected with ibv_modify_qp() by hand, as IB and RoCE QPs are */
	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP) {
		snprintf(why, sizeof(why),
			 "%s is an iWARP device, whose QPs connect only through the connection manager (rdma_cm)",
			 dev);
		return why;
	}
	q->cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!q->cq) {
		*err = errno == EOPNOTSUPP ? 0 : errno;
		snprintf(why, sizeof(why), "ibv_create_cq: %s",
			 strerror(errno));
		return why;
	}
	q->qp = qp_make(pd, q->cq, 1,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!q->qp) {
		*err = errno == EOPNOTSUPP ? 0 : errno;
		snprintf(why, sizeof(why), "ibv_create_qp(RC): %s",
			 strerror(errno));
		ibv_destroy_cq(q->cq);
		q->cq = NULL;
		return why;
	}
	return NULL;
}

/*
 * The parent's data path, the child forked: sends the command fd, the PD's
 * and MR's handles, the buffer's address and its QP; connects to the
 * child's QP; checks the child's RDMA WRITE and SEND and rewrites half the
 * window for its READ; its dealloc fails with EBUSY while the child's QP
 * is on the PD. 0, or 1 said.
 */
static int parent_qp(int sock, pid_t child, struct ibv_pd *pd,
		     struct demo_qp *q, struct share_msg *m)
{
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge rsge;
	struct qp_dest peer;
	char want[DEMO_RECV];
	struct ibv_wc wc;
	ssize_t bad;
	int ret, n;

	rsge.addr = (uintptr_t)q->buf + DEMO_WIN;
	rsge.length = DEMO_RECV;
	rsge.lkey = q->mr->lkey;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ret = ibv_post_recv(q->qp, &rwr, &rbad);
	if (ret) {
		say("ibv_post_recv: %s", strerror(ret));
		return 1;
	}
	if (ibpd_send_fd(sock, pd->context->cmd_fd, m, sizeof(*m))) {
		say("sending the command fd: %s", strerror(errno));
		return 1;
	}
	say("sent the cmd fd, PD handle %u, MR handle %u, buffer 0x%" PRIx64 " and QP %u to pid %d",
	    m->handle, m->mr_handle, m->addr, m->dest.qpn, child);
	if (recv_msg(sock, &peer, sizeof(peer)))
		return 1;
	if (qp_connect(q->qp, &q->dest, &peer))
		return 1;
	say("QP %u -> RTS, connected to the child's QP %u", q->dest.qpn,
	    peer.qpn);
	if (step(sock, 'g', 'w'))
		return 1;

	bad = mismatch(q->buf, DEMO_WIN, child);
	if (bad >= 0) {
		say("after the child's RDMA WRITE: byte %zd of the buffer is not what it wrote",
		    bad);
		return 1;
	}
	say("the buffer holds the %d bytes the child wrote: checked", DEMO_WIN);
	fill(q->buf + DEMO_WIN / 2, DEMO_WIN / 2, getpid());
	say("rewrote its second half, for the child's RDMA READ");
	if (step(sock, 'r', 's'))
		return 1;

	if (poll_one(q->cq, IBV_WC_RECV, &wc, "receive"))
		return 1;
	n = send_text(want, sizeof(want), child) + 1;
	if (wc.byte_len != (uint32_t)n ||
	    memcmp(q->buf + DEMO_WIN, want, n)) {
		say("received %u bytes, not the child's message", wc.byte_len);
		return 1;
	}
	say("received the child's SEND, %u bytes: checked (\"%s\")",
	    wc.byte_len, (char *)q->buf + DEMO_WIN);

	ret = ibv_dealloc_pd(pd);
	say("ibv_dealloc_pd -> %d (%s): the child's QP and MR, and this process's, use the PD",
	    ret, ret ? strerror(ret) : "success");
	if (ret != EBUSY)
		return 1;
	show_pds();
	if (step(sock, 'd', 'u'))
		return 1;
	say("the child destroyed its QP and CQ, deregistered its MR, unimported the MR and the PD: the PD is still here");
	return 0;
}

/* The parent's data path objects, torn down: 0, or 1 said. */
static int demo_qp_close(struct demo_qp *q)
{
	int ret = 0, err;

	if (q->qp) {
		err = ibv_destroy_qp(q->qp);
		say("ibv_destroy_qp -> %d", err);
		ret |= !!err;
	}
	if (q->cq) {
		err = ibv_destroy_cq(q->cq);
		say("ibv_destroy_cq -> %d", err);
		ret |= !!err;
	}
	if (q->mr) {
		err = ibv_dereg_mr(q->mr);
		say("ibv_dereg_mr (the owner's) -> %d", err);
		ret |= !!err;
	}
	free(q->buf);
	return ret;
}

static int demo(void)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_context *ctx;
	struct share_msg m = {};
	struct demo_qp q = {};
	const char *why;
	struct ibv_pd *pd;
	int sv[2], status, ret, err;
	pid_t pid;

	ctx = open_by_name(dev);
	if (!ctx) {
		say("ibv_open_device(%s): %s", dev, strerror(errno));
		return 1;
	}
	say("ibv_open_device(%s) -> cmd fd %d", dev, ctx->cmd_fd);
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		say("ibv_alloc_pd: %s", strerror(errno));
		return 1;
	}
	m.handle = pd->handle;
	ret = ibpddv_query_pd(pd, &attr);
	if (!ret) {
		m.pdn = attr.pdn;
		m.id = attr.id;
		say("ibv_alloc_pd -> pd->handle %u; ibpddv_query_pd -> pdn %u, id %" PRIu64,
		    m.handle, m.pdn, m.id);
	} else {
		say("ibv_alloc_pd -> pd->handle %u; ibpddv_query_pd: %s",
		    m.handle, strerror(ret));
	}

	why = demo_qp_open(ctx, pd, &q, &err);
	if (why && err) {
		say("%s", why);
		return 1;
	}
	if (why) {
		say("%s: the demo shares the PD and stops there (no RDMA WRITE, READ or SEND)",
		    why);
	} else {
		q.buf = aligned_alloc(4096, DEMO_BUF);
		if (!q.buf) {
			say("%s", strerror(ENOMEM));
			return 1;
		}
		memset(q.buf, 0, DEMO_BUF);
		q.mr = ibv_reg_mr(pd, q.buf, DEMO_BUF, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
		if (!q.mr) {
			say("ibv_reg_mr: %s", strerror(errno));
			return 1;
		}
		if (port_dest(ctx, 1, &q.dest))
			return 1;
		q.dest.qpn = q.qp->qp_num;
		q.dest.psn = (getpid() * 2654435761u) & 0xffffff;
		m.qps = 1;
		m.mr_handle = q.mr->handle;
		m.addr = (uintptr_t)q.buf;
		m.rkey = q.mr->rkey;
		m.dest = q.dest;
		say("ibv_reg_mr(%d bytes, remote write and read) -> handle %u rkey 0x%x; ibv_create_cq; ibv_create_qp -> RC QP %u (INIT)",
		    DEMO_BUF, q.mr->handle, q.mr->rkey, q.dest.qpn);
		if (q.dest.global) {
			char g[48];

			say("port %u: RoCE v2 GID index %u (%s), MTU %d",
			    q.dest.port, q.dest.gid_index,
			    gid_str(&q.dest.gid, g, sizeof(g)),
			    128 << q.dest.mtu);
		} else {
			say("port %u: LID %u, MTU %d", q.dest.port, q.dest.lid,
			    128 << q.dest.mtu);
		}
	}
	show_pds();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		say("socketpair: %s", strerror(errno));
		return 1;
	}
	peer_timeout(sv[0]);
	peer_timeout(sv[1]);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		return 1;
	}
	if (!pid) {
		close(sv[0]);
		_exit(demo_child(sv[1]));
	}
	close(sv[1]);

	if (m.qps) {
		ret = parent_qp(sv[0], pid, pd, &q, &m);
		if (ret)
			goto child_failed;
	} else {
		if (ibpd_send_fd(sv[0], ctx->cmd_fd, &m, sizeof(m))) {
			say("sending the command fd: %s", strerror(errno));
			return 1;
		}
		say("sent the cmd fd, PD handle %u and id %" PRIu64 " to pid %d",
		    m.handle, m.id, pid);
		if (step(sv[0], 0, 'm'))
			goto child_failed;

		ret = ibv_dealloc_pd(pd);
		say("ibv_dealloc_pd -> %d (%s): the child's MR uses the PD", ret,
		    ret ? strerror(ret) : "success");
		if (ret != EBUSY)
			return 1;
		show_pds();

		if (step(sv[0], 'd', 'u'))
			goto child_failed;
		say("the child deregistered, unimported and closed: the PD is still here");
	}
	show_pds();

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		goto child_failed;

	if (demo_qp_close(&q))
		return 1;
	ret = ibv_dealloc_pd(pd);
	say("ibv_dealloc_pd -> %d (%s)", ret, ret ? strerror(ret) : "success");
	if (ret)
		return 1;
	show_pds();
	ret = ibv_close_device(ctx);
	say("ibv_close_device -> %d; demo complete%s", ret,
	    m.qps ? " (RDMA WRITE, READ and SEND through the imported PD and MR)" :
		    "");
	return ret ? 1 : 0;

child_failed:
	say("the child process failed");
	close(sv[0]);
	waitpid(pid, &status, 0);
	return 1;
}

/*
 * The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if there is
 * none.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned int cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	if (n == 4 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return n;
}

/*
 * A JSON string of STR, whatever its bytes (a device name is any string
 * the kernel took): valid UTF-8 as it is, a byte outside it as the
 * character of its value (\u00XX), control characters escaped.
 */
static void json_str(const char *str)
{
	const unsigned char *c = (const unsigned char *)str;
	int n;

	fputc('"', out);
	while (*c) {
		n = utf8_len(c);
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || !n)
			fprintf(out, "\\u%04x", *c);
		else
			fwrite(c, 1, n, out);
		c += n ? n : 1;
	}
	fputc('"', out);
}

/* -p: JSON one member per line, indented by depth, as rdma -j -p. */
static void json_pretty(const char *s)
{
	bool in_str = false, esc = false;
	int depth = 0;

	for (; *s; s++) {
		if (in_str) {
			putchar(*s);
			if (esc)
				esc = false;
			else if (*s == '\\')
				esc = true;
			else if (*s == '"')
				in_str = false;
			continue;
		}
		switch (*s) {
		case '"':
			in_str = true;
			putchar(*s);
			break;
		case '{':
		case '[':
			printf("%c\n%*s", *s, 2 * ++depth, "");
			break;
		case '}':
		case ']':
			printf("\n%*s%c", 2 * --depth, "", *s);
			break;
		case ',':
			printf(",\n%*s", 2 * depth, "");
			while (s[1] == ' ')
				s++;
			break;
		default:
			putchar(*s);
		}
	}
	putchar('\n');
}

/*
 * Whether another process can share the device's PDs: its context
 * imports (ibv_import_device() of a duplicate of the file: the kernel's
 * QUERY_CONTEXT, which the driver must answer), and then a PD import of a
 * handle no file holds fails with ENOENT where PDs import, EOPNOTSUPP
 * where not. The PD import alone tells nothing where libibverbs imports
 * PDs generically, without a kernel call: a stock rxe under such an
 * rdma-core imports no context, so no PD.
 */
static bool device_imports(struct ibv_context *ctx)
{
	struct ibv_context *imp;
	struct ibv_pd *pd;
	bool can;
	int fd;

	fd = fcntl(ctx->cmd_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* On success the context owns fd: ibv_close_device() closes it. */
	imp = ibv_import_device(fd);
	if (!imp) {
		/*
		 * Some libibverbs close it on a failed import, some do not
		 * (ibv_import_device(3)); no other thread opens files here,
		 * so an fd still open is this one.
		 */
		if (fcntl(fd, F_GETFD) >= 0)
			close(fd);
		return false;
	}
	pd = ibv_import_pd(imp, UINT32_MAX);
	can = pd || errno != EOPNOTSUPP;
	if (pd)
		ibv_unimport_pd(pd);
	ibv_close_device(imp);
	return can;
}

/*
 * Why ibv_open_device() failed: its errno, but where libibverbs could not
 * open the uverbs node, its fallback (a node of its own making) leaves
 * ENOENT in errno: then why the node cannot be opened, such as EACCES.
 */
static int open_errno(struct ibv_device *d, int err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/dev/infiniband/%s", d->dev_name);
	if (err != ENOENT ||
	    !faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS))
		return err;
	return errno == ENOENT ? err : errno;
}

/*
 * One device's row; 1 when the device could not be opened or queried (as
 * ibv_devinfo, the other rows are printed all the same): the error on
 * stderr, and in the row what the device did not tell, "-" (JSON: null,
 * with "error").
 */
static int device_row(struct ibv_device *d, int i)
{
	struct ibv_device_attr attr = {};
	struct ibv_context *ctx = ibv_open_device(d);
	int err = ctx ? 0 : open_errno(d, errno);
	const char *name = ibv_get_device_name(d);
	bool ibpd = ibpddv_is_supported(d), can = false;
	const char *what = "opening";

	if (ctx) {
		can = device_imports(ctx);
		if (details) {
			err = ibv_query_device(ctx, &attr);
			what = "querying";
		}
		ibv_close_device(ctx);
	}
	if (err)
		fprintf(stderr, "ibpd: %s %s: %s\n", what, name, strerror(err));
	if (!json) {
		printf("%-16s %-10s %5d %5s %10s", name, d->dev_name,
		       ibv_get_device_index(d), ibpd ? "yes" : "no",
		       !ctx ? "-" : can ? "yes" : "no");
		if (details && err)
			printf("  %016" PRIx64 " %-12s %10s %10s",
			       be64toh(ibv_get_device_guid(d)), "-", "-", "-");
		else if (details)
			printf("  %016" PRIx64 " %-12s %10d %10d",
			       be64toh(ibv_get_device_guid(d)), attr.fw_ver,
			       attr.max_pd, attr.max_mr);
		printf("\n");
		return !!err;
	}
	fprintf(out, "%s{\"device\": ", i ? "," : "");
	json_str(name);
	fprintf(out, ", \"uverbs\": ");
	json_str(d->dev_name);
	fprintf(out, ", \"index\": %d, \"ibpd\": %s, \"pd_import\": %s",
		ibv_get_device_index(d), ibpd ? "true" : "false",
		!ctx ? "null" : can ? "true" : "false");
	if (details) {
		fprintf(out, ", \"node_guid\": \"%016" PRIx64 "\", \"fw_ver\": ",
			be64toh(ibv_get_device_guid(d)));
		if (err) {
			fprintf(out, "null, \"max_pd\": null, \"max_mr\": null");
		} else {
			json_str(attr.fw_ver);
			fprintf(out, ", \"max_pd\": %d, \"max_mr\": %d",
				attr.max_pd, attr.max_mr);
		}
	}
	if (err) {
		fprintf(out, ", \"error\": ");
		json_str(strerror(err));
	}
	fprintf(out, "}");
	return !!err;
}

static int cmd_devices(void)
{
	struct ibv_device **list;
	int i, n, ret = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "ibpd: listing RDMA devices: %s\n",
			strerror(errno));
		return 1;
	}
	if (!json && n)
		printf("%-16s %-10s %5s %5s %10s%s\n", "device", "uverbs",
		       "index", "ibpd", "pd_import", details ?
		       "  node_guid        fw_ver           max_pd     max_mr" :
		       "");
	for (i = 0; i < n; i++)
		ret |= device_row(list[i], i);
	if (!json && !n)
		printf("no RDMA device that libibverbs drives\n");
	ibv_free_device_list(list);
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One PD of the file, as the device told it. */
struct pd_row {
	uint32_t handle;
	struct ibpddv_pd_attr a;
};

static void show_pd(const struct pd_row *r, size_t shown)
{
	if (json) {
		fprintf(out, "%s{\"handle\": %u, \"pdn\": %u, \"usecnt\": %u",
			shown ? ", " : "", r->handle, r->a.pdn, r->a.usecnt);
		if (details)
			fprintf(out, ", \"id\": %" PRIu64, r->a.id);
		fprintf(out, "}");
		return;
	}
	printf("  %8u %10u %8u", r->handle, r->a.pdn, r->a.usecnt);
	if (details)
		printf(" %20" PRIu64, r->a.id);
	printf("\n");
}

/*
 * PD HANDLE of the file, imported and queried into *r: 0, or the errno of
 * whichever failed.
 */
static int query_pd(struct ibv_context *ctx, uint32_t handle,
		    struct pd_row *r)
{
	struct ibv_pd *pd = ibv_import_pd(ctx, handle);
	int err;

	if (!pd)
		return errno;
	r->handle = handle;
	err = ibpddv_query_pd(pd, &r->a);
	ibv_unimport_pd(pd);
	return err;
}

/*
 * The PDs of the file among its n handles, into rows (room for n): how
 * many, or -1 when the device was removed meanwhile, which destroyed them
 * all. A PD that went meanwhile is left out: its handle names nothing
 * (ENOENT), a new PD (ESTALE) or another object (EINVAL). Any other error
 * is one: on standard error with the handle, *failed set, no row.
 */
static ssize_t query_pds(struct ibv_context *ctx, pid_t pid, int fd,
			 const uint32_t *handles, size_t n,
			 struct pd_row *rows, bool *failed)
{
	size_t i, shown = 0;
	int err;

	for (i = 0; i < n; i++) {
		err = query_pd(ctx, handles[i], &rows[shown]);
		if (!err)
			shown++;
		else if (err == EIO)
			return -1;
		else if (err != ENOENT && err != ESTALE && err != EINVAL) {
			fprintf(stderr,
				"ibpd: pid %d fd %d: PD handle %u: %s\n", pid,
				fd, handles[i], strerror(err));
			*failed = true;
		}
	}
	return shown;
}

static int files_shown;	/* for the separators */

/* A file of a device that is not ibpd: shown, its PDs not asked for. */
static void show_other_file(const char *name, pid_t pid, int fd)
{
	bool first = !files_shown++;

	if (json) {
		fprintf(out, "%s{\"pid\": %d, \"fd\": %d, \"device\": ",
			first ? "" : ",", pid, fd);
		json_str(name);
		fprintf(out, ", \"ibpd\": false, \"pds\": null}");
		return;
	}
	printf("%spid %d fd %d: %s\n", first ? "" : "\n", pid, fd, name);
	printf("  not an ibpd device: its PDs are not listed\n");
}

/* One uverbs file of an ibpd device: its PDs, with pdn and use count. */
static int show_file(struct ibv_context *ctx, pid_t pid, int fd)
{
	const char *name = ibv_get_device_name(ctx->device);
	bool first = !files_shown++, more, failed = false;
	struct pd_row *rows = NULL;
	size_t i, n;
	ssize_t shown;
	uint32_t *handles;
	int ret;

	if (json) {
		fprintf(out, "%s{\"pid\": %d, \"fd\": %d, \"device\": ",
			first ? "" : ",", pid, fd);
		json_str(name);
	} else {
		printf("%spid %d fd %d: %s\n", first ? "" : "\n", pid, fd,
		       name);
	}
	/*
	 * One handle more than it shows: the call says how many it stored,
	 * not how many there are, so only the last one tells "more".
	 */
	handles = malloc(IBPDDV_LIST_PDS_MAX * sizeof(*handles));
	ret = handles ? ibpddv_list_pds(ctx, handles, IBPDDV_LIST_PDS_MAX, &n) :
			ENOMEM;
	if (!ret) {
		rows = calloc(n ? n : 1, sizeof(*rows));
		ret = rows ? 0 : ENOMEM;
	}
	if (ret) {
		/* the file's object is closed all the same */
		fprintf(stderr, "ibpd: listing the PDs of pid %d fd %d: %s\n",
			pid, fd, strerror(ret));
		if (json)
			fprintf(out, ", \"ibpd\": true, \"pds\": null}");
		free(handles);
		return 1;
	}
	more = n == IBPDDV_LIST_PDS_MAX;
	if (more)
		n--;
	qsort(handles, n, sizeof(*handles), cmp_u32);
	shown = query_pds(ctx, pid, fd, handles, n, rows, &failed);
	/* the device went while they were queried: it took them along */
	if (shown < 0) {
		shown = 0;
		more = false;
	}
	if (json)
		fprintf(out, ", \"ibpd\": true, \"truncated\": %s, \"pds\": [",
			more ? "true" : "false");
	else if (shown)
		printf("  %8s %10s %8s%s\n", "handle", "pdn", "usecnt",
		       details ? "                   id" : "");
	for (i = 0; i < (size_t)shown; i++)
		show_pd(&rows[i], i);
	if (json)
		fprintf(out, "]}");
	else
		printf("  %zd PD%s%s\n", shown, shown == 1 ? "" : "s",
		       more ? " (the first the kernel lists; there are more)" :
			      "");
	free(rows);
	free(handles);
	return failed;
}

static int getfd(pid_t pid, int fd)
{
	int pidfd, ret;

	if (pid == getpid())
		return dup(fd);
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1;
	ret = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return ret;
}

/*
 * Whether fd FD of process PID is a uverbs file, by its /proc link: 1 or
 * 0, or -errno when the link cannot be read (EACCES: no ptrace
 * permission on PID; ENOENT: no such fd).
 */
static int uverbs_link(pid_t pid, int fd)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	return !strncmp(target, "/dev/infiniband/uverbs", 22);
}

/* The fds of the files shown so far, one a file. */
struct fd_set_shown {
	int *fd;
	size_t n, cap;
};

/* A dup'ed fd of a file already shown (kcmp: 0 means the same file). */
static bool same_file_shown(pid_t pid, const struct fd_set_shown *shown,
			    int fd)
{
	size_t i;

	for (i = 0; i < shown->n; i++)
		if (!syscall(SYS_kcmp, pid, pid, KCMP_FILE, shown->fd[i], fd))
			return true;
	return false;
}

/* Adds fd to shown: 0, or ENOMEM. */
static int add_shown(struct fd_set_shown *shown, int fd)
{
	int *more;

	if (shown->n == shown->cap) {
		more = realloc(shown->fd, (shown->cap * 2 + 16) * sizeof(*more));
		if (!more)
			return ENOMEM;
		shown->fd = more;
		shown->cap = shown->cap * 2 + 16;
	}
	shown->fd[shown->n++] = fd;
	return 0;
}

/*
 * Whether major is one of the uverbs character devices' (both of the
 * kernel's regions are "infiniband_verbs" in /proc/devices).
 */
static bool uverbs_major(unsigned int major)
{
	char line[128], name[64];
	bool found = false;
	unsigned int m;
	FILE *f;

	f = fopen("/proc/devices", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%u %63s", &m, name) == 2 && m == major &&
			!strcmp(name, "infiniband_verbs");
	fclose(f);
	return found;
}

enum fd_kind { FD_OTHER, FD_UVERBS, FD_UVERBS_GONE };

/*
 * What FD (ours, so that it cannot change meanwhile) is: a uverbs file,
 * its RDMA device's name, from sysfs, in NAME ("?" if unknown); one of a
 * uverbs device that was removed (its node is the uverbs major's, its
 * sysfs entry gone); or anything else.
 */
static enum fd_kind fd_ibdev(int fd, char *name, size_t len)
{
	char path[64], target[PATH_MAX], *base;
	struct stat st;
	ssize_t n;
	FILE *f;

	snprintf(name, len, "?");
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return FD_OTHER;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT && uverbs_major(major(st.st_rdev)) ?
		       FD_UVERBS_GONE : FD_OTHER;
	target[n] = 0;
	base = strrchr(target, '/');
	if (!base || strncmp(base, "/uverbs", 7))
		return FD_OTHER;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/ibdev",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "r");
	if (!f)
		return FD_UVERBS;
	if (fgets(name, len, f))
		name[strcspn(name, "\n")] = 0;
	fclose(f);
	return FD_UVERBS;
}

/*
 * A file whose device was removed before ibpd could import it (its
 * context then fails with EIO): the removal destroyed its objects, so it
 * is shown with no PDs, as one whose device goes while it is listed. Its
 * device's name and driver are gone with it.
 */
static void show_gone_file(pid_t pid, int fd)
{
	bool first = !files_shown++;

	if (json) {
		fprintf(out, "%s{\"pid\": %d, \"fd\": %d, \"device\": null, "
			"\"ibpd\": null, \"truncated\": false, \"pds\": []}",
			first ? "" : ",", pid, fd);
		return;
	}
	printf("%spid %d fd %d: a removed device\n", first ? "" : "\n", pid,
	       fd);
	printf("  0 PDs (the removal destroyed them)\n");
}

/* show_fd(): the fd was closed since the listing, nothing of it shown */
#define FD_CLOSED	2

/* 0, 1 on an error (said on stderr), or FD_CLOSED. */
static int show_fd(pid_t pid, int fd)
{
	struct ibv_context *ctx;
	enum fd_kind kind;
	char name[64];
	int myfd, ret;

	myfd = getfd(pid, fd);
	/* in a listing, an fd closed since it was listed is skipped */
	if (myfd < 0 && errno == EBADF && opt_fd < 0)
		return FD_CLOSED;
	if (myfd < 0) {
		fprintf(stderr, "ibpd: getting fd %d of pid %d: %s\n", fd, pid,
			strerror(errno));
		return 1;
	}
	/* the fd may have been closed or reused since it was listed */
	kind = fd_ibdev(myfd, name, sizeof(name));
	/* an O_PATH fd opens no file of the device: nothing to import */
	if (kind != FD_OTHER && (fcntl(myfd, F_GETFL) & O_PATH)) {
		fprintf(stderr,
			"ibpd: pid %d fd %d: an O_PATH fd of %s, no file of it (nothing to list): skipped\n",
			pid, fd, kind == FD_UVERBS ? name : "a removed device");
		close(myfd);
		return 0;
	}
	if (kind == FD_UVERBS_GONE) {
		show_gone_file(pid, fd);
		close(myfd);
		return 0;
	}
	if (kind == FD_OTHER) {
		fprintf(stderr, "ibpd: fd %d of pid %d is not a uverbs file\n",
			fd, pid);
		close(myfd);
		return 1;
	}
	/* On success the context owns myfd: ibv_close_device() closes it. */
	ctx = ibv_import_device(myfd);
	/*
	 * the device went before the import: no device of its number
	 * (ENODEV), or one that took its number since (EIO)
	 */
	if (!ctx && (errno == EIO || errno == ENODEV)) {
		show_gone_file(pid, fd);
		close(myfd);
		return 0;
	}
	/* not ibpd's; rxe's provider cannot even import the context */
	if (!ctx && errno == EOPNOTSUPP) {
		show_other_file(name, pid, fd);
		close(myfd);
		return 0;
	}
	if (ctx && !ibpddv_is_supported(ctx->device)) {
		show_other_file(ibv_get_device_name(ctx->device), pid, fd);
		ibv_close_device(ctx);
		return 0;
	}
	/* the kernel's QUERY_CONTEXT: no context on the file yet */
	if (!ctx && errno == EINVAL) {
		fprintf(stderr,
			"ibpd: pid %d fd %d: a file of %s without a context (nothing to list): skipped\n",
			pid, fd, name);
		close(myfd);
		return 0;
	}
	if (!ctx) {
		fprintf(stderr,
			"ibpd: importing the context of pid %d fd %d: %s\n",
			pid, fd, strerror(errno));
		close(myfd);
		return 1;
	}
	ret = show_file(ctx, pid, fd);
	ibv_close_device(ctx);
	return ret;
}

static int cmd_pds(void)
{
	pid_t pid = opt_pid ? opt_pid : getpid();
	struct fd_set_shown shown = {};
	int ret = 0, rc;
	char path[64];
	struct dirent *e;
	DIR *d;

	if (opt_fd >= 0) {
		ret = uverbs_link(pid, opt_fd);
		if (ret < 0) {
			fprintf(stderr, "ibpd: fd %d of pid %d: %s\n", opt_fd,
				pid, strerror(-ret));
			return 1;
		}
		if (!ret) {
			fprintf(stderr,
				"ibpd: fd %d of pid %d is not a uverbs file\n",
				opt_fd, pid);
			return 1;
		}
		return show_fd(pid, opt_fd);
	}

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "ibpd: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		/* an fd whose link cannot be read was closed meanwhile */
		if (*end || e->d_name[0] == '.' || uverbs_link(pid, fd) <= 0 ||
		    same_file_shown(pid, &shown, fd))
			continue;
		rc = show_fd(pid, fd);
		if (rc == FD_CLOSED)
			continue;
		ret |= rc;
		if (add_shown(&shown, fd)) {
			fprintf(stderr, "ibpd: %s\n", strerror(ENOMEM));
			ret = 1;
			break;
		}
	}
	closedir(d);
	if (!shown.n && !json)
		printf("pid %d has no uverbs file open\n", pid);
	free(shown.fd);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibpd [OPTIONS] COMMAND\n"
		"\n"
		"Commands:\n"
		"  devices          list the RDMA devices libibverbs drives, whether\n"
		"                   ibpd's provider drives them and can import a PD\n"
		"  pds              list the PDs of the uverbs files of a process\n"
		"                   (--pid, default this one) or of one of its fds\n"
		"                   (--fd): handle, pdn and use count\n"
		"  demo             share a PD between two processes over SCM_RIGHTS:\n"
		"                   alloc, import, MR through the imported PD, EBUSY\n"
		"                   on dealloc, unimport, dealloc; on a device with\n"
		"                   QPs, the imported PD and MR carry RC traffic:\n"
		"                   RDMA WRITE, RDMA READ, SEND\n"
		"\n"
		"Options:\n"
		"  -j, --json       devices, pds: print JSON\n"
		"  -p, --pretty     with -j: one member a line, indented\n"
		"  -d, --details    devices: GUID, firmware, max_pd, max_mr;\n"
		"                   pds: each PD's identity\n"
		"      --device DEV demo: the RDMA device (default ibpd0)\n"
		"      --pid PID    pds: the process whose files to show (the files\n"
		"                   are shared with pidfd_getfd(2): needs ptrace\n"
		"                   permission on PID)\n"
		"      --fd FD      pds: only the file open on FD\n"
		"  -h, --help       print this help\n"
		"\n"
		"Exit status: 0 success, 1 an operation failed, 2 usage error.\n");
}

static int parse_int(const char *arg, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < min || v > max) {
		fprintf(stderr, "ibpd: invalid %s '%s'\n", what, arg);
		return -1;
	}
	return v;
}

/*
 * Runs a listing. With -j its JSON, {"KEY": [...]}, goes to a buffer and
 * is printed whole, plain or pretty, whatever the listing met: its errors
 * go to standard error, as with rdma -j.
 */
static int with_json(int (*fn)(void), const char *key)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (!json)
		return fn();
	out = open_memstream(&buf, &len);
	if (!out) {
		fprintf(stderr, "ibpd: %s\n", strerror(errno));
		printf("{\"%s\": []}\n", key);
		return 1;
	}
	fprintf(out, "{\"%s\": [", key);
	ret = fn();
	fprintf(out, "]}");
	if (fclose(out)) {
		fprintf(stderr, "ibpd: %s\n", strerror(errno));
		printf("{\"%s\": []}\n", key);
		free(buf);
		return 1;
	}
	if (pretty)
		json_pretty(buf);
	else
		printf("%s\n", buf);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_DEVICE = 256, OPT_PID, OPT_FD };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "fd", required_argument, NULL, OPT_FD },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *cmd;
	int opt;

	while ((opt = getopt_long(argc, argv, "jpdh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pretty = true;
			break;
		case 'd':
			details = true;
			break;
		case OPT_DEVICE:
			dev = optarg;
			break;
		case OPT_PID:
			opt_pid = parse_int(optarg, "pid", 1, INT_MAX);
			if (opt_pid <= 0)
				return EXIT_USAGE;
			break;
		case OPT_FD:
			opt_fd = parse_int(optarg, "fd", 0, INT_MAX);
			if (opt_fd < 0)
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ibpd: %s\n", optind < argc ?
			"one command at a time" : "no command given");
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
#ifdef IBPD_VERBS_ONLY
	if (strcmp(cmd, "demo")) {
		fprintf(stderr, PROG ": built on libibverbs alone: demo only\n");
		return EXIT_USAGE;
	}
#endif
	if (!strcmp(cmd, "devices"))
		return with_json(cmd_devices, "devices");
	if (!strcmp(cmd, "pds"))
		return with_json(cmd_pds, "files");
	if (!strcmp(cmd, "demo")) {
		if (json) {
			fprintf(stderr, "ibpd: demo has no JSON output\n");
			return EXIT_USAGE;
		}
		return demo();
	}
	fprintf(stderr, "ibpd: unknown command '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}

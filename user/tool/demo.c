// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd demo: share a PD between two processes over SCM_RIGHTS; on a
 * device with QPs, RDMA WRITE, READ and SEND through the imported PD and
 * MR. libibpd's calls come through a struct demo_dv: ibpd-demo, built on
 * libibverbs alone, imports PDs unchecked, with ibv_import_pd().
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scm_rights.h"
#include "tool.h"

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

static const char *role = "parent";

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
static int demo_child(int sock, const struct demo_dv *dv)
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
	pd = m.id ? dv->import_pd(ctx, m.handle, m.id) :
		    ibv_import_pd(ctx, m.handle);
	if (!pd) {
		say("%s: %s", how, strerror(errno));
		return 1;
	}
	if (dv->query_pd(pd, &attr))
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

/*
 * ibpd demo: one process allocates a PD, another imports it and uses it
 * (on a device with QPs, the data path through it), each verb said.
 */
int demo(const struct demo_dv *dv)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_context *ctx;
	struct share_msg m = {};
	struct demo_qp q = {};
	const char *why;
	struct ibv_pd *pd;
	int sv[2], status, ret, err;
	pid_t pid;

	if (json) {
		fprintf(stderr, "ibpd: demo has no JSON output\n");
		return EXIT_USAGE;
	}
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
	ret = dv->query_pd(pd, &attr);
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
		_exit(demo_child(sv[1], dv));
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

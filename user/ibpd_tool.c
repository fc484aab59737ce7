// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd: what libibpd can do, from the command line.
 *
 *   ibpd demo [-d DEV]   share a PD between two processes over SCM_RIGHTS
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibpd.h"
#include "scm_rights.h"

struct share_msg {
	uint32_t handle;
	uint32_t pdn;
};

static const char *dev = "ibpd0";
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

static void show_pds(void)
{
	char cmd[128];

	fflush(stdout);
	snprintf(cmd, sizeof(cmd),
		 "echo '  $ rdma resource show pd dev %s'; "
		 "rdma resource show pd dev %s | sed 's/^/  /'", dev, dev);
	if (system(cmd))
		say("(rdma resource show failed)");
}

static int step(int sock, char send, char expect)
{
	char c;

	if (send && write(sock, &send, 1) != 1)
		return -1;
	if (expect && (read(sock, &c, 1) != 1 || c != expect))
		return -1;
	return 0;
}

/* The second process: gets the file, imports the PD, uses it, lets go. */
static int demo_child(int sock)
{
	struct ibpd_context *ctx;
	struct share_msg m;
	struct ibpd_pd *pd;
	struct ibpd_mr *mr;
	size_t len = 64 * 1024;
	void *buf;
	int fd, ret;

	role = "child";
	fd = ibpd_recv_fd(sock, &m, sizeof(m));
	if (fd < 0) {
		say("receiving the command fd failed");
		return 1;
	}
	say("received the uverbs command fd %d over SCM_RIGHTS", fd);
	ctx = ibpd_import_device(fd);
	if (!ctx) {
		say("ibpd_import_device: %s", strerror(errno));
		return 1;
	}
	say("ibpd_import_device(%d) -> context on %s", fd,
	    ibpd_context_ibdev_name(ctx));

	pd = ibpd_import_pd_checked(ctx, m.handle, m.pdn);
	if (!pd) {
		say("ibpd_import_pd_checked: %s", strerror(errno));
		return 1;
	}
	say("ibpd_import_pd_checked(handle %u, pdn %u) -> PD pdn %u (no new kernel object)",
	    m.handle, m.pdn, ibpd_pd_pdn(pd));

	buf = aligned_alloc(4096, len);
	if (!buf)
		return 1;
	mr = ibpd_reg_mr(pd, buf, len, IBPD_ACCESS_LOCAL_WRITE);
	if (!mr) {
		say("ibpd_reg_mr: %s", strerror(errno));
		return 1;
	}
	say("ibpd_reg_mr(imported PD, %zu KiB) -> lkey 0x%x rkey 0x%x",
	    len / 1024, ibpd_mr_lkey(mr), ibpd_mr_rkey(mr));
	if (step(sock, 'm', 'd'))
		return 1;

	ret = ibpd_dereg_mr(mr);
	say("ibpd_dereg_mr -> %d", ret);
	ibpd_unimport_pd(pd);
	say("ibpd_unimport_pd: userspace object freed, no kernel call");
	ret |= ibpd_close_device(ctx);
	say("ibpd_close_device -> done (the parent still holds the file)");
	free(buf);
	if (step(sock, 'u', 0))
		return 1;
	return ret ? 1 : 0;
}

static int demo(void)
{
	struct ibpd_context *ctx;
	struct share_msg m;
	struct ibpd_pd *pd;
	int sv[2], status, ret;
	pid_t pid;

	ctx = ibpd_open_device(dev);
	if (!ctx) {
		say("ibpd_open_device(%s): %s", dev, strerror(errno));
		return 1;
	}
	say("ibpd_open_device(%s) -> cmd fd %d", dev, ibpd_context_cmd_fd(ctx));
	pd = ibpd_alloc_pd(ctx);
	if (!pd) {
		say("ibpd_alloc_pd: %s", strerror(errno));
		return 1;
	}
	say("ibpd_alloc_pd -> handle %u, pdn %u", ibpd_pd_handle(pd),
	    ibpd_pd_pdn(pd));
	show_pds();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(sv[0]);
		_exit(demo_child(sv[1]));
	}
	close(sv[1]);

	m.handle = ibpd_pd_handle(pd);
	m.pdn = ibpd_pd_pdn(pd);
	if (ibpd_send_fd(sv[0], ibpd_context_cmd_fd(ctx), &m, sizeof(m)))
		return 1;
	say("sent the cmd fd, PD handle %u and pdn %u to pid %d", m.handle,
	    m.pdn, pid);
	if (step(sv[0], 0, 'm'))
		goto child_failed;

	ret = ibpd_dealloc_pd(pd);
	say("ibpd_dealloc_pd -> %d (%s): the child's MR uses the PD", ret,
	    ret ? strerror(ret) : "success");
	if (ret != EBUSY)
		return 1;
	show_pds();

	if (step(sv[0], 'd', 'u'))
		goto child_failed;
	say("the child deregistered, unimported and closed: the PD is still here");
	show_pds();

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		goto child_failed;

	ret = ibpd_dealloc_pd(pd);
	say("ibpd_dealloc_pd -> %d (%s)", ret, ret ? strerror(ret) : "success");
	if (ret)
		return 1;
	show_pds();
	ret = ibpd_close_device(ctx);
	say("ibpd_close_device -> %d; demo complete", ret);
	return ret ? 1 : 0;

child_failed:
	say("the child process failed");
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibpd [-d DEV] demo\n"
		"\n"
		"  demo   share a PD between two processes over SCM_RIGHTS:\n"
		"         alloc, import, MR through the imported PD, EBUSY on\n"
		"         dealloc, unimport, dealloc\n"
		"\n"
		"  -d DEV RDMA device (default ibpd0)\n");
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "+d:h")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "demo"))
		return demo();
	fprintf(stderr, "ibpd: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return 2;
}

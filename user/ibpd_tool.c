// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd: what libibpd can do, from the command line.
 *
 *   ibpd devices         the RDMA devices with a uverbs char device
 *   ibpd pds             the PDs of a uverbs file: handle, pdn, use count
 *   ibpd demo            share a PD between two processes over SCM_RIGHTS
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "ibpd.h"
#include "scm_rights.h"

struct share_msg {
	uint32_t handle;
	uint32_t pdn;
	uint64_t id;
};

#define EXIT_USAGE 2

static const char *dev = "ibpd0";
static const char *role = "parent";
static bool json;
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
 * ib_core's view of the device's PDs. Its pdn column is ib_core's resource
 * id, not ibpd's PD number; users counts the MRs on the PD.
 */
static void show_pds(void)
{
	static bool noted;
	char cmd[160];

	fflush(stdout);
	snprintf(cmd, sizeof(cmd),
		 "echo '  $ rdma resource show pd dev %s'; "
		 "rdma resource show pd dev %s | sed 's/^/  /'", dev, dev);
	if (system(cmd))
		say("(rdma resource show failed)");
	if (!noted)
		printf("  (rdma's pdn is ib_core's resource id; users: MRs on the PD)\n");
	noted = true;
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
	say("ibpd_import_device(%d) -> context on %s  [ibv_import_device]", fd,
	    ibpd_context_ibdev_name(ctx));

	pd = ibpd_import_pd_id(ctx, m.handle, m.id);
	if (!pd) {
		say("ibpd_import_pd_id: %s", strerror(errno));
		return 1;
	}
	say("ibpd_import_pd_id(handle %u, id %llu) -> PD pdn %u, no new kernel object  [ibv_import_pd, and the handle must still name that PD]",
	    m.handle, (unsigned long long)m.id, ibpd_pd_pdn(pd));

	buf = aligned_alloc(4096, len);
	if (!buf)
		return 1;
	mr = ibpd_reg_mr(pd, buf, len, IBPD_ACCESS_LOCAL_WRITE);
	if (!mr) {
		say("ibpd_reg_mr: %s", strerror(errno));
		return 1;
	}
	say("ibpd_reg_mr(imported PD, %zu KiB) -> lkey 0x%x rkey 0x%x  [ibv_reg_mr]",
	    len / 1024, ibpd_mr_lkey(mr), ibpd_mr_rkey(mr));
	if (step(sock, 'm', 'd'))
		return 1;

	ret = ibpd_dereg_mr(mr);
	say("ibpd_dereg_mr -> %d", ret);
	ibpd_unimport_pd(pd);
	say("ibpd_unimport_pd: userspace object freed, no kernel call  [ibv_unimport_pd]");
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
	say("ibpd_open_device(%s) -> cmd fd %d  [ibv_open_device]", dev,
	    ibpd_context_cmd_fd(ctx));
	pd = ibpd_alloc_pd(ctx);
	if (!pd) {
		say("ibpd_alloc_pd: %s", strerror(errno));
		return 1;
	}
	say("ibpd_alloc_pd -> handle %u, pdn %u, id %llu  [ibv_alloc_pd; pd->handle]",
	    ibpd_pd_handle(pd), ibpd_pd_pdn(pd),
	    (unsigned long long)ibpd_pd_id(pd));
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
	m.id = ibpd_pd_id(pd);
	if (ibpd_send_fd(sv[0], ibpd_context_cmd_fd(ctx), &m, sizeof(m)))
		return 1;
	say("sent the cmd fd, PD handle %u and id %llu to pid %d", m.handle,
	    (unsigned long long)m.id, pid);
	if (step(sv[0], 0, 'm'))
		goto child_failed;

	ret = ibpd_dealloc_pd(pd);
	say("ibpd_dealloc_pd -> %d (%s): the child's MR uses the PD  [ibv_dealloc_pd]",
	    ret,
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

/* Device names are kernel names; escape anyway. */
static void json_str(const char *str)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)str; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}

/* Probes with a handle no file can hold: EOPNOTSUPP means no ibpd methods. */
static int device_imports(const char *name)
{
	struct ibpd_context *ctx = ibpd_open_device(name);
	struct ibpd_pd *pd;
	int ret;

	if (!ctx)
		return -1;
	pd = ibpd_import_pd(ctx, UINT32_MAX);
	ret = pd || errno != EOPNOTSUPP;
	if (pd)
		ibpd_unimport_pd(pd);
	ibpd_close_device(ctx);
	return ret;
}

static int cmd_devices(void)
{
	static const char *const imp[] = { "?", "no", "yes" };
	struct ibpd_device **list;
	int i, n;

	list = ibpd_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "ibpd: listing RDMA devices: %s\n",
			strerror(errno));
		return 1;
	}
	if (json)
		printf("{\"devices\": [");
	else if (n)
		printf("%-16s %-10s %5s %9s  %s\n", "device", "uverbs",
		       "index", "driver_id", "pd_import");
	for (i = 0; i < n; i++) {
		const struct ibpd_device *d = list[i];
		int can = device_imports(d->name);

		if (!json) {
			printf("%-16s %-10s %5u %9u  %s\n", d->name,
			       d->dev_name, d->index, d->driver_id,
			       imp[can + 1]);
			continue;
		}
		printf("%s\n  {\"device\": ", i ? "," : "");
		json_str(d->name);
		printf(", \"uverbs\": ");
		json_str(d->dev_name);
		printf(", \"index\": %u, \"driver_id\": %u, \"pd_import\": %s}",
		       d->index, d->driver_id,
		       can < 0 ? "null" : can ? "true" : "false");
	}
	if (json)
		printf("%s]}\n", n ? "\n" : "");
	else if (!n)
		printf("no RDMA device with a uverbs char device\n");
	ibpd_free_device_list(list);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One uverbs file: its PDs, with pdn and use count where the device tells. */
static int show_file(struct ibpd_context *ctx, pid_t pid, int fd)
{
	static int files_shown;	/* for the separators */
	size_t i, n, shown = 0;
	bool first, more;
	uint32_t *handles;
	int ret;

	handles = malloc(IBPD_LIST_PDS_MAX * sizeof(*handles));
	if (!handles)
		return 1;
	ret = ibpd_list_pds(ctx, handles, IBPD_LIST_PDS_MAX, &n);
	if (ret) {
		fprintf(stderr, "ibpd: listing the PDs of pid %d fd %d: %s\n",
			pid, fd, strerror(ret));
		free(handles);
		return 1;
	}
	first = !files_shown++;
	more = n == IBPD_LIST_PDS_MAX;
	qsort(handles, n, sizeof(*handles), cmp_u32);
	if (json) {
		printf("%s\n  {\"pid\": %d, \"fd\": %d, \"device\": ",
		       first ? "" : ",", pid, fd);
		json_str(ibpd_context_ibdev_name(ctx));
		printf(", \"truncated\": %s, \"pds\": [",
		       more ? "true" : "false");
	} else {
		printf("%spid %d fd %d: %s\n", first ? "" : "\n", pid, fd,
		       ibpd_context_ibdev_name(ctx));
		if (n)
			printf("  %8s %10s %8s\n", "handle", "pdn", "usecnt");
	}
	for (i = 0; i < n; i++) {
		struct ibpd_pd *pd = ibpd_import_pd(ctx, handles[i]);
		uint32_t pdn = 0, usecnt = 0;
		int err = pd ? ibpd_query_pd(pd, &pdn, &usecnt) : errno;

		if (pd)
			ibpd_unimport_pd(pd);
		/* gone meanwhile: not a PD of the file any more */
		if (err == ENOENT || err == ESTALE)
			continue;
		if (json) {
			printf("%s{\"handle\": %u, ", shown ? ", " : "",
			       handles[i]);
			if (err)
				printf("\"pdn\": null, \"usecnt\": null}");
			else
				printf("\"pdn\": %u, \"usecnt\": %u}", pdn,
				       usecnt);
		} else if (err) {
			printf("  %8u %10s %8s\n", handles[i], "-", "-");
		} else {
			printf("  %8u %10u %8u\n", handles[i], pdn, usecnt);
		}
		shown++;
	}
	if (json)
		printf("]}");
	else
		printf("  %zu PD%s%s\n", shown, shown == 1 ? "" : "s",
		       more ? " (the first the kernel lists; there are more)" :
			      "");
	free(handles);
	return 0;
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

static bool is_uverbs_fd(pid_t pid, int fd)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strncmp(target, "/dev/infiniband/uverbs", 22);
}

/* A dup'ed fd of a file already shown (kcmp: 0 means the same file). */
static bool same_file_shown(pid_t pid, const int *shown, int nshown, int fd)
{
	int i;

	for (i = 0; i < nshown; i++)
		if (!syscall(SYS_kcmp, pid, pid, KCMP_FILE, shown[i], fd))
			return true;
	return false;
}

static int show_fd(pid_t pid, int fd)
{
	struct ibpd_context *ctx;
	int myfd, ret;

	myfd = getfd(pid, fd);
	if (myfd < 0) {
		fprintf(stderr, "ibpd: getting fd %d of pid %d: %s\n", fd, pid,
			strerror(errno));
		return 1;
	}
	ctx = ibpd_import_device(myfd);
	if (!ctx) {
		fprintf(stderr,
			"ibpd: importing the context of pid %d fd %d: %s\n",
			pid, fd, strerror(errno));
		close(myfd);
		return 1;
	}
	ret = show_file(ctx, pid, fd);
	ibpd_close_device(ctx);
	return ret;
}

static int cmd_pds(void)
{
	pid_t pid = opt_pid ? opt_pid : getpid();
	int shown[256], nshown = 0, ret = 0;
	char path[64];
	struct dirent *e;
	DIR *d;

	if (opt_fd >= 0) {
		if (!is_uverbs_fd(pid, opt_fd)) {
			fprintf(stderr,
				"ibpd: fd %d of pid %d is not a uverbs file\n",
				opt_fd, pid);
			return 1;
		}
		if (json)
			printf("{\"files\": [");
		ret = show_fd(pid, opt_fd);
		goto out;
	}

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "ibpd: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (json)
		printf("{\"files\": [");
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end || e->d_name[0] == '.' || !is_uverbs_fd(pid, fd) ||
		    same_file_shown(pid, shown, nshown, fd))
			continue;
		ret |= show_fd(pid, fd);
		if (nshown < (int)(sizeof(shown) / sizeof(shown[0])))
			shown[nshown++] = fd;
	}
	closedir(d);
	if (!nshown && !json)
		printf("pid %d has no uverbs file open\n", pid);
out:
	if (json)
		printf("\n]}\n");
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibpd [OPTIONS] COMMAND\n"
		"\n"
		"Commands:\n"
		"  devices          list the RDMA devices with a uverbs char device,\n"
		"                   and whether they can import a PD\n"
		"  pds              list the PDs of the uverbs files of a process\n"
		"                   (--pid, default this one) or of one of its fds\n"
		"                   (--fd): handle, pdn and use count\n"
		"  demo             share a PD between two processes over SCM_RIGHTS:\n"
		"                   alloc, import, MR through the imported PD, EBUSY\n"
		"                   on dealloc, unimport, dealloc\n"
		"\n"
		"Options:\n"
		"  -d, --device DEV RDMA device of demo (default ibpd0)\n"
		"  -p, --pid PID    pds: the process whose files to show (the files\n"
		"                   are shared with pidfd_getfd(2): needs ptrace\n"
		"                   permission on PID)\n"
		"  -f, --fd FD      pds: only the file open on FD\n"
		"  -j, --json       devices, pds: print JSON\n"
		"  -h, --help       print this help\n"
		"\n"
		"Exit status: 0 success, 1 an operation failed, 2 usage error.\n");
}

static int parse_int(const char *arg, const char *what, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < 0 || v > max) {
		fprintf(stderr, "ibpd: invalid %s '%s'\n", what, arg);
		return -1;
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "fd", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *cmd;
	int opt;

	while ((opt = getopt_long(argc, argv, "d:p:f:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			opt_pid = parse_int(optarg, "pid", INT_MAX);
			if (opt_pid <= 0)
				return EXIT_USAGE;
			break;
		case 'f':
			opt_fd = parse_int(optarg, "fd", INT_MAX);
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
	if (!strcmp(cmd, "devices"))
		return cmd_devices();
	if (!strcmp(cmd, "pds"))
		return cmd_pds();
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

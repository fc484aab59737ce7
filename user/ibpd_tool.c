// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd: PD sharing from the command line, on libibverbs and ibpd's direct
 * verbs (<infiniband/ibpddv.h>).
 *
 *   ibpd devices         the RDMA devices libibverbs drives
 *   ibpd pds             the PDs of a uverbs file: handle, pdn, use count
 *   ibpd demo            share a PD between two processes over SCM_RIGHTS
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
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <infiniband/ibpddv.h>
#include <infiniband/verbs.h>

#include "scm_rights.h"

struct share_msg {
	uint32_t handle;
	uint32_t pdn;
	uint64_t id;
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
 * MRs on the PD.
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
		printf("  (rdma's pdn is ib_core's resource id; users: MRs on the PD)\n");
	noted = true;
	fflush(stdout);
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
	struct ibv_mr *mr;
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
	ibv_unimport_pd(pd);
	say("ibv_unimport_pd: userspace object freed, no kernel call");
	ret |= ibv_close_device(ctx);
	say("ibv_close_device -> done (the parent still holds the file)");
	free(buf);
	if (step(sock, 'u', 0))
		return 1;
	return ret ? 1 : 0;
}

static int demo(void)
{
	struct ibpddv_pd_attr attr = {};
	struct ibv_context *ctx;
	struct share_msg m = {};
	struct ibv_pd *pd;
	int sv[2], status, ret;
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

	if (ibpd_send_fd(sv[0], ctx->cmd_fd, &m, sizeof(m)))
		return 1;
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
	show_pds();

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		goto child_failed;

	ret = ibv_dealloc_pd(pd);
	say("ibv_dealloc_pd -> %d (%s)", ret, ret ? strerror(ret) : "success");
	if (ret)
		return 1;
	show_pds();
	ret = ibv_close_device(ctx);
	say("ibv_close_device -> %d; demo complete", ret);
	return ret ? 1 : 0;

child_failed:
	say("the child process failed");
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
 * Whether the device imports PDs: a generic ibv_import_pd() of a handle no
 * file holds fails with ENOENT where it does, EOPNOTSUPP where not.
 */
static bool device_imports(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_import_pd(ctx, UINT32_MAX);

	if (pd) {
		ibv_unimport_pd(pd);
		return true;
	}
	return errno != EOPNOTSUPP;
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
 * Whether FD (ours, so that it cannot change meanwhile) is a uverbs file;
 * its RDMA device's name, from sysfs, in NAME ("?" if unknown).
 */
static bool fd_ibdev(int fd, char *name, size_t len)
{
	char path[64], target[PATH_MAX], *base;
	struct stat st;
	ssize_t n;
	FILE *f;

	snprintf(name, len, "?");
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	base = strrchr(target, '/');
	if (!base || strncmp(base, "/uverbs", 7))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/ibdev",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(name, len, f))
		name[strcspn(name, "\n")] = 0;
	fclose(f);
	return true;
}

static int show_fd(pid_t pid, int fd)
{
	struct ibv_context *ctx;
	char name[64];
	int myfd, ret;

	myfd = getfd(pid, fd);
	if (myfd < 0) {
		fprintf(stderr, "ibpd: getting fd %d of pid %d: %s\n", fd, pid,
			strerror(errno));
		return 1;
	}
	/* the fd may have been closed or reused since it was listed */
	if (!fd_ibdev(myfd, name, sizeof(name))) {
		fprintf(stderr, "ibpd: fd %d of pid %d is not a uverbs file\n",
			fd, pid);
		close(myfd);
		return 1;
	}
	/* On success the context owns myfd: ibv_close_device() closes it. */
	ctx = ibv_import_device(myfd);
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
	int ret = 0;
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
		ret |= show_fd(pid, fd);
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
		"                   on dealloc, unimport, dealloc\n"
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

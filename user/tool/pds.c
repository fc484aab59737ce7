// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd pds: the PDs of the uverbs files of a process (--pid, default this
 * one) or of one of its fds (--fd), each file shared with pidfd_getfd(2)
 * and its context imported: handle, pdn and use count (-d: identity; -j:
 * JSON).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "tool.h"

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

int cmd_pds(void)
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

/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * What the verbs-level tests share: the device under test, finding a
 * device by name, a second context on a context's file, a child's exit
 * status. libibverbs only.
 */
#ifndef IBPD_VERBS_TEST_H
#define IBPD_VERBS_TEST_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* The device under test: IBPD_TEST_DEV, ibpd0 by default. */
static inline const char *test_dev(void)
{
	const char *d = getenv("IBPD_TEST_DEV");

	return d && *d ? d : "ibpd0";
}

/* A context on the device NAME, or NULL when there is none. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* A second context on the file of CTX, through a dup'ed command fd. */
static inline struct ibv_context *dup_ctx(struct ibv_context *ctx)
{
	struct ibv_context *c;
	int fd, err;

	fd = dup(ctx->cmd_fd);
	if (fd < 0)
		return NULL;
	c = ibv_import_device(fd);
	if (!c) {
		err = errno;
		close(fd);
		errno = err;
	}
	return c;
}

/* The exit status of the child PID, -1 when it did not exit. */
static inline int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#endif /* IBPD_VERBS_TEST_H */

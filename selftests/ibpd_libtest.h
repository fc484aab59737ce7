/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * For the selftests that still drive the device through libibpd's own API:
 * ibpd_test.h's raw helpers, the library, and a second context on a file.
 */

#ifndef IBPD_LIBTEST_H
#define IBPD_LIBTEST_H

#include <rdma/ibpd_compat_ioctl_cmds.h>

#include "ibpd_test.h"
#include "ibpd.h"
#include "scm_rights.h"

/* A second context on the same file, through a dup'ed command fd. */
static inline struct ibpd_context *dup_ctx(struct ibpd_context *ctx)
{
	int fd = dup(ibpd_context_cmd_fd(ctx));
	struct ibpd_context *c;

	if (fd < 0)
		return NULL;
	c = ibpd_import_device(fd);
	if (!c)
		close(fd);
	return c;
}

#endif /* IBPD_LIBTEST_H */

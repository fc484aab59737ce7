// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Contexts: opening a device's uverbs file, importing one by its fd.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "ibpd_int.h"

static struct ibpd_context *ctx_new(int fd, const struct ibpd_nl_dev *d)
{
	struct ibpd_context *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	ctx->cmd_fd = fd;
	ctx->driver_id = d->driver_id;
	memcpy(ctx->ibdev_name, d->ibdev_name, sizeof(ctx->ibdev_name));
	return ctx;
}

struct ibpd_context *ibpd_open_device(const char *ibdev_name)
{
	struct ibpd_context *ctx;
	struct ibpd_nl_dev d;
	struct ibpd_cmd cmd;
	uint32_t ncomp;
	char path[128];
	int fd, ret;

	if (!ibdev_name) {
		errno = EINVAL;
		return NULL;
	}
	ret = ibpd_nl_find(ibdev_name, 0, &d);
	if (ret) {
		errno = ret;
		return NULL;
	}

	snprintf(path, sizeof(path), "/dev/infiniband/%s", d.chardev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;

	ctx = ctx_new(fd, &d);
	if (!ctx) {
		ret = errno;
		goto err_close;
	}

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_DEVICE,
		      UVERBS_METHOD_GET_CONTEXT);
	ibpd_cmd_out(&cmd, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, &ncomp,
		     sizeof(ncomp));
	ret = ibpd_cmd_exec(ctx, &cmd);
	if (ret)
		goto err_free;
	return ctx;

err_free:
	free(ctx);
err_close:
	close(fd);
	errno = ret;
	return NULL;
}

static int query_port1(const struct ibpd_context *ctx)
{
	struct ib_uverbs_query_port_resp_ex resp;
	struct ibpd_cmd cmd;

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_DEVICE,
		      UVERBS_METHOD_QUERY_PORT);
	ibpd_cmd_add(&cmd, UVERBS_ATTR_QUERY_PORT_PORT_NUM, sizeof(uint64_t), 1);
	ibpd_cmd_out(&cmd, UVERBS_ATTR_QUERY_PORT_RESP, &resp, sizeof(resp));
	return ibpd_cmd_exec(ctx, &cmd);
}

/*
 * On success the context owns cmd_fd and ibpd_close_device() closes it; on
 * failure the caller still owns it.
 */
struct ibpd_context *ibpd_import_device(int cmd_fd)
{
	struct ibpd_context *ctx;
	struct ibpd_nl_dev d;
	struct ibpd_cmd cmd;
	struct stat st;
	uint32_t ncomp;
	int ret;

	if (fstat(cmd_fd, &st))
		return NULL;
	if (!S_ISCHR(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	ret = ibpd_nl_find(NULL, st.st_rdev, &d);
	if (ret) {
		errno = ret == ENODEV ? EINVAL : ret;
		return NULL;
	}

	ctx = ctx_new(cmd_fd, &d);
	if (!ctx)
		return NULL;

	/* Proves that the file has a live context, and that we may use it. */
	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_DEVICE,
		      UVERBS_METHOD_QUERY_CONTEXT);
	ibpd_cmd_out(&cmd, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &ncomp,
		     sizeof(ncomp));
	ret = ibpd_cmd_exec(ctx, &cmd);
	/*
	 * Drivers without query_ucontext (rxe, siw) cannot answer that, which
	 * is why ibv_import_device() fails on them; querying port 1 also
	 * needs the file's context, and every driver answers it.
	 */
	if (ret == EOPNOTSUPP)
		ret = query_port1(ctx);
	if (ret) {
		free(ctx);
		errno = ret;
		return NULL;
	}
	return ctx;
}

int ibpd_close_device(struct ibpd_context *ctx)
{
	int ret = 0;

	if (close(ctx->cmd_fd))
		ret = errno;
	free(ctx);
	return ret;
}

int ibpd_context_cmd_fd(const struct ibpd_context *ctx)
{
	return ctx->cmd_fd;
}

const char *ibpd_context_ibdev_name(const struct ibpd_context *ctx)
{
	return ctx->ibdev_name;
}

/*
 * The handles of the live PDs of the file: stores up to max of them (and
 * IBPD_LIST_PDS_MAX at most) and sets *total to how many it stored; when
 * that is the limit, there may be more.
 */
int ibpd_list_pds(struct ibpd_context *ctx, uint32_t *handles, size_t max,
		  size_t *total)
{
	struct ibpd_cmd cmd;
	uint32_t n = 0;
	int ret;

	if (!max)
		return EINVAL;
	if (max > IBPD_LIST_PDS_MAX)
		max = IBPD_LIST_PDS_MAX;
	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_DEVICE,
		      UVERBS_METHOD_INFO_HANDLES);
	ibpd_cmd_add(&cmd, UVERBS_ATTR_INFO_OBJECT_ID, sizeof(uint64_t),
		     UVERBS_OBJECT_PD);
	ibpd_cmd_out(&cmd, UVERBS_ATTR_INFO_TOTAL_HANDLES, &n, sizeof(n));
	ibpd_cmd_out(&cmd, UVERBS_ATTR_INFO_HANDLES_LIST, handles,
		     max * sizeof(*handles));
	ret = ibpd_cmd_exec(ctx, &cmd);
	if (ret)
		return ret;
	*total = n;
	return 0;
}

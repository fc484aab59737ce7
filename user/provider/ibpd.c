// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The rdma-core provider of the ibpd software RDMA device: matching, device
 * and context lifecycle, device and port queries. A device is ours by its
 * sysfs hca_type (ibpd has no driver id of its own). The verbs are ibpd's
 * own methods.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

static const struct verbs_context_ops ibpd_ctx_ops;

/*
 * ibpd has no driver id of its own: its devices report RDMA_DRIVER_UNKNOWN,
 * which no match table entry matches, and say "ibpd" in their sysfs
 * hca_type (as mlx4, mlx5 and qib have one), never in a name, which
 * "rdma dev set" may change.
 */
static bool ibpd_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[16];

	/* every other driver id is another provider's */
	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	if (ibv_read_ibdev_sysfs_file(hca_type, sizeof(hca_type), sysfs_dev,
				      "hca_type") <= 0)
		return false;
	return strcmp(hca_type, "ibpd") == 0;
}

/*
 * No entry, for the reasons above; but a table, empty: bookworm's
 * libibverbs (44) crashes in ibv_get_device_list() on a provider without
 * one.
 */
static const struct verbs_match_ent ibpd_match_table[] = {
	{},
};

static int ibpd_query_device(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw_ver;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw_ver = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw_ver >> 32) & 0xffff,
		 (unsigned int)(fw_ver >> 16) & 0xffff,
		 (unsigned int)fw_ver & 0xffff);
	return 0;
}

static int ibpd_query_port(struct ibv_context *context, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static void ibpd_uninit_context(struct ibpd_context *ctx)
{
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_context *ibpd_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct verbs_device *vdev = verbs_get_device(ibdev);
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;
	struct ibpd_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   vdev->sysfs->driver_id);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), NULL,
				  &resp, sizeof(resp));
	if (ret) {
		ibpd_uninit_context(ctx);
		errno = ret;
		return NULL;
	}
	verbs_set_ops(&ctx->ibv_ctx, &ibpd_ctx_ops);
	return &ctx->ibv_ctx;
}

/* import_context owns cmd_fd, as alloc_context does: closed on failure. */
static struct verbs_context *ibpd_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	struct verbs_device *vdev = verbs_get_device(ibdev);
	struct ibpd_context *ctx;

	ctx = verbs_import_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					     vdev->sysfs->driver_id,
					     &ibpd_ctx_ops);
	return ctx ? &ctx->ibv_ctx : NULL;
}

static void ibpd_free_context(struct ibv_context *ibctx)
{
	struct ibpd_context *ctx =
		container_of(ibctx, struct ibpd_context, ibv_ctx.context);

	ibpd_uninit_context(ctx);
}

static struct verbs_device *ibpd_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct ibpd_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void ibpd_uninit_device(struct verbs_device *verbs_device)
{
	free(container_of(verbs_device, struct ibpd_device, ibv_dev));
}

/* A device is ibpd's when ibpd's alloc_device made it. */
bool ibpd_is_ibpd_device(struct ibv_device *device)
{
	return device &&
	       verbs_get_device(device)->ops->alloc_device == ibpd_device_alloc;
}

bool ibpd_is_ibpd_context(struct ibv_context *context)
{
	return context && ibpd_is_ibpd_device(context->device);
}

static const struct verbs_context_ops ibpd_ctx_ops = {
	.alloc_pd = ibpd_alloc_pd,
	.dealloc_pd = ibpd_dealloc_pd,
	.dereg_mr = ibpd_dereg_mr,
	.free_context = ibpd_free_context,
	.import_mr = ibpd_import_mr,
	.import_pd = ibpd_import_pd,
	.query_device_ex = ibpd_query_device,
	.query_port = ibpd_query_port,
	.reg_mr = ibpd_reg_mr,
	.unimport_mr = ibpd_unimport_mr,
	.unimport_pd = ibpd_unimport_pd,
};

static const struct verbs_device_ops ibpd_dev_ops = {
	.name = "ibpd",
	.match_min_abi_version = IBPD_UVERBS_ABI_VERSION,
	.match_max_abi_version = IBPD_UVERBS_ABI_VERSION,
	.match_table = ibpd_match_table,
	.match_device = ibpd_match_device,
	.alloc_device = ibpd_device_alloc,
	.uninit_device = ibpd_uninit_device,
	.alloc_context = ibpd_alloc_context,
	.import_context = ibpd_import_context,
};
PROVIDER_DRIVER(ibpd, ibpd_dev_ops);

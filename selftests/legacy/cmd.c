// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Building and executing uverbs commands: the ioctl ABI
 * (struct ib_uverbs_ioctl_hdr + attributes) and the write() ABI.
 */

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "ibpd_int.h"

void ibpd_cmd_init(struct ibpd_cmd *cmd, const struct ibpd_context *ctx,
		   uint16_t object_id, uint16_t method_id)
{
	memset(&cmd->hdr, 0, sizeof(cmd->hdr));
	cmd->hdr.object_id = object_id;
	cmd->hdr.method_id = method_id;
	cmd->hdr.driver_id = ctx->driver_id;
}

struct ib_uverbs_attr *ibpd_cmd_add(struct ibpd_cmd *cmd, uint16_t attr_id,
				    uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *attr = &cmd->attrs[cmd->hdr.num_attrs++];

	memset(attr, 0, sizeof(*attr));
	attr->attr_id = attr_id;
	attr->len = len;
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	attr->data = data;
	return attr;
}

/* Inputs of up to 8 bytes travel inline in the data field. */
static void ibpd_cmd_in(struct ibpd_cmd *cmd, uint16_t attr_id,
			const void *buf, uint16_t len)
{
	struct ib_uverbs_attr *attr;

	attr = ibpd_cmd_add(cmd, attr_id, len, (uintptr_t)buf);
	if (len <= sizeof(attr->data)) {
		attr->data = 0;
		memcpy(&attr->data, buf, len);
	}
}

void ibpd_cmd_in_u32(struct ibpd_cmd *cmd, uint16_t attr_id, uint32_t val)
{
	ibpd_cmd_add(cmd, attr_id, sizeof(val), val);
}

void ibpd_cmd_in_u64(struct ibpd_cmd *cmd, uint16_t attr_id, uint64_t val)
{
	ibpd_cmd_add(cmd, attr_id, sizeof(val), val);
}

void ibpd_cmd_out(struct ibpd_cmd *cmd, uint16_t attr_id, void *buf,
		  uint16_t len)
{
	ibpd_cmd_add(cmd, attr_id, len, (uintptr_t)buf);
}

struct ib_uverbs_attr *ibpd_cmd_idr(struct ibpd_cmd *cmd, uint16_t attr_id,
				    uint32_t handle)
{
	return ibpd_cmd_add(cmd, attr_id, 0, handle);
}

int ibpd_cmd_exec(const struct ibpd_context *ctx, struct ibpd_cmd *cmd)
{
	cmd->hdr.length = sizeof(cmd->hdr) +
			  cmd->hdr.num_attrs * sizeof(cmd->attrs[0]);
	if (ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd->hdr))
		return errno;
	return 0;
}

/*
 * A core write() command, sent through UVERBS_METHOD_INVOKE_WRITE as
 * rdma-core does: unlike write(2) on the uverbs file, the ioctl path also
 * works in a process other than the one that opened the file (fork,
 * SCM_RIGHTS). drv_out receives the driver's part of the response.
 */
int ibpd_cmd_write(const struct ibpd_context *ctx, uint32_t command,
		   const void *in, uint16_t in_len, void *out,
		   uint16_t out_len, void *drv_out, uint16_t drv_out_len)
{
	struct ibpd_cmd cmd;

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_DEVICE,
		      UVERBS_METHOD_INVOKE_WRITE);
	ibpd_cmd_add(&cmd, UVERBS_ATTR_WRITE_CMD, sizeof(uint64_t), command);
	ibpd_cmd_in(&cmd, UVERBS_ATTR_CORE_IN, in, in_len);
	ibpd_cmd_out(&cmd, UVERBS_ATTR_CORE_OUT, out, out_len);
	if (drv_out_len)
		ibpd_cmd_out(&cmd, UVERBS_ATTR_UHW_OUT, drv_out, drv_out_len);
	return ibpd_cmd_exec(ctx, &cmd);
}

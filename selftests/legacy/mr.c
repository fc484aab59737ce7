// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Memory regions: the core's REG_MR write command and MR_DESTROY method,
 * so they work on every uverbs device.
 */

#include <errno.h>
#include <stdlib.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>

#include "ibpd_int.h"

struct ibpd_mr *ibpd_reg_mr(struct ibpd_pd *pd, void *addr, size_t length,
			    int access)
{
	struct ib_uverbs_reg_mr req = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibpd_mr *mr;
	int ret;

	mr = malloc(sizeof(*mr));
	if (!mr)
		return NULL;

	req.start = (uintptr_t)addr;
	req.length = length;
	req.hca_va = (uintptr_t)addr;
	req.pd_handle = pd->handle;
	req.access_flags = access;
	ret = ibpd_cmd_write(pd->context, IB_USER_VERBS_CMD_REG_MR, &req,
			     sizeof(req), &resp, sizeof(resp), NULL, 0);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}

	mr->context = pd->context;
	mr->handle = resp.mr_handle;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return mr;
}

int ibpd_dereg_mr(struct ibpd_mr *mr)
{
	struct ibpd_context *ctx = mr->context;
	struct ibpd_cmd cmd;
	int ret;

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY);
	ibpd_cmd_idr(&cmd, UVERBS_ATTR_DESTROY_MR_HANDLE, mr->handle);
	ret = ibpd_cmd_exec(ctx, &cmd);
	if (ret)
		return ret;
	free(mr);
	return 0;
}

uint32_t ibpd_mr_handle(const struct ibpd_mr *mr)
{
	return mr->handle;
}

uint32_t ibpd_mr_lkey(const struct ibpd_mr *mr)
{
	return mr->lkey;
}

uint32_t ibpd_mr_rkey(const struct ibpd_mr *mr)
{
	return mr->rkey;
}

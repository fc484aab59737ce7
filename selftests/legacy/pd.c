// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Protection domains: allocation (ibpd ioctl method, or the core's write
 * command on devices without it), destruction, import and unimport.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ibpd-abi.h>
#include <rdma/ibpd_compat_ioctl_cmds.h>

#include "ibpd_int.h"

static struct ibpd_pd *pd_new(struct ibpd_context *ctx, uint32_t handle,
			      uint32_t pdn, uint64_t id)
{
	struct ibpd_pd *pd = malloc(sizeof(*pd));

	if (!pd)
		return NULL;
	pd->context = ctx;
	pd->handle = handle;
	pd->pdn = pdn;
	pd->id = id;
	return pd;
}

/* Devices without the ibpd methods (rxe, ...) answer EPROTONOSUPPORT. */
static bool no_ibpd_methods(struct ibpd_context *ctx, int ret)
{
	if (ret != EPROTONOSUPPORT)
		return false;
	__atomic_store_n(&ctx->no_ibpd_methods, 1, __ATOMIC_RELAXED);
	return true;
}

struct ibpd_pd *ibpd_alloc_pd_write(struct ibpd_context *ctx)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibpd_alloc_pd_resp drv = {};
	struct ibpd_pd *pd;
	int ret;

	ret = ibpd_cmd_write(ctx, IB_USER_VERBS_CMD_ALLOC_PD, &req,
			     sizeof(req), &resp, sizeof(resp), &drv,
			     __atomic_load_n(&ctx->no_ibpd_methods,
					     __ATOMIC_RELAXED) ? 0 : sizeof(drv));
	if (ret) {
		errno = ret;
		return NULL;
	}

	pd = pd_new(ctx, resp.pd_handle, drv.pdn, drv.id);
	if (!pd) {
		struct ibpd_pd tmp = { .context = ctx,
				       .handle = resp.pd_handle };

		ibpd_dealloc_pd_handle(&tmp);
		errno = ENOMEM;
	}
	return pd;
}

struct ibpd_pd *ibpd_alloc_pd(struct ibpd_context *ctx)
{
	struct ib_uverbs_attr *handle;
	struct ibpd_cmd cmd;
	struct ibpd_pd *pd;
	uint32_t pdn = 0;
	uint64_t id = 0;
	int ret;

	if (__atomic_load_n(&ctx->no_ibpd_methods, __ATOMIC_RELAXED))
		return ibpd_alloc_pd_write(ctx);

	pd = pd_new(ctx, 0, 0, 0);
	if (!pd)
		return NULL;

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC);
	handle = ibpd_cmd_idr(&cmd, IBPD_ATTR_PD_ALLOC_HANDLE, 0);
	ibpd_cmd_out(&cmd, IBPD_ATTR_PD_ALLOC_RESP_PDN, &pdn, sizeof(pdn));
	ibpd_cmd_out(&cmd, IBPD_ATTR_PD_ALLOC_RESP_ID, &id, sizeof(id));
	ret = ibpd_cmd_exec(ctx, &cmd);
	if (ret) {
		free(pd);
		if (no_ibpd_methods(ctx, ret))
			return ibpd_alloc_pd_write(ctx);
		errno = ret;
		return NULL;
	}

	pd->handle = handle->data;
	pd->pdn = pdn;
	pd->id = id;
	return pd;
}

int ibpd_dealloc_pd_handle(struct ibpd_pd *pd)
{
	struct ibpd_cmd cmd;

	ibpd_cmd_init(&cmd, pd->context, UVERBS_OBJECT_PD,
		      UVERBS_METHOD_PD_DESTROY);
	ibpd_cmd_idr(&cmd, UVERBS_ATTR_DESTROY_PD_HANDLE, pd->handle);
	return ibpd_cmd_exec(pd->context, &cmd);
}

/*
 * Destroys the kernel PD, whether this context allocated or imported it.
 * On failure (EBUSY while an MR uses it) the PD stays fully usable.
 */
int ibpd_dealloc_pd(struct ibpd_pd *pd)
{
	int ret = ibpd_dealloc_pd_handle(pd);

	if (ret)
		return ret;
	free(pd);
	return 0;
}

/* What an import or query expects of the PD. */
struct pd_expect {
	bool check_pdn;
	uint32_t pdn;
	bool check_id;
	uint64_t id;
};

static int pd_query(struct ibpd_context *ctx, uint32_t handle,
		    const struct pd_expect *want, uint32_t *pdn, uint64_t *id,
		    uint32_t *usecnt)
{
	struct ibpd_cmd cmd;
	int ret;

	if (__atomic_load_n(&ctx->no_ibpd_methods, __ATOMIC_RELAXED))
		return EOPNOTSUPP;

	ibpd_cmd_init(&cmd, ctx, UVERBS_OBJECT_PD, IBPD_METHOD_PD_IMPORT);
	ibpd_cmd_idr(&cmd, IBPD_ATTR_PD_IMPORT_HANDLE, handle);
	if (want->check_pdn)
		ibpd_cmd_in_u32(&cmd, IBPD_ATTR_PD_IMPORT_PDN, want->pdn);
	if (want->check_id)
		ibpd_cmd_in_u64(&cmd, IBPD_ATTR_PD_IMPORT_ID, want->id);
	ibpd_cmd_out(&cmd, IBPD_ATTR_PD_IMPORT_RESP_PDN, pdn, sizeof(*pdn));
	ibpd_cmd_out(&cmd, IBPD_ATTR_PD_IMPORT_RESP_ID, id, sizeof(*id));
	if (usecnt)
		ibpd_cmd_out(&cmd, IBPD_ATTR_PD_IMPORT_RESP_USECNT, usecnt,
			     sizeof(*usecnt));
	ret = ibpd_cmd_exec(ctx, &cmd);
	if (no_ibpd_methods(ctx, ret))
		return EOPNOTSUPP;
	return ret;
}

static struct ibpd_pd *pd_import(struct ibpd_context *ctx, uint32_t handle,
				 const struct pd_expect *want)
{
	uint32_t pdn;
	uint64_t id;
	int ret;

	/* an import needs no use count: one attribute and one copy fewer */
	ret = pd_query(ctx, handle, want, &pdn, &id, NULL);
	if (ret) {
		errno = ret;
		return NULL;
	}
	return pd_new(ctx, handle, pdn, id);
}

struct ibpd_pd *ibpd_import_pd(struct ibpd_context *ctx, uint32_t pd_handle)
{
	return pd_import(ctx, pd_handle, &(struct pd_expect){});
}

/* pdns wrap: ibpd_import_pd_id() tells PDs apart for sure. */
struct ibpd_pd *ibpd_import_pd_checked(struct ibpd_context *ctx,
				       uint32_t pd_handle, uint32_t pdn)
{
	return pd_import(ctx, pd_handle,
			 &(struct pd_expect){ .check_pdn = true, .pdn = pdn });
}

/* No PD has the identity 0: ESTALE on ibpd devices. */
struct ibpd_pd *ibpd_import_pd_id(struct ibpd_context *ctx,
				  uint32_t pd_handle, uint64_t id)
{
	return pd_import(ctx, pd_handle,
			 &(struct pd_expect){ .check_id = true, .id = id });
}

/* Userspace only: the kernel PD and its users are untouched. */
void ibpd_unimport_pd(struct ibpd_pd *pd)
{
	free(pd);
}

int ibpd_query_pd(struct ibpd_pd *pd, uint32_t *pdn, uint32_t *usecnt)
{
	uint64_t id;
	uint32_t p, u;
	int ret;

	/* ESTALE once the handle names another PD */
	ret = pd_query(pd->context, pd->handle,
		       &(struct pd_expect){ .check_pdn = pd->pdn != 0,
					    .pdn = pd->pdn,
					    .check_id = pd->id != 0,
					    .id = pd->id },
		       &p, &id, &u);
	if (ret)
		return ret;
	if (pdn)
		*pdn = p;
	if (usecnt)
		*usecnt = u;
	return 0;
}

uint32_t ibpd_pd_handle(const struct ibpd_pd *pd)
{
	return pd->handle;
}

uint32_t ibpd_pd_pdn(const struct ibpd_pd *pd)
{
	return pd->pdn;
}

uint64_t ibpd_pd_id(const struct ibpd_pd *pd)
{
	return pd->id;
}

struct ibpd_context *ibpd_pd_context(const struct ibpd_pd *pd)
{
	return pd->context;
}

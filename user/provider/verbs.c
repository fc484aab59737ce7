// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * PD and MR verbs of the ibpd provider. A PD is allocated with ibpd's own
 * ioctl method (its handle, pdn and identity in one call) and imported
 * with ibpd's import method, as mlx5_import_pd() does with PD_QUERY: the
 * imported PD owns no kernel reference, so unimport never calls the kernel.
 * The commands of both methods are in cmd_pd.c.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "ibpd.h"

struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)
{
	struct ibpd_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibpd_cmd_alloc_pd(context, &pd->ibv_pd.handle, &pd->pdn,
				&pd->id);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->ibv_pd.context = context;
	return &pd->ibv_pd;
}

int ibpd_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_ipd(ibpd));
	return 0;
}

struct ibv_pd *ibpd_import_pd_checked(struct ibv_context *context,
				      uint32_t pd_handle, uint64_t id)
{
	struct ibpd_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibpd_cmd_import_pd(context, pd_handle, id, &pd->pdn, &pd->id,
				 NULL);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

struct ibv_pd *ibpd_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	return ibpd_import_pd_checked(context, pd_handle, 0);
}

void ibpd_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_ipd(ibpd));
}

struct ibv_mr *ibpd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int ibpd_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

struct ibv_mr *ibpd_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void ibpd_unimport_mr(struct ibv_mr *mr)
{
	free(verbs_get_mr(mr));
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * PD and MR verbs of the ibpd provider. A PD is allocated with ibpd's own
 * ioctl method (its handle, pdn and identity in one call) and imported
 * with ibpd's import method, as mlx5_import_pd() does with PD_QUERY: the
 * imported PD owns no kernel reference, so unimport never calls the kernel.
 */

#include <config.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

#include "ibpd.h"

/* How often an import or query tries while a destroy holds the PD (EBUSY). */
#define IBPD_IMPORT_BUSY_TRIES 100

struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC, 3);
	struct ib_uverbs_attr *handle;
	struct ibpd_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	handle = fill_attr_out_obj(cmd, IBPD_ATTR_PD_ALLOC_HANDLE);
	fill_attr_out_ptr(cmd, IBPD_ATTR_PD_ALLOC_RESP_PDN, &pd->pdn);
	attr_optional(fill_attr_out_ptr(cmd, IBPD_ATTR_PD_ALLOC_RESP_ID,
					&pd->id));

	ret = execute_ioctl(context, cmd);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = read_attr_obj(IBPD_ATTR_PD_ALLOC_HANDLE, handle);
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

static int ibpd_cmd_pd_import_once(struct ibv_context *context,
				   uint32_t pd_handle, uint64_t expect_id,
				   struct ibpd_pd *pd, uint32_t *usecnt)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, IBPD_METHOD_PD_IMPORT, 5);

	fill_attr_in_obj(cmd, IBPD_ATTR_PD_IMPORT_HANDLE, pd_handle);
	fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_PDN, &pd->pdn);
	attr_optional(fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_ID,
					&pd->id));
	/* Mandatory: a kernel that cannot check must not pretend it did. */
	if (expect_id)
		fill_attr_in_uint64(cmd, IBPD_ATTR_PD_IMPORT_ID, expect_id);
	if (usecnt)
		fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_USECNT, usecnt);

	return execute_ioctl(context, cmd);
}

/*
 * Looks PD handle up in the context's file; with expect_id, fails with
 * ESTALE unless the handle still names the PD of that identity.
 *
 * The core's lookup fails with EBUSY (the import method itself never does)
 * only while a destroy of the PD holds it exclusively, for the length of
 * that one destroy: then the destroy has failed (the PD is in use, the
 * next lookup finds it) or succeeded (ENOENT, or ESTALE for a new PD on
 * the handle). That EBUSY says nothing about the PD and is retried, a
 * bounded number of times (yielding, then sleeping from 10 us doubling to
 * 10 ms: about 0.8 s in all): a lock held through all of them still
 * returns EBUSY.
 */
int ibpd_cmd_pd_import(struct ibv_context *context, uint32_t pd_handle,
		       uint64_t expect_id, struct ibpd_pd *pd,
		       uint32_t *usecnt)
{
	unsigned int try, wait_us = 10;
	int ret;

	for (try = 1;; try++) {
		ret = ibpd_cmd_pd_import_once(context, pd_handle, expect_id,
					      pd, usecnt);
		if (ret != EBUSY || try == IBPD_IMPORT_BUSY_TRIES)
			return ret;
		/* the destroyer may be off the CPU: wait longer and longer */
		if (try <= 10) {
			sched_yield();
		} else {
			usleep(wait_us);
			wait_us = wait_us < 10000 ? 2 * wait_us : 10000;
		}
	}
}

struct ibv_pd *ibpd_import_pd_checked(struct ibv_context *context,
				      uint32_t pd_handle, uint64_t id)
{
	struct ibpd_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibpd_cmd_pd_import(context, pd_handle, id, pd, NULL);
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

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd direct verbs (<infiniband/ibpddv.h>). Each call first checks that
 * the object belongs to an ibpd context: a driver method id means something
 * else, or nothing, to another driver, so it must never reach one.
 */

#include <config.h>

#include <errno.h>

#include <infiniband/driver.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "ibpd.h"
#include "ibpddv.h"

bool ibpddv_is_supported(struct ibv_device *device)
{
	return ibpd_is_ibpd_device(device);
}

struct ibv_pd *ibpddv_import_pd(struct ibv_context *context,
				uint32_t pd_handle, uint64_t id)
{
	if (!ibpd_is_ibpd_context(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!id) {
		errno = EINVAL;
		return NULL;
	}
	return ibpd_import_pd_checked(context, pd_handle, id);
}

/*
 * ibpd's import method is a lookup that creates nothing: it tells the
 * PD's number, identity and use count, and checks the identity when the
 * library knows it.
 */
int ibpddv_query_pd(struct ibv_pd *ibpd, struct ibpddv_pd_attr *attr)
{
	uint32_t pdn = 0, usecnt = 0;
	uint64_t id = 0;
	int ret;

	if (!ibpd || !ibpd_is_ibpd_context(ibpd->context))
		return EOPNOTSUPP;
	if (!attr || attr->comp_mask)
		return EINVAL;

	ret = ibpd_cmd_import_pd(ibpd->context, ibpd->handle, to_ipd(ibpd)->id,
				 &pdn, &id, &usecnt);
	if (ret)
		return ret;

	attr->id = id;
	attr->pdn = pdn;
	attr->usecnt = usecnt;
	return 0;
}

int ibpddv_list_pds(struct ibv_context *context, uint32_t *handles,
		    size_t max, size_t *total)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_DEVICE,
			       UVERBS_METHOD_INFO_HANDLES, 3);
	uint32_t n = 0;
	int ret;

	if (!ibpd_is_ibpd_context(context))
		return EOPNOTSUPP;
	if (!handles || !max || !total)
		return EINVAL;
	if (max > IBPDDV_LIST_PDS_MAX)
		max = IBPDDV_LIST_PDS_MAX;

	fill_attr_const_in(cmd, UVERBS_ATTR_INFO_OBJECT_ID, UVERBS_OBJECT_PD);
	fill_attr_out_ptr(cmd, UVERBS_ATTR_INFO_TOTAL_HANDLES, &n);
	fill_attr_out_ptr_array(cmd, UVERBS_ATTR_INFO_HANDLES_LIST, handles,
				max);

	ret = execute_ioctl(context, cmd);
	if (ret)
		return ret;

	*total = n;
	return 0;
}

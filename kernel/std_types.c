// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Driver-namespace uverbs methods on UVERBS_OBJECT_PD: the ioctl allocation
 * of a PD with its number and identity, and its checked import. Their
 * attributes are also tables in selftests/lib/ibpd_uverbs.h, which the
 * abi kselftests hold these specs to.
 */

#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

#include "ibpd.h"

#define UVERBS_MODULE_NAME ibpd_ib
#include <rdma/uverbs_named_ioctl.h>

/*
 * The same object as the write-path ALLOC_PD, so that
 * UVERBS_METHOD_PD_DESTROY, MR registration and the close-time cleanup treat
 * both alike; the PD number and identity come back as attributes.
 */
static int UVERBS_HANDLER(IBPD_METHOD_PD_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_uobject *uobj =
		uverbs_attr_get_uobject(attrs, IBPD_ATTR_PD_ALLOC_HANDLE);
	struct ib_device *ibdev = attrs->context->device;
	struct ib_pd *pd;
	int ret;

	/* user-created: charged to the caller's memory cgroup */
	pd = rdma_zalloc_drv_obj_gfp(ibdev, ib_pd, GFP_KERNEL_ACCOUNT);
	if (!pd)
		return -ENOMEM;

	pd->device = ibdev;
	pd->uobject = uobj;
	atomic_set(&pd->usecnt, 0);
	rdma_restrack_new(&pd->res, RDMA_RESTRACK_PD);
	rdma_restrack_set_name(&pd->res, NULL);

	ret = ibdev->ops.alloc_pd(pd, &attrs->driver_udata);
	if (ret)
		goto err_free;

	rdma_restrack_add(&pd->res);
	uobj->object = pd;
	uverbs_finalize_uobj_create(attrs, IBPD_ATTR_PD_ALLOC_HANDLE);

	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_ALLOC_RESP_PDN,
			     &to_ibpd_ib_pd(pd)->pdn.index, sizeof(u32));
	if (ret)
		return ret;
	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_ALLOC_RESP_ID,
			     &to_ibpd_ib_pd(pd)->id, sizeof(u64));
	return IS_UVERBS_COPY_ERR(ret) ? ret : 0;

err_free:
	rdma_restrack_put(&pd->res);
	kfree(pd);
	return ret;
}

DECLARE_UVERBS_NAMED_METHOD(IBPD_METHOD_PD_ALLOC,
			    UVERBS_ATTR_IDR(IBPD_ATTR_PD_ALLOC_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_NEW,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_ALLOC_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_ALLOC_RESP_ID,
						UVERBS_ATTR_TYPE(u64),
						UA_OPTIONAL));

/*
 * Import looks the handle up with READ access in the caller's file and
 * reports what the importer needs. It creates nothing and leaves no
 * reference behind: the core holds the uobject, locked shared, only while
 * the method runs, and the PD lives until someone destroys it.
 */
static int UVERBS_HANDLER(IBPD_METHOD_PD_IMPORT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd =
		uverbs_attr_get_obj(attrs, IBPD_ATTR_PD_IMPORT_HANDLE);
	struct ibpd_ib_pd *pd = to_ibpd_ib_pd(ibpd);
	u32 pdn, usecnt, *want_pdn = NULL;
	u64 id, *want_id = NULL;
	int ret;

	/* the expected pdn and identity, each when given */
	ret = uverbs_copy_from(&pdn, attrs, IBPD_ATTR_PD_IMPORT_PDN);
	if (!ret)
		want_pdn = &pdn;
	else if (ret != -ENOENT)
		return ret;
	ret = uverbs_copy_from(&id, attrs, IBPD_ATTR_PD_IMPORT_ID);
	if (!ret)
		want_id = &id;
	else if (ret != -ENOENT)
		return ret;
	ret = ibpd_import_check(pd, want_pdn, want_id);
	if (ret)
		return ret;

	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_IMPORT_RESP_PDN,
			     &pd->pdn.index, sizeof(pd->pdn.index));
	if (ret)
		return ret;

	/* optional: an import needs no use count, a query does */
	usecnt = atomic_read(&ibpd->usecnt);
	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_IMPORT_RESP_USECNT, &usecnt,
			     sizeof(usecnt));
	if (IS_UVERBS_COPY_ERR(ret))
		return ret;
	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_IMPORT_RESP_ID, &pd->id,
			     sizeof(pd->id));
	return IS_UVERBS_COPY_ERR(ret) ? ret : 0;
}

DECLARE_UVERBS_NAMED_METHOD(IBPD_METHOD_PD_IMPORT,
			    UVERBS_ATTR_IDR(IBPD_ATTR_PD_IMPORT_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(IBPD_ATTR_PD_IMPORT_PDN,
					       UVERBS_ATTR_TYPE(u32),
					       UA_OPTIONAL),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_IMPORT_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_IMPORT_RESP_USECNT,
						UVERBS_ATTR_TYPE(u32),
						UA_OPTIONAL),
			    UVERBS_ATTR_PTR_IN(IBPD_ATTR_PD_IMPORT_ID,
					       UVERBS_ATTR_TYPE(u64),
					       UA_OPTIONAL),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_IMPORT_RESP_ID,
						UVERBS_ATTR_TYPE(u64),
						UA_OPTIONAL));

ADD_UVERBS_METHODS(ibpd_ib_pd,
		   UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(IBPD_METHOD_PD_ALLOC),
		   &UVERBS_METHOD(IBPD_METHOD_PD_IMPORT));

const struct uapi_definition ibpd_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &ibpd_ib_pd),
	{},
};

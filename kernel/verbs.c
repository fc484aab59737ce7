// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ib_device_ops callbacks: device and port queries, user contexts,
 * protection domains and user memory regions.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

int ibpd_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata)
{
	struct ibpd_ib_dev *dev = to_ibpd_ib_dev(ibdev);
	int ret;

	ret = ib_no_udata_io(udata);
	if (ret)
		return ret;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1;
	attr->max_mr_size = IBPD_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_part_id = 1;
	attr->max_pd = READ_ONCE(dev->max_pd);
	attr->max_mr = IBPD_MAX_MR;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ib_query_device);

int ibpd_ib_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr)
{
	/* The core zeroes *attr before calling us. */
	attr->state = IB_PORT_ACTIVE;
	attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_4096;
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_EDR;
	attr->max_msg_sz = U32_MAX;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ib_query_port);

int ibpd_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable)
{
	/* No MADs, no GIDs, no P_Keys: a uverbs-only device. */
	immutable->core_cap_flags = 0;
	immutable->gid_tbl_len = 0;
	immutable->pkey_tbl_len = 0;
	immutable->max_mad_size = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ib_get_port_immutable);

enum rdma_link_layer ibpd_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_UNSPECIFIED;
}

/* No driver data in either direction: refuse input, zero the response. */
int ibpd_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	return ib_no_udata_io(udata);
}

void ibpd_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

int ibpd_ib_query_ucontext(struct ib_ucontext *ibuc,
			   struct uverbs_attr_bundle *attrs)
{
	/* The core answers the generic attributes; nothing driver-specific. */
	return 0;
}

void ibpd_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	/*
	 * Nothing is mmapped to userspace, so there is nothing to zap. The
	 * callback tells the core that the device can be removed while files
	 * are still open.
	 */
}

/* ALLOC_PD has no driver input; its response is struct ibpd_alloc_pd_resp. */
int ibpd_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ibpd_ib_dev *dev = to_ibpd_ib_dev(ibpd->device);
	struct ibpd_ib_pd *pd = to_ibpd_ib_pd(ibpd);
	struct ibpd_alloc_pd_resp resp = {};
	int ret;

	ret = ib_is_udata_in_empty(udata);
	if (ret)
		return ret;

	ret = ibpd_pdn_alloc(dev, pd);
	if (ret)
		return ret;

	if (udata) {
		resp.pdn = pd->pdn.index;
		resp.id = pd->id;
		ret = ib_respond_udata(udata, resp);
		if (ret)
			goto err_free;
	}
	return 0;

err_free:
	ibpd_pdn_free(dev, pd);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ib_alloc_pd);

int ibpd_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	ibpd_pdn_free(to_ibpd_ib_dev(ibpd->device), to_ibpd_ib_pd(ibpd));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ib_dealloc_pd);

struct ib_mr *ibpd_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_dmah *dmah, struct ib_udata *udata)
{
	struct ibpd_ib_dev *dev = to_ibpd_ib_dev(ibpd->device);
	struct ibpd_ib_mr *mr;
	int ret;

	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	/* No driver data: refuse input, zero the response. */
	ret = ib_no_udata_io(udata);
	if (ret)
		return ERR_PTR(ret);
	/* ib_check_mr_access() has already refused flags we do not support. */
	if (length > IBPD_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	if (READ_ONCE(dev->fail_reg_mr))
		return ERR_PTR(-ENOMEM);

	/* user-created: charged to the caller's memory cgroup */
	mr = kzalloc_obj(*mr, GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free;
	}

	ret = ibpd_mr_key_alloc(dev, mr);
	if (ret)
		goto err_umem;
	return &mr->ibmr;

err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

int ibpd_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct ibpd_ib_mr *mr = to_ibpd_ib_mr(ibmr);

	ibpd_mr_key_free(to_ibpd_ib_dev(ibmr->device), mr);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

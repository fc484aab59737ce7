/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Every difference between the kernels ibpd builds against lives here, so
 * that the rest of the driver reads like mainline code. The oldest kernel
 * supported is 6.1.
 */

#ifndef _IBPD_COMPAT_H
#define _IBPD_COMPAT_H

/*
 * Exported by ib_core but declared only in drivers/infiniband/core/restrack.h,
 * which an out-of-tree module cannot include. In-tree the driver includes
 * that header instead (see scripts/stage-upstream).
 */
#ifndef IBPD_IN_TREE
#include <rdma/restrack.h>

void rdma_restrack_add(struct rdma_restrack_entry *res);
void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res,
			    const char *caller);
#endif

/*
 * 6.17 added a DMA handle argument to reg_user_mr (IBPD_HAVE_IB_DMAH is
 * probed in Kbuild). verbs.c has the mainline signature; older kernels get
 * it through this adapter.
 */
struct ib_dmah;
struct ib_mr *ibpd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_dmah *dmah, struct ib_udata *udata);
#ifdef IBPD_HAVE_IB_DMAH
#define ibpd_reg_user_mr_op ibpd_reg_user_mr
#else
static inline struct ib_mr *
ibpd_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length, u64 virt_addr,
		    int access, struct ib_udata *udata)
{
	return ibpd_reg_user_mr(ibpd, start, length, virt_addr, access, NULL,
				udata);
}
#endif

/* 7.x renamed ib_umem_get() for user virtual addresses ib_umem_get_va(). */
#ifndef IBPD_HAVE_IB_UMEM_GET_VA
#include <rdma/ib_umem.h>

static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/*
 * 7.x: ops without driver data refuse non-zero input and zero the response
 * with ib_no_udata_io(); udata may be NULL (query_device at registration).
 */
#ifndef IBPD_HAVE_IB_NO_UDATA_IO
#include <linux/uaccess.h>

static inline int ib_no_udata_io(struct ib_udata *udata)
{
	if (!udata)
		return 0;
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (udata->outlen && clear_user(udata->outbuf, udata->outlen))
		return -EFAULT;
	return 0;
}
#endif

#endif /* _IBPD_COMPAT_H */

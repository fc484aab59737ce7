/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Every difference between the kernels ibpd builds against lives here, so
 * that the rest of the driver reads like mainline code. The oldest kernel
 * supported is 6.1. Not part of the upstream series: scripts/stage-upstream
 * drops it.
 */

#ifndef _IBPD_COMPAT_H
#define _IBPD_COMPAT_H

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

/*
 * Exported by ib_core but declared only in drivers/infiniband/core/restrack.h,
 * which an out-of-tree module cannot include; in-tree std_types.c includes
 * that header.
 */
void rdma_restrack_add(struct rdma_restrack_entry *res);
void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res,
			    const char *caller);

/*
 * 6.17 added a DMA handle argument to reg_user_mr (IBPD_HAVE_IB_DMAH is
 * probed in Kbuild). verbs.c has the mainline signature; older kernels get
 * it through this adapter.
 */
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

/* 7.x allocates typed objects with kzalloc_obj(). */
#ifndef IBPD_HAVE_KZALLOC_OBJ
#include <linux/slab.h>

#define kzalloc_obj(P) kzalloc(sizeof(P), GFP_KERNEL)
#endif

/* 6.13 made symbol namespaces string literals: MODULE_IMPORT_NS("NS"). */
#ifndef IBPD_HAVE_NS_STRING
#include <linux/module.h>

#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns) MODULE_INFO(import_ns, ns)
#endif

#endif /* _IBPD_COMPAT_H */

/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Every difference between the kernels ibpd builds against lives here, so
 * that the rest of the driver reads like mainline code. The oldest kernel
 * supported is 6.1. Kbuild.include (beside it) includes it in every
 * source (no source names it); not part of the upstream series.
 */

#ifndef _IBPD_COMPAT_H
#define _IBPD_COMPAT_H

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

/*
 * 6.17 added a DMA handle argument to reg_user_mr (IBPD_HAVE_IB_DMAH is
 * probed in Kbuild.include). The driver has the mainline signature; on
 * older kernels its function is renamed ibpd_ib_reg_user_mr_dmah() (the macro
 * expands only where a "(" follows: the prototype, the definition) and
 * ops.reg_user_mr (no "(") gets the adapter of the old signature below.
 */
#ifndef IBPD_HAVE_IB_DMAH
struct ib_dmah;

#define ibpd_ib_reg_user_mr(...) ibpd_ib_reg_user_mr_dmah(__VA_ARGS__)
struct ib_mr *ibpd_ib_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start,
				       u64 length, u64 virt_addr, int access,
				       struct ib_dmah *dmah,
				       struct ib_udata *udata);

static inline struct ib_mr *
(ibpd_ib_reg_user_mr)(struct ib_pd *ibpd, u64 start, u64 length,
		      u64 virt_addr, int access, struct ib_udata *udata)
{
	return ibpd_ib_reg_user_mr_dmah(ibpd, start, length, virt_addr, access,
					NULL, udata);
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
 * 7.x: the udata rules. Input a driver does not know must be zero
 * (EOPNOTSUPP otherwise); a response longer than the driver's is
 * zero-filled. udata may be NULL (query_device at registration).
 */
#ifndef IBPD_HAVE_IB_RESPOND_UDATA
#include <linux/uaccess.h>

static inline int ib_is_udata_in_empty(struct ib_udata *udata)
{
	if (!udata || !udata->inlen)
		return 0;
	return ib_is_udata_cleared(udata, 0, udata->inlen) ? 0 : -EOPNOTSUPP;
}

static inline int _ib_respond_udata(struct ib_udata *udata, const void *src,
				    size_t len)
{
	size_t copy_len = min(len, udata->outlen);

	if (copy_to_user(udata->outbuf, src, copy_len))
		return -EFAULT;
	if (copy_len < udata->outlen &&
	    clear_user(udata->outbuf + copy_len, udata->outlen - copy_len))
		return -EFAULT;
	return 0;
}

#define ib_respond_udata(_udata, _rep) \
	_ib_respond_udata(_udata, &(_rep), sizeof(_rep))

static inline int ib_no_udata_io(struct ib_udata *udata)
{
	int ret = ib_is_udata_in_empty(udata);

	if (ret)
		return ret;
	if (udata && udata->outlen && clear_user(udata->outbuf, udata->outlen))
		return -EFAULT;
	return 0;
}
#endif

/* 7.x allocates typed objects with kzalloc_obj(P[, gfp]). */
#ifndef IBPD_HAVE_KZALLOC_OBJ
#include <linux/slab.h>

#define __ibpd_kzalloc_obj(P, gfp, ...) kzalloc(sizeof(P), gfp)
#define kzalloc_obj(P, ...) __ibpd_kzalloc_obj(P, ##__VA_ARGS__, GFP_KERNEL)
#endif

/* 6.13 made symbol namespaces string literals: MODULE_IMPORT_NS("NS"). */
#ifndef IBPD_HAVE_NS_STRING
#include <linux/module.h>

#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns) MODULE_INFO(import_ns, ns)
#endif

#endif /* _IBPD_COMPAT_H */

/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Driver-namespace uverbs ioctl methods of the ibpd software RDMA device.
 * Ids are never renumbered.
 *
 * A PD has two numbers. The pdn (24 bits, allocated cyclically) is for
 * display and may come back after 2^24 allocations. The identity (64 bits,
 * from a counter, starting at 1) is never given to two PDs in the life of a
 * device: a handle that uverbs reused for a newer PD never matches the
 * identity of the PD it named before. A failed allocation consumes neither.
 * IBPD_METHOD_PD_ALLOC returns both; so does the write-path ALLOC_PD in
 * struct ibpd_alloc_pd_resp, its driver response.
 */

#ifndef IBPD_USER_IOCTL_CMDS_H
#define IBPD_USER_IOCTL_CMDS_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Methods added to UVERBS_OBJECT_PD */
enum ibpd_ib_pd_methods {
	IBPD_METHOD_PD_ALLOC = (1U << UVERBS_ID_NS_SHIFT),
	IBPD_METHOD_PD_IMPORT,
};

/*
 * The ioctl PD allocation: the same object as the write-path ALLOC_PD, so
 * that UVERBS_METHOD_PD_DESTROY, MR registration and the cleanup at close
 * treat both alike, with the PD's number and identity.
 */
enum ibpd_ib_pd_alloc_attrs {
	/* UVERBS_ACCESS_NEW: the handle of the new PD */
	IBPD_ATTR_PD_ALLOC_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	/* PTR_OUT __u32: the PD number, for display; it may wrap */
	IBPD_ATTR_PD_ALLOC_RESP_PDN,
	/* PTR_OUT __aligned_u64, optional: the PD's identity */
	IBPD_ATTR_PD_ALLOC_RESP_ID,
};

enum ibpd_ib_pd_import_attrs {
	/* UVERBS_ACCESS_READ: a live PD handle of this uverbs file */
	IBPD_ATTR_PD_IMPORT_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	/*
	 * PTR_IN __u32, optional: fail with ESTALE unless the PD has this
	 * pdn. pdns wrap, so this cannot tell two PDs apart for sure: use
	 * IBPD_ATTR_PD_IMPORT_ID.
	 */
	IBPD_ATTR_PD_IMPORT_PDN,
	/* PTR_OUT __u32: the PD number */
	IBPD_ATTR_PD_IMPORT_RESP_PDN,
	/* PTR_OUT __u32, optional: resources (e.g. MRs) using the PD */
	IBPD_ATTR_PD_IMPORT_RESP_USECNT,
	/*
	 * PTR_IN __aligned_u64, optional: fail with ESTALE unless the PD has
	 * this identity.
	 */
	IBPD_ATTR_PD_IMPORT_ID,
	/* PTR_OUT __aligned_u64, optional: the PD's identity */
	IBPD_ATTR_PD_IMPORT_RESP_ID,
};

#endif /* IBPD_USER_IOCTL_CMDS_H */

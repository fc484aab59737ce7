/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Out of tree only: the ioctl PD allocation of the ibpd module on kernels
 * whose core has no UVERBS_METHOD_PD_ALLOC (all released ones). It builds
 * the same object as the core method and the write-path ALLOC_PD.
 */

#ifndef IBPD_COMPAT_IOCTL_CMDS_H
#define IBPD_COMPAT_IOCTL_CMDS_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

/* Added to UVERBS_OBJECT_PD, before IBPD_METHOD_PD_IMPORT */
enum ibpd_compat_pd_methods {
	IBPD_METHOD_PD_ALLOC = (1U << UVERBS_ID_NS_SHIFT),
};

enum ibpd_compat_pd_alloc_attrs {
	/* UVERBS_ACCESS_NEW: the handle of the new PD */
	IBPD_ATTR_PD_ALLOC_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	/* PTR_OUT __u32: the PD number, for display; it may wrap */
	IBPD_ATTR_PD_ALLOC_RESP_PDN,
	/* PTR_OUT __aligned_u64, optional: the PD's identity */
	IBPD_ATTR_PD_ALLOC_RESP_ID,
};

#endif /* IBPD_COMPAT_IOCTL_CMDS_H */

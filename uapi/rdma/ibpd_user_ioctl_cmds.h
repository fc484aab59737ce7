/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Driver-namespace uverbs ioctl methods of the ibpd software RDMA device.
 * Ids start at 1U << UVERBS_ID_NS_SHIFT and are never renumbered.
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

enum ibpd_ib_pd_alloc_attrs {
	/* UVERBS_ACCESS_NEW: the handle of the new PD */
	IBPD_ATTR_PD_ALLOC_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	/* PTR_OUT __u32: the device-unique PD number */
	IBPD_ATTR_PD_ALLOC_RESP_PDN,
};

enum ibpd_ib_pd_import_attrs {
	/* UVERBS_ACCESS_READ: a live PD handle of this uverbs file */
	IBPD_ATTR_PD_IMPORT_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	/* PTR_IN __u32, optional: fail with ESTALE unless the PD has this pdn */
	IBPD_ATTR_PD_IMPORT_PDN,
	/* PTR_OUT __u32: the PD number */
	IBPD_ATTR_PD_IMPORT_RESP_PDN,
	/* PTR_OUT __u32, optional: resources (e.g. MRs) using the PD */
	IBPD_ATTR_PD_IMPORT_RESP_USECNT,
};

#endif /* IBPD_USER_IOCTL_CMDS_H */

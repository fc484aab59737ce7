/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Driver-specific uverbs ABI (udata) of the ibpd software RDMA device.
 */

#ifndef IBPD_ABI_USER_H
#define IBPD_ABI_USER_H

#include <linux/types.h>

#define IBPD_UVERBS_ABI_VERSION 1

/* PD numbers are allocated cyclically in [1, IBPD_PDN_MAX] per device. */
#define IBPD_PDN_MAX ((1U << 24) - 1)

/*
 * Driver response of the write-path ALLOC_PD command (optional; a shorter
 * buffer gets the leading fields, a longer one is zero-filled).
 */
struct ibpd_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
	__aligned_u64 id;	/* see ibpd_user_ioctl_cmds.h */
};

#endif /* IBPD_ABI_USER_H */

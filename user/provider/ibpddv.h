/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd direct verbs: what the ibpd software RDMA device adds to libibverbs.
 * Every call fails with EOPNOTSUPP on a device that is not ibpd, and then
 * sends nothing to the kernel.
 */

#ifndef _IBPDDV_H_
#define _IBPDDV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether libibverbs drives DEVICE through ibpd's provider. */
bool ibpddv_is_supported(struct ibv_device *device);

/*
 * ibv_import_pd() that fails with ESTALE unless PD_HANDLE still names the
 * PD of identity ID (ibpddv_query_pd() of the original): uverbs reuses
 * handles, identities never come back. NULL and errno on failure.
 */
struct ibv_pd *ibpddv_import_pd(struct ibv_context *context,
				uint32_t pd_handle, uint64_t id);

struct ibpddv_pd_attr {
	uint64_t comp_mask;	/* in: 0 */
	uint64_t id;		/* never given to another PD of the device */
	uint32_t pdn;		/* for display: it may come back */
	uint32_t usecnt;	/* resources (MRs) using the PD */
};

/*
 * The kernel's view of PD: its identity, number and use count. ESTALE if
 * PD's handle now names another PD. Returns 0 or an errno value.
 */
int ibpddv_query_pd(struct ibv_pd *pd, struct ibpddv_pd_attr *attr);

/* The most handles one ibpddv_list_pds() returns (16-bit byte length). */
#define IBPDDV_LIST_PDS_MAX 16383

/*
 * The handles of the live PDs of CONTEXT's uverbs file, whichever context
 * of the file allocated them: stores up to MAX (at most IBPDDV_LIST_PDS_MAX)
 * in HANDLES and how many it stored in *TOTAL. Returns 0 or an errno value.
 */
int ibpddv_list_pds(struct ibv_context *context, uint32_t *handles,
		    size_t max, size_t *total);

#ifdef __cplusplus
}
#endif

#endif /* _IBPDDV_H_ */

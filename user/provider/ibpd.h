/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The rdma-core provider of the ibpd software RDMA device: private types.
 */

#ifndef IBPD_PROVIDER_H
#define IBPD_PROVIDER_H

#include <stdint.h>
#include <infiniband/driver.h>

struct ibpd_device {
	struct verbs_device ibv_dev;
};

struct ibpd_context {
	struct verbs_context ibv_ctx;
};

struct ibpd_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	/* Never reused in the device's life; 0 if the kernel gave none. */
	uint64_t id;
};

static inline struct ibpd_pd *to_ipd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct ibpd_pd, ibv_pd);
}

/* ibpd.c */
bool ibpd_is_ibpd_device(struct ibv_device *device);
bool ibpd_is_ibpd_context(struct ibv_context *context);

/* cmd_pd.c: ibpd's methods on UVERBS_OBJECT_PD */
int ibpd_cmd_alloc_pd(struct ibv_context *context, uint32_t *handle,
		      uint32_t *pdn, uint64_t *id);
int ibpd_cmd_import_pd(struct ibv_context *context, uint32_t pd_handle,
		       uint64_t expect_id, uint32_t *pdn, uint64_t *id,
		       uint32_t *usecnt);

/* verbs.c */
struct ibv_pd *ibpd_import_pd_checked(struct ibv_context *context,
				      uint32_t pd_handle, uint64_t id);
struct ibv_pd *ibpd_alloc_pd(struct ibv_context *context);
int ibpd_dealloc_pd(struct ibv_pd *pd);
struct ibv_pd *ibpd_import_pd(struct ibv_context *context,
			      uint32_t pd_handle);
void ibpd_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *ibpd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int ibpd_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *ibpd_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void ibpd_unimport_mr(struct ibv_mr *mr);

#endif /* IBPD_PROVIDER_H */

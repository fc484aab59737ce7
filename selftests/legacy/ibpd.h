/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * libibpd: protection domains and their sharing between contexts of one
 * uverbs file, over the kernel's uverbs ioctl ABI.
 *
 * Constructors return NULL and set errno; destructors return 0 or a
 * positive errno value. No global state: every call is thread-safe as long
 * as one object is not destroyed while another thread uses it.
 */

#ifndef IBPD_H
#define IBPD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ibpd_context;
struct ibpd_pd;
struct ibpd_mr;

/* Access flags of ibpd_reg_mr(), the values of enum ibv_access_flags. */
enum ibpd_access_flags {
	IBPD_ACCESS_LOCAL_WRITE = 1 << 0,
	IBPD_ACCESS_REMOTE_WRITE = 1 << 1,
	IBPD_ACCESS_REMOTE_READ = 1 << 2,
	IBPD_ACCESS_REMOTE_ATOMIC = 1 << 3,
};

#define IBPD_DEVICE_NAME_MAX 64

/* An RDMA device with a uverbs char device, as ibpd_get_device_list() sees it. */
struct ibpd_device {
	char name[IBPD_DEVICE_NAME_MAX];	/* RDMA device, e.g. "ibpd0" */
	char dev_name[IBPD_DEVICE_NAME_MAX];	/* uverbs char device, "uverbs0" */
	uint32_t index;				/* RDMA netlink device index */
	uint32_t driver_id;			/* enum rdma_driver_id */
};

struct ibpd_device **ibpd_get_device_list(int *num_devices);
void ibpd_free_device_list(struct ibpd_device **list);

struct ibpd_context *ibpd_open_device(const char *ibdev_name);
struct ibpd_context *ibpd_import_device(int cmd_fd);
int ibpd_close_device(struct ibpd_context *ctx);
int ibpd_context_cmd_fd(const struct ibpd_context *ctx);
const char *ibpd_context_ibdev_name(const struct ibpd_context *ctx);

struct ibpd_pd *ibpd_alloc_pd(struct ibpd_context *ctx);
struct ibpd_pd *ibpd_alloc_pd_write(struct ibpd_context *ctx);
int ibpd_dealloc_pd(struct ibpd_pd *pd);
struct ibpd_pd *ibpd_import_pd(struct ibpd_context *ctx, uint32_t pd_handle);
struct ibpd_pd *ibpd_import_pd_checked(struct ibpd_context *ctx,
				       uint32_t pd_handle, uint32_t pdn);
struct ibpd_pd *ibpd_import_pd_id(struct ibpd_context *ctx,
				  uint32_t pd_handle, uint64_t id);
void ibpd_unimport_pd(struct ibpd_pd *pd);
int ibpd_query_pd(struct ibpd_pd *pd, uint32_t *pdn, uint32_t *usecnt);
uint32_t ibpd_pd_handle(const struct ibpd_pd *pd);
uint32_t ibpd_pd_pdn(const struct ibpd_pd *pd);
uint64_t ibpd_pd_id(const struct ibpd_pd *pd);
struct ibpd_context *ibpd_pd_context(const struct ibpd_pd *pd);

/*
 * The most handles one ibpd_list_pds() call returns: the core's handle list
 * has a 16-bit length in bytes.
 */
#define IBPD_LIST_PDS_MAX 16383

int ibpd_list_pds(struct ibpd_context *ctx, uint32_t *handles, size_t max,
		  size_t *total);

struct ibpd_mr *ibpd_reg_mr(struct ibpd_pd *pd, void *addr, size_t length,
			    int access);
int ibpd_dereg_mr(struct ibpd_mr *mr);
uint32_t ibpd_mr_handle(const struct ibpd_mr *mr);
uint32_t ibpd_mr_lkey(const struct ibpd_mr *mr);
uint32_t ibpd_mr_rkey(const struct ibpd_mr *mr);

#ifdef __cplusplus
}
#endif

#endif /* IBPD_H */

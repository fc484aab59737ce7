/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * libibpd internals: object layouts and the uverbs command helpers.
 */

#ifndef IBPD_INT_H
#define IBPD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "ibpd.h"

#define IBPD_NAME_MAX IBPD_DEVICE_NAME_MAX
#define IBPD_MAX_ATTRS 8

struct ibpd_context {
	int cmd_fd;
	uint32_t driver_id;
	/* set once we learn that the device has no ibpd methods (e.g. rxe) */
	int no_ibpd_methods;
	char ibdev_name[IBPD_NAME_MAX];
};

struct ibpd_pd {
	struct ibpd_context *context;
	uint32_t handle;
	uint32_t pdn;		/* 0: unknown (device without ibpd methods) */
	uint64_t id;		/* identity; 0: unknown, as pdn */
};

struct ibpd_mr {
	struct ibpd_context *context;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

/* One uverbs ioctl: header plus attributes, on the stack. */
struct ibpd_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[IBPD_MAX_ATTRS];
};

void ibpd_cmd_init(struct ibpd_cmd *cmd, const struct ibpd_context *ctx,
		   uint16_t object_id, uint16_t method_id);
struct ib_uverbs_attr *ibpd_cmd_add(struct ibpd_cmd *cmd, uint16_t attr_id,
				    uint16_t len, uint64_t data);
void ibpd_cmd_in_u32(struct ibpd_cmd *cmd, uint16_t attr_id, uint32_t val);
void ibpd_cmd_in_u64(struct ibpd_cmd *cmd, uint16_t attr_id, uint64_t val);
void ibpd_cmd_out(struct ibpd_cmd *cmd, uint16_t attr_id, void *buf,
		  uint16_t len);
struct ib_uverbs_attr *ibpd_cmd_idr(struct ibpd_cmd *cmd, uint16_t attr_id,
				    uint32_t handle);
int ibpd_cmd_exec(const struct ibpd_context *ctx, struct ibpd_cmd *cmd);
int ibpd_dealloc_pd_handle(struct ibpd_pd *pd);
int ibpd_cmd_write(const struct ibpd_context *ctx, uint32_t command,
		   const void *in, uint16_t in_len, void *out,
		   uint16_t out_len, void *drv_out, uint16_t drv_out_len);

/* netlink.c: name/char device -> uverbs char device and driver id */
struct ibpd_nl_dev {
	char ibdev_name[IBPD_NAME_MAX];
	char chardev_name[IBPD_NAME_MAX];
	dev_t chardev;
	uint32_t index;
	uint32_t driver_id;
};

int ibpd_nl_find(const char *ibdev_name, dev_t chardev,
		 struct ibpd_nl_dev *out);

#endif /* IBPD_INT_H */

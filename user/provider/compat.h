/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * What differs for the ibpd provider out of rdma-core's tree. provider.mk
 * force-includes this header into every provider source, so that
 * user/provider/ reads as it would in providers/ibpd of the newest
 * rdma-core; the module's compat/compat.h does the same for kernel/. Each
 * block gives an older libibverbs, or a kernel without ibpd in tree, what
 * the source expects.
 */

#ifndef IBPD_PROVIDER_COMPAT_H
#define IBPD_PROVIDER_COMPAT_H

#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <rdma/ib_user_ioctl_verbs.h>

/* Provider ABI 65 passed GET_CONTEXT a file descriptor array. */
#if IBVERBS_PABI_VERSION < 65
#define ibv_cmd_get_context(context, cmd, cmd_size, fd_arr, resp, resp_size) \
	ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size)
#endif

/*
 * The generic import_context of providers whose context holds no driver
 * data. Before it, ibv_import_device() handed import_context the caller's
 * own fd, which stays open and the caller's when the import fails (only
 * verbs_init_context() closes it, when out of memory); with it,
 * import_context owns the duplicate it is given and closes it on failure.
 * The two contracts have different provider ABIs (65, and 66 with the
 * upstream series), so this choice at compile time matches the
 * libibverbs that loads the provider: no other one loads it.
 */
#ifndef verbs_import_and_alloc_context
static inline void *
ibpd_compat_import_and_alloc_context(struct ibv_device *device, int cmd_fd,
				     size_t alloc_size,
				     struct verbs_context *context_offset,
				     uint32_t driver_id,
				     const struct verbs_context_ops *ops)
{
	struct verbs_context *context;
	void *drv_context;
	int ret;

	drv_context = _verbs_init_and_alloc_context(device, cmd_fd, alloc_size,
						    context_offset, driver_id);
	if (!drv_context)
		return NULL;

	context = drv_context + (uintptr_t)context_offset;
	ret = ibv_cmd_query_context(&context->context, NULL);
	if (ret) {
		context->context.cmd_fd = -1;
		verbs_uninit_context(context);
		free(drv_context);
		errno = ret;
		return NULL;
	}

	verbs_set_ops(context, ops);
	return drv_context;
}

#define verbs_import_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb,   \
				       driver_id, ops)			       \
	((typeof(drv_ctx_ptr))ibpd_compat_import_and_alloc_context(            \
		ibdev, cmd_fd, sizeof(*drv_ctx_ptr),                           \
		&((typeof(drv_ctx_ptr))NULL)->ctx_memb, (driver_id), (ops)))
#endif

/*
 * In tree ibpd has a driver id of its own, RDMA_DRIVER_IBPD, which the
 * match table names. Out of tree the module reports RDMA_DRIVER_UNKNOWN,
 * which no match table entry matches: its devices say "ibpd" in their
 * sysfs "hca_type" instead (compat.c of the module), never a name, which
 * "rdma dev set" may change. The registered ops are then a copy of the
 * provider's with a match_device() that reads it.
 */
#ifndef IBPD_HAVE_DRIVER_ID
#define RDMA_DRIVER_IBPD RDMA_DRIVER_UNKNOWN

static inline bool
ibpd_compat_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[16];

	/* every other driver id is another provider's */
	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	if (ibv_read_ibdev_sysfs_file(hca_type, sizeof(hca_type), sysfs_dev,
				      "hca_type") <= 0)
		return false;
	return strcmp(hca_type, "ibpd") == 0;
}

#undef PROVIDER_DRIVER
#define PROVIDER_DRIVER(provider_name, drv_struct)                             \
	static struct verbs_device_ops provider_name##_compat_ops;            \
	static __attribute__((constructor)) void                              \
	provider_name##_register_driver(void)                                 \
	{                                                                      \
		provider_name##_compat_ops = drv_struct;                      \
		provider_name##_compat_ops.match_device =                     \
			ibpd_compat_match_device;                              \
		verbs_register_driver(&provider_name##_compat_ops);           \
	}
#endif

#endif /* IBPD_PROVIDER_COMPAT_H */

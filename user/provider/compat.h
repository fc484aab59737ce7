/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * What differs for the ibpd provider out of rdma-core's tree. provider.mk
 * force-includes this header into every provider source, so that
 * user/provider/ reads as it would in providers/ibpd of the newest
 * rdma-core; the module's compat/compat.h does the same for kernel/. Each
 * block gives an older libibverbs what the source expects.
 */

#ifndef IBPD_PROVIDER_COMPAT_H
#define IBPD_PROVIDER_COMPAT_H

#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

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

#endif /* IBPD_PROVIDER_COMPAT_H */

/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Every difference between the kernels ibpd builds against lives here, so
 * that the rest of the driver reads like mainline code. The oldest kernel
 * supported is 6.1.
 */

#ifndef _IBPD_COMPAT_H
#define _IBPD_COMPAT_H

/*
 * Exported by ib_core but declared only in drivers/infiniband/core/restrack.h,
 * which an out-of-tree module cannot include. In-tree the driver includes
 * that header instead (see scripts/stage-upstream).
 */
#ifndef IBPD_IN_TREE
#include <rdma/restrack.h>

void rdma_restrack_add(struct rdma_restrack_entry *res);
void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res,
			    const char *caller);
#endif

#endif /* _IBPD_COMPAT_H */

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd's own methods on UVERBS_OBJECT_PD, one command each, named after
 * the method they send as libibverbs' cmd_pd.c names its own:
 * IBPD_METHOD_PD_ALLOC is ibpd_cmd_alloc_pd(), IBPD_METHOD_PD_IMPORT is
 * ibpd_cmd_import_pd(). The import method only looks a PD handle up and
 * tells its number, identity and use count; it creates nothing, which is
 * why it serves ibpddv_query_pd() as well as the import verbs.
 *
 * The kselftests, the fuzzers and the bench send the same commands without
 * rdma-core, made from each method's table of attributes
 * (selftests/lib/ibpd_uverbs.h): the same attributes in the same order,
 * each mandatory or optional alike, each when the table says.
 * selftests/verbs/contract_test records what this file sends and fails on
 * any difference: change the table first.
 */

#include <config.h>

#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

#include "ibpd.h"

/* How often a lookup tries while a destroy holds the PD (EBUSY). */
#define IBPD_IMPORT_BUSY_TRIES 100

int ibpd_cmd_alloc_pd(struct ibv_context *context, uint32_t *handle,
		      uint32_t *pdn, uint64_t *id)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC, 3);
	struct ib_uverbs_attr *handle_attr;
	int ret;

	handle_attr = fill_attr_out_obj(cmd, IBPD_ATTR_PD_ALLOC_HANDLE);
	fill_attr_out_ptr(cmd, IBPD_ATTR_PD_ALLOC_RESP_PDN, pdn);
	attr_optional(fill_attr_out_ptr(cmd, IBPD_ATTR_PD_ALLOC_RESP_ID, id));

	ret = execute_ioctl(context, cmd);
	if (ret)
		return ret;

	*handle = read_attr_obj(IBPD_ATTR_PD_ALLOC_HANDLE, handle_attr);
	return 0;
}

static int ibpd_cmd_import_pd_once(struct ibv_context *context,
				   uint32_t pd_handle, uint64_t expect_id,
				   uint32_t *pdn, uint64_t *id,
				   uint32_t *usecnt)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, IBPD_METHOD_PD_IMPORT, 5);

	fill_attr_in_obj(cmd, IBPD_ATTR_PD_IMPORT_HANDLE, pd_handle);
	fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_PDN, pdn);
	attr_optional(fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_ID, id));
	/* Mandatory: a kernel that cannot check must not pretend it did. */
	if (expect_id)
		fill_attr_in_uint64(cmd, IBPD_ATTR_PD_IMPORT_ID, expect_id);
	if (usecnt)
		fill_attr_out_ptr(cmd, IBPD_ATTR_PD_IMPORT_RESP_USECNT, usecnt);

	return execute_ioctl(context, cmd);
}

/*
 * Looks PD handle up in the context's file: its number, identity and,
 * with usecnt, use count; with expect_id, fails with ESTALE unless the
 * handle still names the PD of that identity.
 *
 * The core's lookup fails with EBUSY (the import method itself never does)
 * only while a destroy of the PD holds it exclusively, for the length of
 * that one destroy: then the destroy has failed (the PD is in use, the
 * next lookup finds it) or succeeded (ENOENT, or ESTALE for a new PD on
 * the handle). That EBUSY says nothing about the PD and is retried, a
 * bounded number of times (yielding, then sleeping from 10 us doubling to
 * 10 ms: about 0.8 s in all): a lock held through all of them still
 * returns EBUSY.
 */
int ibpd_cmd_import_pd(struct ibv_context *context, uint32_t pd_handle,
		       uint64_t expect_id, uint32_t *pdn, uint64_t *id,
		       uint32_t *usecnt)
{
	unsigned int try, wait_us = 10;
	int ret;

	for (try = 1;; try++) {
		ret = ibpd_cmd_import_pd_once(context, pd_handle, expect_id,
					      pdn, id, usecnt);
		if (ret != EBUSY || try == IBPD_IMPORT_BUSY_TRIES)
			return ret;
		/* the destroyer may be off the CPU: wait longer and longer */
		if (try <= 10) {
			sched_yield();
		} else {
			usleep(wait_us);
			wait_us = wait_us < 10000 ? 2 * wait_us : 10000;
		}
	}
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * MR keys: a cyclic index in the upper 24 bits, the low byte zero, at
 * most IBPD_MAX_MR of them live per device.
 */

#include <kunit/visibility.h>

#include "ibpd.h"

int ibpd_mr_key_alloc(struct ibpd_ib_dev *dev, struct ibpd_ib_mr *mr)
{
	int ret;

	ret = ibpd_pool_alloc(&dev->mrs, IBPD_MAX_MR, U32_MAX >> 8, &mr->key);
	if (ret)
		return ret;
	mr->ibmr.lkey = mr->key.index << 8;
	mr->ibmr.rkey = mr->key.index << 8;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_mr_key_alloc);

void ibpd_mr_key_free(struct ibpd_ib_dev *dev, struct ibpd_ib_mr *mr)
{
	ibpd_pool_free(&dev->mrs, &mr->key);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_mr_key_free);

int ibpd_mrs_init(struct ibpd_ib_dev *dev)
{
	return ibpd_pool_init(&dev->mrs);
}

void ibpd_mrs_fini(struct ibpd_ib_dev *dev)
{
	ibpd_pool_destroy(&dev->mrs);
}

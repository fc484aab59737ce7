// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * PD policy: the numbers and identities of a device's PDs, the limit on
 * live PDs (max_pd) and what a checked import compares. The verbs and the
 * uverbs methods call it; debugfs sets its knobs through it.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

/*
 * Each live PD holds a pdn of its own in [1, IBPD_PDN_MAX], so a limit
 * above IBPD_PDN_MAX could never be reached, and 0 would refuse every
 * PD: both are EINVAL, for the module parameter, a new device and the
 * debugfs knob alike.
 */
int ibpd_max_pd_check(u64 max_pd)
{
	return max_pd && max_pd <= IBPD_PDN_MAX ? 0 : -EINVAL;
}

/* Lowering the limit below the live PDs only stops new allocations. */
int ibpd_set_max_pd(struct ibpd_ib_dev *dev, u64 max_pd)
{
	int ret;

	ret = ibpd_max_pd_check(max_pd);
	if (ret)
		return ret;
	WRITE_ONCE(dev->max_pd, max_pd);
	/* Keep what ibv_query_device() reports in step. */
	WRITE_ONCE(dev->ibdev.attrs.max_pd, max_pd);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_set_max_pd);

/* Moves the cyclic cursor, so that tests reach a wrap in a few calls. */
int ibpd_set_pdn_next(struct ibpd_ib_dev *dev, u64 pdn)
{
	if (!pdn || pdn > IBPD_PDN_MAX)
		return -EINVAL;
	WRITE_ONCE(dev->pds.next, pdn);
	return 0;
}

/*
 * A PD's identity comes from a counter that never goes back. It is drawn
 * once the PD has its pdn, when nothing but alloc_pd's response can fail,
 * and an identity drawn is used up: the response may have reached
 * userspace whatever becomes of the call (the driver's copy can fail part
 * way, the core's copy after it), so a failed allocation leaves a gap and
 * never a repeat.
 */
static void ibpd_pd_id_alloc(struct ibpd_ib_dev *dev, struct ibpd_ib_pd *pd)
{
	pd->id = atomic64_inc_return(&dev->pd_id);
}

/*
 * A pdn and an identity for a new PD; the pds listing sees it only once it
 * has both.
 */
int ibpd_pdn_alloc(struct ibpd_ib_dev *dev, struct ibpd_ib_pd *pd)
{
	int ret;

	if (READ_ONCE(dev->fail_alloc_pd))
		return -ENOMEM;
	ret = ibpd_pool_reserve(&dev->pds, READ_ONCE(dev->max_pd),
				IBPD_PDN_MAX, &pd->pdn);
	if (ret)
		return ret;
	ibpd_pd_id_alloc(dev, pd);
	ibpd_pool_publish(&dev->pds, &pd->pdn);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pdn_alloc);

void ibpd_pdn_free(struct ibpd_ib_dev *dev, struct ibpd_ib_pd *pd)
{
	ibpd_pool_free(&dev->pds, &pd->pdn);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pdn_free);

/*
 * What IBPD_METHOD_PD_IMPORT checks before it answers: the expected pdn
 * and identity, each when given.
 */
int ibpd_import_check(struct ibpd_ib_pd *pd, const u32 *pdn, const u64 *id)
{
	if (READ_ONCE(to_ibpd_ib_dev(pd->ibpd.device)->fail_import))
		return -ENOMEM;
	if (pdn && *pdn != pd->pdn.index)
		return -ESTALE;
	if (id && *id != pd->id)
		return -ESTALE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_import_check);

/* A new device's PDs: none yet, at most max_pd of them live. */
int ibpd_pds_init(struct ibpd_ib_dev *dev, u32 max_pd)
{
	int ret;

	ret = ibpd_set_max_pd(dev, max_pd);
	if (ret)
		return ret;
	atomic64_set(&dev->pd_id, 0);
	return ibpd_pool_init(&dev->pds);
}

void ibpd_pds_fini(struct ibpd_ib_dev *dev)
{
	ibpd_pool_destroy(&dev->pds);
}

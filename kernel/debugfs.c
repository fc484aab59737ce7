// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * debugfs: per-device state and fault knobs, netdevsim style.
 *
 *   /sys/kernel/debug/ibpd/<ibdev>/pds            pdn and use count per PD
 *   /sys/kernel/debug/ibpd/<ibdev>/num_pds        live PDs
 *   /sys/kernel/debug/ibpd/<ibdev>/num_mrs        live MRs
 *   /sys/kernel/debug/ibpd/<ibdev>/max_pd         PD limit (read/write)
 *   /sys/kernel/debug/ibpd/<ibdev>/fail_alloc_pd  PD allocation fails (ENOMEM)
 *   /sys/kernel/debug/ibpd/<ibdev>/fail_reg_mr    MR registration fails (ENOMEM)
 *   /sys/kernel/debug/ibpd/<ibdev>/fail_import    PD import fails (ENOMEM)
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

static struct dentry *ibpd_debugfs_root;

static void ibpd_pds_show_one(struct ibpd_id *id, void *arg)
{
	struct ibpd_pd *pd = container_of(id, struct ibpd_pd, pdn);

	seq_printf(arg, "%u %d\n", id->id, atomic_read(&pd->ibpd.usecnt));
}

/* In no particular order; sort -n for one. */
static int ibpd_pds_show(struct seq_file *s, void *unused)
{
	struct ibpd_dev *dev = s->private;

	seq_puts(s, "pdn usecnt\n");
	ibpd_ids_for_each(&dev->pds, ibpd_pds_show_one, s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ibpd_pds);

static int ibpd_max_pd_get(void *data, u64 *val)
{
	struct ibpd_dev *dev = data;

	*val = READ_ONCE(dev->max_pd);
	return 0;
}

/* Lowering the limit below the live PDs only stops new allocations. */
int ibpd_dev_set_max_pd(struct ibpd_dev *dev, u64 val)
{
	if (!val || val > IBPD_PDN_MAX)
		return -EINVAL;
	WRITE_ONCE(dev->max_pd, val);
	/* Keep what ibv_query_device() reports in step. */
	WRITE_ONCE(dev->ibdev.attrs.max_pd, val);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_dev_set_max_pd);

static int ibpd_max_pd_set(void *data, u64 val)
{
	return ibpd_dev_set_max_pd(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(ibpd_max_pd_fops, ibpd_max_pd_get, ibpd_max_pd_set,
			 "%llu\n");

void ibpd_debugfs_dev_init(struct ibpd_dev *dev)
{
	struct dentry *d;

	d = debugfs_create_dir(dev_name(&dev->ibdev.dev), ibpd_debugfs_root);
	dev->ddir = d;
	debugfs_create_file("pds", 0400, d, dev, &ibpd_pds_fops);
	debugfs_create_atomic_t("num_pds", 0400, d, &dev->pds.count);
	debugfs_create_atomic_t("num_mrs", 0400, d, &dev->mrs.count);
	debugfs_create_file_unsafe("max_pd", 0600, d, dev, &ibpd_max_pd_fops);
	debugfs_create_bool("fail_alloc_pd", 0600, d, &dev->fail_alloc_pd);
	debugfs_create_bool("fail_reg_mr", 0600, d, &dev->fail_reg_mr);
	debugfs_create_bool("fail_import", 0600, d, &dev->fail_import);
}

void ibpd_debugfs_dev_exit(struct ibpd_dev *dev)
{
	debugfs_remove(dev->ddir);
	dev->ddir = NULL;
}

void ibpd_debugfs_init(void)
{
	ibpd_debugfs_root = debugfs_create_dir("ibpd", NULL);
}

void ibpd_debugfs_exit(void)
{
	debugfs_remove(ibpd_debugfs_root);
}

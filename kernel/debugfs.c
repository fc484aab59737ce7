// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * debugfs: per-device state and fault knobs, netdevsim style, in
 * /sys/kernel/debug/ibpd/<index>/: a device's directory is named after its
 * ib_core index, which stays the same for the device's life whatever its
 * name or network namespace. Its files and what each does:
 * Documentation/ibpd.rst, "debugfs".
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "ibpd.h"

static struct dentry *ibpd_debugfs_root;

/*
 * The pds listing: a walk of the PD table, one PD at a time. Taking a PD
 * holds the table's lock for that moment only (so the PD stays allocated
 * while its numbers are copied), and in between the walk holds nothing
 * but its place, a number that no one else steps over: neither a long
 * read, nor seq_file's count of the lines up to a seek's or a pread()'s
 * offset (traverse(), from 0 in one start and stop), nor any number of
 * listings open ever makes an allocation or a destroy wait for more than
 * one PD. It lists each PD that lives through the walk exactly once,
 * oldest first, whatever the read size and whatever comes and goes
 * meanwhile; a PD made or destroyed during it, once at most.
 *
 * seq_file starts a listing at 0, also after a seek, and each later read
 * at the position where the last one stopped: the PD taken last, which
 * that read had no room for, kept with its position.
 */
struct ibpd_pds_iter {
	struct ibpd_pool_walk walk;
	loff_t pos;			/* the position of the PD below */
	bool taken;			/* a PD is there, not yet shown */
	u32 pdn;
	int usecnt;
	u64 id;
};

/* The next PD of the walk, at position pos, or NULL at the end. */
static void *ibpd_pds_take(struct ibpd_pds_iter *it, loff_t pos)
{
	struct ibpd_pool_entry *e;
	struct ibpd_ib_pd *pd;

	ibpd_pool_walk_start(&it->walk);
	e = ibpd_pool_walk_peek(&it->walk);
	if (e) {
		pd = container_of(e, struct ibpd_ib_pd, pdn);
		it->pdn = e->index;
		it->usecnt = atomic_read(&pd->ibpd.usecnt);
		it->id = pd->id;
		ibpd_pool_walk_pass(&it->walk, e);
	}
	ibpd_pool_walk_stop(&it->walk);
	it->pos = pos;
	it->taken = e;
	return e ? it : NULL;
}

static void *ibpd_pds_start(struct seq_file *s, loff_t *pos)
{
	struct ibpd_pds_iter *it = s->private;

	if (!*pos) {
		ibpd_pool_walk_start(&it->walk);
		ibpd_pool_walk_rewind(&it->walk);
		ibpd_pool_walk_stop(&it->walk);
		it->taken = false;
		return SEQ_START_TOKEN;
	}
	if (it->taken && it->pos == *pos)
		return it;
	return ibpd_pds_take(it, *pos);
}

static void *ibpd_pds_next(struct seq_file *s, void *v, loff_t *pos)
{
	return ibpd_pds_take(s->private, ++*pos);
}

static void ibpd_pds_stop(struct seq_file *s, void *v)
{
}

static int ibpd_pds_show(struct seq_file *s, void *v)
{
	struct ibpd_pds_iter *it = v;

	if (v == SEQ_START_TOKEN)
		seq_puts(s, "pdn usecnt id\n");
	else
		seq_printf(s, "%u %d %llu\n", it->pdn, it->usecnt, it->id);
	return 0;
}

static const struct seq_operations ibpd_pds_sops = {
	.start = ibpd_pds_start,
	.next = ibpd_pds_next,
	.stop = ibpd_pds_stop,
	.show = ibpd_pds_show,
};

static int ibpd_pds_open(struct inode *inode, struct file *file)
{
	struct ibpd_ib_dev *dev = inode->i_private;
	struct ibpd_pds_iter *it;

	it = __seq_open_private(file, &ibpd_pds_sops, sizeof(*it));
	if (!it)
		return -ENOMEM;
	ibpd_pool_walk_init(&it->walk, &dev->pds);
	return 0;
}

/* Also after the device is gone: the walk knows. */
static int ibpd_pds_release(struct inode *inode, struct file *file)
{
	struct seq_file *s = file->private_data;
	struct ibpd_pds_iter *it = s->private;

	ibpd_pool_walk_exit(&it->walk);
	return seq_release_private(inode, file);
}

/* Oldest first (by allocation, not by pdn): sort -n for pdn order. */
static const struct file_operations ibpd_pds_fops = {
	.owner = THIS_MODULE,
	.open = ibpd_pds_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = ibpd_pds_release,
};

/* The name changes with "rdma dev set NAME name NEW"; read it as it is. */
static int ibpd_name_show(struct seq_file *s, void *unused)
{
	struct ibpd_ib_dev *dev = s->private;

	seq_printf(s, "%.*s\n", IB_DEVICE_NAME_MAX, dev->ibdev.name);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ibpd_name);

static int ibpd_max_pd_get(void *data, u64 *val)
{
	struct ibpd_ib_dev *dev = data;

	*val = READ_ONCE(dev->max_pd);
	return 0;
}

static int ibpd_max_pd_set(void *data, u64 val)
{
	return ibpd_set_max_pd(data, val);
}

/*
 * simple_attr_write() parses the first 23 bytes of a write only (its
 * set_buf is 24 bytes) and then says it took them all: with leading
 * zeros, "000000000000000000000016777216" would set 1. No write longer
 * than that is a value the parser can read whole.
 */
#define IBPD_KNOB_MAX_LEN	23

/*
 * The numeric knobs refuse every value out of their bounds with EINVAL,
 * also one past the parser's range (2^64 and up), where
 * debugfs_attr_write() says ERANGE, and one longer than it reads.
 */
static ssize_t ibpd_knob_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	ssize_t ret;

	if (len > IBPD_KNOB_MAX_LEN)
		return -EINVAL;
	ret = debugfs_attr_write(file, buf, len, ppos);

	return ret == -ERANGE ? -EINVAL : ret;
}

/* DEFINE_DEBUGFS_ATTRIBUTE(), with ibpd_knob_write() */
#define IBPD_DEBUGFS_KNOB(fops, get, set)				\
static int fops ## _open(struct inode *inode, struct file *file)	\
{									\
	return simple_attr_open(inode, file, get, set, "%llu\n");	\
}									\
static const struct file_operations fops = {				\
	.owner = THIS_MODULE,						\
	.open = fops ## _open,						\
	.release = simple_attr_release,					\
	.read = debugfs_attr_read,					\
	.write = ibpd_knob_write,					\
}

IBPD_DEBUGFS_KNOB(ibpd_max_pd_fops, ibpd_max_pd_get, ibpd_max_pd_set);

static int ibpd_pdn_next_get(void *data, u64 *val)
{
	struct ibpd_ib_dev *dev = data;

	*val = READ_ONCE(dev->pds.next);
	return 0;
}

static int ibpd_pdn_next_set(void *data, u64 val)
{
	return ibpd_set_pdn_next(data, val);
}

IBPD_DEBUGFS_KNOB(ibpd_pdn_next_fops, ibpd_pdn_next_get, ibpd_pdn_next_set);

/*
 * Called each time ib_core enables the device: at registration, and again
 * after every move to another network namespace (also when a namespace
 * that holds it goes away). The directory is made once and lives until
 * ibpd_debugfs_dev_exit(), at dealloc_driver.
 */
int ibpd_debugfs_dev_init(struct ibpd_ib_dev *dev)
{
	char name[16];
	struct dentry *d;

	if (dev->ddir)
		return 0;
	snprintf(name, sizeof(name), "%u", dev->ibdev.index);
	d = debugfs_create_dir(name, ibpd_debugfs_root);
	if (IS_ERR(d))
		return 0;	/* debugfs is optional */
	dev->ddir = d;
	debugfs_create_file("name", 0400, d, dev, &ibpd_name_fops);
	debugfs_create_file("pds", 0400, d, dev, &ibpd_pds_fops);
	debugfs_create_atomic_t("num_pds", 0400, d, &dev->pds.count);
	debugfs_create_atomic_t("num_mrs", 0400, d, &dev->mrs.count);
	debugfs_create_file_unsafe("max_pd", 0600, d, dev, &ibpd_max_pd_fops);
	debugfs_create_file_unsafe("pdn_next", 0600, d, dev,
				   &ibpd_pdn_next_fops);
	debugfs_create_bool("fail_alloc_pd", 0600, d, &dev->fail_alloc_pd);
	debugfs_create_bool("fail_reg_mr", 0600, d, &dev->fail_reg_mr);
	debugfs_create_bool("fail_import", 0600, d, &dev->fail_import);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_debugfs_dev_init);

void ibpd_debugfs_dev_exit(struct ibpd_ib_dev *dev)
{
	debugfs_remove(dev->ddir);
	dev->ddir = NULL;
}

void ibpd_debugfs_init(void)
{
	struct ibpd_add_delays *a = &ibpd_add_delays;
	struct dentry *d;

	d = debugfs_create_dir("ibpd", NULL);
	ibpd_debugfs_root = d;
	debugfs_create_u32("add_delay_lookup_ms", 0600, d, &a->lookup_ms);
	debugfs_create_u32("add_delay_register_ms", 0600, d, &a->register_ms);
	debugfs_create_u32("add_delay_enable_ms", 0600, d, &a->enable_ms);
	debugfs_create_atomic_t("add_delayed", 0400, d, &a->waiting);
}

void ibpd_debugfs_exit(void)
{
	debugfs_remove(ibpd_debugfs_root);
}

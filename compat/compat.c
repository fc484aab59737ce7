// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Out of tree only (see compat.h): what the driver would have in tree from
 * a driver id of its own, RDMA_DRIVER_IBPD. Kbuild.include builds it only
 * for a kernel without one.
 *
 * The devices are tracked from their first enable_driver to their
 * dealloc_driver, which ibpd_compat_set_device_ops() wraps around the
 * driver's own: ib_core keeps the first op set, so these go in first.
 */

#include <linux/device.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>

#undef ib_set_device_ops
#undef ib_unregister_driver

struct ibpd_compat_dev {
	struct list_head list;
	struct ib_device *ibdev;
};

static LIST_HEAD(ibpd_compat_devs);
static DEFINE_MUTEX(ibpd_compat_lock);
static const struct ib_device_ops *ibpd_driver_ops;

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "ibpd\n");
}
static DEVICE_ATTR_RO(hca_type);

static struct attribute *ibpd_compat_attrs[] = {
	&dev_attr_hca_type.attr,
	NULL
};

static const struct attribute_group ibpd_compat_group = {
	.attrs = ibpd_compat_attrs,
};

static struct ibpd_compat_dev *ibpd_compat_find(struct ib_device *ibdev)
{
	struct ibpd_compat_dev *cd;

	list_for_each_entry(cd, &ibpd_compat_devs, list)
		if (cd->ibdev == ibdev)
			return cd;
	return NULL;
}

/* Again after each namespace move: tracked once. */
static int ibpd_compat_enable_driver(struct ib_device *ibdev)
{
	struct ibpd_compat_dev *cd;

	mutex_lock(&ibpd_compat_lock);
	if (!ibpd_compat_find(ibdev)) {
		cd = kzalloc_obj(*cd);
		if (!cd) {
			mutex_unlock(&ibpd_compat_lock);
			return -ENOMEM;
		}
		cd->ibdev = ibdev;
		list_add_tail(&cd->list, &ibpd_compat_devs);
	}
	mutex_unlock(&ibpd_compat_lock);
	return ibpd_driver_ops->enable_driver(ibdev);
}

static void ibpd_compat_dealloc_driver(struct ib_device *ibdev)
{
	struct ibpd_compat_dev *cd;

	ibpd_driver_ops->dealloc_driver(ibdev);
	mutex_lock(&ibpd_compat_lock);
	cd = ibpd_compat_find(ibdev);
	if (cd) {
		list_del(&cd->list);
		kfree(cd);
	}
	mutex_unlock(&ibpd_compat_lock);
}

static const struct ib_device_ops ibpd_compat_ops = {
	.dealloc_driver = ibpd_compat_dealloc_driver,
	.device_group = &ibpd_compat_group,
	.enable_driver = ibpd_compat_enable_driver,
};

void ibpd_compat_set_device_ops(struct ib_device *ibdev,
				const struct ib_device_ops *ops)
{
	ibpd_driver_ops = ops;
	ib_set_device_ops(ibdev, &ibpd_compat_ops);
	ib_set_device_ops(ibdev, ops);
}

/*
 * As ib_unregister_driver(): each pass unregisters the first device, which
 * dealloc_driver takes off the list, so every pass removes one.
 */
void ibpd_compat_unregister_driver(enum rdma_driver_id driver_id)
{
	struct ibpd_compat_dev *cd;
	struct ib_device *ibdev;

	for (;;) {
		mutex_lock(&ibpd_compat_lock);
		cd = list_first_entry_or_null(&ibpd_compat_devs,
					      struct ibpd_compat_dev, list);
		ibdev = cd ? cd->ibdev : NULL;
		if (ibdev)
			get_device(&ibdev->dev);
		mutex_unlock(&ibpd_compat_lock);
		if (!ibdev)
			break;
		ib_unregister_device(ibdev);
		put_device(&ibdev->dev);
	}
}

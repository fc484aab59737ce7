// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Out of tree only (see compat.h): what the driver has in tree from
 * RDMA_DRIVER_IBPD and from the core's UVERBS_METHOD_PD_ALLOC.
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
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ibpd_compat_ioctl_cmds.h>

#define UVERBS_MODULE_NAME ibpd_compat
#include <rdma/uverbs_named_ioctl.h>

#include "ibpd.h"

#undef ib_set_device_ops
#undef ib_unregister_driver
#undef ib_register_device

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

#ifndef IBPD_HAVE_CORE_PD_ALLOC
/*
 * The core's UVERBS_METHOD_PD_ALLOC, in the driver namespace: the same
 * object as the write-path ALLOC_PD, so that UVERBS_METHOD_PD_DESTROY, MR
 * registration and the close-time cleanup treat both alike. No driver
 * data (its attribute ids would be those of the driver namespace): the PD
 * number and identity come back as attributes.
 */
static int UVERBS_HANDLER(IBPD_METHOD_PD_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_uobject *uobj =
		uverbs_attr_get_uobject(attrs, IBPD_ATTR_PD_ALLOC_HANDLE);
	struct ib_device *ibdev = attrs->context->device;
	struct ib_pd *pd;
	int ret;

	/* user-created: charged to the caller's memory cgroup */
	pd = rdma_zalloc_drv_obj_gfp(ibdev, ib_pd, GFP_KERNEL_ACCOUNT);
	if (!pd)
		return -ENOMEM;

	pd->device = ibdev;
	pd->uobject = uobj;
	atomic_set(&pd->usecnt, 0);
	rdma_restrack_new(&pd->res, RDMA_RESTRACK_PD);
	rdma_restrack_set_name(&pd->res, NULL);

	ret = ibdev->ops.alloc_pd(pd, &attrs->driver_udata);
	if (ret)
		goto err_free;

	rdma_restrack_add(&pd->res);
	uobj->object = pd;
	uverbs_finalize_uobj_create(attrs, IBPD_ATTR_PD_ALLOC_HANDLE);

	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_ALLOC_RESP_PDN,
			     &to_ipd(pd)->pdn.id, sizeof(u32));
	if (ret)
		return ret;
	ret = uverbs_copy_to(attrs, IBPD_ATTR_PD_ALLOC_RESP_ID, &to_ipd(pd)->id,
			     sizeof(u64));
	return IS_UVERBS_COPY_ERR(ret) ? ret : 0;

err_free:
	rdma_restrack_put(&pd->res);
	kfree(pd);
	return ret;
}

DECLARE_UVERBS_NAMED_METHOD(IBPD_METHOD_PD_ALLOC,
			    UVERBS_ATTR_IDR(IBPD_ATTR_PD_ALLOC_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_NEW,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_ALLOC_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(IBPD_ATTR_PD_ALLOC_RESP_ID,
						UVERBS_ATTR_TYPE(u64),
						UA_OPTIONAL));

ADD_UVERBS_METHODS(ibpd_compat_pd,
		   UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(IBPD_METHOD_PD_ALLOC));

static const struct uapi_definition ibpd_compat_uapi_defs[] = {
	UAPI_DEF_CHAIN(ibpd_uapi_defs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &ibpd_compat_pd),
	{},
};

int ibpd_compat_register_device(struct ib_device *ibdev, const char *name,
				struct device *dma_device)
{
	ibdev->driver_def = ibpd_compat_uapi_defs;
	return ib_register_device(ibdev, name, dma_device);
}
#endif

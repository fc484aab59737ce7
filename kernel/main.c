// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Module init/exit and device lifecycle. Devices are created at load time
 * ("ndevs" parameter) and at run time with iproute2's
 * "rdma link add NAME type ibpd netdev DEV"; "rdma link delete NAME", the
 * unregistration of DEV and module unload remove them, disassociating any
 * files still open.
 */

#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

/*
 * The devices made at load: each registration compares the name with
 * every device's, so a load's time grows with the square of their
 * number; more are made with "rdma link add".
 */
#define IBPD_MAX_NDEVS	64

/* Anything but 0 to IBPD_MAX_NDEVS is EINVAL, and the load fails. */
static int ibpd_ndevs_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	/* never NULL: parse_one() refuses "ndevs" without a value */
	if (kstrtouint(val, 0, &n) || n > IBPD_MAX_NDEVS)
		return -EINVAL;
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops ibpd_ndevs_param_ops = {
	.set = ibpd_ndevs_param_set,
	.get = param_get_uint,
};

static unsigned int ndevs = 1;
module_param_cb(ndevs, &ibpd_ndevs_param_ops, &ndevs, 0444);
MODULE_PARM_DESC(ndevs, "Number of ibpd devices created at load, 0 to "
		 __stringify(IBPD_MAX_NDEVS) " (default 1)");

/*
 * max_pd's bounds are the PD policy's (pd.c), as for the debugfs knob; a
 * value past the parser's range is as much out of them as any other.
 */
static int ibpd_max_pd_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int max_pd;
	int ret;

	/* never NULL: parse_one() refuses "max_pd" without a value */
	if (kstrtouint(val, 0, &max_pd))
		return -EINVAL;
	ret = ibpd_max_pd_check(max_pd);
	if (ret)
		return ret;
	WRITE_ONCE(*(unsigned int *)kp->arg, max_pd);
	return 0;
}

static const struct kernel_param_ops ibpd_max_pd_param_ops = {
	.set = ibpd_max_pd_param_set,
	.get = param_get_uint,
};

/* Handed to each device when it is made: a later change leaves it as is. */
static unsigned int default_max_pd = IBPD_DEFAULT_MAX_PD;
module_param_cb(max_pd, &ibpd_max_pd_param_ops, &default_max_pd, 0644);
MODULE_PARM_DESC(max_pd,
		 "Default max_pd of new devices, 1 to 16777215 (default 65536)");

/*
 * ibpd's devices, from their first enable_driver to the end of their
 * dealloc_driver, for module unload: ibpd has no driver id of its own, and
 * ib_unregister_driver(RDMA_DRIVER_UNKNOWN) would unregister every other
 * driver's devices too.
 */
static LIST_HEAD(ibpd_devs);

/*
 * The devices made by "rdma link add", from ibpd_dev_add() to their
 * dealloc_driver, for the netdevice notifier: several devices may share
 * a netdev, where ib_device_get_by_netdev() finds only one.
 */
static LIST_HEAD(ibpd_netdev_devs);

/* Both lists, and each device's netdev_gone. */
static DEFINE_MUTEX(ibpd_devs_lock);

struct ibpd_add_delays ibpd_add_delays;

/* An add's wait at a stage (debugfs): none unless a test set one. */
static void ibpd_add_delay(const u32 *ms)
{
	u32 wait = READ_ONCE(*ms);

	if (!wait)
		return;
	atomic_inc(&ibpd_add_delays.waiting);
	msleep_interruptible(wait);
	atomic_dec(&ibpd_add_delays.waiting);
}

/* A device's PDs, at most max_pd of them live, and its MRs. */
int ibpd_dev_init_objects(struct ibpd_ib_dev *dev, u32 max_pd)
{
	int ret;

	ret = ibpd_pds_init(dev, max_pd);
	if (ret)
		return ret;
	ret = ibpd_mrs_init(dev);
	if (ret)
		goto err_pds;
	return 0;

err_pds:
	ibpd_pds_fini(dev);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_dev_init_objects);

void ibpd_dev_fini_objects(struct ibpd_ib_dev *dev)
{
	ibpd_mrs_fini(dev);
	ibpd_pds_fini(dev);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_dev_fini_objects);

/*
 * At registration, and again after each network namespace move, once the
 * device can be taken (ib_device_try_get()): from here on the netdevice
 * notifier unregisters it when its netdev goes, and what the notifier
 * could not do before is done here.
 */
static int ibpd_ib_enable_driver(struct ib_device *ibdev)
{
	struct ibpd_ib_dev *dev = to_ibpd_ib_dev(ibdev);

	/* the first enable, the registration's, of a device of "rdma link add" */
	if (dev->netdev && list_empty(&dev->list))
		ibpd_add_delay(&ibpd_add_delays.enable_ms);
	mutex_lock(&ibpd_devs_lock);
	/* again after each namespace move: on the list once */
	if (list_empty(&dev->list))
		list_add_tail(&dev->list, &ibpd_devs);
	if (dev->netdev_gone)
		ib_unregister_device_queued(ibdev);
	mutex_unlock(&ibpd_devs_lock);
	return ibpd_debugfs_dev_init(dev);
}

static void ibpd_ib_dealloc_driver(struct ib_device *ibdev)
{
	struct ibpd_ib_dev *dev = to_ibpd_ib_dev(ibdev);

	mutex_lock(&ibpd_devs_lock);
	list_del_init(&dev->netdev_list);
	mutex_unlock(&ibpd_devs_lock);
	ibpd_debugfs_dev_exit(dev);
	ibpd_dev_fini_objects(dev);
	/* last: once off ibpd_devs, module unload waits for nothing of it */
	mutex_lock(&ibpd_devs_lock);
	list_del_init(&dev->list);
	mutex_unlock(&ibpd_devs_lock);
}

/*
 * hca_type "ibpd", as mlx4, mlx5 and qib have one: what the provider
 * matches (ibpd has no driver id of its own), never the name, which
 * "rdma dev set" may change.
 */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "ibpd\n");
}
static DEVICE_ATTR_RO(hca_type);

static struct attribute *ibpd_attrs[] = {
	&dev_attr_hca_type.attr,
	NULL
};

static const struct attribute_group ibpd_attr_group = {
	.attrs = ibpd_attrs,
};

static const struct ib_device_ops ibpd_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = IBPD_UVERBS_ABI_VERSION,

	.alloc_pd = ibpd_ib_alloc_pd,
	.alloc_ucontext = ibpd_ib_alloc_ucontext,
	.dealloc_driver = ibpd_ib_dealloc_driver,
	.dealloc_pd = ibpd_ib_dealloc_pd,
	.dealloc_ucontext = ibpd_ib_dealloc_ucontext,
	.dereg_mr = ibpd_ib_dereg_mr,
	.device_group = &ibpd_attr_group,
	.disassociate_ucontext = ibpd_ib_disassociate_ucontext,
	.enable_driver = ibpd_ib_enable_driver,
	.get_link_layer = ibpd_ib_get_link_layer,
	.get_port_immutable = ibpd_ib_get_port_immutable,
	.query_device = ibpd_ib_query_device,
	.query_port = ibpd_ib_query_port,
	.query_ucontext = ibpd_ib_query_ucontext,
	.reg_user_mr = ibpd_ib_reg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_pd, ibpd_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, ibpd_ib_ucontext, ibuc),
};

/*
 * Binds the device to netdev, as rxe and siw are: port 1's netdev (which
 * "rdma link show" shows), the node GUID from its address, and a place on
 * the notifier's list, so that the netdev's unregistration takes the
 * device with it. The core holds the netdev until the device unregisters.
 *
 * A move of netdev to another namespace, or its deletion, before the
 * device is on the list sent its NETDEV_UNREGISTER unseen: under RTNL,
 * which the notifier runs under, the netdev must still be registered in
 * NET, the namespace it was in when ibpd_dev_add() began, else -ENODEV,
 * as if it had gone before "rdma link add" looked it up. (Between that
 * lookup and ibpd_dev_add() the core passes no namespace to check.)
 */
static int ibpd_dev_set_netdev(struct ibpd_ib_dev *dev,
			       struct net_device *netdev, struct net *net)
{
	bool gone;
	int ret;

	ret = ib_device_set_netdev(&dev->ibdev, netdev, 1);
	if (ret)
		return ret;
	dev->netdev = netdev;
	if (netdev->addr_len == ETH_ALEN)
		addrconf_addr_eui48((u8 *)&dev->ibdev.node_guid,
				    netdev->dev_addr);
	rtnl_lock();
	mutex_lock(&ibpd_devs_lock);
	list_add_tail(&dev->netdev_list, &ibpd_netdev_devs);
	mutex_unlock(&ibpd_devs_lock);
	gone = netdev->reg_state != NETREG_REGISTERED ||
	       !net_eq(dev_net(netdev), net);
	rtnl_unlock();
	return gone ? -ENODEV : 0;
}

/*
 * Registers a device that allows max_pd live PDs, bound to netdev unless
 * it is NULL; NAME may hold a "%d". Once this returns, the device may go
 * away at any time ("rdma link delete"): the pointer is for callers that
 * know better, such as the KUnit suites.
 */
struct ibpd_ib_dev *ibpd_dev_add(const char *name, struct net_device *netdev,
				 u32 max_pd)
{
	/* only compared with, never used: no reference needed */
	struct net *net = netdev ? dev_net(netdev) : NULL;
	struct ibpd_ib_dev *dev;
	int ret;

	dev = ib_alloc_device(ibpd_ib_dev, ibdev);
	if (!dev)
		return ERR_PTR(-ENOMEM);

	ret = ibpd_dev_init_objects(dev, max_pd);
	if (ret) {
		/* no ops yet: nothing of ibpd's to undo */
		ib_dealloc_device(&dev->ibdev);
		return ERR_PTR(ret);
	}
	dev->ibdev.node_type = RDMA_NODE_UNSPECIFIED;
	dev->ibdev.phys_port_cnt = 1;
	dev->ibdev.num_comp_vectors = 1;
	strscpy(dev->ibdev.node_desc, "ibpd software PD device",
		sizeof(dev->ibdev.node_desc));
	INIT_LIST_HEAD(&dev->list);
	INIT_LIST_HEAD(&dev->netdev_list);
	ib_set_device_ops(&dev->ibdev, &ibpd_dev_ops);
	dev->ibdev.driver_def = ibpd_uapi_defs;

	if (netdev) {
		ibpd_add_delay(&ibpd_add_delays.lookup_ms);
		ret = ibpd_dev_set_netdev(dev, netdev, net);
		if (ret)
			goto err_dealloc;
		ibpd_add_delay(&ibpd_add_delays.register_ms);
	}
	ret = ib_register_device(&dev->ibdev, name, NULL);
	if (ret)
		goto err_dealloc;
	return dev;

err_dealloc:
	/* Runs ibpd_ib_dealloc_driver(); the core puts the netdev. */
	ib_dealloc_device(&dev->ibdev);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_dev_add);

/*
 * Unregisters the device and returns once it is gone: when "rdma link
 * delete" or a namespace move is under way, ib_unregister_device() waits
 * for it (the device's unregistration lock), then unregisters the device
 * or finds it gone. The caller must know that the device is still
 * allocated.
 */
void ibpd_dev_del(struct ibpd_ib_dev *dev)
{
	ib_unregister_device(&dev->ibdev);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_dev_del);

static int ibpd_newlink(const char *ibdev_name, struct net_device *netdev)
{
	return PTR_ERR_OR_ZERO(ibpd_dev_add(ibdev_name, netdev,
					    READ_ONCE(default_max_pd)));
}

static struct rdma_link_ops ibpd_link_ops = {
	.type = "ibpd",
	.newlink = ibpd_newlink,
};

/*
 * A netdev going away, or moving to another namespace, takes its devices
 * with it, as for rxe and siw: the unregistration is queued (this runs
 * under RTNL), and its files are disassociated. A move sends
 * NETDEV_UNREGISTER once: a device that cannot be taken now (it is
 * registering, or moving to another namespace itself) is marked, and
 * ibpd_ib_enable_driver() queues its unregistration when it can be taken; one
 * that is unregistering needs nothing.
 */
static int ibpd_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(ptr);
	struct ibpd_ib_dev *dev;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	mutex_lock(&ibpd_devs_lock);
	list_for_each_entry(dev, &ibpd_netdev_devs, netdev_list) {
		if (dev->netdev != netdev)
			continue;
		if (!ib_device_try_get(&dev->ibdev)) {
			dev->netdev_gone = true;
			continue;
		}
		ib_unregister_device_queued(&dev->ibdev);
		ib_device_put(&dev->ibdev);
	}
	mutex_unlock(&ibpd_devs_lock);
	return NOTIFY_OK;
}

static struct notifier_block ibpd_netdev_nb = {
	.notifier_call = ibpd_netdev_event,
};

/*
 * Unregisters ibpd's devices, and no other driver's. Each pass takes the
 * first on ibpd_devs, which its dealloc_driver takes off the list: either
 * this pass's ib_unregister_device(), or an unregistration already under
 * way, for which ib_unregister_device() waits (the device's
 * unregistration lock).
 */
static void ibpd_unregister_devices(void)
{
	struct ibpd_ib_dev *dev;

	for (;;) {
		mutex_lock(&ibpd_devs_lock);
		dev = list_first_entry_or_null(&ibpd_devs, struct ibpd_ib_dev,
					       list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&ibpd_devs_lock);
		if (!dev)
			break;
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
	}
}

static int __init ibpd_init(void)
{
	unsigned int i;
	int ret;

	ibpd_debugfs_init();

	for (i = 0; i < ndevs; i++) {
		ret = PTR_ERR_OR_ZERO(ibpd_dev_add("ibpd%d", NULL,
						   READ_ONCE(default_max_pd)));
		if (ret)
			goto err_remove;
	}

	ret = register_netdevice_notifier(&ibpd_netdev_nb);
	if (ret)
		goto err_remove;
	rdma_link_register(&ibpd_link_ops);
	return 0;

err_remove:
	ibpd_unregister_devices();
	ibpd_debugfs_exit();
	return ret;
}

/*
 * No device is made after rdma_link_unregister(), none queued for
 * unregistration after the notifier's removal; ibpd_unregister_devices()
 * then waits for an unregistration already queued (the device's
 * unregistration lock) and takes the rest.
 */
static void __exit ibpd_exit(void)
{
	/* Waits for newlink callers; none can start after this. */
	rdma_link_unregister(&ibpd_link_ops);
	unregister_netdevice_notifier(&ibpd_netdev_nb);
	ibpd_unregister_devices();
	ibpd_debugfs_exit();
}

module_init(ibpd_init);
module_exit(ibpd_exit);

MODULE_AUTHOR("The ibpd authors");
MODULE_DESCRIPTION("Software RDMA device for protection domain sharing");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("ibpd");

/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 */

#ifndef _IBPD_H
#define _IBPD_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/types.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "pool.h"

struct ib_dmah;

/*
 * max_pd bounds the live PDs of a device, whoever holds them: 2^16 PDs by
 * default, about 20 MB of kernel memory at about 300 bytes each (charged
 * to the memory cgroup of their creator where the kernel allows it). It
 * is no per-user limit: one user may take them all. What one group of
 * processes may hold of a device is the rdma cgroup controller's to
 * limit (rdma.max "DEV hca_object=N", for PDs, MRs and the rest).
 */
#define IBPD_DEFAULT_MAX_PD	BIT(16)
#define IBPD_MAX_MR		BIT(20)
#define IBPD_MAX_MR_SIZE	U32_MAX

struct ibpd_ib_dev {
	struct ib_device ibdev;

	struct ibpd_pool pds;		/* PD numbers */
	atomic64_t pd_id;		/* the last PD identity given out */
	u32 max_pd;
	struct ibpd_pool mrs;		/* MR key indices (key >> 8) */

	/*
	 * Under ibpd_devs_lock: the place on the list of ibpd's devices;
	 * and for "rdma link add", the netdev, the netdevice notifier's
	 * list, and whether the netdev went (NETDEV_UNREGISTER) while the
	 * device could not be taken (registering or moving to another
	 * namespace).
	 */
	struct list_head list;
	struct net_device *netdev;
	struct list_head netdev_list;
	bool netdev_gone;

	struct dentry *ddir;
	bool fail_alloc_pd;
	bool fail_reg_mr;
	bool fail_import;
};

struct ibpd_ib_ucontext {
	struct ib_ucontext ibuc;
};

/*
 * pdn: 24 bits, cyclic, for display; it comes back after 2^24 allocations.
 * id: the PD's identity, from a 64-bit counter: never given to two PDs in
 * the life of the device (at 10^9 allocations a second it would wrap after
 * 584 years), so a checked import cannot mistake a newer PD for an old one.
 */
struct ibpd_ib_pd {
	struct ib_pd ibpd;
	struct ibpd_pool_entry pdn;
	u64 id;
};

struct ibpd_ib_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct ibpd_pool_entry key;
};

static inline struct ibpd_ib_dev *to_ibpd_ib_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct ibpd_ib_dev, ibdev);
}

static inline struct ibpd_ib_pd *to_ibpd_ib_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct ibpd_ib_pd, ibpd);
}

static inline struct ibpd_ib_mr *to_ibpd_ib_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct ibpd_ib_mr, ibmr);
}

/*
 * Test knobs of "rdma link add" (debugfs): each add waits *_ms at its
 * stage, so that a test can move or delete the netdev in that window
 * for certain. waiting counts the adds inside a wait.
 */
struct ibpd_add_delays {
	u32 lookup_ms;		/* the notifier cannot see the device yet */
	u32 register_ms;	/* it can, and the device cannot be taken */
	u32 enable_ms;		/* the device can be taken, not yet enabled */
	atomic_t waiting;
};

extern struct ibpd_add_delays ibpd_add_delays;

/* main.c */
struct ibpd_ib_dev *ibpd_dev_add(const char *name, struct net_device *netdev,
				 u32 max_pd);
void ibpd_dev_del(struct ibpd_ib_dev *dev);
int ibpd_dev_init_objects(struct ibpd_ib_dev *dev, u32 max_pd);
void ibpd_dev_fini_objects(struct ibpd_ib_dev *dev);

/* pd.c */
int ibpd_max_pd_check(u64 max_pd);
int ibpd_set_max_pd(struct ibpd_ib_dev *dev, u64 max_pd);
int ibpd_set_pdn_next(struct ibpd_ib_dev *dev, u64 pdn);
int ibpd_pdn_alloc(struct ibpd_ib_dev *dev, struct ibpd_ib_pd *pd);
void ibpd_pdn_free(struct ibpd_ib_dev *dev, struct ibpd_ib_pd *pd);
int ibpd_import_check(struct ibpd_ib_pd *pd, const u32 *pdn, const u64 *id);
int ibpd_pds_init(struct ibpd_ib_dev *dev, u32 max_pd);
void ibpd_pds_fini(struct ibpd_ib_dev *dev);

/* mr.c */
int ibpd_mr_key_alloc(struct ibpd_ib_dev *dev, struct ibpd_ib_mr *mr);
void ibpd_mr_key_free(struct ibpd_ib_dev *dev, struct ibpd_ib_mr *mr);
int ibpd_mrs_init(struct ibpd_ib_dev *dev);
void ibpd_mrs_fini(struct ibpd_ib_dev *dev);

/* verbs.c */
int ibpd_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			 struct ib_udata *udata);
int ibpd_ib_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *attr);
int ibpd_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *immutable);
enum rdma_link_layer ibpd_ib_get_link_layer(struct ib_device *ibdev, u32 port);
int ibpd_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void ibpd_ib_dealloc_ucontext(struct ib_ucontext *ibuc);
int ibpd_ib_query_ucontext(struct ib_ucontext *ibuc,
			   struct uverbs_attr_bundle *attrs);
void ibpd_ib_disassociate_ucontext(struct ib_ucontext *ibuc);
int ibpd_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int ibpd_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *ibpd_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_dmah *dmah, struct ib_udata *udata);
int ibpd_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* std_types.c */
extern const struct uapi_definition ibpd_uapi_defs[];

/*
 * Exported by ib_core, but declared only in drivers/infiniband/core/restrack.h,
 * which a driver cannot include: IBPD_METHOD_PD_ALLOC builds the object the
 * core's ib_uverbs_alloc_pd() builds, restrack entry included.
 */
void rdma_restrack_add(struct rdma_restrack_entry *res);
void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res,
			    const char *caller);

/* debugfs.c */
void ibpd_debugfs_init(void);
void ibpd_debugfs_exit(void);
int ibpd_debugfs_dev_init(struct ibpd_ib_dev *dev);
void ibpd_debugfs_dev_exit(struct ibpd_ib_dev *dev);

#endif /* _IBPD_H */

/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 */

#ifndef _IBPD_IDS_H
#define _IBPD_IDS_H

#include <linux/atomic.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* The id of an object: a PD number, an MR key index. */
struct ibpd_id {
	struct rhash_head node;
	u32 id;
};

/*
 * Counted ids, allocated cyclically and unique among the live objects. A
 * hash table keeps them, not an xarray: with a cursor that moves on, an
 * xarray allocates and (after RCU) frees a node for nearly every id.
 */
struct ibpd_ids {
	struct rhashtable ht;		/* id -> struct ibpd_id */
	spinlock_t lock;		/* removals against ibpd_ids_for_each() */
	u32 next;			/* the next id to try */
	atomic_t count;
};

int ibpd_ids_init(struct ibpd_ids *ids);
int ibpd_id_alloc(struct ibpd_ids *ids, u32 max_count, u32 max_id,
		  struct ibpd_id *obj);
void ibpd_id_free(struct ibpd_ids *ids, struct ibpd_id *obj);
void ibpd_ids_for_each(struct ibpd_ids *ids,
		       void (*fn)(struct ibpd_id *id, void *arg), void *arg);

#endif /* _IBPD_IDS_H */

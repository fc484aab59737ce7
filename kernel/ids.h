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
	spinlock_t lock;		/* removals against walks */
	u32 next;			/* the next id to try */
	atomic_t count;
};

/*
 * A walk over the live ids, which may be done in pieces: from
 * ibpd_ids_walk_start() to ibpd_ids_walk_stop() it holds the removal lock
 * (the ids it returns stay allocated; nothing there may sleep), and in
 * between nothing, its place kept for the next piece. A resize meanwhile
 * may repeat or skip entries, as any rhashtable walk. Only ids.c reads
 * the fields.
 */
struct ibpd_ids_walk {
	struct ibpd_ids *ids;
	struct rhashtable_iter iter;
	unsigned int slot;
	unsigned int skip;
};

int ibpd_ids_init(struct ibpd_ids *ids);
void ibpd_ids_destroy(struct ibpd_ids *ids);
int ibpd_id_alloc(struct ibpd_ids *ids, u32 max_count, u32 max_id,
		  struct ibpd_id *obj);
void ibpd_id_free(struct ibpd_ids *ids, struct ibpd_id *obj);

void ibpd_ids_walk_init(struct ibpd_ids_walk *walk, struct ibpd_ids *ids);
void ibpd_ids_walk_start(struct ibpd_ids_walk *walk)
	__acquires(&walk->ids->lock) __acquires(RCU);
struct ibpd_id *ibpd_ids_walk_peek(struct ibpd_ids_walk *walk);
struct ibpd_id *ibpd_ids_walk_next(struct ibpd_ids_walk *walk);
void ibpd_ids_walk_stop(struct ibpd_ids_walk *walk)
	__releases(RCU) __releases(&walk->ids->lock);

#endif /* _IBPD_IDS_H */

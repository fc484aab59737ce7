/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 */

#ifndef _IBPD_POOL_H
#define _IBPD_POOL_H

#include <linux/atomic.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* An object's place in a pool: a PD number, an MR key index. */
struct ibpd_pool_entry {
	struct rhash_head node;
	u32 index;
};

/*
 * Counted indices, allocated cyclically and unique among the live
 * objects. A hash table keeps them, not an xarray: with a cursor that
 * moves on, an xarray allocates and (after RCU) frees a node for nearly
 * every index.
 */
struct ibpd_pool {
	struct rhashtable ht;		/* index -> struct ibpd_pool_entry */
	spinlock_t lock;		/* removals against walks */
	u32 next;			/* the next index to try */
	atomic_t count;
};

/*
 * A walk over the live entries, which may be done in pieces: from
 * ibpd_pool_walk_start() to ibpd_pool_walk_stop() it holds the removal
 * lock (the entries it returns stay allocated; nothing there may sleep),
 * and in between nothing, its place kept for the next piece. A resize
 * meanwhile may repeat or skip entries, as any rhashtable walk. Only
 * pool.c reads the fields.
 */
struct ibpd_pool_walk {
	struct ibpd_pool *pool;
	struct rhashtable_iter iter;
	unsigned int slot;
	unsigned int skip;
};

int ibpd_pool_init(struct ibpd_pool *pool);
void ibpd_pool_destroy(struct ibpd_pool *pool);
int ibpd_pool_alloc(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		    struct ibpd_pool_entry *entry);
void ibpd_pool_free(struct ibpd_pool *pool, struct ibpd_pool_entry *entry);

void ibpd_pool_walk_init(struct ibpd_pool_walk *walk, struct ibpd_pool *pool);
void ibpd_pool_walk_start(struct ibpd_pool_walk *walk)
	__acquires(&walk->pool->lock) __acquires(RCU);
struct ibpd_pool_entry *ibpd_pool_walk_peek(struct ibpd_pool_walk *walk);
struct ibpd_pool_entry *ibpd_pool_walk_next(struct ibpd_pool_walk *walk);
void ibpd_pool_walk_stop(struct ibpd_pool_walk *walk)
	__releases(RCU) __releases(&walk->pool->lock);

#endif /* _IBPD_POOL_H */

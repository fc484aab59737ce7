/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 */

#ifndef _IBPD_POOL_H
#define _IBPD_POOL_H

#include <linux/atomic.h>
#include <linux/rbtree.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* An object's place in a pool: a PD number, an MR key index. */
struct ibpd_pool_entry {
	struct rhash_head node;
	struct rb_node order;		/* in the pool's order, by seq */
	u64 seq;			/* when published: 1, 2, ... */
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
	spinlock_t lock;		/* the order: inserts, removals, walks */
	struct rb_root order;		/* the published entries, oldest first */
	u64 seq;			/* the last published entry's */
	u32 next;			/* the next index to try */
	atomic_t count;
};

/*
 * A walk over the live entries, which may be done in pieces: from
 * ibpd_pool_walk_start() to ibpd_pool_walk_stop() it holds the pool's
 * lock (the entries it returns stay allocated; nothing there may sleep),
 * and in between nothing. Its place is the seq of the entry it passed
 * last, which no other walk and no entry's coming or going moves, and
 * new entries come after every place. So a walk returns each entry that
 * lives through it exactly once, whatever comes and goes meanwhile, and
 * an entry added or freed during it once at most; a step costs a lookup
 * in the order (O(log n)), however many other walks there are. A piece
 * may be as short as one entry: peek at it, pass it. Only pool.c reads
 * the fields.
 */
struct ibpd_pool_walk {
	struct ibpd_pool *pool;
	u64 seq;			/* the last entry passed: 0 at the start */
};

int ibpd_pool_init(struct ibpd_pool *pool);
void ibpd_pool_destroy(struct ibpd_pool *pool);
int ibpd_pool_reserve(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		      struct ibpd_pool_entry *entry);
void ibpd_pool_publish(struct ibpd_pool *pool, struct ibpd_pool_entry *entry);
int ibpd_pool_alloc(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		    struct ibpd_pool_entry *entry);
void ibpd_pool_free(struct ibpd_pool *pool, struct ibpd_pool_entry *entry);

void ibpd_pool_walk_init(struct ibpd_pool_walk *walk, struct ibpd_pool *pool);
void ibpd_pool_walk_exit(struct ibpd_pool_walk *walk);
void ibpd_pool_walk_start(struct ibpd_pool_walk *walk)
	__acquires(&walk->pool->lock);
void ibpd_pool_walk_rewind(struct ibpd_pool_walk *walk);
struct ibpd_pool_entry *ibpd_pool_walk_peek(struct ibpd_pool_walk *walk);
void ibpd_pool_walk_pass(struct ibpd_pool_walk *walk,
			 struct ibpd_pool_entry *entry);
void ibpd_pool_walk_stop(struct ibpd_pool_walk *walk)
	__releases(&walk->pool->lock);

#endif /* _IBPD_POOL_H */

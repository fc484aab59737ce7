// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The index pool: PD numbers and MR key indices.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>

#include "pool.h"

/*
 * A resize makes a walk start over (debugfs may then list an entry
 * twice): with 64 buckets at least, a table resizes only past 48 live
 * entries.
 */
static const struct rhashtable_params ibpd_pool_params = {
	.key_len = sizeof(u32),
	.key_offset = offsetof(struct ibpd_pool_entry, index),
	.head_offset = offsetof(struct ibpd_pool_entry, node),
	.min_size = 64,
	.automatic_shrinking = true,
};

/* The index after cur in [1, max_index], cyclically. */
static u32 ibpd_pool_next(u32 cur, u32 max_index)
{
	return cur >= max_index ? 1 : cur + 1;
}

/*
 * Accounts a new object against max_count and gives it the next free index
 * in [1, max_index], cyclically: an index comes back only after the whole
 * space has been used. max_count <= max_index, so a free index exists.
 */
int ibpd_pool_alloc(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		    struct ibpd_pool_entry *entry)
{
	u32 tries, index, old;
	int ret = -ENOSPC;

	if (atomic_inc_return(&pool->count) > max_count) {
		ret = -ENOMEM;
		goto err_count;
	}
	for (tries = 0; tries < max_index; tries++) {
		do {
			old = READ_ONCE(pool->next);
			index = old && old <= max_index ? old : 1;
		} while (cmpxchg(&pool->next, old,
				 ibpd_pool_next(index, max_index)) != old);
		entry->index = index;
		ret = rhashtable_lookup_insert_fast(&pool->ht, &entry->node,
						    ibpd_pool_params);
		if (ret != -EEXIST)
			break;
		if (!(tries % 1024))
			cond_resched();
	}
	if (ret)
		goto err_count;
	return 0;

err_count:
	atomic_dec(&pool->count);
	/* the table is at its size limit, or could not grow */
	return ret == -E2BIG || ret == -EBUSY ? -ENOMEM : ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_alloc);

void ibpd_pool_free(struct ibpd_pool *pool, struct ibpd_pool_entry *entry)
{
	spin_lock(&pool->lock);
	WARN_ON(rhashtable_remove_fast(&pool->ht, &entry->node,
				       ibpd_pool_params));
	spin_unlock(&pool->lock);
	atomic_dec(&pool->count);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_free);

/* Places the walk at the start of the table. */
void ibpd_pool_walk_init(struct ibpd_pool_walk *walk, struct ibpd_pool *pool)
{
	walk->pool = pool;
	walk->slot = 0;
	walk->skip = 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_init);

/* Starts or resumes the walk where the last piece stopped. */
void ibpd_pool_walk_start(struct ibpd_pool_walk *walk)
	__acquires(&walk->pool->lock) __acquires(RCU)
{
	spin_lock(&walk->pool->lock);
	rhashtable_walk_enter(&walk->pool->ht, &walk->iter);
	walk->iter.slot = walk->slot;
	walk->iter.skip = walk->skip;
	rhashtable_walk_start(&walk->iter);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_start);

static struct ibpd_pool_entry *
ibpd_pool_walk_entry(struct ibpd_pool_walk *walk, struct ibpd_pool_entry *entry)
{
	/* -EAGAIN: the table was resized and the walk starts over */
	while (IS_ERR(entry))
		entry = rhashtable_walk_next(&walk->iter);
	return entry;
}

/*
 * The entry at the walk's place, not yet passed: after a resume, the one
 * the last piece stopped at. NULL at the end.
 */
struct ibpd_pool_entry *ibpd_pool_walk_peek(struct ibpd_pool_walk *walk)
{
	return ibpd_pool_walk_entry(walk, rhashtable_walk_peek(&walk->iter));
}

/* The next entry, the first of a new walk; NULL at the end. */
struct ibpd_pool_entry *ibpd_pool_walk_next(struct ibpd_pool_walk *walk)
{
	return ibpd_pool_walk_entry(walk, rhashtable_walk_next(&walk->iter));
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_next);

/* Keeps the walk's place for the next ibpd_pool_walk_start(). */
void ibpd_pool_walk_stop(struct ibpd_pool_walk *walk)
	__releases(RCU) __releases(&walk->pool->lock)
{
	rhashtable_walk_stop(&walk->iter);
	walk->slot = walk->iter.slot;
	walk->skip = walk->iter.skip;
	rhashtable_walk_exit(&walk->iter);
	spin_unlock(&walk->pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_stop);

int ibpd_pool_init(struct ibpd_pool *pool)
{
	spin_lock_init(&pool->lock);
	pool->next = 1;
	atomic_set(&pool->count, 0);
	return rhashtable_init(&pool->ht, &ibpd_pool_params);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_init);

/* Every entry has been freed. */
void ibpd_pool_destroy(struct ibpd_pool *pool)
{
	WARN_ON(atomic_read(&pool->count));
	rhashtable_destroy(&pool->ht);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_destroy);

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
#include <linux/sched/signal.h>

#include "pool.h"

/*
 * The table finds an index; the order (a tree by seq) keeps the walks'
 * order, in which a resize of the table changes nothing.
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
 * space has been used. The entry is not yet on the pool's list, so walks
 * do not see it: ibpd_pool_publish() puts it there, once the caller has
 * set up what a walk shows of it.
 *
 * max_count <= max_index, and the count is taken before the search, so at
 * every moment an index is free for this allocation: the search goes on
 * until it has one, however other allocations and frees move the cursor
 * and the free indices meanwhile (each index it finds taken is another
 * allocation's that succeeded). It fails only when the table cannot take
 * the entry (ENOMEM), or when the caller is being killed (EINTR, seen by
 * no one).
 */
int ibpd_pool_reserve(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		      struct ibpd_pool_entry *entry)
{
	u32 tries, index, old;
	int ret;

	if (atomic_inc_return(&pool->count) > max_count) {
		ret = -ENOMEM;
		goto err_count;
	}
	for (tries = 1;; tries++) {
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
		if (!(tries % 1024)) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
	}
	if (ret)
		goto err_count;
	RB_CLEAR_NODE(&entry->order);
	entry->seq = 0;
	return 0;

err_count:
	atomic_dec(&pool->count);
	/* the table is at its size limit, or could not grow */
	return ret == -E2BIG || ret == -EBUSY ? -ENOMEM : ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_reserve);

static bool ibpd_pool_before(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct ibpd_pool_entry, order)->seq <
	       rb_entry(b, struct ibpd_pool_entry, order)->seq;
}

/* Shows a reserved entry to walks, after every entry published before. */
void ibpd_pool_publish(struct ibpd_pool *pool, struct ibpd_pool_entry *entry)
{
	spin_lock(&pool->lock);
	entry->seq = ++pool->seq;
	rb_add(&entry->order, &pool->order, ibpd_pool_before);
	spin_unlock(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_publish);

/* ibpd_pool_reserve(), then ibpd_pool_publish(). */
int ibpd_pool_alloc(struct ibpd_pool *pool, u32 max_count, u32 max_index,
		    struct ibpd_pool_entry *entry)
{
	int ret;

	ret = ibpd_pool_reserve(pool, max_count, max_index, entry);
	if (ret)
		return ret;
	ibpd_pool_publish(pool, entry);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_alloc);

/* Also an entry reserved and never published. */
void ibpd_pool_free(struct ibpd_pool *pool, struct ibpd_pool_entry *entry)
{
	spin_lock(&pool->lock);
	WARN_ON(rhashtable_remove_fast(&pool->ht, &entry->node,
				       ibpd_pool_params));
	if (!RB_EMPTY_NODE(&entry->order)) {
		rb_erase(&entry->order, &pool->order);
		RB_CLEAR_NODE(&entry->order);
	}
	spin_unlock(&pool->lock);
	atomic_dec(&pool->count);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_free);

/*
 * A walk of pool, from its start. It holds nothing of the pool's, so the
 * pool may be destroyed before the walk ends (a debugfs file released
 * after its device is gone), and an idle walk costs the others nothing.
 */
void ibpd_pool_walk_init(struct ibpd_pool_walk *walk, struct ibpd_pool *pool)
{
	walk->pool = pool;
	walk->seq = 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_init);

/* Ends a walk, also after its pool's destruction. */
void ibpd_pool_walk_exit(struct ibpd_pool_walk *walk)
{
	walk->pool = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_exit);

/*
 * Starts or resumes the walk where the last piece stopped; the pool must
 * not be destroyed before ibpd_pool_walk_stop().
 */
void ibpd_pool_walk_start(struct ibpd_pool_walk *walk)
	__acquires(&walk->pool->lock)
{
	spin_lock(&walk->pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_start);

/* Back to the start: what the walk returned it returns again. */
void ibpd_pool_walk_rewind(struct ibpd_pool_walk *walk)
{
	lockdep_assert_held(&walk->pool->lock);
	walk->seq = 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_rewind);

/*
 * The oldest entry the walk has not passed: after a resume, the one the
 * last piece stopped at, or the next one if that was freed meanwhile.
 * NULL at the end.
 */
struct ibpd_pool_entry *ibpd_pool_walk_peek(struct ibpd_pool_walk *walk)
{
	struct rb_node *n = walk->pool->order.rb_node;
	struct ibpd_pool_entry *e, *found = NULL;

	lockdep_assert_held(&walk->pool->lock);
	while (n) {
		e = rb_entry(n, struct ibpd_pool_entry, order);
		if (e->seq > walk->seq) {
			found = e;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_peek);

/*
 * Passes entry, which the walk returned in this piece: the walk will not
 * return it again, even after the lock is let go and entry is freed.
 */
void ibpd_pool_walk_pass(struct ibpd_pool_walk *walk,
			 struct ibpd_pool_entry *entry)
{
	lockdep_assert_held(&walk->pool->lock);
	walk->seq = entry->seq;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_pass);

/* Keeps the walk's place for the next ibpd_pool_walk_start(). */
void ibpd_pool_walk_stop(struct ibpd_pool_walk *walk)
	__releases(&walk->pool->lock)
{
	spin_unlock(&walk->pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_stop);

int ibpd_pool_init(struct ibpd_pool *pool)
{
	spin_lock_init(&pool->lock);
	pool->order = RB_ROOT;
	pool->seq = 0;
	pool->next = 1;
	atomic_set(&pool->count, 0);
	return rhashtable_init(&pool->ht, &ibpd_pool_params);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_init);

/* Every entry has been freed; walks not yet ended need nothing of it. */
void ibpd_pool_destroy(struct ibpd_pool *pool)
{
	WARN_ON(atomic_read(&pool->count));
	WARN_ON(!RB_EMPTY_ROOT(&pool->order));
	rhashtable_destroy(&pool->ht);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_destroy);

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The index pool: PD numbers and MR key indices.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "pool.h"

/*
 * The table finds an index; the list keeps the walks' order, in which
 * a resize of the table changes nothing.
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
	INIT_LIST_HEAD(&entry->list);
	return 0;

err_count:
	atomic_dec(&pool->count);
	/* the table is at its size limit, or could not grow */
	return ret == -E2BIG || ret == -EBUSY ? -ENOMEM : ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_reserve);

/* Shows a reserved entry to walks, at the list's tail. */
void ibpd_pool_publish(struct ibpd_pool *pool, struct ibpd_pool_entry *entry)
{
	spin_lock(&pool->lock);
	list_add_tail(&entry->list, &pool->list);
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
	list_del_init(&entry->list);
	spin_unlock(&pool->lock);
	atomic_dec(&pool->count);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_free);

/*
 * Takes a walk's cursor off its pool's list for the one of the two that
 * comes first: the walk's end (a debugfs file's release, which may come
 * after the device is gone) or the pool's destruction (after the walk's
 * last piece: debugfs_remove() waits for the reads under way).
 */
static DEFINE_MUTEX(ibpd_pool_walk_lock);

/*
 * A walk of pool, from its start. Its cursor joins the list here, not at
 * the first piece, so that the pool's destruction finds every walk not
 * yet ended, also one that never ran a piece (a debugfs file opened,
 * never read, and released after its device is gone).
 */
void ibpd_pool_walk_init(struct ibpd_pool_walk *walk, struct ibpd_pool *pool)
{
	walk->pool = pool;
	walk->cursor.index = 0;
	spin_lock(&pool->lock);
	list_add(&walk->cursor.list, &pool->list);
	spin_unlock(&pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_init);

/* Ends a walk, also after its pool's destruction. */
void ibpd_pool_walk_exit(struct ibpd_pool_walk *walk)
{
	mutex_lock(&ibpd_pool_walk_lock);
	if (walk->pool) {
		spin_lock(&walk->pool->lock);
		list_del_init(&walk->cursor.list);
		spin_unlock(&walk->pool->lock);
	}
	mutex_unlock(&ibpd_pool_walk_lock);
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
	list_move(&walk->cursor.list, &walk->pool->list);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_rewind);

/*
 * The first entry after the walk's cursor, not yet passed: after a
 * resume, the one the last piece stopped at (other walks' cursors are no
 * entries). NULL at the end.
 */
struct ibpd_pool_entry *ibpd_pool_walk_peek(struct ibpd_pool_walk *walk)
{
	struct ibpd_pool_entry *e = &walk->cursor;

	lockdep_assert_held(&walk->pool->lock);
	list_for_each_entry_continue(e, &walk->pool->list, list)
		if (e->index)
			return e;
	return NULL;
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
	list_move(&walk->cursor.list, &entry->list);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_pass);

/* Keeps the walk's place, its cursor, for the next ibpd_pool_walk_start(). */
void ibpd_pool_walk_stop(struct ibpd_pool_walk *walk)
	__releases(&walk->pool->lock)
{
	spin_unlock(&walk->pool->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_walk_stop);

int ibpd_pool_init(struct ibpd_pool *pool)
{
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->list);
	pool->next = 1;
	atomic_set(&pool->count, 0);
	return rhashtable_init(&pool->ht, &ibpd_pool_params);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_init);

/*
 * Every entry has been freed; walks not yet ended lose their cursors, and
 * ibpd_pool_walk_exit() then has nothing to do.
 */
void ibpd_pool_destroy(struct ibpd_pool *pool)
{
	struct ibpd_pool_entry *e, *tmp;

	mutex_lock(&ibpd_pool_walk_lock);
	spin_lock(&pool->lock);
	list_for_each_entry_safe(e, tmp, &pool->list, list) {
		list_del_init(&e->list);
		if (!e->index)
			container_of(e, struct ibpd_pool_walk, cursor)->pool = NULL;
	}
	spin_unlock(&pool->lock);
	mutex_unlock(&ibpd_pool_walk_lock);
	WARN_ON(atomic_read(&pool->count));
	rhashtable_destroy(&pool->ht);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_pool_destroy);

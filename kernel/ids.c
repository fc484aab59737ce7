// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The id allocator: PD numbers and MR key indexes.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>

#include "ids.h"

/*
 * A resize makes a walk start over (debugfs may then list an id twice):
 * with 64 buckets at least, a table resizes only past 48 live ids.
 */
static const struct rhashtable_params ibpd_id_params = {
	.key_len = sizeof(u32),
	.key_offset = offsetof(struct ibpd_id, id),
	.head_offset = offsetof(struct ibpd_id, node),
	.min_size = 64,
	.automatic_shrinking = true,
};

/* The id after cur in [1, max_id], cyclically. */
static u32 ibpd_id_next(u32 cur, u32 max_id)
{
	return cur >= max_id ? 1 : cur + 1;
}

/*
 * Accounts a new object against max_count and gives it the next free id in
 * [1, max_id], cyclically: an id comes back only after the whole space has
 * been used. max_count <= max_id, so a free id exists.
 */
int ibpd_id_alloc(struct ibpd_ids *ids, u32 max_count, u32 max_id,
		  struct ibpd_id *obj)
{
	u32 tries, id, old;
	int ret = -ENOSPC;

	if (atomic_inc_return(&ids->count) > max_count) {
		ret = -ENOMEM;
		goto err_count;
	}
	for (tries = 0; tries < max_id; tries++) {
		do {
			old = READ_ONCE(ids->next);
			id = old && old <= max_id ? old : 1;
		} while (cmpxchg(&ids->next, old, ibpd_id_next(id, max_id)) !=
			 old);
		obj->id = id;
		ret = rhashtable_lookup_insert_fast(&ids->ht, &obj->node,
						    ibpd_id_params);
		if (ret != -EEXIST)
			break;
		if (!(tries % 1024))
			cond_resched();
	}
	if (ret)
		goto err_count;
	return 0;

err_count:
	atomic_dec(&ids->count);
	/* the table is at its size limit, or could not grow */
	return ret == -E2BIG || ret == -EBUSY ? -ENOMEM : ret;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_id_alloc);

void ibpd_id_free(struct ibpd_ids *ids, struct ibpd_id *obj)
{
	spin_lock(&ids->lock);
	WARN_ON(rhashtable_remove_fast(&ids->ht, &obj->node, ibpd_id_params));
	spin_unlock(&ids->lock);
	atomic_dec(&ids->count);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_id_free);

/* Places the walk at the start of the table. */
void ibpd_ids_walk_init(struct ibpd_ids_walk *walk, struct ibpd_ids *ids)
{
	walk->ids = ids;
	walk->slot = 0;
	walk->skip = 0;
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_walk_init);

/* Starts or resumes the walk where the last piece stopped. */
void ibpd_ids_walk_start(struct ibpd_ids_walk *walk)
	__acquires(&walk->ids->lock) __acquires(RCU)
{
	spin_lock(&walk->ids->lock);
	rhashtable_walk_enter(&walk->ids->ht, &walk->iter);
	walk->iter.slot = walk->slot;
	walk->iter.skip = walk->skip;
	rhashtable_walk_start(&walk->iter);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_walk_start);

static struct ibpd_id *ibpd_ids_walk_obj(struct ibpd_ids_walk *walk,
					 struct ibpd_id *obj)
{
	/* -EAGAIN: the table was resized and the walk starts over */
	while (IS_ERR(obj))
		obj = rhashtable_walk_next(&walk->iter);
	return obj;
}

/*
 * The id at the walk's place, not yet passed: after a resume, the one the
 * last piece stopped at. NULL at the end.
 */
struct ibpd_id *ibpd_ids_walk_peek(struct ibpd_ids_walk *walk)
{
	return ibpd_ids_walk_obj(walk, rhashtable_walk_peek(&walk->iter));
}

/* The next id, the first of a new walk; NULL at the end. */
struct ibpd_id *ibpd_ids_walk_next(struct ibpd_ids_walk *walk)
{
	return ibpd_ids_walk_obj(walk, rhashtable_walk_next(&walk->iter));
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_walk_next);

/* Keeps the walk's place for the next ibpd_ids_walk_start(). */
void ibpd_ids_walk_stop(struct ibpd_ids_walk *walk)
	__releases(RCU) __releases(&walk->ids->lock)
{
	rhashtable_walk_stop(&walk->iter);
	walk->slot = walk->iter.slot;
	walk->skip = walk->iter.skip;
	rhashtable_walk_exit(&walk->iter);
	spin_unlock(&walk->ids->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_walk_stop);

int ibpd_ids_init(struct ibpd_ids *ids)
{
	spin_lock_init(&ids->lock);
	ids->next = 1;
	atomic_set(&ids->count, 0);
	return rhashtable_init(&ids->ht, &ibpd_id_params);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_init);

/* Every id has been freed. */
void ibpd_ids_destroy(struct ibpd_ids *ids)
{
	WARN_ON(atomic_read(&ids->count));
	rhashtable_destroy(&ids->ht);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_destroy);

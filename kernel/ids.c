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

void ibpd_id_free(struct ibpd_ids *ids, struct ibpd_id *obj)
{
	spin_lock(&ids->lock);
	WARN_ON(rhashtable_remove_fast(&ids->ht, &obj->node, ibpd_id_params));
	spin_unlock(&ids->lock);
	atomic_dec(&ids->count);
}

/*
 * Calls fn on every live id. Holding the lock keeps removals, and so the
 * objects' frees, out; fn must not sleep.
 */
void ibpd_ids_for_each(struct ibpd_ids *ids,
		       void (*fn)(struct ibpd_id *id, void *arg), void *arg)
{
	struct rhashtable_iter iter;
	struct ibpd_id *obj;

	spin_lock(&ids->lock);
	rhashtable_walk_enter(&ids->ht, &iter);
	rhashtable_walk_start(&iter);
	while ((obj = rhashtable_walk_next(&iter))) {
		/* a resize started: the walk restarts, entries may repeat */
		if (IS_ERR(obj))
			continue;
		fn(obj, arg);
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	spin_unlock(&ids->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ibpd_ids_for_each);

int ibpd_ids_init(struct ibpd_ids *ids)
{
	spin_lock_init(&ids->lock);
	ids->next = 1;
	atomic_set(&ids->count, 0);
	return rhashtable_init(&ids->ht, &ibpd_id_params);
}

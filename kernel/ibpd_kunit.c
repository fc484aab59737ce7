// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * KUnit suites for ibpd's internals: the index pool (allocation,
 * wrap-around, the walk), max_pd, the import checks, MR keys and counts,
 * the fault knobs, and the device lifecycle through ib_core. Built as
 * ibpd_kunit.ko on kernels with CONFIG_KUNIT; the tests run when it is
 * loaded (after ibpd.ko).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/dcache.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/ibpd-abi.h>

#include "ibpd.h"

/*
 * The index pool (pool.c), on a table of its own over the PD number
 * space, [1, IBPD_PDN_MAX].
 */
static struct ibpd_pool *test_pool(struct kunit *test)
{
	struct ibpd_pool *pool = kunit_kzalloc(test, sizeof(*pool), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pool);
	KUNIT_ASSERT_EQ(test, 0, ibpd_pool_init(pool));
	test->priv = pool;
	return pool;
}

static void test_pool_exit(struct kunit *test)
{
	if (test->priv)
		ibpd_pool_destroy(test->priv);
}

static struct ibpd_pool_entry *test_entry(struct kunit *test)
{
	struct ibpd_pool_entry *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	return e;
}

/* A pdn, at most 1000 of them live. */
static int pdn_alloc(struct ibpd_pool *pool, struct ibpd_pool_entry *e)
{
	return ibpd_pool_alloc(pool, 1000, IBPD_PDN_MAX, e);
}

static void pdn_first_is_one(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a = test_entry(test);

	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a));
	KUNIT_EXPECT_EQ(test, 1U, a->index);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&pool->count));
	ibpd_pool_free(pool, a);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&pool->count));
}

static void pdn_unique(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a[64];
	int i, j;

	for (i = 0; i < ARRAY_SIZE(a); i++) {
		a[i] = test_entry(test);
		KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a[i]));
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, a[i]->index, a[j]->index);
	}
	for (i = 0; i < ARRAY_SIZE(a); i++)
		ibpd_pool_free(pool, a[i]);
}

static void pdn_not_reused_after_free(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a = test_entry(test), *b = test_entry(test);
	u32 old;

	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a));
	old = a->index;
	ibpd_pool_free(pool, a);
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, b));
	KUNIT_EXPECT_NE(test, old, b->index);
	KUNIT_EXPECT_EQ(test, old + 1, b->index);
	ibpd_pool_free(pool, b);
}

static void pdn_wraps_around(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a = test_entry(test), *b = test_entry(test);

	pool->next = IBPD_PDN_MAX;
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a));
	KUNIT_EXPECT_EQ(test, IBPD_PDN_MAX, a->index);
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, b));
	KUNIT_EXPECT_EQ(test, 1U, b->index);
	ibpd_pool_free(pool, a);
	ibpd_pool_free(pool, b);
}

static void pdn_wrap_skips_live(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *live = test_entry(test), *a = test_entry(test);
	struct ibpd_pool_entry *b = test_entry(test);

	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, live));	/* pdn 1 */
	pool->next = IBPD_PDN_MAX;
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a));
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, b));
	KUNIT_EXPECT_EQ(test, 2U, b->index);
	ibpd_pool_free(pool, live);
	ibpd_pool_free(pool, a);
	ibpd_pool_free(pool, b);
}

/* Passes e, which the walk returned in this piece; the next, or NULL. */
static struct ibpd_pool_entry *walk_next(struct ibpd_pool_walk *walk,
					 struct ibpd_pool_entry *e)
{
	ibpd_pool_walk_pass(walk, e);
	return ibpd_pool_walk_peek(walk);
}

/* Whether a walk of the table finds want. */
static bool walk_finds(struct ibpd_pool *pool, struct ibpd_pool_entry *want)
{
	struct ibpd_pool_walk walk;
	struct ibpd_pool_entry *e;
	bool found = false;

	ibpd_pool_walk_init(&walk, pool);
	ibpd_pool_walk_start(&walk);
	for (e = ibpd_pool_walk_peek(&walk); e; e = walk_next(&walk, e))
		found |= e == want;
	ibpd_pool_walk_stop(&walk);
	ibpd_pool_walk_exit(&walk);
	return found;
}

static void pdn_tracked_until_free(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a = test_entry(test);

	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(pool, a));
	KUNIT_EXPECT_TRUE(test, walk_finds(pool, a));
	ibpd_pool_free(pool, a);
	KUNIT_EXPECT_FALSE(test, walk_finds(pool, a));
}

#define WALK_N 16

/* Entries of a walk test, and how often a walk returned each. */
struct walk_test {
	struct ibpd_pool *pool;
	struct ibpd_pool_walk walk;
	struct ibpd_pool_entry *e[2 * WALK_N];
	unsigned int seen[2 * WALK_N];
};

static struct walk_test *walk_test(struct kunit *test, unsigned int n)
{
	struct walk_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->pool = test_pool(test);
	for (i = 0; i < ARRAY_SIZE(t->e); i++)
		t->e[i] = test_entry(test);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, 0, pdn_alloc(t->pool, t->e[i]));
	ibpd_pool_walk_init(&t->walk, t->pool);
	return t;
}

static void walk_test_count(struct walk_test *t, struct ibpd_pool_entry *e)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t->e); i++)
		t->seen[i] += t->e[i] == e;
}

/*
 * One piece of a walk: at most max entries passed, as a seq_file read
 * does, the entry after them peeked at and left for the next piece.
 */
static void walk_piece(struct walk_test *t, unsigned int max)
{
	struct ibpd_pool_entry *e;
	unsigned int n = 0;

	ibpd_pool_walk_start(&t->walk);
	for (e = ibpd_pool_walk_peek(&t->walk); e && n < max; n++) {
		walk_test_count(t, e);
		e = walk_next(&t->walk, e);
	}
	ibpd_pool_walk_stop(&t->walk);
}

static void walk_test_free(struct walk_test *t, unsigned int from,
			   unsigned int to)
{
	while (from < to)
		ibpd_pool_free(t->pool, t->e[from++]);
}

/*
 * Entries that live through a walk done in pieces come exactly once,
 * whatever is freed (the last one passed, one before it, one ahead) or
 * added between the pieces; those freed ahead do not come, those added
 * come once.
 */
static void walk_resumes_after_churn(struct kunit *test)
{
	struct walk_test *t = walk_test(test, WALK_N);
	unsigned int i;

	walk_piece(t, 3);		/* e[0..2] */
	ibpd_pool_free(t->pool, t->e[2]);
	ibpd_pool_free(t->pool, t->e[0]);
	ibpd_pool_free(t->pool, t->e[5]);
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(t->pool, t->e[WALK_N]));
	walk_piece(t, 1);		/* e[3] */
	ibpd_pool_free(t->pool, t->e[3]);
	KUNIT_ASSERT_EQ(test, 0, pdn_alloc(t->pool, t->e[WALK_N + 1]));
	for (i = 0; i < WALK_N && !t->seen[WALK_N + 1]; i++)
		walk_piece(t, 2);

	for (i = 0; i < WALK_N + 2; i++)
		KUNIT_EXPECT_EQ_MSG(test, t->seen[i], i == 5 ? 0U : 1U,
				    "entry %u", i);
	walk_piece(t, WALK_N);		/* the end: nothing more */
	for (i = 0; i < WALK_N + 2; i++)
		KUNIT_EXPECT_LE_MSG(test, t->seen[i], 1U, "entry %u", i);
	ibpd_pool_walk_exit(&t->walk);
	walk_test_free(t, 4, 5);
	walk_test_free(t, 6, WALK_N + 2);
	ibpd_pool_free(t->pool, t->e[1]);
}

/* The entry a piece peeked at but did not pass comes first in the next. */
static void walk_peeked_comes_again(struct kunit *test)
{
	struct walk_test *t = walk_test(test, 3);
	struct ibpd_pool_entry *e;

	walk_piece(t, 1);
	ibpd_pool_walk_start(&t->walk);
	e = ibpd_pool_walk_peek(&t->walk);
	ibpd_pool_walk_stop(&t->walk);
	KUNIT_EXPECT_PTR_EQ(test, e, t->e[1]);
	ibpd_pool_walk_start(&t->walk);
	KUNIT_EXPECT_PTR_EQ(test, ibpd_pool_walk_peek(&t->walk), t->e[1]);
	ibpd_pool_walk_rewind(&t->walk);
	KUNIT_EXPECT_PTR_EQ(test, ibpd_pool_walk_peek(&t->walk), t->e[0]);
	ibpd_pool_walk_stop(&t->walk);
	ibpd_pool_walk_exit(&t->walk);
	walk_test_free(t, 0, 3);
}

/* Two walks at once: neither returns, nor is moved by, the other's place. */
static void walk_two_at_once(struct kunit *test)
{
	struct walk_test *t = walk_test(test, WALK_N);
	struct ibpd_pool_walk other;
	struct ibpd_pool_entry *e;
	unsigned int n = 0;

	walk_piece(t, 4);
	ibpd_pool_walk_init(&other, t->pool);
	ibpd_pool_walk_start(&other);
	for (e = ibpd_pool_walk_peek(&other); e; e = walk_next(&other, e))
		n++;
	ibpd_pool_walk_stop(&other);
	KUNIT_EXPECT_EQ(test, n, WALK_N);
	walk_piece(t, WALK_N);
	for (n = 0; n < WALK_N; n++)
		KUNIT_EXPECT_EQ_MSG(test, t->seen[n], 1U, "entry %u", n);
	ibpd_pool_walk_exit(&other);
	ibpd_pool_walk_exit(&t->walk);
	walk_test_free(t, 0, WALK_N);
}

/*
 * A table that grows while a walk is in pieces of one entry each (past
 * 48 entries, then again), one entry added after each piece: each of the
 * first entries comes exactly once, the added ones at most once.
 */
static void walk_survives_resize(struct kunit *test)
{
	const unsigned int n = 400, max = 2 * n + 1;
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *e, **ents;
	struct ibpd_pool_walk walk;
	unsigned int i, added = 0;
	u8 *count;

	ents = kunit_kcalloc(test, 2 * n, sizeof(*ents), GFP_KERNEL);
	count = kunit_kzalloc(test, max + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ents);
	KUNIT_ASSERT_NOT_NULL(test, count);
	for (i = 0; i < 2 * n; i++)
		ents[i] = test_entry(test);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpd_pool_alloc(pool, max, max, ents[i]));

	ibpd_pool_walk_init(&walk, pool);
	do {
		ibpd_pool_walk_start(&walk);
		e = ibpd_pool_walk_peek(&walk);
		if (e) {
			count[e->index]++;
			walk_next(&walk, e);
		}
		ibpd_pool_walk_stop(&walk);
		if (added < n)
			KUNIT_ASSERT_EQ(test, 0, ibpd_pool_alloc(pool, max, max,
								 ents[n + added++]));
	} while (e);
	ibpd_pool_walk_exit(&walk);

	for (i = 0; i < 2 * n; i++) {
		KUNIT_EXPECT_LE(test, count[ents[i]->index], 1);
		if (i < n)
			KUNIT_EXPECT_EQ(test, count[ents[i]->index], 1);
		ibpd_pool_free(pool, ents[i]);
	}
}

/*
 * A walk whose pool is destroyed first (a debugfs file released after
 * its device went), after pieces of one entry, ends without touching the
 * pool.
 */
static void walk_outlives_pool_after(struct kunit *test, unsigned int pieces)
{
	struct walk_test *t = walk_test(test, 2);

	while (pieces--)
		walk_piece(t, 1);
	walk_test_free(t, 0, 2);
	ibpd_pool_destroy(t->pool);
	test->priv = NULL;
	ibpd_pool_walk_exit(&t->walk);
	KUNIT_EXPECT_NULL(test, t->walk.pool);
}

static void walk_outlives_pool(struct kunit *test)
{
	walk_outlives_pool_after(test, 1);
}

/* Also one that never ran a piece (a debugfs file opened, never read). */
static void walk_unstarted_outlives_pool(struct kunit *test)
{
	walk_outlives_pool_after(test, 0);
}

/*
 * Walks open at the start, parked in the middle and at the end (debugfs
 * files opened, read in part, read to the end) put nothing where another
 * walk, an allocation or a free steps: the pool's order holds its
 * entries only, and a new walk still returns each once.
 */
#define IDLE_WALKS 300

static void walk_idle_walks_cost_nothing(struct kunit *test)
{
	struct walk_test *t = walk_test(test, WALK_N);
	struct ibpd_pool_walk *idle;
	struct rb_node *n;
	unsigned int i, nodes = 0;

	idle = kunit_kcalloc(test, IDLE_WALKS, sizeof(*idle), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, idle);
	for (i = 0; i < IDLE_WALKS; i++) {
		struct ibpd_pool_entry *e;
		unsigned int k = 0;

		ibpd_pool_walk_init(&idle[i], t->pool);
		ibpd_pool_walk_start(&idle[i]);
		/* a third at the start, a third in the middle, a third at the end */
		for (e = ibpd_pool_walk_peek(&idle[i]);
		     e && k < (i % 3) * WALK_N / 2; k++)
			e = walk_next(&idle[i], e);
		ibpd_pool_walk_stop(&idle[i]);
	}
	spin_lock(&t->pool->lock);
	for (n = rb_first(&t->pool->order); n; n = rb_next(n))
		nodes++;
	spin_unlock(&t->pool->lock);
	KUNIT_EXPECT_EQ(test, nodes, WALK_N);
	walk_piece(t, 2 * WALK_N);
	for (i = 0; i < WALK_N; i++)
		KUNIT_EXPECT_EQ_MSG(test, t->seen[i], 1U, "entry %u", i);
	for (i = 0; i < IDLE_WALKS; i++)
		ibpd_pool_walk_exit(&idle[i]);
	ibpd_pool_walk_exit(&t->walk);
	walk_test_free(t, 0, WALK_N);
}

/* A reserved entry is the pool's, but walks see it only once published. */
static void reserved_unseen_until_published(struct kunit *test)
{
	struct ibpd_pool *pool = test_pool(test);
	struct ibpd_pool_entry *a = test_entry(test), *b = test_entry(test);

	KUNIT_ASSERT_EQ(test, 0, ibpd_pool_reserve(pool, 2, 2, a));
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&pool->count));
	KUNIT_EXPECT_FALSE(test, walk_finds(pool, a));
	KUNIT_ASSERT_EQ(test, 0, ibpd_pool_alloc(pool, 2, 2, b));
	KUNIT_EXPECT_NE(test, a->index, b->index);
	ibpd_pool_publish(pool, a);
	KUNIT_EXPECT_TRUE(test, walk_finds(pool, a));
	ibpd_pool_free(pool, a);
	ibpd_pool_free(pool, b);
	/* one freed without ever being published */
	KUNIT_ASSERT_EQ(test, 0, ibpd_pool_reserve(pool, 2, 2, a));
	ibpd_pool_free(pool, a);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&pool->count));
}

/*
 * A full number space (max_count == max_index) that allocators race
 * through: each holds one index at most, so each allocation finds one,
 * however the others move the cursor and the free index meanwhile.
 */
#define FULL_THREADS	4
#define FULL_ROUNDS	20000

struct full_race {
	struct ibpd_pool *pool;
	atomic_t failures;
	atomic_t running;
	struct completion done;
	int last_error;
};

static int full_race_thread(void *data)
{
	struct full_race *r = data;
	struct ibpd_pool_entry e = {};
	unsigned int i;
	int ret;

	for (i = 0; i < FULL_ROUNDS; i++) {
		ret = ibpd_pool_alloc(r->pool, FULL_THREADS, FULL_THREADS, &e);
		if (ret) {
			r->last_error = ret;
			atomic_inc(&r->failures);
			continue;
		}
		ibpd_pool_free(r->pool, &e);
		if (!(i % 256))
			cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

static void full_space_race_never_fails(struct kunit *test)
{
	struct full_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *task;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->pool = test_pool(test);
	init_completion(&r->done);
	atomic_set(&r->running, FULL_THREADS);
	for (i = 0; i < FULL_THREADS; i++) {
		task = kthread_run(full_race_thread, r, "ibpd_full%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&r->failures),
			    "last error %d", r->last_error);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&r->pool->count));
}

static struct kunit_case ibpd_pool_cases[] = {
	KUNIT_CASE(pdn_first_is_one),
	KUNIT_CASE(pdn_unique),
	KUNIT_CASE(pdn_not_reused_after_free),
	KUNIT_CASE(pdn_wraps_around),
	KUNIT_CASE(pdn_wrap_skips_live),
	KUNIT_CASE(pdn_tracked_until_free),
	KUNIT_CASE(walk_resumes_after_churn),
	KUNIT_CASE(walk_peeked_comes_again),
	KUNIT_CASE(walk_two_at_once),
	KUNIT_CASE(walk_survives_resize),
	KUNIT_CASE(walk_outlives_pool),
	KUNIT_CASE(walk_unstarted_outlives_pool),
	KUNIT_CASE(walk_idle_walks_cost_nothing),
	KUNIT_CASE(reserved_unseen_until_published),
	KUNIT_CASE(full_space_race_never_fails),
	{}
};

static struct kunit_suite ibpd_pool_suite = {
	.name = "ibpd_pool",
	.exit = test_pool_exit,
	.test_cases = ibpd_pool_cases,
};

/* The PD and MR policies, on a device that is never registered. */
static struct ibpd_ib_dev *test_dev(struct kunit *test)
{
	struct ibpd_ib_dev *dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_EQ(test, 0, ibpd_dev_init_objects(dev, 1000));
	test->priv = dev;
	return dev;
}

static void test_dev_exit(struct kunit *test)
{
	if (test->priv)
		ibpd_dev_fini_objects(test->priv);
}

static struct ibpd_ib_pd *test_pd(struct kunit *test, struct ibpd_ib_dev *dev)
{
	struct ibpd_ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pd);
	pd->ibpd.device = &dev->ibdev;
	return pd;
}

static void max_pd_enforced(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *pds[4];
	int i;

	dev->max_pd = 3;
	for (i = 0; i < 3; i++) {
		pds[i] = test_pd(test, dev);
		KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, pds[i]));
	}
	pds[3] = test_pd(test, dev);
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_pdn_alloc(dev, pds[3]));
	KUNIT_EXPECT_EQ(test, 3, atomic_read(&dev->pds.count));

	/* a freed slot is usable again */
	ibpd_pdn_free(dev, pds[0]);
	KUNIT_EXPECT_EQ(test, 0, ibpd_pdn_alloc(dev, pds[3]));
	for (i = 1; i < 4; i++)
		ibpd_pdn_free(dev, pds[i]);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&dev->pds.count));
}

static void max_pd_lowered_below_live(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);

	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, a));
	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, b));
	KUNIT_ASSERT_EQ(test, 0, ibpd_set_max_pd(dev, 1));
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_pdn_alloc(dev, test_pd(test, dev)));
	ibpd_pdn_free(dev, a);
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_pdn_alloc(dev, a));
	ibpd_pdn_free(dev, b);
	KUNIT_EXPECT_EQ(test, 0, ibpd_pdn_alloc(dev, a));
	ibpd_pdn_free(dev, a);
}

static void max_pd_setter_bounds(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);

	KUNIT_EXPECT_EQ(test, -EINVAL, ibpd_set_max_pd(dev, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpd_set_max_pd(dev, (u64)IBPD_PDN_MAX + 1));
	KUNIT_EXPECT_EQ(test, 1000U, dev->max_pd);
	KUNIT_EXPECT_EQ(test, 0, ibpd_set_max_pd(dev, IBPD_PDN_MAX));
	KUNIT_EXPECT_EQ(test, IBPD_PDN_MAX, dev->max_pd);
	KUNIT_EXPECT_EQ(test, (int)IBPD_PDN_MAX, dev->ibdev.attrs.max_pd);
}

static void fault_alloc_pd(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *pd = test_pd(test, dev);

	dev->fail_alloc_pd = true;
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_pdn_alloc(dev, pd));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&dev->pds.count));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&dev->pds.ht.nelems));
	dev->fail_alloc_pd = false;
	KUNIT_EXPECT_EQ(test, 0, ibpd_pdn_alloc(dev, pd));
	ibpd_pdn_free(dev, pd);
}

static struct kunit_case ibpd_pd_cases[] = {
	KUNIT_CASE(max_pd_enforced),
	KUNIT_CASE(max_pd_lowered_below_live),
	KUNIT_CASE(max_pd_setter_bounds),
	KUNIT_CASE(fault_alloc_pd),
	{}
};

static struct kunit_suite ibpd_pd_suite = {
	.name = "ibpd_pd",
	.exit = test_dev_exit,
	.test_cases = ibpd_pd_cases,
};

static void import_unchecked(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *pd = test_pd(test, dev);

	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, pd));
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(pd, NULL, NULL));
	ibpd_pdn_free(dev, pd);
}

static void import_checked_match(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *pd = test_pd(test, dev);

	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, pd));
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(pd, &pd->pdn.index, NULL));
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(pd, NULL, &pd->id));
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(pd, &pd->pdn.index, &pd->id));
	ibpd_pdn_free(dev, pd);
}

static void import_checked_stale(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);
	u32 old;

	/* the handle's old PD went away and a new one took its place */
	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, a));
	old = a->pdn.index;
	ibpd_pdn_free(dev, a);
	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, b));
	KUNIT_EXPECT_EQ(test, -ESTALE, ibpd_import_check(b, &old, NULL));
	old = 0;
	KUNIT_EXPECT_EQ(test, -ESTALE, ibpd_import_check(b, &old, NULL));
	ibpd_pdn_free(dev, b);
}

/* PDs made through ibpd_ib_alloc_pd(), as uverbs makes them. */
static void alloc_pd(struct kunit *test, struct ibpd_ib_pd *pd)
{
	KUNIT_ASSERT_EQ(test, 0, ibpd_ib_alloc_pd(&pd->ibpd, NULL));
}

static void pd_ids_count_up_from_one(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);

	alloc_pd(test, a);
	alloc_pd(test, b);
	KUNIT_EXPECT_EQ(test, 1ULL, a->id);
	KUNIT_EXPECT_EQ(test, 2ULL, b->id);
	ibpd_ib_dealloc_pd(&a->ibpd, NULL);
	ibpd_ib_dealloc_pd(&b->ibpd, NULL);
}

/*
 * The ABA case: the pdn space wraps and a new PD gets the pdn of a
 * destroyed one. A check of the pdn cannot tell them apart; a check of the
 * identity can.
 */
static void pd_id_survives_pdn_wrap(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);
	u64 old_id;
	u32 old_pdn;

	alloc_pd(test, a);
	old_pdn = a->pdn.index;
	old_id = a->id;
	ibpd_ib_dealloc_pd(&a->ibpd, NULL);
	dev->pds.next = old_pdn;	/* as 2^24 allocations later */
	alloc_pd(test, b);
	KUNIT_EXPECT_EQ(test, old_pdn, b->pdn.index);
	KUNIT_EXPECT_NE(test, old_id, b->id);
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(b, &old_pdn, NULL));
	KUNIT_EXPECT_EQ(test, -ESTALE, ibpd_import_check(b, NULL, &old_id));
	KUNIT_EXPECT_EQ(test, -ESTALE,
			ibpd_import_check(b, &old_pdn, &old_id));
	ibpd_ib_dealloc_pd(&b->ibpd, NULL);
}

/* An allocation that fails before alloc_pd draws an identity takes none. */
static void pd_id_not_consumed_by_failure(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);
	int i;

	alloc_pd(test, a);
	dev->fail_alloc_pd = true;
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, -ENOMEM,
				ibpd_ib_alloc_pd(&b->ibpd, NULL));
	dev->fail_alloc_pd = false;
	dev->max_pd = 1;
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_ib_alloc_pd(&b->ibpd, NULL));
	dev->max_pd = 2;
	alloc_pd(test, b);
	KUNIT_EXPECT_EQ(test, a->id + 1, b->id);
	ibpd_ib_dealloc_pd(&a->ibpd, NULL);
	ibpd_ib_dealloc_pd(&b->ibpd, NULL);
}

/*
 * An identity alloc_pd drew is used up: dealloc_pd never gives it back,
 * whether the core destroys a committed PD or aborts one after alloc_pd
 * (its own response copy failed), the newest PD's too. The failing
 * responses themselves are ibpd_test.c's.
 */
static void pd_id_never_given_back(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *a = test_pd(test, dev), *b = test_pd(test, dev);
	u64 id;

	alloc_pd(test, a);
	id = a->id;
	alloc_pd(test, b);
	KUNIT_EXPECT_EQ(test, id + 1, b->id);
	ibpd_ib_dealloc_pd(&b->ibpd, NULL);
	alloc_pd(test, b);
	KUNIT_EXPECT_EQ(test, id + 2, b->id);
	ibpd_ib_dealloc_pd(&a->ibpd, NULL);
	ibpd_ib_dealloc_pd(&b->ibpd, NULL);
	alloc_pd(test, a);
	KUNIT_EXPECT_EQ(test, id + 3, a->id);
	ibpd_ib_dealloc_pd(&a->ibpd, NULL);
}

static void import_fault_knob(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_pd *pd = test_pd(test, dev);

	KUNIT_ASSERT_EQ(test, 0, ibpd_pdn_alloc(dev, pd));
	dev->fail_import = true;
	KUNIT_EXPECT_EQ(test, -ENOMEM, ibpd_import_check(pd, NULL, NULL));
	dev->fail_import = false;
	KUNIT_EXPECT_EQ(test, 0, ibpd_import_check(pd, &pd->pdn.index, NULL));
	ibpd_pdn_free(dev, pd);
}

static struct kunit_case ibpd_import_cases[] = {
	KUNIT_CASE(import_unchecked),
	KUNIT_CASE(import_checked_match),
	KUNIT_CASE(import_checked_stale),
	KUNIT_CASE(import_fault_knob),
	KUNIT_CASE(pd_ids_count_up_from_one),
	KUNIT_CASE(pd_id_survives_pdn_wrap),
	KUNIT_CASE(pd_id_not_consumed_by_failure),
	KUNIT_CASE(pd_id_never_given_back),
	{}
};

static struct kunit_suite ibpd_import_suite = {
	.name = "ibpd_import",
	.exit = test_dev_exit,
	.test_cases = ibpd_import_cases,
};

static struct ibpd_ib_mr *test_mr(struct kunit *test)
{
	struct ibpd_ib_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	return mr;
}

static void mr_keys_unique_and_shaped(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_mr *mrs[32];
	int i, j;

	for (i = 0; i < ARRAY_SIZE(mrs); i++) {
		mrs[i] = test_mr(test);
		KUNIT_ASSERT_EQ(test, 0, ibpd_mr_key_alloc(dev, mrs[i]));
		KUNIT_EXPECT_NE(test, 0U, mrs[i]->ibmr.lkey);
		KUNIT_EXPECT_EQ(test, 0U, mrs[i]->ibmr.lkey & 0xff);
		KUNIT_EXPECT_EQ(test, mrs[i]->ibmr.lkey, mrs[i]->ibmr.rkey);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, mrs[i]->ibmr.lkey,
					mrs[j]->ibmr.lkey);
	}
	KUNIT_EXPECT_EQ(test, (int)ARRAY_SIZE(mrs),
			atomic_read(&dev->mrs.count));
	for (i = 0; i < ARRAY_SIZE(mrs); i++)
		ibpd_mr_key_free(dev, mrs[i]);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&dev->mrs.count));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&dev->mrs.ht.nelems));
}

static void mr_key_not_reused_after_free(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_mr *a = test_mr(test), *b = test_mr(test);
	u32 old;

	KUNIT_ASSERT_EQ(test, 0, ibpd_mr_key_alloc(dev, a));
	old = a->ibmr.lkey;
	ibpd_mr_key_free(dev, a);
	KUNIT_ASSERT_EQ(test, 0, ibpd_mr_key_alloc(dev, b));
	KUNIT_EXPECT_NE(test, old, b->ibmr.lkey);
	ibpd_mr_key_free(dev, b);
}

static void mr_key_wraps_around(struct kunit *test)
{
	struct ibpd_ib_dev *dev = test_dev(test);
	struct ibpd_ib_mr *a = test_mr(test), *b = test_mr(test);

	dev->mrs.next = U32_MAX >> 8;
	KUNIT_ASSERT_EQ(test, 0, ibpd_mr_key_alloc(dev, a));
	KUNIT_EXPECT_EQ(test, (U32_MAX >> 8) << 8, a->ibmr.lkey);
	KUNIT_ASSERT_EQ(test, 0, ibpd_mr_key_alloc(dev, b));
	KUNIT_EXPECT_EQ(test, 1U << 8, b->ibmr.lkey);
	ibpd_mr_key_free(dev, a);
	ibpd_mr_key_free(dev, b);
}

static struct kunit_case ibpd_mr_cases[] = {
	KUNIT_CASE(mr_keys_unique_and_shaped),
	KUNIT_CASE(mr_key_not_reused_after_free),
	KUNIT_CASE(mr_key_wraps_around),
	{}
};

static struct kunit_suite ibpd_mr_suite = {
	.name = "ibpd_mr",
	.exit = test_dev_exit,
	.test_cases = ibpd_mr_cases,
};

/*
 * Device lifecycle, through ib_core: devices named ibpdk<N>. ibpd has no
 * driver id of its own, and ib_device_get_by_name(RDMA_DRIVER_UNKNOWN)
 * finds any driver's device of that name: only one with ibpd's ops is
 * ibpd's.
 */
static struct ib_device *find_dev(const char *name)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (ibdev && ibdev->ops.query_device != ibpd_ib_query_device) {
		ib_device_put(ibdev);
		return NULL;
	}
	return ibdev;
}

static struct ibpd_ib_dev *add_dev(void)
{
	return ibpd_dev_add("ibpdk%d", NULL, IBPD_DEFAULT_MAX_PD);
}

static void dev_add_registers(struct kunit *test)
{
	struct ibpd_ib_dev *dev = ibpd_dev_add("ibpdk%d", NULL, 1000);
	struct ib_device *ibdev;

	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	ibdev = find_dev(dev_name(&dev->ibdev.dev));
	KUNIT_EXPECT_PTR_EQ(test, &dev->ibdev, ibdev);
	if (ibdev)
		ib_device_put(ibdev);
	KUNIT_EXPECT_TRUE(test, dev->ibdev.attrs.kernel_cap_flags &
				IBK_ALLOW_USER_UNREG);
	/* the max_pd it was made with, as ibv_query_device() reports it */
	KUNIT_EXPECT_EQ(test, 1000U, dev->max_pd);
	KUNIT_EXPECT_EQ(test, 1000, dev->ibdev.attrs.max_pd);
	KUNIT_EXPECT_NOT_NULL(test, dev->ddir);
	/* a uverbs-only device: ULPs must not bind to it */
	KUNIT_EXPECT_FALSE(test, dev->ibdev.kverbs_provider);
	ibpd_dev_del(dev);
}

static void dev_del_unregisters(struct kunit *test)
{
	struct ibpd_ib_dev *dev = add_dev();
	char name[IB_DEVICE_NAME_MAX];
	struct ib_device *ibdev;

	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	strscpy(name, dev_name(&dev->ibdev.dev), sizeof(name));
	ibpd_dev_del(dev);
	ibdev = find_dev(name);
	KUNIT_EXPECT_NULL(test, ibdev);
	if (ibdev)
		ib_device_put(ibdev);
}

static void dev_add_name_taken(struct kunit *test)
{
	struct ibpd_ib_dev *dev = add_dev(), *dup;

	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	dup = ibpd_dev_add(dev_name(&dev->ibdev.dev), NULL,
			   IBPD_DEFAULT_MAX_PD);
	KUNIT_EXPECT_TRUE(test, IS_ERR(dup));
	if (!IS_ERR(dup))
		ibpd_dev_del(dup);
	ibpd_dev_del(dev);
}

static void dev_names_fill_lowest(struct kunit *test)
{
	struct ibpd_ib_dev *a = add_dev(), *b, *c;
	char bname[IB_DEVICE_NAME_MAX];

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	b = add_dev();
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_STRNEQ(test, dev_name(&a->ibdev.dev),
			    dev_name(&b->ibdev.dev));
	strscpy(bname, dev_name(&b->ibdev.dev), sizeof(bname));
	ibpd_dev_del(b);
	c = add_dev();
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	KUNIT_EXPECT_STREQ(test, bname, dev_name(&c->ibdev.dev));
	ibpd_dev_del(c);
	ibpd_dev_del(a);
}

static void dev_port_and_device_attrs(struct kunit *test)
{
	struct ibpd_ib_dev *dev = add_dev();
	struct ib_port_immutable imm = {};
	struct ib_port_attr pattr = {};
	struct ib_device_attr dattr;
	struct ib_udata udata = {};

	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	KUNIT_EXPECT_EQ(test, 0, ibpd_ib_query_port(&dev->ibdev, 1, &pattr));
	KUNIT_EXPECT_EQ(test, IB_PORT_ACTIVE, pattr.state);
	KUNIT_EXPECT_EQ(test, 0,
			ibpd_ib_get_port_immutable(&dev->ibdev, 1, &imm));
	KUNIT_EXPECT_EQ(test, 0U, imm.core_cap_flags);
	KUNIT_EXPECT_EQ(test, 0U, imm.max_mad_size);
	KUNIT_EXPECT_EQ(test, 0,
			ibpd_ib_query_device(&dev->ibdev, &dattr, &udata));
	KUNIT_EXPECT_EQ(test, (int)dev->max_pd, dattr.max_pd);
	/* as at registration */
	KUNIT_EXPECT_EQ(test, 0,
			ibpd_ib_query_device(&dev->ibdev, &dattr, NULL));
	ibpd_dev_del(dev);
}

/*
 * ib_core enables a device again after each namespace move: the debugfs
 * directory is made once, named after the index, whatever the name.
 */
static void dev_debugfs_once_by_index(struct kunit *test)
{
	struct ibpd_ib_dev *dev = add_dev();
	char index[16];
	struct dentry *d;

	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	d = dev->ddir;
	KUNIT_EXPECT_NOT_NULL(test, d);
	KUNIT_EXPECT_EQ(test, 0, ibpd_debugfs_dev_init(dev));
	KUNIT_EXPECT_PTR_EQ(test, d, dev->ddir);
	snprintf(index, sizeof(index), "%u", dev->ibdev.index);
	if (d)
		KUNIT_EXPECT_STREQ(test, index, d->d_name.name);
	ibpd_dev_del(dev);
}

static struct kunit_case ibpd_dev_cases[] = {
	KUNIT_CASE(dev_debugfs_once_by_index),
	KUNIT_CASE(dev_add_registers),
	KUNIT_CASE(dev_del_unregisters),
	KUNIT_CASE(dev_add_name_taken),
	KUNIT_CASE(dev_names_fill_lowest),
	KUNIT_CASE(dev_port_and_device_attrs),
	{}
};

static struct kunit_suite ibpd_dev_suite = {
	.name = "ibpd_dev",
	.test_cases = ibpd_dev_cases,
};

kunit_test_suites(&ibpd_pool_suite, &ibpd_pd_suite, &ibpd_import_suite,
		  &ibpd_mr_suite, &ibpd_dev_suite);

MODULE_DESCRIPTION("KUnit tests of the ibpd software RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

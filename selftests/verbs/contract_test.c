// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * libibpd's commands held to ibpd's methods as data: each verbs and DV
 * call that sends one of ibpd's methods, with the optional attributes the
 * API sends or not, is recorded as libibverbs hands it to ioctl(2) and
 * compared, attribute by attribute, with the raw builder's command for
 * the same call, made from the method's table (selftests/lib/ibpd_uverbs.h:
 * the rows whose "when" the call has): the header, then each attribute's
 * place, id, length, flags (mandatory or not), reserved field and data as
 * its direction says (a handle or an inline input: the same value; an
 * output: a pointer). Each difference is a line that names the attribute.
 *
 * The recording: this program's ioctl() comes before libc's for the
 * libraries it links (the executable's symbols first), copies the command
 * and passes it on to the kernel, so that each call also has to succeed.
 * On ibpd devices only (IBPD_TEST_DEV, ibpd0 by default): on others the
 * DV calls send nothing (dv_test).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/ibpddv.h>

#include "../lib/ibpd_harness.h"
#include "../lib/ibpd_uverbs.h"
#include "verbs_test.h"

#define REC_CMDS 8

/* The uverbs ioctls of a call, as they were handed to the kernel. */
static struct {
	bool on;
	unsigned int n;		/* may be more than REC_CMDS */
	struct raw_cmd cmd[REC_CMDS];
} rec;

int ioctl(int fd, unsigned long request, ...)
{
	const struct ib_uverbs_ioctl_hdr *hdr;
	unsigned int n;
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (rec.on && request == RDMA_VERBS_IOCTL) {
		hdr = arg;
		if (rec.n < REC_CMDS) {
			n = hdr->num_attrs < RAW_ATTRS ? hdr->num_attrs :
							 RAW_ATTRS;
			memcpy(&rec.cmd[rec.n], hdr,
			       sizeof(*hdr) + n * sizeof(hdr->attrs[0]));
		}
		rec.n++;
	}
	return syscall(SYS_ioctl, fd, request, arg);
}

static void rec_start(void)
{
	memset(&rec, 0, sizeof(rec));
	rec.on = true;
}

/* The one command of ibpd's methods that the call recorded sent. */
static const struct raw_cmd *rec_stop(struct __test_metadata *_metadata,
				      const char *call)
{
	const struct raw_cmd *got = NULL;
	unsigned int i, n = 0;

	rec.on = false;
	for (i = 0; i < rec.n && i < REC_CMDS; i++)
		if (rec.cmd[i].hdr.object_id == UVERBS_OBJECT_PD &&
		    rec.cmd[i].hdr.method_id >= RAW_DRV_ID0) {
			got = &rec.cmd[i];
			n++;
		}
	EXPECT_EQ(1, n) TH_LOG("%s: %u commands of ibpd's methods in %u uverbs ioctls",
			       call, n, rec.n);
	return n == 1 ? got : NULL;
}

static const struct raw_method *method_of(uint16_t meth)
{
	unsigned int i;

	for (i = 0; i < RAW_NMETHODS; i++)
		if (raw_methods[i]->meth == meth)
			return raw_methods[i];
	return NULL;
}

/* What a call of libibpd gives the attributes of its method. */
struct call {
	const char *name;	/* the call, for the messages */
	uint16_t meth;
	unsigned int when;	/* enum raw_when: the rows it sends */
	uint32_t handle;	/* of the PD it names */
	uint64_t id;		/* that PD's identity */
	uint32_t pdn;		/* and number */
};

/*
 * The raw builder's command for call: the rows of its method's table
 * whose "when" the call has, each with the call's value.
 */
static bool raw_for(struct __test_metadata *_metadata,
		    const struct call *call, struct raw_cmd *c)
{
	static uint64_t out[RAW_ATTRS];
	const struct raw_method *m = method_of(call->meth);
	const void *v[RAW_ATTRS] = {};
	const struct raw_attr_spec *s;
	unsigned int i;

	if (!m) {
		TH_LOG("%s: method 0x%x has no table", call->name, call->meth);
		return false;
	}
	for (i = 0; i < m->nattrs; i++) {
		s = &m->attrs[i];
		if (!(s->when & call->when))
			continue;
		switch (s->dir) {
		case RAW_IDR_NEW:
			v[i] = RAW_NEW;
			break;
		case RAW_IDR:
			v[i] = &call->handle;
			break;
		case RAW_OUT:
			v[i] = &out[i];
			break;
		default:
			if (s->id == IBPD_ATTR_PD_IMPORT_ID)
				v[i] = &call->id;
			else if (s->id == IBPD_ATTR_PD_IMPORT_PDN)
				v[i] = &call->pdn;
			else {
				TH_LOG("%s: no value here for %s, an input",
				       call->name, s->name);
				return false;
			}
		}
	}
	raw_method_cmd(c, m, v);
	return true;
}

/* The attribute of id in c and its place, or NULL. */
static const struct ib_uverbs_attr *attr_of(const struct raw_cmd *c,
					    uint16_t id, unsigned int *at)
{
	for (*at = 0; *at < c->hdr.num_attrs && *at < RAW_ATTRS; (*at)++)
		if (c->attrs[*at].attr_id == id)
			return &c->attrs[*at];
	return NULL;
}

static const char *attr_name(const struct raw_method *m, uint16_t id)
{
	const struct raw_attr_spec *s = raw_spec(m, id);
	static char buf[64];

	if (s)
		return s->name;
	snprintf(buf, sizeof(buf), "attribute 0x%x (not in %s's table)", id,
		 m->name);
	return buf;
}

/* A difference: a line that names the call and what differs, counted. */
#define DIFF(fmt, ...) ({ TH_LOG("%s: " fmt, call->name, ##__VA_ARGS__); \
			  diffs++; })

/*
 * The differences of one attribute in libibpd's command (got, at place i)
 * and the raw builder's (want, at place j).
 */
static int attr_diff(struct __test_metadata *_metadata,
		     const struct call *call, const struct raw_method *m,
		     const struct ib_uverbs_attr *got, unsigned int i,
		     const struct ib_uverbs_attr *want, unsigned int j)
{
	const struct raw_attr_spec *s = raw_spec(m, got->attr_id);
	const char *name = attr_name(m, got->attr_id);
	bool value;
	int diffs = 0;

	if (i != j)
		DIFF("%s: attribute %u of libibpd's command, %u of the raw builder's",
		     name, i, j);
	if (got->len != want->len)
		DIFF("%s: length %u from libibpd, %u from the raw builder",
		     name, got->len, want->len);
	if (got->flags != want->flags)
		DIFF("%s: flags 0x%x from libibpd (%s), 0x%x from the raw builder (%s)",
		     name, got->flags, got->flags & UVERBS_ATTR_F_MANDATORY ?
		     "mandatory" : "optional", want->flags,
		     want->flags & UVERBS_ATTR_F_MANDATORY ?
		     "mandatory" : "optional");
	if (got->attr_data.reserved != want->attr_data.reserved)
		DIFF("%s: reserved 0x%x from libibpd, 0x%x from the raw builder",
		     name, got->attr_data.reserved,
		     want->attr_data.reserved);
	/* a handle, or an input of 8 bytes or less: the value itself */
	value = s && (s->dir == RAW_IDR || s->dir == RAW_IDR_NEW ||
		      (s->dir == RAW_IN && s->len <= sizeof(got->data)));
	if (value && got->data != want->data)
		DIFF("%s: data 0x%llx from libibpd, 0x%llx from the raw builder",
		     name, (unsigned long long)got->data,
		     (unsigned long long)want->data);
	if (!value && (!got->data || !want->data))
		DIFF("%s: a pointer, 0x%llx from libibpd, 0x%llx from the raw builder",
		     name, (unsigned long long)got->data,
		     (unsigned long long)want->data);
	return diffs;
}

/* The differences of libibpd's command got and the raw builder's want. */
static int cmd_diff(struct __test_metadata *_metadata,
		    const struct call *call, const struct raw_cmd *got,
		    const struct raw_cmd *want)
{
	const struct raw_method *m = method_of(want->hdr.method_id);
	const struct ib_uverbs_attr *a, *b;
	unsigned int i, j;
	int diffs = 0;

	if (got->hdr.object_id != want->hdr.object_id ||
	    got->hdr.method_id != want->hdr.method_id)
		DIFF("object 0x%x method 0x%x from libibpd, object 0x%x method 0x%x (%s) from the raw builder",
		     got->hdr.object_id, got->hdr.method_id,
		     want->hdr.object_id, want->hdr.method_id, m->name);
	if (got->hdr.driver_id != want->hdr.driver_id)
		DIFF("%s: driver id %u from libibpd, %u from the raw builder",
		     m->name, got->hdr.driver_id, want->hdr.driver_id);
	if (got->hdr.reserved1 || got->hdr.reserved2)
		DIFF("%s: reserved 0x%llx 0x%x from libibpd", m->name,
		     (unsigned long long)got->hdr.reserved1,
		     got->hdr.reserved2);
	if (got->hdr.num_attrs > RAW_ATTRS)
		DIFF("%s: %u attributes from libibpd, a raw_cmd holds %u",
		     m->name, got->hdr.num_attrs, RAW_ATTRS);
	for (i = 0; i < got->hdr.num_attrs && i < RAW_ATTRS; i++) {
		a = &got->attrs[i];
		b = attr_of(want, a->attr_id, &j);
		if (b)
			diffs += attr_diff(_metadata, call, m, a, i, b, j);
		else
			DIFF("%s: sent by libibpd, not by the raw builder",
			     attr_name(m, a->attr_id));
	}
	for (j = 0; j < want->hdr.num_attrs; j++)
		if (!attr_of(got, want->attrs[j].attr_id, &i))
			DIFF("%s: sent by the raw builder, not by libibpd",
			     attr_name(m, want->attrs[j].attr_id));
	if (!diffs && (got->hdr.num_attrs != want->hdr.num_attrs ||
		       got->hdr.length != want->hdr.length))
		DIFF("%s: %u attributes, length %u from libibpd, %u, %u from the raw builder",
		     m->name, got->hdr.num_attrs, got->hdr.length,
		     want->hdr.num_attrs, want->hdr.length);
	return diffs;
}

/* The command that the call recorded sent, against the raw builder's. */
static void check_call(struct __test_metadata *_metadata,
		       const struct call *call)
{
	const struct raw_cmd *got = rec_stop(_metadata, call->name);
	struct raw_cmd want;

	ASSERT_NE(NULL, got);
	ASSERT_TRUE(raw_for(_metadata, call, &want));
	raw_length(&want);
	EXPECT_EQ(0, cmd_diff(_metadata, call, got, &want))
		TH_LOG("%s: libibpd's %s differs from the raw builder's",
		       call->name, method_of(call->meth)->name);
}

FIXTURE(contract) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibpddv_pd_attr attr;
};

FIXTURE_SETUP(contract)
{
	self->ctx = open_dev(test_dev());
	if (!self->ctx)
		SETUP_SKIP("no RDMA device %s", test_dev());
	if (!ibpddv_is_supported(self->ctx->device))
		SETUP_SKIP("%s is not an ibpd device", test_dev());
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	ASSERT_EQ(0, ibpddv_query_pd(self->pd, &self->attr));
}

FIXTURE_TEARDOWN(contract)
{
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		ibv_close_device(self->ctx);
}

/* A call on the fixture's PD. */
#define CALL(_name, _meth, _when) ((struct call){			\
	.name = _name, .meth = _meth, .when = _when,			\
	.handle = self->pd->handle, .id = self->attr.id,		\
	.pdn = self->attr.pdn })

/* ibpd_cmd_alloc_pd(): the new PD's handle, its pdn and identity */
TEST_F(contract, alloc_pd)
{
	struct call call = CALL("ibv_alloc_pd()", IBPD_METHOD_PD_ALLOC,
				RAW_ALWAYS);
	struct ibv_pd *pd;

	rec_start();
	pd = ibv_alloc_pd(self->ctx);
	check_call(_metadata, &call);
	ASSERT_NE(NULL, pd);
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* ibpd_cmd_import_pd() with no identity to check and no use count */
TEST_F(contract, import_pd)
{
	struct call call = CALL("ibv_import_pd()", IBPD_METHOD_PD_IMPORT,
				RAW_ALWAYS);
	struct ibv_pd *pd;

	rec_start();
	pd = ibv_import_pd(self->ctx, self->pd->handle);
	check_call(_metadata, &call);
	ASSERT_NE(NULL, pd);
	ibv_unimport_pd(pd);
}

/* ... with an identity to check */
TEST_F(contract, dv_import_pd)
{
	struct call call = CALL("ibpddv_import_pd()", IBPD_METHOD_PD_IMPORT,
				RAW_ALWAYS | RAW_CHECKED);
	struct ibv_pd *pd;

	rec_start();
	pd = ibpddv_import_pd(self->ctx, self->pd->handle, self->attr.id);
	check_call(_metadata, &call);
	ASSERT_NE(NULL, pd);
	ibv_unimport_pd(pd);
}

/* ... with an identity to check and the use count */
TEST_F(contract, dv_query_pd)
{
	struct call call = CALL("ibpddv_query_pd()", IBPD_METHOD_PD_IMPORT,
				RAW_ALWAYS | RAW_CHECKED | RAW_QUERY);
	struct ibpddv_pd_attr attr = {};

	rec_start();
	EXPECT_EQ(0, ibpddv_query_pd(self->pd, &attr));
	check_call(_metadata, &call);
	EXPECT_EQ(self->attr.id, attr.id);
}

/* ... of a PD imported without an identity: the import learnt it */
TEST_F(contract, dv_query_imported_pd)
{
	struct call call = CALL("ibpddv_query_pd() of ibv_import_pd()'s",
				IBPD_METHOD_PD_IMPORT,
				RAW_ALWAYS | RAW_CHECKED | RAW_QUERY);
	struct ibpddv_pd_attr attr = {};
	struct ibv_pd *pd;

	pd = ibv_import_pd(self->ctx, self->pd->handle);
	ASSERT_NE(NULL, pd);
	rec_start();
	EXPECT_EQ(0, ibpddv_query_pd(pd, &attr));
	check_call(_metadata, &call);
	ibv_unimport_pd(pd);
}

TEST_HARNESS_MAIN

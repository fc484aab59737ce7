/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * uverbs ioctl commands built by hand, with no library (libc and the uapi
 * headers only), in the manner of iommufd_utils.h: the one builder of each
 * command that the kselftests, the fuzzers and the bench send, the tests
 * and the fuzzers to see the kernel's answers, the bench to time the bare
 * command under what the library adds.
 *
 * ibpd's own methods are built from their tables below, as libibpd sends
 * them through rdma-core's command buffers (user/provider/cmd_pd.c): the
 * same attributes in the same order, each mandatory or optional alike,
 * which verbs/contract_test.c checks call by call.
 */

#ifndef IBPD_UVERBS_H
#define IBPD_UVERBS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

/* A command: its header and room for its attributes. */
#define RAW_ATTRS 8

struct raw_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[RAW_ATTRS];
};

/*
 * The driver id every ioctl header must carry: the device's (the core
 * refuses any other with EINVAL). ibpd has none of its own, so its devices
 * take RDMA_DRIVER_UNKNOWN; a program that opens another driver's device
 * sets that driver's, one that opens several sets each command's header.
 */
static uint32_t test_driver_id = RDMA_DRIVER_UNKNOWN;

/*
 * A command with no attribute yet. Only the header is written: each
 * attribute is written whole as it is added (the bench times this).
 */
static inline void raw_init(struct raw_cmd *c, uint16_t obj, uint16_t meth)
{
	c->hdr = (struct ib_uverbs_ioctl_hdr){
		.object_id = obj,
		.method_id = meth,
		.driver_id = test_driver_id,
	};
}

/* A mandatory attribute; its data field as given. */
static inline struct ib_uverbs_attr *raw_attr(struct raw_cmd *c, uint16_t id,
					      uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a = &c->attrs[c->hdr.num_attrs++];

	*a = (struct ib_uverbs_attr){
		.attr_id = id,
		.len = len,
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = data,
	};
	return a;
}

/* An optional output: a kernel that does not know it leaves it alone. */
static inline struct ib_uverbs_attr *raw_out_opt(struct raw_cmd *c,
						 uint16_t id, void *buf,
						 uint16_t len)
{
	struct ib_uverbs_attr *a = raw_attr(c, id, len, (uintptr_t)buf);

	a->flags = 0;
	return a;
}

/* An input attribute: up to 8 bytes travel inline in the data field. */
static inline struct ib_uverbs_attr *raw_in(struct raw_cmd *c, uint16_t id,
					    const void *buf, uint16_t len)
{
	struct ib_uverbs_attr *a = raw_attr(c, id, len, (uintptr_t)buf);

	if (len <= sizeof(a->data)) {
		a->data = 0;
		memcpy(&a->data, buf, len);
	}
	return a;
}

/* The command's length, unless it has one: its header and attributes. */
static inline void raw_length(struct raw_cmd *c)
{
	if (!c->hdr.length)
		c->hdr.length = sizeof(c->hdr) +
				c->hdr.num_attrs * sizeof(c->attrs[0]);
}

/* Sends the command on fd: 0 or the errno of the ioctl. */
static inline int raw_exec(int fd, struct raw_cmd *c)
{
	raw_length(c);
	return ioctl(fd, RDMA_VERBS_IOCTL, &c->hdr) ? errno : 0;
}

/*
 * A core write() command through UVERBS_METHOD_INVOKE_WRITE, as libibverbs
 * sends it (which, unlike write(2), the kernel also takes from a process
 * that did not open the file), with optional driver data in (uin) and out
 * (uout).
 */
static inline void raw_write_cmd(struct raw_cmd *c, uint32_t command,
				 const void *in, uint16_t inlen, void *out,
				 uint16_t outlen, const void *uin,
				 uint16_t uinlen, void *uout, uint16_t uoutlen)
{
	raw_init(c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
	raw_attr(c, UVERBS_ATTR_WRITE_CMD, sizeof(uint64_t), command);
	raw_in(c, UVERBS_ATTR_CORE_IN, in, inlen);
	if (outlen)
		raw_attr(c, UVERBS_ATTR_CORE_OUT, outlen, (uintptr_t)out);
	if (uinlen)
		raw_in(c, UVERBS_ATTR_UHW_IN, uin, uinlen);
	if (uoutlen)
		raw_attr(c, UVERBS_ATTR_UHW_OUT, uoutlen, (uintptr_t)uout);
}

/* raw_write_cmd() sent on fd: 0 or the errno of the ioctl. */
static inline int raw_write(int fd, uint32_t command, const void *in,
			    uint16_t inlen, void *out, uint16_t outlen,
			    const void *uin, uint16_t uinlen, void *uout,
			    uint16_t uoutlen)
{
	struct raw_cmd c;

	raw_write_cmd(&c, command, in, inlen, out, outlen, uin, uinlen, uout,
		      uoutlen);
	return raw_exec(fd, &c);
}

/* The core's UVERBS_METHOD_PD_DESTROY of handle. */
static inline void raw_pd_destroy_cmd(struct raw_cmd *c, uint32_t handle)
{
	raw_init(c, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY);
	raw_attr(c, UVERBS_ATTR_DESTROY_PD_HANDLE, 0, handle);
}

/*
 * ibpd's methods as data: the one description of their attributes, from
 * which the raw builder below, the ABI tests (ibpd_test.c's abi fixture),
 * the fuzzers' ids (stress/ibpd_fuzz.h) and the contract test
 * (verbs/contract_test.c) are made. A row per attribute, in the order
 * libibpd sends them (user/provider/cmd_pd.c); each id of
 * uapi/rdma/ibpd_user_ioctl_cmds.h once, from the first of the driver
 * namespace on (checked below). The contract test holds libibpd's
 * commands to these rows, the abi fixture's table cases the kernel's spec
 * (kernel/std_types.c): a new attribute is a row here, then the kernel and
 * the library until both tests pass.
 *
 * X(name, id, dir, type, spec, sent, when):
 *   name  its member in the method's union raw_<method>_args
 *   id    its IBPD_ATTR_*
 *   dir   IDR_NEW (the handle of a new object), IDR (a live handle), IN
 *         (inline when 8 bytes or less) or OUT
 *   type  of its data, the attribute's length (a handle's is 0)
 *   spec  MANDATORY or OPTIONAL: the kernel's UA_* for it
 *   sent  MANDATORY or OPTIONAL: with UVERBS_ATTR_F_MANDATORY or without,
 *         as libibpd sends it (a kernel that does not know a mandatory
 *         one fails the call with EPROTONOSUPPORT)
 *   when  when libibpd sends it: ALWAYS; CHECKED, with an identity to
 *         check (ibpddv_import_pd(), ibpddv_query_pd()); QUERY, for
 *         ibpddv_query_pd(); NEVER (only the tests send it)
 */
#define IBPD_PD_ALLOC_ATTRS(X)						\
	X(handle, IBPD_ATTR_PD_ALLOC_HANDLE, IDR_NEW, uint32_t,		\
	  MANDATORY, MANDATORY, ALWAYS)					\
	X(resp_pdn, IBPD_ATTR_PD_ALLOC_RESP_PDN, OUT, uint32_t,		\
	  MANDATORY, MANDATORY, ALWAYS)					\
	X(resp_id, IBPD_ATTR_PD_ALLOC_RESP_ID, OUT, uint64_t,		\
	  OPTIONAL, OPTIONAL, ALWAYS)

#define IBPD_PD_IMPORT_ATTRS(X)						\
	X(handle, IBPD_ATTR_PD_IMPORT_HANDLE, IDR, uint32_t,		\
	  MANDATORY, MANDATORY, ALWAYS)					\
	X(resp_pdn, IBPD_ATTR_PD_IMPORT_RESP_PDN, OUT, uint32_t,	\
	  MANDATORY, MANDATORY, ALWAYS)					\
	X(resp_id, IBPD_ATTR_PD_IMPORT_RESP_ID, OUT, uint64_t,		\
	  OPTIONAL, OPTIONAL, ALWAYS)					\
	X(id, IBPD_ATTR_PD_IMPORT_ID, IN, uint64_t,			\
	  OPTIONAL, MANDATORY, CHECKED)					\
	X(resp_usecnt, IBPD_ATTR_PD_IMPORT_RESP_USECNT, OUT, uint32_t,	\
	  OPTIONAL, MANDATORY, QUERY)					\
	X(pdn, IBPD_ATTR_PD_IMPORT_PDN, IN, uint32_t,			\
	  OPTIONAL, MANDATORY, NEVER)

/* X(name, method, attrs): ibpd's methods, all on UVERBS_OBJECT_PD. */
#define IBPD_PD_METHODS(X)						\
	X(pd_alloc, IBPD_METHOD_PD_ALLOC, IBPD_PD_ALLOC_ATTRS)		\
	X(pd_import, IBPD_METHOD_PD_IMPORT, IBPD_PD_IMPORT_ATTRS)

/* The first id of the driver namespace: ibpd's methods' and attributes'. */
#define RAW_DRV_ID0 (1U << UVERBS_ID_NS_SHIFT)

enum raw_dir { RAW_IDR_NEW, RAW_IDR, RAW_IN, RAW_OUT };

/* When libibpd sends an attribute: a call sends those of its bits. */
enum raw_when {
	RAW_NEVER = 0,
	RAW_ALWAYS = 1 << 0,
	RAW_CHECKED = 1 << 1,
	RAW_QUERY = 1 << 2,
};

/* A row of a method's table. */
struct raw_attr_spec {
	const char *name;	/* of its id: "IBPD_ATTR_..." */
	uint16_t id;
	uint16_t len;
	uint16_t flags;		/* as libibpd sends it */
	uint8_t dir;		/* enum raw_dir */
	uint8_t when;		/* enum raw_when */
	bool mandatory;		/* in the kernel's spec */
};

struct raw_method {
	const char *name;	/* of its id: "IBPD_METHOD_..." */
	uint16_t obj;
	uint16_t meth;
	unsigned int nattrs;
	const struct raw_attr_spec *attrs;
};

/* The columns' words, pasted. */
#define RAW_ARG_IDR_NEW(t)	const t *
#define RAW_ARG_IDR(t)		const t *
#define RAW_ARG_IN(t)		const t *
#define RAW_ARG_OUT(t)		t *
#define RAW_LEN_IDR_NEW(t)	0
#define RAW_LEN_IDR(t)		0
#define RAW_LEN_IN(t)		sizeof(t)
#define RAW_LEN_OUT(t)		sizeof(t)
#define RAW_UA_MANDATORY	true
#define RAW_UA_OPTIONAL		false
#define RAW_F_MANDATORY		UVERBS_ATTR_F_MANDATORY
#define RAW_F_OPTIONAL		0

#define RAW_ONE(...) + 1
#define RAW_ARG(_n, _id, _dir, _t, _spec, _sent, _when)			\
	RAW_ARG_##_dir(_t) _n;
#define RAW_SPEC(_n, _id, _dir, _t, _spec, _sent, _when)		\
	{ .name = #_id, .id = _id, .len = RAW_LEN_##_dir(_t),		\
	  .flags = RAW_F_##_sent, .dir = RAW_##_dir,			\
	  .when = RAW_##_when, .mandatory = RAW_UA_##_spec },
#define RAW_ID_SLOT(_n, _id, ...) char _n[(_id) - RAW_DRV_ID0 + 1];

/*
 * A method's command, each attribute of its table in the table's order
 * when v (by row) gives it: a handle's value (a new handle's, 0, sent as
 * it is), an input's (inline up to 8 bytes) or where an output goes.
 */
static inline void raw_method_cmd(struct raw_cmd *c,
				  const struct raw_method *m,
				  const void *const *v)
{
	const struct raw_attr_spec *s;
	struct ib_uverbs_attr *a;
	unsigned int i;

	raw_init(c, m->obj, m->meth);
	for (i = 0; i < m->nattrs; i++) {
		s = &m->attrs[i];
		if (!v[i])
			continue;
		if (s->dir == RAW_IN)
			a = raw_in(c, s->id, v[i], s->len);
		else if (s->dir == RAW_OUT)
			a = raw_attr(c, s->id, s->len, (uintptr_t)v[i]);
		else
			a = raw_attr(c, s->id, 0, *(const uint32_t *)v[i]);
		a->flags = s->flags;
	}
}

/* The handle to give an IDR_NEW attribute: the kernel writes the new one. */
static const uint32_t raw_new_handle;
#define RAW_NEW (&raw_new_handle)

/*
 * For each method NAME of IBPD_PD_METHODS:
 *   union raw_NAME_args  the command's attributes, each member named after
 *                        its row (NULL: not sent), or v[] by row (all
 *                        pointers: the same bytes)
 *   raw_NAME             its table (struct raw_method)
 *   raw_NAME_cmd(c, a)   its command with the attributes of a, as
 *                        libibpd sends them
 * and at build time: its rows fit a command, their ids are the method's
 * consecutive ids from RAW_DRV_ID0, each once (else: a duplicate case).
 */
#define RAW_CASE(_n, _id, ...) case _id:
#define RAW_METHOD(_n, _m, _a)						\
	union raw_##_n##_args {						\
		struct { _a(RAW_ARG) };					\
		const void *v[0 _a(RAW_ONE)];				\
	};								\
	static const struct raw_attr_spec raw_##_n##_attrs[] = {	\
		_a(RAW_SPEC)						\
	};								\
	static const struct raw_method raw_##_n = {			\
		.name = #_m, .obj = UVERBS_OBJECT_PD, .meth = _m,	\
		.nattrs = 0 _a(RAW_ONE), .attrs = raw_##_n##_attrs,	\
	};								\
	static inline void raw_##_n##_cmd(struct raw_cmd *c,		\
			const union raw_##_n##_args *a)			\
	{								\
		raw_method_cmd(c, &raw_##_n, a->v);			\
	}								\
	static inline void raw_##_n##_ids_once(uint16_t id)		\
	{								\
		switch (id) {						\
		_a(RAW_CASE)						\
			break;						\
		}							\
	}								\
	_Static_assert((0 _a(RAW_ONE)) <= RAW_ATTRS,			\
		       #_m ": more attributes than a raw_cmd holds");	\
	_Static_assert(sizeof(union { _a(RAW_ID_SLOT) }) ==		\
		       (0 _a(RAW_ONE)),					\
		       #_m ": not each id from the first, once");

IBPD_PD_METHODS(RAW_METHOD)

/*
 * The ids of the driver namespace that ibpd uses: RAW_DRV_ID0 up to its
 * last method's and its last attribute's.
 */
#define RAW_METH_SLOT(_n, _m, _a) char _n[(_m) - RAW_DRV_ID0 + 1];
#define RAW_ATTR_SLOTS(_n, _m, _a) union { _a(RAW_ID_SLOT) } _n;
union raw_drv_meths { IBPD_PD_METHODS(RAW_METH_SLOT) };
union raw_drv_attrs { IBPD_PD_METHODS(RAW_ATTR_SLOTS) };
#define RAW_DRV_METHODS ((unsigned int)sizeof(union raw_drv_meths))
#define RAW_DRV_ATTRS ((unsigned int)sizeof(union raw_drv_attrs))

/* The methods' tables, for whoever walks them all. */
#define RAW_METHOD_REF(_n, _m, _a) &raw_##_n,
static const struct raw_method *const raw_methods[] = {
	IBPD_PD_METHODS(RAW_METHOD_REF)
};

#define RAW_NMETHODS (sizeof(raw_methods) / sizeof(raw_methods[0]))

/* The attribute of id in c, or NULL. */
static inline struct ib_uverbs_attr *raw_find(struct raw_cmd *c, uint16_t id)
{
	unsigned int i;

	for (i = 0; i < c->hdr.num_attrs; i++)
		if (c->attrs[i].attr_id == id)
			return &c->attrs[i];
	return NULL;
}

/* The row of id in m's table, or NULL. */
static inline const struct raw_attr_spec *
raw_spec(const struct raw_method *m, uint16_t id)
{
	unsigned int i;

	for (i = 0; i < m->nattrs; i++)
		if (m->attrs[i].id == id)
			return &m->attrs[i];
	return NULL;
}

#endif /* IBPD_UVERBS_H */

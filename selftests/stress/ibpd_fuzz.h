/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Structure-aware uverbs ioctl calls for the fuzzers (ibpd_fuzz, the soak,
 * the coverage-guided ibpd_kcov_fuzz): a call is a well-formed header with
 * an object, a method, a driver id and up to FUZZ_ATTRS attributes, each
 * with an id, a length, flags and data that is an inline value, a pointer
 * into a scratch buffer, a bad pointer or a handle of the file (PDs, MRs,
 * or any small number). The write path is reached through INVOKE_WRITE
 * with command buffers of the command's own size. Calls are plain data:
 * they can be kept, mutated and replayed.
 */

#ifndef IBPD_FUZZ_H
#define IBPD_FUZZ_H

#include "ibpd_test.h"

#define FUZZ_ATTRS 7
#define FUZZ_PAYLOAD 256
#define FUZZ_SCRATCH (64 * 1024)
#define FUZZ_HANDLES 16

/* What an attribute's data field holds. */
enum fuzz_kind {
	FUZZ_INLINE,		/* val, as it is */
	FUZZ_SCRATCH_PTR,	/* the scratch buffer + val */
	FUZZ_PAYLOAD_PTR,	/* the call's payload (copied to scratch) */
	FUZZ_HANDLE,		/* handle val of the file's pool */
	FUZZ_BAD_PTR,		/* unmapped */
	FUZZ_KINDS
};

struct fuzz_attr {
	uint16_t id;
	uint16_t len;
	uint16_t flags;
	uint16_t reserved;
	uint8_t kind;
	uint64_t val;
};

struct fuzz_call {
	uint16_t obj;
	uint16_t meth;
	uint32_t driver_id;	/* FUZZ_DRIVER_OK: the device's */
	uint8_t nattrs;
	struct fuzz_attr a[FUZZ_ATTRS];
	uint8_t payload[FUZZ_PAYLOAD];
};

#define FUZZ_DRIVER_OK 0xffffffffu

/*
 * The objects a fuzzer's calls may hit: real handles of the file, refreshed
 * by whoever owns it, and the scratch buffer the pointers point into.
 */
struct fuzz_ctx {
	unsigned int seed;
	char *scratch;
	uint32_t handles[FUZZ_HANDLES];
};

static inline uint32_t fuzz_rnd(struct fuzz_ctx *f)
{
	return rand_r(&f->seed);
}

static inline uint32_t fuzz_pick(struct fuzz_ctx *f, const uint32_t *v,
				 size_t n)
{
	return v[fuzz_rnd(f) % n];
}

#define FUZZ_PICK(f, ...) ({ const uint32_t _v[] = { __VA_ARGS__ };	\
			     fuzz_pick(f, _v, sizeof(_v) / sizeof(_v[0])); })

/* Write commands with the size of their request and response. */
static const struct {
	uint32_t cmd;
	uint16_t in, out;
} fuzz_writes[] = {
	{ IB_USER_VERBS_CMD_GET_CONTEXT, sizeof(struct ib_uverbs_get_context),
	  sizeof(struct ib_uverbs_get_context_resp) },
	{ IB_USER_VERBS_CMD_QUERY_DEVICE,
	  sizeof(struct ib_uverbs_query_device),
	  sizeof(struct ib_uverbs_query_device_resp) },
	{ IB_USER_VERBS_CMD_QUERY_PORT, sizeof(struct ib_uverbs_query_port),
	  sizeof(struct ib_uverbs_query_port_resp) },
	{ IB_USER_VERBS_CMD_ALLOC_PD, sizeof(struct ib_uverbs_alloc_pd),
	  sizeof(struct ib_uverbs_alloc_pd_resp) },
	{ IB_USER_VERBS_CMD_DEALLOC_PD, sizeof(struct ib_uverbs_dealloc_pd),
	  0 },
	{ IB_USER_VERBS_CMD_REG_MR, sizeof(struct ib_uverbs_reg_mr),
	  sizeof(struct ib_uverbs_reg_mr_resp) },
	{ IB_USER_VERBS_CMD_REREG_MR, sizeof(struct ib_uverbs_rereg_mr),
	  sizeof(struct ib_uverbs_rereg_mr_resp) },
	{ IB_USER_VERBS_CMD_DEREG_MR, sizeof(struct ib_uverbs_dereg_mr), 0 },
	{ IB_USER_VERBS_CMD_ALLOC_MW, sizeof(struct ib_uverbs_alloc_mw),
	  sizeof(struct ib_uverbs_alloc_mw_resp) },
	{ IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
	  sizeof(struct ib_uverbs_create_comp_channel),
	  sizeof(struct ib_uverbs_create_comp_channel_resp) },
	{ IB_USER_VERBS_CMD_CREATE_CQ, sizeof(struct ib_uverbs_create_cq),
	  sizeof(struct ib_uverbs_create_cq_resp) },
	{ IB_USER_VERBS_CMD_CREATE_AH, sizeof(struct ib_uverbs_create_ah),
	  sizeof(struct ib_uverbs_create_ah_resp) },
	{ IB_USER_VERBS_CMD_OPEN_XRCD, sizeof(struct ib_uverbs_open_xrcd),
	  sizeof(struct ib_uverbs_open_xrcd_resp) },
};

#define FUZZ_NWRITES (sizeof(fuzz_writes) / sizeof(fuzz_writes[0]))

/*
 * The core's next PD method id: ib_core's only PD method is
 * UVERBS_METHOD_PD_DESTROY (6.1 to 7.3), so this one names none.
 */
#define FUZZ_METHOD_PD_CORE_NEXT (UVERBS_METHOD_PD_DESTROY + 1)

/*
 * How many ids after ibpd's last method and after its last attribute the
 * fuzzers try: ids that name nothing (yet), such as the one an attribute
 * added to the uapi header alone takes.
 */
#define FUZZ_NEW_IDS 2

/*
 * An id of the driver namespace: one of the first n, those ibpd's tables
 * (lib/ibpd_uverbs.h) name, or one of the FUZZ_NEW_IDS after them.
 */
static inline uint16_t fuzz_drv_id(struct fuzz_ctx *f, unsigned int n)
{
	return RAW_DRV_ID0 + fuzz_rnd(f) % (n + FUZZ_NEW_IDS);
}

/* A method of OBJ: mostly one that exists, sometimes any. */
static inline uint16_t fuzz_method(struct fuzz_ctx *f, uint16_t obj)
{
	switch (obj) {
	case UVERBS_OBJECT_PD:
		return FUZZ_PICK(f, FUZZ_METHOD_PD_CORE_NEXT,
				 fuzz_drv_id(f, RAW_DRV_METHODS),
				 fuzz_drv_id(f, RAW_DRV_METHODS),
				 fuzz_drv_id(f, RAW_DRV_METHODS),
				 UVERBS_METHOD_PD_DESTROY,
				 fuzz_rnd(f) & 0xffff);
	case UVERBS_OBJECT_MR:
		return FUZZ_PICK(f, UVERBS_METHOD_MR_DESTROY,
				 UVERBS_METHOD_MR_DESTROY + 1 + fuzz_rnd(f) % 4,
				 fuzz_rnd(f) & 0xffff);
	case UVERBS_OBJECT_DEVICE:
		return FUZZ_PICK(f, UVERBS_METHOD_INVOKE_WRITE,
				 UVERBS_METHOD_INVOKE_WRITE,
				 UVERBS_METHOD_INVOKE_WRITE,
				 UVERBS_METHOD_QUERY_CONTEXT,
				 UVERBS_METHOD_INFO_HANDLES,
				 UVERBS_METHOD_GET_CONTEXT,
				 fuzz_rnd(f) % 16, fuzz_rnd(f) & 0xffff);
	default:
		return FUZZ_PICK(f, fuzz_rnd(f) % 8, fuzz_rnd(f) & 0xffff);
	}
}

/*
 * An attribute id: the driver's, the core's small ids (0 to 5: those of
 * the core methods called here), the write ones.
 */
static inline uint16_t fuzz_attr_id(struct fuzz_ctx *f)
{
	return FUZZ_PICK(f, fuzz_drv_id(f, RAW_DRV_ATTRS),
			 fuzz_drv_id(f, RAW_DRV_ATTRS),
			 fuzz_rnd(f) % 6, fuzz_rnd(f) % 6,
			 UVERBS_ATTR_WRITE_CMD, UVERBS_ATTR_CORE_IN,
			 UVERBS_ATTR_CORE_OUT, UVERBS_ATTR_UHW_IN,
			 UVERBS_ATTR_UHW_OUT, fuzz_rnd(f) & 0xffff);
}

static inline void fuzz_gen_attr(struct fuzz_ctx *f, struct fuzz_attr *a)
{
	a->id = fuzz_attr_id(f);
	a->len = FUZZ_PICK(f, 0, 1, 2, 4, 8, 8, 16, 24, 40,
			   fuzz_rnd(f) % FUZZ_PAYLOAD);
	a->kind = fuzz_rnd(f) % FUZZ_KINDS;
	a->val = FUZZ_PICK(f, 0, fuzz_rnd(f) % 8, fuzz_rnd(f) % 64,
			   fuzz_rnd(f) % (FUZZ_SCRATCH - FUZZ_PAYLOAD));
	if (a->kind == FUZZ_INLINE && fuzz_rnd(f) % 4 == 0)
		a->val = ((uint64_t)fuzz_rnd(f) << 32) | fuzz_rnd(f);
	/* unknown mandatory attributes end the call early: rarely */
	a->flags = fuzz_rnd(f) % 8 ? 0 :
		   FUZZ_PICK(f, UVERBS_ATTR_F_MANDATORY, fuzz_rnd(f) & 0xffff);
	a->reserved = fuzz_rnd(f) % 32 ? 0 : fuzz_rnd(f);
	if (a->id == UVERBS_ATTR_WRITE_CMD) {
		a->len = 8;
		a->kind = FUZZ_INLINE;
		a->val = fuzz_rnd(f) % 4 ?
			 fuzz_writes[fuzz_rnd(f) % FUZZ_NWRITES].cmd :
			 fuzz_rnd(f) % 64;
	}
}

/*
 * The payload: little-endian words, mostly small numbers (handles, sizes)
 * so that the write path's requests name real objects.
 */
static inline void fuzz_gen_payload(struct fuzz_ctx *f, uint8_t *p)
{
	int i;

	for (i = 0; i < FUZZ_PAYLOAD; i += 4) {
		uint32_t v = FUZZ_PICK(f, fuzz_rnd(f) % 8, fuzz_rnd(f) % 8, 0,
				       4096, fuzz_rnd(f));

		memcpy(p + i, &v, 4);
	}
}

/*
 * A whole call. A write through INVOKE_WRITE mostly gets its command's
 * own CORE_IN and CORE_OUT sizes, so that it reaches the handler.
 */
static inline void fuzz_gen(struct fuzz_ctx *f, struct fuzz_call *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->obj = FUZZ_PICK(f, UVERBS_OBJECT_PD, UVERBS_OBJECT_PD,
			   UVERBS_OBJECT_MR, UVERBS_OBJECT_DEVICE,
			   UVERBS_OBJECT_DEVICE, fuzz_rnd(f) % 24,
			   fuzz_rnd(f) & 0xffff);
	c->meth = fuzz_method(f, c->obj);
	c->driver_id = fuzz_rnd(f) % 64 ? FUZZ_DRIVER_OK : fuzz_rnd(f) % 32;
	fuzz_gen_payload(f, c->payload);
	if (c->obj == UVERBS_OBJECT_DEVICE &&
	    c->meth == UVERBS_METHOD_INVOKE_WRITE && fuzz_rnd(f) % 4) {
		unsigned int w = fuzz_rnd(f) % FUZZ_NWRITES;

		c->a[0] = (struct fuzz_attr){ .id = UVERBS_ATTR_WRITE_CMD,
			.len = 8, .val = fuzz_writes[w].cmd };
		c->a[1] = (struct fuzz_attr){ .id = UVERBS_ATTR_CORE_IN,
			.len = fuzz_writes[w].in, .kind = FUZZ_PAYLOAD_PTR };
		c->nattrs = 2;
		if (fuzz_writes[w].out)
			c->a[c->nattrs++] = (struct fuzz_attr){
				.id = UVERBS_ATTR_CORE_OUT,
				.len = fuzz_writes[w].out,
				.kind = FUZZ_SCRATCH_PTR,
				.val = FUZZ_PAYLOAD };
		if (fuzz_rnd(f) % 4 == 0)
			fuzz_gen_attr(f, &c->a[c->nattrs++]);
		return;
	}
	c->nattrs = fuzz_rnd(f) % (FUZZ_ATTRS + 1);
	for (i = 0; i < c->nattrs; i++)
		fuzz_gen_attr(f, &c->a[i]);
}

/* One random change to a call, as a coverage-guided fuzzer makes them. */
static inline void fuzz_mutate(struct fuzz_ctx *f, struct fuzz_call *c)
{
	struct fuzz_attr *a = c->nattrs ? &c->a[fuzz_rnd(f) % c->nattrs] : NULL;
	uint32_t v;

	switch (fuzz_rnd(f) % 10) {
	case 0:
		c->meth = fuzz_method(f, c->obj);
		break;
	case 1:			/* add an attribute */
		if (c->nattrs < FUZZ_ATTRS)
			fuzz_gen_attr(f, &c->a[c->nattrs++]);
		break;
	case 2:			/* drop one */
		if (a)
			*a = c->a[--c->nattrs];
		break;
	case 3:
		if (a)
			a->len = FUZZ_PICK(f, 0, a->len + 1, a->len - 1,
					   a->len * 2, a->len / 2, 8,
					   fuzz_rnd(f) % FUZZ_PAYLOAD);
		break;
	case 4:
		if (a)
			a->id = fuzz_attr_id(f);
		break;
	case 5:
		if (a) {
			a->kind = fuzz_rnd(f) % FUZZ_KINDS;
			a->val = fuzz_rnd(f) % 16;
		}
		break;
	case 6:
		if (a)
			a->val ^= 1ULL << (fuzz_rnd(f) % 64);
		break;
	case 7:
		if (a)
			a->flags = FUZZ_PICK(f, 0, UVERBS_ATTR_F_MANDATORY,
					     UVERBS_ATTR_F_VALID_OUTPUT,
					     fuzz_rnd(f) & 0xffff);
		break;
	default:		/* a word of the payload */
		v = FUZZ_PICK(f, 0, 1, fuzz_rnd(f) % 8, 4096, 0xffffffff,
			      fuzz_rnd(f));
		memcpy(c->payload + (fuzz_rnd(f) % (FUZZ_PAYLOAD / 4)) * 4,
		       &v, 4);
		break;
	}
}

static inline uint64_t fuzz_data(struct fuzz_ctx *f, const struct fuzz_attr *a)
{
	switch (a->kind) {
	case FUZZ_SCRATCH_PTR:
		return (uintptr_t)(f->scratch +
				   a->val % (FUZZ_SCRATCH - FUZZ_PAYLOAD));
	case FUZZ_PAYLOAD_PTR:
		return (uintptr_t)f->scratch;
	case FUZZ_HANDLE:
		return f->handles[a->val % FUZZ_HANDLES];
	case FUZZ_BAD_PTR:
		return 0x10 + (a->val & 0xff0);
	default:
		return a->val;
	}
}

/*
 * Closes the event fds (completion channels, async event files: anon
 * inodes "[infinibandevent]") the calls made, which would otherwise use
 * up the process's fds. Returns how many.
 */
static inline int fuzz_close_event_fds(void)
{
	char path[64], link[64];
	struct dirent *de;
	int n = 0, fd;
	ssize_t len;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (strstr(link, "[infinibandevent]") && !close(fd))
			n++;
	}
	closedir(d);
	return n;
}

/* Sends the call on fd: 0 or the errno. */
static inline int fuzz_exec(struct fuzz_ctx *f, int fd,
			    const struct fuzz_call *fc)
{
	struct raw_cmd c;
	int i;

	memcpy(f->scratch, fc->payload, FUZZ_PAYLOAD);
	raw_init(&c, fc->obj, fc->meth);
	if (fc->driver_id != FUZZ_DRIVER_OK)
		c.hdr.driver_id = fc->driver_id;
	for (i = 0; i < fc->nattrs && i < FUZZ_ATTRS; i++) {
		const struct fuzz_attr *a = &fc->a[i];
		struct ib_uverbs_attr *ra;

		ra = raw_attr(&c, a->id, a->len, fuzz_data(f, a));
		ra->flags = a->flags;
		ra->attr_data.reserved = a->reserved;
	}
	return raw_exec(fd, &c);
}

#endif /* IBPD_FUZZ_H */

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
 * ibpd's own methods are built as libibpd sends them through rdma-core's
 * command buffers (user/provider/cmd_pd.c): the same attributes in the
 * same order, each mandatory or optional alike, with the ids of
 * uapi/rdma/ibpd_user_ioctl_cmds.h and no other. A change to one is a
 * change to the other.
 */

#ifndef IBPD_UVERBS_H
#define IBPD_UVERBS_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ibpd_user_ioctl_cmds.h>

/* A command: its header and room for its attributes. */
struct raw_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[8];
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

/* Sends the command on fd: 0 or the errno of the ioctl. */
static inline int raw_exec(int fd, struct raw_cmd *c)
{
	if (!c->hdr.length)
		c->hdr.length = sizeof(c->hdr) +
				c->hdr.num_attrs * sizeof(c->attrs[0]);
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

/*
 * IBPD_METHOD_PD_ALLOC, as libibpd's ibpd_cmd_alloc_pd() sends it: the
 * new PD's handle (in c->attrs[0].data once the command is sent), where
 * its pdn goes and, when id is not NULL, where its identity goes
 * (optional).
 */
static inline void raw_pd_alloc_cmd(struct raw_cmd *c, uint32_t *pdn,
				    uint64_t *id)
{
	raw_init(c, UVERBS_OBJECT_PD, IBPD_METHOD_PD_ALLOC);
	raw_attr(c, IBPD_ATTR_PD_ALLOC_HANDLE, 0, 0);
	raw_attr(c, IBPD_ATTR_PD_ALLOC_RESP_PDN, sizeof(*pdn), (uintptr_t)pdn);
	if (id)
		raw_out_opt(c, IBPD_ATTR_PD_ALLOC_RESP_ID, id, sizeof(*id));
}

/* The core's UVERBS_METHOD_PD_DESTROY of handle. */
static inline void raw_pd_destroy_cmd(struct raw_cmd *c, uint32_t handle)
{
	raw_init(c, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY);
	raw_attr(c, UVERBS_ATTR_DESTROY_PD_HANDLE, 0, handle);
}

/*
 * The optional attributes of IBPD_METHOD_PD_IMPORT, each sent when it is
 * not NULL, in this order: where the PD's identity goes (libibpd asks
 * for it), the identity it must have (else ESTALE: ibpddv_import_pd()),
 * where its use count goes (ibpddv_query_pd()), and the pdn it must have
 * (else ESTALE; libibpd never sends it).
 */
struct raw_import_opt {
	uint64_t *id;
	const uint64_t *want_id;
	uint32_t *usecnt;
	const uint32_t *want_pdn;
};

/*
 * IBPD_METHOD_PD_IMPORT of handle, as libibpd's ibpd_cmd_import_pd()
 * sends it: the handle, where the pdn goes (mandatory), then the
 * attributes of opt (which may be NULL). The ABI tests send it changed.
 */
static inline void raw_pd_import_cmd(struct raw_cmd *c, uint32_t handle,
				     uint32_t *pdn,
				     const struct raw_import_opt *opt)
{
	raw_init(c, UVERBS_OBJECT_PD, IBPD_METHOD_PD_IMPORT);
	raw_attr(c, IBPD_ATTR_PD_IMPORT_HANDLE, 0, handle);
	raw_attr(c, IBPD_ATTR_PD_IMPORT_RESP_PDN, sizeof(*pdn), (uintptr_t)pdn);
	if (!opt)
		return;
	if (opt->id)
		raw_out_opt(c, IBPD_ATTR_PD_IMPORT_RESP_ID, opt->id,
			    sizeof(*opt->id));
	if (opt->want_id)
		raw_in(c, IBPD_ATTR_PD_IMPORT_ID, opt->want_id,
		       sizeof(*opt->want_id));
	if (opt->usecnt)
		raw_attr(c, IBPD_ATTR_PD_IMPORT_RESP_USECNT,
			 sizeof(*opt->usecnt), (uintptr_t)opt->usecnt);
	if (opt->want_pdn)
		raw_in(c, IBPD_ATTR_PD_IMPORT_PDN, opt->want_pdn,
		       sizeof(*opt->want_pdn));
}

#endif /* IBPD_UVERBS_H */

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * RDMA netlink (NETLINK_RDMA, RDMA_NL_NLDEV): find a device's uverbs char
 * device and the driver id its ioctl header must carry, by device name or
 * by char device number, the way rdma-core discovers devices.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "ibpd_int.h"

#define NL_BUF 8192

struct nl_req {
	struct nlmsghdr nlh;
	char buf[256];
};

static void nl_put(struct nl_req *req, uint16_t type, const void *data,
		   uint16_t len)
{
	struct nlattr *nla = (void *)((char *)req + NLMSG_ALIGN(req->nlh.nlmsg_len));

	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy((char *)nla + NLA_HDRLEN, data, len);
	req->nlh.nlmsg_len = NLMSG_ALIGN(req->nlh.nlmsg_len) + NLA_ALIGN(nla->nla_len);
}

static void nl_init(struct nl_req *req, uint16_t op, uint16_t flags,
		    uint32_t seq)
{
	memset(req, 0, sizeof(*req));
	req->nlh.nlmsg_len = NLMSG_LENGTH(0);
	req->nlh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	req->nlh.nlmsg_flags = NLM_F_REQUEST | flags;
	req->nlh.nlmsg_seq = seq;
}

/* Calls fn for every attribute of every reply message until DONE/ACK. */
static int nl_talk(int fd, struct nl_req *req,
		   void (*fn)(uint16_t type, const void *data, uint16_t len,
			      void *arg, int newmsg),
		   void *arg)
{
	char buf[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	if (send(fd, req, req->nlh.nlmsg_len, 0) < 0)
		return errno;

	for (;;) {
		struct nlmsghdr *nlh;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno;
		for (nlh = (void *)buf; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
			struct nlattr *nla;
			int len, first = 1;

			if (nlh->nlmsg_seq != req->nlh.nlmsg_seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				return e->error ? -e->error : 0;
			}
			len = NLMSG_PAYLOAD(nlh, 0);
			for (nla = NLMSG_DATA(nlh);
			     len >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
			     nla->nla_len <= len;
			     len -= NLA_ALIGN(nla->nla_len),
			     nla = (void *)((char *)nla + NLA_ALIGN(nla->nla_len))) {
				fn(nla->nla_type & NLA_TYPE_MASK,
				   (char *)nla + NLA_HDRLEN,
				   nla->nla_len - NLA_HDRLEN, arg, first);
				first = 0;
			}
			if (!(nlh->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

#define MAX_DEVS 256

struct dev_list {
	uint32_t index[MAX_DEVS];
	char name[MAX_DEVS][IBPD_NAME_MAX];
	int n;
};

static void on_dev(uint16_t type, const void *data, uint16_t len, void *arg,
		   int newmsg)
{
	struct dev_list *l = arg;

	if (newmsg && l->n < MAX_DEVS)
		l->n++;
	if (!l->n)
		return;
	if (type == RDMA_NLDEV_ATTR_DEV_INDEX && len >= 4)
		memcpy(&l->index[l->n - 1], data, 4);
	else if (type == RDMA_NLDEV_ATTR_DEV_NAME)
		snprintf(l->name[l->n - 1], IBPD_NAME_MAX, "%.*s", len,
			 (const char *)data);
}

static void on_chardev(uint16_t type, const void *data, uint16_t len,
		       void *arg, int newmsg)
{
	struct ibpd_nl_dev *d = arg;
	uint64_t v;

	if (type == RDMA_NLDEV_ATTR_CHARDEV && len >= 8) {
		memcpy(&v, data, 8);
		d->chardev = (dev_t)v;
	} else if (type == RDMA_NLDEV_ATTR_CHARDEV_NAME) {
		snprintf(d->chardev_name, IBPD_NAME_MAX, "%.*s", len,
			 (const char *)data);
	} else if (type == RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID && len >= 4) {
		memcpy(&d->driver_id, data, 4);
	}
}

/* Match by name when ibdev_name is set, else by char device number. */
int ibpd_nl_find(const char *ibdev_name, dev_t chardev,
		 struct ibpd_nl_dev *out)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct dev_list *l;
	struct nl_req req;
	int fd, i, ret;
	uint32_t seq = 1;

	l = calloc(1, sizeof(*l));
	if (!l)
		return ENOMEM;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0) {
		ret = errno;
		goto out_free;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = errno;
		goto out;
	}

	nl_init(&req, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, seq++);
	ret = nl_talk(fd, &req, on_dev, l);
	if (ret)
		goto out;

	ret = ENODEV;
	for (i = 0; i < l->n; i++) {
		struct ibpd_nl_dev d = {};
		int err;

		if (ibdev_name && strcmp(ibdev_name, l->name[i]))
			continue;
		nl_init(&req, RDMA_NLDEV_CMD_GET_CHARDEV, 0, seq++);
		nl_put(&req, RDMA_NLDEV_ATTR_DEV_INDEX, &l->index[i], 4);
		nl_put(&req, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", 7);
		err = nl_talk(fd, &req, on_chardev, &d);
		/* a device without uverbs, or one that went away meanwhile */
		if (err == EOPNOTSUPP || err == ENODEV || err == EINVAL ||
		    (!err && !d.chardev_name[0]))
			continue;
		if (err) {
			ret = err;
			break;
		}
		if (!ibdev_name && d.chardev != chardev)
			continue;
		memcpy(d.ibdev_name, l->name[i], IBPD_NAME_MAX);
		*out = d;
		ret = 0;
		break;
	}
out:
	close(fd);
out_free:
	free(l);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * RDMA netlink (NETLINK_RDMA, RDMA_NL_NLDEV): find a device's uverbs char
 * device and the driver id its ioctl header must carry, by device name or
 * by char device number, the way rdma-core discovers devices; and the list
 * of devices.
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

/*
 * Calls fn for every device that has a uverbs char device (only the one
 * called name, when name is set), in netlink index order, until fn returns
 * non-zero (that value is returned; 0 when all were visited, or an errno
 * value of netlink).
 */
static int nl_for_each_dev(const char *name,
			   int (*fn)(const struct ibpd_nl_dev *d, void *arg),
			   void *arg)
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

	for (i = 0; i < l->n; i++) {
		struct ibpd_nl_dev d = {};

		if (name && strcmp(name, l->name[i]))
			continue;
		nl_init(&req, RDMA_NLDEV_CMD_GET_CHARDEV, 0, seq++);
		nl_put(&req, RDMA_NLDEV_ATTR_DEV_INDEX, &l->index[i], 4);
		nl_put(&req, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", 7);
		ret = nl_talk(fd, &req, on_chardev, &d);
		/* a device without uverbs, or one that went away meanwhile */
		if (ret == EOPNOTSUPP || ret == ENODEV || ret == EINVAL ||
		    (!ret && !d.chardev_name[0])) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		memcpy(d.ibdev_name, l->name[i], IBPD_NAME_MAX);
		d.index = l->index[i];
		ret = fn(&d, arg);
		if (ret)
			break;
	}
out:
	close(fd);
out_free:
	free(l);
	return ret;
}

struct find_arg {
	const char *ibdev_name;
	dev_t chardev;
	struct ibpd_nl_dev *out;
};

static int find_one(const struct ibpd_nl_dev *d, void *arg)
{
	struct find_arg *f = arg;

	if (f->ibdev_name ? strcmp(f->ibdev_name, d->ibdev_name) :
			    d->chardev != f->chardev)
		return 0;
	*f->out = *d;
	return -1;
}

/* Match by name when ibdev_name is set, else by char device number. */
int ibpd_nl_find(const char *ibdev_name, dev_t chardev,
		 struct ibpd_nl_dev *out)
{
	struct find_arg f = { ibdev_name, chardev, out };
	int ret = nl_for_each_dev(ibdev_name, find_one, &f);

	if (ret == -1)
		return 0;
	/* no RDMA netlink family: ib_core is not loaded, there is no device */
	return ret && ret != EPROTONOSUPPORT ? ret : ENODEV;
}

struct list_arg {
	struct ibpd_device **list;
	int n;
};

static int list_one(const struct ibpd_nl_dev *d, void *arg)
{
	struct list_arg *a = arg;
	struct ibpd_device *dev;

	if (a->n >= MAX_DEVS)
		return 0;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return ENOMEM;
	memcpy(dev->name, d->ibdev_name, sizeof(dev->name));
	memcpy(dev->dev_name, d->chardev_name, sizeof(dev->dev_name));
	dev->index = d->index;
	dev->driver_id = d->driver_id;
	a->list[a->n++] = dev;
	return 0;
}

/*
 * The RDMA devices that have a uverbs char device, as a NULL-terminated
 * array; *num_devices (when not NULL) is set to their number.
 */
struct ibpd_device **ibpd_get_device_list(int *num_devices)
{
	struct list_arg a = {};
	int ret;

	a.list = calloc(MAX_DEVS + 1, sizeof(*a.list));
	if (!a.list)
		return NULL;
	ret = nl_for_each_dev(NULL, list_one, &a);
	/* no RDMA netlink family: ib_core is not loaded, there is no device */
	if (ret == EPROTONOSUPPORT && !a.n)
		ret = 0;
	if (ret) {
		ibpd_free_device_list(a.list);
		errno = ret;
		return NULL;
	}
	if (num_devices)
		*num_devices = a.n;
	return a.list;
}

void ibpd_free_device_list(struct ibpd_device **list)
{
	struct ibpd_device **d;

	if (!list)
		return;
	for (d = list; *d; d++)
		free(*d);
	free(list);
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ibpd_link_race MODE TRIES NETNS TYPE IBDEV NETDEV: "rdma link add IBDEV
 * type TYPE netdev NETDEV" (RDMA_NLDEV_CMD_NEWLINK) racing the move of
 * NETDEV to network namespace NETNS (MODE "move") or its deletion ("del"),
 * TRIES times, each on a new dummy NETDEV. The netdev goes after a delay
 * that steps across the first half of what a plain add takes (measured
 * first), so that the move or deletion lands before, during and after the
 * time the device cannot be taken, early in the add. After each try the
 * device must be gone within 10 s: a device whose netdev left the
 * namespace, or went, while it registered must not stay. Netlink directly,
 * no iproute2: a try costs no process.
 * An add may fail: ENODEV when the netdev went first. It may also fail with
 * ENFILE when the name is still held by the last device: the core takes it
 * off its list of names only at ib_dealloc_device(), after device_del() has
 * taken the sysfs entry that gone() watches. Such an add fails in
 * ib_register_device() before the window this test is after: a measuring
 * add is made again, and so is a try, for up to 10 s of ENFILE each.
 * Prints one line per failed try and a summary; exit status 0 when no
 * device stayed, 1 when one did (it is left for the caller to see), 2 on
 * a setup error. TYPE may be any rdma link type: "rxe" shows the same
 * window in the core's drivers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <pthread.h>
#include <rdma/rdma_netlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 25

static const char *type, *ibdev, *netdev;
static char sysfs_path[256];

struct req {
	struct nlmsghdr nh;
	char buf[1024];
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void put_attr(struct nlmsghdr *nh, int type, const void *data,
		     int len)
{
	struct nlattr *a = (void *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void put_str(struct nlmsghdr *nh, int type, const char *s)
{
	put_attr(nh, type, s, strlen(s) + 1);
}

/* Sends the request, returns 0 or the negative errno of its ack. */
static int talk(int fd, struct nlmsghdr *nh)
{
	char buf[4096];
	struct nlmsghdr *r = (void *)buf;
	ssize_t n;

	nh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(fd, nh, nh->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (r = (void *)buf; NLMSG_OK(r, n); r = NLMSG_NEXT(r, n))
			if (r->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(r))->error;
	}
}

static int nl_socket(int proto)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);

	if (fd < 0)
		perror("netlink socket");
	return fd;
}

/* RDMA_NLDEV_CMD_NEWLINK on its own socket: called from the add thread. */
static int rdma_newlink(void)
{
	struct req req = { .nh.nlmsg_len = NLMSG_HDRLEN };
	int fd = nl_socket(NETLINK_RDMA), ret;

	if (fd < 0)
		return -errno;
	req.nh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
					     RDMA_NLDEV_CMD_NEWLINK);
	put_str(&req.nh, RDMA_NLDEV_ATTR_DEV_NAME, ibdev);
	put_str(&req.nh, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	put_str(&req.nh, RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	ret = talk(fd, &req.nh);
	close(fd);
	return ret;
}

/* RTM_NEWLINK or RTM_DELLINK of NETDEV by name, with an attribute. */
static struct req link_req(int msg, int flags)
{
	struct req req = {
		.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		.nh.nlmsg_type = msg,
		.nh.nlmsg_flags = flags,
	};

	put_str(&req.nh, IFLA_IFNAME, netdev);
	return req;
}

static int dummy_add(int rtnl)
{
	struct req req = link_req(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	struct nlattr *info = (void *)((char *)&req + req.nh.nlmsg_len);

	put_attr(&req.nh, IFLA_LINKINFO, NULL, 0);
	put_str(&req.nh, IFLA_INFO_KIND, "dummy");
	info->nla_len = (char *)&req + req.nh.nlmsg_len - (char *)info;
	return talk(rtnl, &req.nh);
}

static int link_del(int rtnl)
{
	struct req req = link_req(RTM_DELLINK, 0);

	return talk(rtnl, &req.nh);
}

static int link_move(int rtnl, int nsfd)
{
	struct req req = link_req(RTM_NEWLINK, 0);
	__u32 fd = nsfd;

	put_attr(&req.nh, IFLA_NET_NS_FD, &fd, sizeof(fd));
	return talk(rtnl, &req.nh);
}

static int registered(void)
{
	return access(sysfs_path, F_OK) == 0;
}

/* Up to 10 s for IBDEV to go. */
static int gone(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!registered())
			return 1;
		usleep(10000);
	}
	return 0;
}

static void *add_thread(void *arg)
{
	*(int *)arg = rdma_newlink();
	return NULL;
}

/* Up to 10 s of ENFILE, the name still held: see the top of this file. */
static int name_held(int ret, int *waited)
{
	if (ret != -ENFILE || *waited >= 1000)
		return 0;
	++*waited;
	usleep(10000);
	return 1;
}

/* A socket of network namespace NSFD's. */
static int ns_socket(int nsfd, int proto)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), fd;

	if (self < 0 || setns(nsfd, CLONE_NEWNET)) {
		perror("setns");
		return -1;
	}
	fd = nl_socket(proto);
	if (setns(self, CLONE_NEWNET)) {
		perror("setns back");
		return -1;
	}
	close(self);
	return fd;
}

int main(int argc, char **argv)
{
	int rtnl, ns_rtnl, nsfd, tries, move, i, ret, add_ret;
	int added = 0, enodev = 0, held = 0, other = 0, other_err = 0;
	int waited, again;
	long long t0, span = 0, took, delay;
	char path[128];
	pthread_t th;

	if (argc != 7) {
		fprintf(stderr,
			"usage: %s move|del TRIES NETNS TYPE IBDEV NETDEV\n",
			argv[0]);
		return 2;
	}
	move = !strcmp(argv[1], "move");
	tries = atoi(argv[2]);
	type = argv[4];
	ibdev = argv[5];
	netdev = argv[6];
	snprintf(sysfs_path, sizeof(sysfs_path), "/sys/class/infiniband/%s",
		 ibdev);
	snprintf(path, sizeof(path), "/run/netns/%s", argv[3]);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		perror(path);
		return 2;
	}
	rtnl = nl_socket(NETLINK_ROUTE);
	ns_rtnl = ns_socket(nsfd, NETLINK_ROUTE);
	if (rtnl < 0 || ns_rtnl < 0)
		return 2;

	/* The time of a plain add, the shortest of three (the first may be slow). */
	for (i = 0; i < 3; i++) {
		ret = dummy_add(rtnl);
		if (ret) {
			fprintf(stderr, "adding dummy %s: %s\n", netdev,
				strerror(-ret));
			return 2;
		}
		waited = 0;
		do {
			t0 = now_us();
			ret = rdma_newlink();
		} while (name_held(ret, &waited));
		if (ret) {
			fprintf(stderr, "rdma link add %s type %s netdev %s: %s\n",
				ibdev, type, netdev, strerror(-ret));
			return 2;
		}
		took = now_us() - t0;
		if (!span || took < span)
			span = took;
		link_del(rtnl);
		if (!gone()) {
			fprintf(stderr, "%s stayed after its netdev's deletion\n",
				ibdev);
			return 1;
		}
	}

	waited = 0;
	for (i = 0; i < tries; i++) {
		/* 0 to half the add's time, in STEPS steps */
		delay = span / 2 * (i % STEPS) / (STEPS - 1);
		ret = dummy_add(rtnl);
		if (ret) {
			fprintf(stderr, "try %d: adding dummy %s: %s\n", i,
				netdev, strerror(-ret));
			return 2;
		}
		t0 = now_us();
		if (pthread_create(&th, NULL, add_thread, &add_ret))
			return 2;
		while (now_us() - t0 < delay)
			;
		ret = move ? link_move(rtnl, nsfd) : link_del(rtnl);
		pthread_join(th, NULL);
		if (ret) {
			fprintf(stderr, "try %d: %s %s: %s\n", i,
				move ? "moving" : "deleting", netdev,
				strerror(-ret));
			return 2;
		}
		again = name_held(add_ret, &waited);
		if (again) {
			held++;
		} else {
			waited = 0;
			if (!add_ret)
				added++;
			else if (add_ret == -ENODEV)
				enodev++;
			else if (!other++)
				other_err = -add_ret;
		}
		if (!again && !gone()) {
			printf("try %d (netdev %s after %lld us, add %s): %s still registered 10 s later\n",
			       i, move ? "moved" : "deleted", delay,
			       add_ret ? strerror(-add_ret) : "succeeded",
			       ibdev);
			fflush(stdout);
			return 1;
		}
		if (move && link_del(ns_rtnl)) {
			fprintf(stderr, "try %d: deleting %s in %s\n", i,
				netdev, argv[3]);
			return 2;
		}
		/* The add met the last device's name, short of the window: again. */
		if (again)
			i--;
	}
	printf("%d tries over 0-%lld us: the add succeeded %d times, ENODEV %d, other errors %d%s%s",
	       tries, span / 2, added, enodev, other, other ? ", the first " : "",
	       other ? strerror(other_err) : "");
	printf("; %d made again, the name still held\n", held);
	return 0;
}

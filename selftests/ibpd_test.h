/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Helpers for the ibpd selftests: raw uverbs ioctls (independent of
 * libibpd, so the ABI checks test the kernel), debugfs state and knobs,
 * and `rdma resource` counts.
 */

#ifndef IBPD_TEST_H
#define IBPD_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ibpd-abi.h>
#include <rdma/ibpd_compat_ioctl_cmds.h>

#include "ibpd.h"
#include "scm_rights.h"

static inline const char *test_dev(void)
{
	const char *d = getenv("IBPD_DEV");

	return d && *d ? d : "ibpd0";
}

/* A second context on the same file, through a dup'ed command fd. */
static inline struct ibpd_context *dup_ctx(struct ibpd_context *ctx)
{
	int fd = dup(ibpd_context_cmd_fd(ctx));
	struct ibpd_context *c;

	if (fd < 0)
		return NULL;
	c = ibpd_import_device(fd);
	if (!c)
		close(fd);
	return c;
}

struct raw_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[8];
};

static inline void raw_init(struct raw_cmd *c, uint16_t obj, uint16_t meth)
{
	memset(c, 0, sizeof(*c));
	c->hdr.object_id = obj;
	c->hdr.method_id = meth;
}

static inline struct ib_uverbs_attr *raw_attr(struct raw_cmd *c, uint16_t id,
					      uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a = &c->attrs[c->hdr.num_attrs++];

	a->attr_id = id;
	a->len = len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	a->data = data;
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

/* Returns 0 or the errno of the ioctl. */
static inline int raw_exec(int fd, struct raw_cmd *c)
{
	if (!c->hdr.length)
		c->hdr.length = sizeof(c->hdr) +
				c->hdr.num_attrs * sizeof(c->attrs[0]);
	return ioctl(fd, RDMA_VERBS_IOCTL, &c->hdr) ? errno : 0;
}

/*
 * The debugfs directory of device NAME: named after the device's index,
 * its "name" file tells the current name. Returns 0, or -1 if none.
 */
static inline int dbg_dir(char *buf, size_t len, const char *name)
{
	const char *root = "/sys/kernel/debug/ibpd";
	char path[512], cur[IBPD_DEVICE_NAME_MAX + 2];
	struct dirent *de;
	int ret = -1;
	DIR *d;
	FILE *f;

	d = opendir(root);
	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", root, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(cur, sizeof(cur), f)) {
			cur[strcspn(cur, "\n")] = 0;
			if (!strcmp(cur, name)) {
				ret = snprintf(buf, len, "%s/%.16s", root,
					       de->d_name) < (int)len ? 0 : -1;
			}
		}
		fclose(f);
	}
	closedir(d);
	return ret;
}

/*
 * A core write() command through UVERBS_METHOD_INVOKE_WRITE, as rdma-core
 * sends it, with optional driver data in (uin) and out (uout). Returns 0 or
 * the errno of the ioctl.
 */
static inline int raw_write(int fd, uint32_t command, const void *in,
			    uint16_t inlen, void *out, uint16_t outlen,
			    const void *uin, uint16_t uinlen, void *uout,
			    uint16_t uoutlen)
{
	struct raw_cmd c;

	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
	raw_attr(&c, UVERBS_ATTR_WRITE_CMD, sizeof(uint64_t), command);
	raw_in(&c, UVERBS_ATTR_CORE_IN, in, inlen);
	if (outlen)
		raw_attr(&c, UVERBS_ATTR_CORE_OUT, outlen, (uintptr_t)out);
	if (uinlen)
		raw_in(&c, UVERBS_ATTR_UHW_IN, uin, uinlen);
	if (uoutlen)
		raw_attr(&c, UVERBS_ATTR_UHW_OUT, uoutlen, (uintptr_t)uout);
	return raw_exec(fd, &c);
}

/* The uverbs character device of RDMA device NAME, opened; -1 if none. */
static inline int open_uverbs(const char *name)
{
	struct ibpd_device **list;
	char path[128] = "";
	int i, n, fd;

	list = ibpd_get_device_list(&n);
	if (!list)
		return -1;
	for (i = 0; i < n; i++)
		if (!strcmp(list[i]->name, name))
			snprintf(path, sizeof(path), "/dev/infiniband/%s",
				 list[i]->dev_name);
	ibpd_free_device_list(list);
	if (!*path)
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd;
}

static inline int dbg_path(char *buf, size_t len, const char *file)
{
	char dir[160];

	if (dbg_dir(dir, sizeof(dir), test_dev()))
		return snprintf(buf, len, "/nonexistent/%s", file);
	return snprintf(buf, len, "%s/%s", dir, file);
}

static inline long long dbg_read(const char *file)
{
	char path[256];
	long long v = -1;
	FILE *f;

	dbg_path(path, sizeof(path), file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Lines of a debugfs file; -1 if it cannot be read. */
static inline int dbg_count_lines(const char *file)
{
	char path[256], line[128];
	FILE *f;
	int n = 0;

	dbg_path(path, sizeof(path), file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static inline int dbg_write(const char *file, long long v)
{
	char path[256];
	FILE *f;
	int ret;

	dbg_path(path, sizeof(path), file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%lld\n", v) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* Lines of `rdma resource show TYPE dev DEV`: one per object. */
static inline int rdma_res_count(const char *type, const char *dev)
{
	char cmd[160], line[512];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s dev %s 2>/dev/null",
		 type, dev);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "dev ", 4))
			n++;
	if (pclose(p))
		return -1;
	return n;
}

static inline int rdma_res_pds(void)
{
	return rdma_res_count("pd", test_dev());
}

#endif /* IBPD_TEST_H */

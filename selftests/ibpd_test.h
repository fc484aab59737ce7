/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * Helpers for the ibpd selftests, with no library: raw uverbs ioctls (so
 * that the tests see the kernel's answers), debugfs state and knobs, and
 * `rdma resource` counts.
 */

#ifndef IBPD_TEST_H
#define IBPD_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ibpd-abi.h>

#include "lib/ibpd_debugfs.h"
#include "lib/ibpd_uverbs.h"

/* As the kernel's IB_DEVICE_NAME_MAX */
#define IB_DEVICE_NAME_MAX 64

static inline const char *test_dev(void)
{
	const char *d = getenv("IBPD_DEV");

	return d && *d ? d : "ibpd0";
}

/* The integer in environment variable NAME, def when it is unset or empty. */
static inline int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

/* Runs a shell command (printf format): its exit status, -1 if killed. */
static inline int __attribute__((format(printf, 1, 2)))
sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The uverbs character device of RDMA device NAME, opened (no context yet);
 * -1 if none. /sys/class/infiniband_verbs/uverbsN/ibdev names the device.
 */
static inline int open_uverbs(const char *name)
{
	char ent[64], path[96];

	if (find_named("/sys/class/infiniband_verbs", "uverbs", "ibdev", name,
		       ent, sizeof(ent)))
		return -1;
	snprintf(path, sizeof(path), "/dev/infiniband/%s", ent);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * The uverbs verbs as raw ioctls, in the manner of iommufd_utils.h: each
 * returns 0 or the errno of the call, so that a test sees the kernel's
 * answer and nothing else.
 */

/* A context on the file (UVERBS_METHOD_GET_CONTEXT). */
static inline int test_get_context(int fd)
{
	struct raw_cmd c;
	uint32_t vecs;

	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	raw_attr(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, sizeof(vecs),
		 (uintptr_t)&vecs);
	return raw_exec(fd, &c);
}

/*
 * Whether the ioctl header's driver id is that of the device behind fd: an
 * ioctl on an object that does not exist fails with EPROTONOSUPPORT under
 * the right one, with EINVAL under any other.
 */
static inline bool test_driver_id_ok(int fd)
{
	struct raw_cmd c;

	raw_init(&c, 0x3ff, 0);
	return raw_exec(fd, &c) == EPROTONOSUPPORT;
}

/* The file of device NAME with a context: its fd, or -errno. */
static inline int test_open(const char *name)
{
	int fd = open_uverbs(name), err;

	if (fd < 0)
		return -ENODEV;
	err = test_get_context(fd);
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

/* Whether the file has a context: what importing a device checks. */
static inline int test_query_context(int fd)
{
	struct raw_cmd c;

	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT);
	return raw_exec(fd, &c);
}

/*
 * The ioctl PD allocation, ibpd's IBPD_METHOD_PD_ALLOC (ib_core has none).
 * The response goes to *drv, which a test may make unwritable.
 */
static inline int test_pd_alloc_resp(int fd, uint32_t *handle,
				     struct ibpd_alloc_pd_resp *drv)
{
	struct raw_cmd c;
	int err;

	raw_pd_alloc_cmd(&c, &(union raw_pd_alloc_args){
		.handle = RAW_NEW, .resp_pdn = &drv->pdn,
		.resp_id = (uint64_t *)&drv->id });
	err = raw_exec(fd, &c);
	if (!err)
		*handle = raw_find(&c, IBPD_ATTR_PD_ALLOC_HANDLE)->data;
	return err;
}

/* pdn and id may be NULL. */
static inline int test_pd_alloc(int fd, uint32_t *handle, uint32_t *pdn,
				uint64_t *id)
{
	struct ibpd_alloc_pd_resp drv = {};
	int err = test_pd_alloc_resp(fd, handle, &drv);

	if (!err) {
		if (pdn)
			*pdn = drv.pdn;
		if (id)
			*id = drv.id;
	}
	return err;
}

/* The core's write-path ALLOC_PD; drv may be NULL. */
static inline int test_pd_alloc_write(int fd, uint32_t *handle,
				      struct ibpd_alloc_pd_resp *drv)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp;
	int err;

	err = raw_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req),
			&resp, sizeof(resp), NULL, 0, drv,
			drv ? sizeof(*drv) : 0);
	if (!err)
		*handle = resp.pd_handle;
	return err;
}

static inline int test_pd_destroy(int fd, uint32_t handle)
{
	struct raw_cmd c;

	raw_pd_destroy_cmd(&c, handle);
	return raw_exec(fd, &c);
}

/*
 * IBPD_METHOD_PD_IMPORT; want_id (ESTALE unless it matches), pdn, id and
 * usecnt may be NULL.
 */
static inline int test_pd_import(int fd, uint32_t handle,
				 const uint64_t *want_id, uint32_t *pdn,
				 uint64_t *id, uint32_t *usecnt)
{
	struct raw_cmd c;
	uint32_t p;

	raw_pd_import_cmd(&c, &(union raw_pd_import_args){
		.handle = &handle, .resp_pdn = pdn ? pdn : &p, .resp_id = id,
		.id = want_id, .resp_usecnt = usecnt });
	return raw_exec(fd, &c);
}

/*
 * IBPD_METHOD_PD_IMPORT checked against a pdn: ESTALE when the handle
 * names a PD of another pdn.
 */
static inline int test_pd_import_pdn(int fd, uint32_t handle, uint32_t pdn)
{
	struct raw_cmd c;
	uint32_t p;

	raw_pd_import_cmd(&c, &(union raw_pd_import_args){
		.handle = &handle, .resp_pdn = &p, .pdn = &pdn });
	return raw_exec(fd, &c);
}

/* MR access flags: the values of enum ib_access_flags. */
enum {
	TEST_ACCESS_LOCAL_WRITE = 1 << 0,
	TEST_ACCESS_REMOTE_WRITE = 1 << 1,
	TEST_ACCESS_REMOTE_READ = 1 << 2,
};

/* The core's write-path REG_MR; lkey may be NULL. */
static inline int test_mr_reg(int fd, uint32_t pd, void *addr, size_t len,
			      int access, uint32_t *handle, uint32_t *lkey)
{
	struct ib_uverbs_reg_mr req = {
		.start = (uintptr_t)addr,
		.length = len,
		.hca_va = (uintptr_t)addr,
		.pd_handle = pd,
		.access_flags = access,
	};
	struct ib_uverbs_reg_mr_resp resp;
	int err;

	err = raw_write(fd, IB_USER_VERBS_CMD_REG_MR, &req, sizeof(req),
			&resp, sizeof(resp), NULL, 0, NULL, 0);
	if (!err) {
		*handle = resp.mr_handle;
		if (lkey)
			*lkey = resp.lkey;
	}
	return err;
}

static inline int test_mr_destroy(int fd, uint32_t handle)
{
	struct raw_cmd c;

	raw_init(&c, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY);
	raw_attr(&c, UVERBS_ATTR_DESTROY_MR_HANDLE, 0, handle);
	return raw_exec(fd, &c);
}

/*
 * Whether RDMA device NAME is ibpd's: its "hca_type" sysfs attribute, as
 * the provider matches it (a name may change with `rdma dev set`). Only
 * then may ibpd's driver-namespace methods reach it.
 */
static inline bool test_is_ibpd(const char *name)
{
	char path[128], type[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%.64s/hca_type",
		 name);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(type, sizeof(type), f))
		type[0] = 0;
	fclose(f);
	type[strcspn(type, "\n")] = 0;
	return !strcmp(type, "ibpd");
}

/*
 * The most handles one INFO_HANDLES call returns: the list's length in
 * bytes is 16-bit.
 */
#define TEST_LIST_PDS_MAX 16383

/*
 * The handles of the objects of type OBJ (UVERBS_OBJECT_*) on the file
 * (UVERBS_METHOD_INFO_HANDLES): up to max (at most TEST_LIST_PDS_MAX) in
 * handles, how many in *total.
 */
static inline int test_list_objects(int fd, uint16_t obj, uint32_t *handles,
				    size_t max, uint32_t *total)
{
	struct raw_cmd c;

	if (max > TEST_LIST_PDS_MAX)
		max = TEST_LIST_PDS_MAX;
	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES);
	raw_attr(&c, UVERBS_ATTR_INFO_OBJECT_ID, sizeof(uint64_t), obj);
	raw_attr(&c, UVERBS_ATTR_INFO_TOTAL_HANDLES, sizeof(*total),
		 (uintptr_t)total);
	raw_attr(&c, UVERBS_ATTR_INFO_HANDLES_LIST, max * sizeof(*handles),
		 (uintptr_t)handles);
	return raw_exec(fd, &c);
}

/* The handles of the PDs on the file, as test_list_objects(). */
static inline int test_list_pds(int fd, uint32_t *handles, size_t max,
				uint32_t *total)
{
	return test_list_objects(fd, UVERBS_OBJECT_PD, handles, max, total);
}

/*
 * As iommufd_utils.h's test_cmd_X and test_err_X, in a harness test: the
 * call succeeds (else the test stops) or fails with _errno. They leave out
 * the outputs a test does not look at (pdn, id, usecnt, lkey): a test that
 * reads them calls test_X() itself.
 */
#define test_cmd_query_context(fd) ASSERT_EQ(0, test_query_context(fd))
#define test_err_query_context(_errno, fd) \
	EXPECT_EQ(_errno, test_query_context(fd))
#define test_cmd_pd_alloc(fd, handle) \
	ASSERT_EQ(0, test_pd_alloc(fd, handle, NULL, NULL))
#define test_err_pd_alloc(_errno, fd, handle) \
	EXPECT_EQ(_errno, test_pd_alloc(fd, handle, NULL, NULL))
#define test_cmd_pd_destroy(fd, handle) \
	ASSERT_EQ(0, test_pd_destroy(fd, handle))
#define test_err_pd_destroy(_errno, fd, handle) \
	EXPECT_EQ(_errno, test_pd_destroy(fd, handle))
#define test_cmd_pd_import(fd, handle) \
	ASSERT_EQ(0, test_pd_import(fd, handle, NULL, NULL, NULL, NULL))
#define test_err_pd_import(_errno, fd, handle) \
	EXPECT_EQ(_errno, test_pd_import(fd, handle, NULL, NULL, NULL, NULL))
/* the import that names the PD's id too (want_id) */
#define test_err_pd_import_id(_errno, fd, handle, want_id) \
	EXPECT_EQ(_errno, test_pd_import(fd, handle, want_id, NULL, NULL, NULL))
#define test_err_pd_import_pdn(_errno, fd, handle, pdn) \
	EXPECT_EQ(_errno, test_pd_import_pdn(fd, handle, pdn))
#define test_cmd_mr_reg(fd, pd, addr, len, access, handle) \
	ASSERT_EQ(0, test_mr_reg(fd, pd, addr, len, access, handle, NULL))
#define test_err_mr_reg(_errno, fd, pd, addr, len, access, handle) \
	EXPECT_EQ(_errno, test_mr_reg(fd, pd, addr, len, access, handle, NULL))
#define test_cmd_mr_destroy(fd, handle) \
	ASSERT_EQ(0, test_mr_destroy(fd, handle))
#define test_err_mr_destroy(_errno, fd, handle) \
	EXPECT_EQ(_errno, test_mr_destroy(fd, handle))
#define test_cmd_list_pds(fd, handles, max, total) \
	ASSERT_EQ(0, test_list_pds(fd, handles, max, total))

/* FILE of the test device's debugfs directory; a path that fails if none. */
static inline int dbg_path(char *buf, size_t len, const char *file)
{
	if (dbg_path_dev(buf, len, test_dev(), file))
		return snprintf(buf, len, "/nonexistent/%s", file);
	return 0;
}

static inline long long dbg_read(const char *file)
{
	return dbg_read_dev(test_dev(), file);
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
	return dbg_write_dev(test_dev(), file, v);
}

/* Writes str to the file at path: 0, or the errno of the open or write. */
static inline int write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, str, strlen(str)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* Writes str to a debugfs file: 0 or the errno. */
static inline int dbg_write_str(const char *file, const char *str)
{
	char path[256];

	dbg_path(path, sizeof(path), file);
	return write_str(path, str);
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

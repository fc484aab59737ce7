// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd devices: the RDMA devices libibverbs drives, whether ibpd's
 * provider drives each and whether another process can import its PDs
 * (-d: GUID, firmware, max_pd, max_mr; -j: JSON).
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

/*
 * Whether another process can share the device's PDs: its context
 * imports (ibv_import_device() of a duplicate of the file: the kernel's
 * QUERY_CONTEXT, which the driver must answer), and then a PD import of a
 * handle no file holds fails with ENOENT where PDs import, EOPNOTSUPP
 * where not. The PD import alone tells nothing where libibverbs imports
 * PDs generically, without a kernel call: a stock rxe under such an
 * rdma-core imports no context, so no PD.
 */
static bool device_imports(struct ibv_context *ctx)
{
	struct ibv_context *imp;
	struct ibv_pd *pd;
	bool can;
	int fd;

	fd = fcntl(ctx->cmd_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* On success the context owns fd: ibv_close_device() closes it. */
	imp = ibv_import_device(fd);
	if (!imp) {
		/*
		 * Some libibverbs close it on a failed import, some do not
		 * (ibv_import_device(3)); no other thread opens files here,
		 * so an fd still open is this one.
		 */
		if (fcntl(fd, F_GETFD) >= 0)
			close(fd);
		return false;
	}
	pd = ibv_import_pd(imp, UINT32_MAX);
	can = pd || errno != EOPNOTSUPP;
	if (pd)
		ibv_unimport_pd(pd);
	ibv_close_device(imp);
	return can;
}

/*
 * Why ibv_open_device() failed: its errno, but where libibverbs could not
 * open the uverbs node, its fallback (a node of its own making) leaves
 * ENOENT in errno: then why the node cannot be opened, such as EACCES.
 */
static int open_errno(struct ibv_device *d, int err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/dev/infiniband/%s", d->dev_name);
	if (err != ENOENT ||
	    !faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS))
		return err;
	return errno == ENOENT ? err : errno;
}

/*
 * One device's row; 1 when the device could not be opened or queried (as
 * ibv_devinfo, the other rows are printed all the same): the error on
 * stderr, and in the row what the device did not tell, "-" (JSON: null,
 * with "error").
 */
static int device_row(struct ibv_device *d, int i)
{
	struct ibv_device_attr attr = {};
	struct ibv_context *ctx = ibv_open_device(d);
	int err = ctx ? 0 : open_errno(d, errno);
	const char *name = ibv_get_device_name(d);
	bool ibpd = ibpddv_is_supported(d), can = false;
	const char *what = "opening";

	if (ctx) {
		can = device_imports(ctx);
		if (details) {
			err = ibv_query_device(ctx, &attr);
			what = "querying";
		}
		ibv_close_device(ctx);
	}
	if (err)
		fprintf(stderr, "ibpd: %s %s: %s\n", what, name, strerror(err));
	if (!json) {
		printf("%-16s %-10s %5d %5s %10s", name, d->dev_name,
		       ibv_get_device_index(d), ibpd ? "yes" : "no",
		       !ctx ? "-" : can ? "yes" : "no");
		if (details && err)
			printf("  %016" PRIx64 " %-12s %10s %10s",
			       be64toh(ibv_get_device_guid(d)), "-", "-", "-");
		else if (details)
			printf("  %016" PRIx64 " %-12s %10d %10d",
			       be64toh(ibv_get_device_guid(d)), attr.fw_ver,
			       attr.max_pd, attr.max_mr);
		printf("\n");
		return !!err;
	}
	fprintf(out, "%s{\"device\": ", i ? "," : "");
	json_str(name);
	fprintf(out, ", \"uverbs\": ");
	json_str(d->dev_name);
	fprintf(out, ", \"index\": %d, \"ibpd\": %s, \"pd_import\": %s",
		ibv_get_device_index(d), ibpd ? "true" : "false",
		!ctx ? "null" : can ? "true" : "false");
	if (details) {
		fprintf(out, ", \"node_guid\": \"%016" PRIx64 "\", \"fw_ver\": ",
			be64toh(ibv_get_device_guid(d)));
		if (err) {
			fprintf(out, "null, \"max_pd\": null, \"max_mr\": null");
		} else {
			json_str(attr.fw_ver);
			fprintf(out, ", \"max_pd\": %d, \"max_mr\": %d",
				attr.max_pd, attr.max_mr);
		}
	}
	if (err) {
		fprintf(out, ", \"error\": ");
		json_str(strerror(err));
	}
	fprintf(out, "}");
	return !!err;
}

int cmd_devices(void)
{
	struct ibv_device **list;
	int i, n, ret = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "ibpd: listing RDMA devices: %s\n",
			strerror(errno));
		return 1;
	}
	if (!json && n)
		printf("%-16s %-10s %5s %5s %10s%s\n", "device", "uverbs",
		       "index", "ibpd", "pd_import", details ?
		       "  node_guid        fw_ver           max_pd     max_mr" :
		       "");
	for (i = 0; i < n; i++)
		ret |= device_row(list[i], i);
	if (!json && !n)
		printf("no RDMA device that libibverbs drives\n");
	ibv_free_device_list(list);
	return ret;
}

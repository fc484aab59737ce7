// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd: PD sharing from the command line, on libibverbs and ibpd's direct
 * verbs (<infiniband/ibpddv.h>).
 *
 *   ibpd devices         the RDMA devices libibverbs drives (devices.c)
 *   ibpd pds             the PDs of a uverbs file: handle, pdn, use count
 *                        (pds.c)
 *   ibpd demo            share a PD between two processes over SCM_RIGHTS;
 *                        on a device with QPs, RDMA WRITE, READ and SEND
 *                        through the imported PD and MR (demo.c)
 *
 * ibpd-demo (ibpd_demo.c) is the demo alone, on libibverbs alone.
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */

#include <string.h>

#include "tool.h"

int main(int argc, char **argv)
{
	static const struct demo_dv dv = {
		.query_pd = ibpddv_query_pd,
		.import_pd = ibpddv_import_pd,
	};
	const char *cmd;
	int status;

	cmd = parse_options(argc, argv, &status);
	if (!cmd)
		return status;
	if (!strcmp(cmd, "devices"))
		return with_json(cmd_devices, "devices");
	if (!strcmp(cmd, "pds"))
		return with_json(cmd_pds, "files");
	if (!strcmp(cmd, "demo"))
		return demo(&dv);
	fprintf(stderr, "ibpd: unknown command '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}

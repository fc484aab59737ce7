// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd-demo: ibpd's demo (demo.c) linked with libibverbs alone, no
 * libibpd, as an unmodified verbs program: it runs the demo only, and
 * imports PDs unchecked, with ibv_import_pd().
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */

#include <errno.h>
#include <string.h>

#include "tool.h"

/*
 * No libibpd: its calls fail as on a device that is not ibpd, and no
 * symbol of its name is defined here (a provider loaded beside would
 * bind to it).
 */
static int no_query_pd(struct ibv_pd *pd, struct ibpddv_pd_attr *attr)
{
	return EOPNOTSUPP;
}

static struct ibv_pd *no_import_pd(struct ibv_context *context,
				   uint32_t pd_handle, uint64_t id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct demo_dv dv = {
		.query_pd = no_query_pd,
		.import_pd = no_import_pd,
	};
	const char *cmd;
	int status;

	cmd = parse_options(argc, argv, &status);
	if (!cmd)
		return status;
	if (strcmp(cmd, "demo")) {
		fprintf(stderr, "ibpd-demo: built on libibverbs alone: demo only\n");
		return EXIT_USAGE;
	}
	return demo(&dv);
}

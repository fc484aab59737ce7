/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The ibpd tool, a file a job, as iproute2's rdma/ is split: the command
 * line (options.c), -j's JSON (json.c), and a file a command (devices.c,
 * pds.c, demo.c). Two programs link them: ibpd (ibpd_tool.c: every
 * command, on libibverbs and libibpd) and ibpd-demo (ibpd_demo.c: the
 * demo alone, on libibverbs alone).
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */

#ifndef IBPD_TOOL_H
#define IBPD_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <infiniband/ibpddv.h>
#include <infiniband/verbs.h>

#define EXIT_USAGE 2

/* options.c: what the command line says */
extern const char *dev;
extern bool json, pretty, details;
extern pid_t opt_pid;
extern int opt_fd;

void usage(FILE *f);
const char *parse_options(int argc, char **argv, int *status);

/* json.c: -j */
extern FILE *out;

void json_str(const char *str);
int with_json(int (*fn)(void), const char *key);

/* devices.c, pds.c: the listings, run through with_json() */
int cmd_devices(void);
int cmd_pds(void);

/*
 * demo.c. What the demo takes of libibpd: its calls in ibpd, and in
 * ibpd-demo calls that fail as on a device that is not ibpd.
 */
struct demo_dv {
	int (*query_pd)(struct ibv_pd *pd, struct ibpddv_pd_attr *attr);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle, uint64_t id);
};

int demo(const struct demo_dv *dv);

#endif /* IBPD_TOOL_H */

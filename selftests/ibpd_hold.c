// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd_hold DEV NPDS: a process that holds a uverbs file with NPDS PDs, an
 * MR on the first, for the tests of `ibpd pds`. Prints one line,
 * "HANDLE PDN USECNT" per PD, then "ready", and keeps everything until its
 * standard input reaches end of file.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibpd.h"

int main(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibpd_context *ctx;
	struct ibpd_mr *mr = NULL;
	struct ibpd_pd **pds;
	int i, n;
	char c;

	if (argc != 3 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: ibpd_hold DEV NPDS\n");
		return 2;
	}
	ctx = ibpd_open_device(argv[1]);
	pds = calloc(n, sizeof(*pds));
	if (!ctx || !pds) {
		perror("ibpd_hold");
		return 1;
	}
	for (i = 0; i < n; i++) {
		pds[i] = ibpd_alloc_pd(ctx);
		if (!pds[i]) {
			perror("ibpd_alloc_pd");
			return 1;
		}
	}
	mr = ibpd_reg_mr(pds[0], buf, sizeof(buf), IBPD_ACCESS_LOCAL_WRITE);
	if (!mr) {
		perror("ibpd_reg_mr");
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%u %u %u\n", ibpd_pd_handle(pds[i]),
		       ibpd_pd_pdn(pds[i]), i ? 0 : 1);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	ibpd_dereg_mr(mr);
	for (i = 0; i < n; i++)
		ibpd_dealloc_pd(pds[i]);
	free(pds);
	return ibpd_close_device(ctx);
}

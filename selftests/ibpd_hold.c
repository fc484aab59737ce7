// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd_hold DEV NPDS: a process that holds a uverbs file with NPDS PDs, an
 * MR on the first, for the tests of `ibpd pds`. Prints one line,
 * "HANDLE PDN USECNT" per PD, then "ready", and keeps everything until its
 * standard input reaches end of file. Raw uverbs ioctls: on ibpd's devices
 * ibpd's PD allocation, on any other (rxe0) the core's write-path ALLOC_PD
 * (pdn 0), so that no ibpd method reaches another driver.
 */

#include "ibpd_test.h"

int main(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	uint32_t *pds, *pdns, mr;
	bool ibpd;
	int fd, i, n, err = 0;
	char c;

	if (argc != 3 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: ibpd_hold DEV NPDS\n");
		return 2;
	}
	ibpd = test_is_ibpd(argv[1]);
	fd = test_open(argv[1]);
	pds = calloc(n, sizeof(*pds));
	pdns = calloc(n, sizeof(*pdns));
	if (fd < 0 || !pds || !pdns) {
		fprintf(stderr, "ibpd_hold: %s: %s\n", argv[1],
			strerror(fd < 0 ? -fd : ENOMEM));
		return 1;
	}
	for (i = 0; i < n && !err; i++)
		err = ibpd ? test_pd_alloc(fd, &pds[i], &pdns[i], NULL) :
			     test_pd_alloc_write(fd, &pds[i], NULL);
	if (err) {
		fprintf(stderr, "ibpd_hold: PD alloc: %s\n", strerror(err));
		return 1;
	}
	err = test_mr_reg(fd, pds[0], buf, sizeof(buf), TEST_ACCESS_LOCAL_WRITE,
			  &mr, NULL);
	if (err) {
		fprintf(stderr, "ibpd_hold: REG_MR: %s\n", strerror(err));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%u %u %u\n", pds[i], pdns[i], i ? 0 : 1);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	err = test_mr_destroy(fd, mr);
	for (i = 0; i < n; i++)
		err = err ?: test_pd_destroy(fd, pds[i]);
	free(pdns);
	free(pds);
	if (close(fd))
		err = errno;
	return err ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd_hold DEV NPDS: a process that holds a uverbs file with NPDS PDs, an
 * MR on the first, for the tests of `ibpd pds`. Prints one line,
 * "HANDLE PDN USECNT" per PD, then "ready", and keeps everything until its
 * standard input reaches end of file; a "d" read there destroys its last
 * PD (never the first, which holds the MR) and prints "destroyed HANDLE".
 * On SIGUSR1 it prints what its file
 * holds: "objects: N pds, M async event files" (UVERBS_METHOD_INFO_HANDLES;
 * its own context, made by raw ioctls, has no async event file). Raw
 * uverbs ioctls: on ibpd's devices
 * ibpd's PD allocation, on any other the core's write-path ALLOC_PD
 * (pdn 0), so that no ibpd method reaches another driver. Another driver's
 * device is taken for rxe's (rxe0), whose driver id the ioctls carry.
 */

#include <poll.h>
#include <signal.h>

#include "ibpd_test.h"

static volatile sig_atomic_t report;

static void on_usr1(int sig)
{
	report = 1;
}

/* What the file holds, from INFO_HANDLES: one line. */
static void print_objects(int fd)
{
	static uint32_t handles[TEST_LIST_PDS_MAX];
	uint32_t pds = 0, async = 0;
	int err;

	err = test_list_objects(fd, UVERBS_OBJECT_PD, handles,
				TEST_LIST_PDS_MAX, &pds) ?:
	      test_list_objects(fd, UVERBS_OBJECT_ASYNC_EVENT, handles,
				TEST_LIST_PDS_MAX, &async);
	if (err)
		printf("objects: %s\n", strerror(err));
	else
		printf("objects: %u pds, %u async event files\n", pds, async);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	sigset_t mask, waiting;
	uint32_t *pds, *pdns, mr;
	bool ibpd;
	int fd, i, n, err = 0;
	char c;

	if (argc != 3 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: ibpd_hold DEV NPDS\n");
		return 2;
	}
	ibpd = test_is_ibpd(argv[1]);
	if (!ibpd)
		test_driver_id = RDMA_DRIVER_RXE;
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
	/* SIGUSR1 is taken only in ppoll(), so none is missed */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, &waiting);
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_usr1 }, NULL);
	for (;;) {
		struct pollfd in = { .fd = 0, .events = POLLIN };

		if (ppoll(&in, 1, NULL, &waiting) < 0) {
			if (errno != EINTR)
				break;
			if (report)
				print_objects(fd);
			report = 0;
			continue;
		}
		if (read(0, &c, 1) <= 0)
			break;
		if (c == 'd' && n > 1) {
			err = test_pd_destroy(fd, pds[--n]);
			printf("destroyed %u: %s\n", pds[n], strerror(err));
			fflush(stdout);
		}
	}
	err = test_mr_destroy(fd, mr);
	for (i = 0; i < n; i++)
		err = err ?: test_pd_destroy(fd, pds[i]);
	free(pdns);
	free(pds);
	if (close(fd))
		err = errno;
	return err ? 1 : 0;
}

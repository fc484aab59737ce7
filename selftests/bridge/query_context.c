// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * query_context DEVICE DRIVER: whether DEVICE's driver answers
 * UVERBS_METHOD_QUERY_CONTEXT, the method ibv_import_device(3) needs, with
 * raw ioctls (no library): opens DEVICE's uverbs file, creates a context on
 * it (GET_CONTEXT) and queries it. Prints the errno of each and exits 0 if
 * QUERY_CONTEXT answered, 1 if it failed (EOPNOTSUPP on the stock rxe),
 * 2 if the file or its context could not be had. DRIVER, rxe or siw:
 * the driver whose id (enum rdma_driver_id) the ioctl header must carry.
 */
#include "../ibpd_test.h"

/* GET_CONTEXT with room for the driver's response (siw requires it). */
static int get_context(int fd)
{
	uint64_t uhw[8] = {};
	struct raw_cmd c;
	uint32_t vecs;

	raw_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	raw_attr(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, sizeof(vecs),
		 (uintptr_t)&vecs);
	raw_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(uhw), (uintptr_t)uhw);
	return raw_exec(fd, &c);
}

int main(int argc, char **argv)
{
	int fd, err;

	if (argc != 3 || (strcmp(argv[2], "rxe") && strcmp(argv[2], "siw"))) {
		fprintf(stderr, "usage: query_context DEVICE rxe|siw\n");
		return 2;
	}
	test_driver_id = strcmp(argv[2], "rxe") ? RDMA_DRIVER_SIW : RDMA_DRIVER_RXE;
	fd = open_uverbs(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "query_context: no uverbs file of %s\n", argv[1]);
		return 2;
	}
	err = get_context(fd);
	printf("%s: GET_CONTEXT: %d (%s)\n", argv[1], err, strerror(err));
	if (err)
		return 2;
	err = test_query_context(fd);
	printf("%s: QUERY_CONTEXT: %d (%s)\n", argv[1], err, strerror(err));
	close(fd);
	return err ? 1 : 0;
}

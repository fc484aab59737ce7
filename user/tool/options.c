// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The ibpd tool's command line, the same in ibpd and ibpd-demo: its
 * options, in the globals of tool.h, and its usage.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>

#include "tool.h"

const char *dev = "ibpd0";
bool json, pretty, details;
pid_t opt_pid;
int opt_fd = -1;

void usage(FILE *f)
{
	fprintf(f,
		"usage: ibpd [OPTIONS] COMMAND\n"
		"\n"
		"Commands:\n"
		"  devices          list the RDMA devices libibverbs drives, whether\n"
		"                   ibpd's provider drives them and can import a PD\n"
		"  pds              list the PDs of the uverbs files of a process\n"
		"                   (--pid, default this one) or of one of its fds\n"
		"                   (--fd): handle, pdn and use count\n"
		"  demo             share a PD between two processes over SCM_RIGHTS:\n"
		"                   alloc, import, MR through the imported PD, EBUSY\n"
		"                   on dealloc, unimport, dealloc; on a device with\n"
		"                   QPs, the imported PD and MR carry RC traffic:\n"
		"                   RDMA WRITE, RDMA READ, SEND\n"
		"\n"
		"Options:\n"
		"  -j, --json       devices, pds: print JSON\n"
		"  -p, --pretty     with -j: one member a line, indented\n"
		"  -d, --details    devices: GUID, firmware, max_pd, max_mr;\n"
		"                   pds: each PD's identity\n"
		"      --device DEV demo: the RDMA device (default ibpd0)\n"
		"      --pid PID    pds: the process whose files to show (the files\n"
		"                   are shared with pidfd_getfd(2): needs ptrace\n"
		"                   permission on PID)\n"
		"      --fd FD      pds: only the file open on FD\n"
		"  -h, --help       print this help\n"
		"\n"
		"Exit status: 0 success, 1 an operation failed, 2 usage error.\n");
}

static int parse_int(const char *arg, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < min || v > max) {
		fprintf(stderr, "ibpd: invalid %s '%s'\n", what, arg);
		return -1;
	}
	return v;
}

/*
 * The options of argv: the command, or NULL when the program is to exit
 * with *status (-h; a usage error, said).
 */
const char *parse_options(int argc, char **argv, int *status)
{
	enum { OPT_DEVICE = 256, OPT_PID, OPT_FD };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "fd", required_argument, NULL, OPT_FD },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt;

	*status = EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "jpdh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pretty = true;
			break;
		case 'd':
			details = true;
			break;
		case OPT_DEVICE:
			dev = optarg;
			break;
		case OPT_PID:
			opt_pid = parse_int(optarg, "pid", 1, INT_MAX);
			if (opt_pid <= 0)
				return NULL;
			break;
		case OPT_FD:
			opt_fd = parse_int(optarg, "fd", 0, INT_MAX);
			if (opt_fd < 0)
				return NULL;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			*status = 0;
			return NULL;
		default:
			usage(stderr);
			return NULL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ibpd: %s\n", optind < argc ?
			"one command at a time" : "no command given");
		usage(stderr);
		return NULL;
	}
	return argv[optind];
}

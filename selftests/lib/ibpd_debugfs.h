/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * ibpd's debugfs as every test program and the bench find it (libc only):
 * one directory per device under IBPD_DBG_ROOT, named after the device's
 * index, whose "name" file says the device's current name, which "rdma
 * dev set" may change. ibpd_debugfs.sh finds it so for the shell tests.
 */

#ifndef IBPD_DEBUGFS_H
#define IBPD_DEBUGFS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define IBPD_DBG_ROOT "/sys/kernel/debug/ibpd"

/*
 * The entry of directory ROOT (whose name starts with PREFIX) holding a
 * file FILE that says NAME, into entry: 0, or -1 if none.
 */
static inline int find_named(const char *root, const char *prefix,
			     const char *file, const char *name, char *entry,
			     size_t len)
{
	char path[512], cur[80];
	struct dirent *de;
	int ret = -1;
	DIR *d;
	FILE *f;

	d = opendir(root);
	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%.64s/%s", root, de->d_name,
			 file);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(cur, sizeof(cur), f)) {
			cur[strcspn(cur, "\n")] = 0;
			if (!strcmp(cur, name))
				ret = snprintf(entry, len, "%s", de->d_name) <
				      (int)len ? 0 : -1;
		}
		fclose(f);
	}
	closedir(d);
	return ret;
}

/* The debugfs directory of device NAME, into buf: 0, or -1 if none. */
static inline int dbg_dir(char *buf, size_t len, const char *name)
{
	char ent[64];

	if (find_named(IBPD_DBG_ROOT, "", "name", name, ent, sizeof(ent)))
		return -1;
	return snprintf(buf, len, "%s/%s", IBPD_DBG_ROOT, ent) < (int)len ?
	       0 : -1;
}

/* The path of FILE in device NAME's debugfs directory: 0, or -1 if none. */
static inline int dbg_path_dev(char *buf, size_t len, const char *name,
			       const char *file)
{
	char dir[256];

	if (dbg_dir(dir, sizeof(dir), name))
		return -1;
	return snprintf(buf, len, "%s/%s", dir, file) < (int)len ? 0 : -1;
}

/* The number FILE of device NAME's debugfs directory says; -1 if none. */
static inline long long dbg_read_dev(const char *name, const char *file)
{
	char path[512];
	long long v = -1;
	FILE *f;

	if (dbg_path_dev(path, sizeof(path), name, file))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Writes v to FILE of device NAME's debugfs directory: 0, or -1. */
static inline int dbg_write_dev(const char *name, const char *file,
				long long v)
{
	char path[512];
	FILE *f;
	int ret;

	if (dbg_path_dev(path, sizeof(path), name, file))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%lld\n", v) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/*
 * Every device's debugfs directory, one a call, d being
 * opendir(IBPD_DBG_ROOT): the next into buf, 0; -1 when there is none.
 */
static inline int dbg_dir_next(DIR *d, char *buf, size_t len)
{
	struct dirent *de;

	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			return snprintf(buf, len, "%s/%s", IBPD_DBG_ROOT,
					de->d_name) < (int)len ? 0 : -1;
	return -1;
}

#endif /* IBPD_DEBUGFS_H */

// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Copyright (c) 2026 The ibpd authors.
 *
 * The ibpd tool's JSON (-j, -p), as rdma -j prints it: a listing's
 * members written to a buffer, out, then printed whole, plain or pretty.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

FILE *out;	/* -j: the JSON, printed whole at the end */

/*
 * The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if there is
 * none.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned int cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	if (n == 4 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return n;
}

/*
 * A JSON string of STR, whatever its bytes (a device name is any string
 * the kernel took): valid UTF-8 as it is, a byte outside it as the
 * character of its value (\u00XX), control characters escaped.
 */
void json_str(const char *str)
{
	const unsigned char *c = (const unsigned char *)str;
	int n;

	fputc('"', out);
	while (*c) {
		n = utf8_len(c);
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || !n)
			fprintf(out, "\\u%04x", *c);
		else
			fwrite(c, 1, n, out);
		c += n ? n : 1;
	}
	fputc('"', out);
}

/* -p: JSON one member per line, indented by depth, as rdma -j -p. */
static void json_pretty(const char *s)
{
	bool in_str = false, esc = false;
	int depth = 0;

	for (; *s; s++) {
		if (in_str) {
			putchar(*s);
			if (esc)
				esc = false;
			else if (*s == '\\')
				esc = true;
			else if (*s == '"')
				in_str = false;
			continue;
		}
		switch (*s) {
		case '"':
			in_str = true;
			putchar(*s);
			break;
		case '{':
		case '[':
			printf("%c\n%*s", *s, 2 * ++depth, "");
			break;
		case '}':
		case ']':
			printf("\n%*s%c", 2 * --depth, "", *s);
			break;
		case ',':
			printf(",\n%*s", 2 * depth, "");
			while (s[1] == ' ')
				s++;
			break;
		default:
			putchar(*s);
		}
	}
	putchar('\n');
}

/*
 * Runs a listing. With -j its JSON, {"KEY": [...]}, goes to a buffer and
 * is printed whole, plain or pretty, whatever the listing met: its errors
 * go to standard error, as with rdma -j.
 */
int with_json(int (*fn)(void), const char *key)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (!json)
		return fn();
	out = open_memstream(&buf, &len);
	if (!out) {
		fprintf(stderr, "ibpd: %s\n", strerror(errno));
		printf("{\"%s\": []}\n", key);
		return 1;
	}
	fprintf(out, "{\"%s\": [", key);
	ret = fn();
	fprintf(out, "]}");
	if (fclose(out)) {
		fprintf(stderr, "ibpd: %s\n", strerror(errno));
		printf("{\"%s\": []}\n", key);
		free(buf);
		return 1;
	}
	if (pretty)
		json_pretty(buf);
	else
		printf("%s\n", buf);
	free(buf);
	return ret;
}

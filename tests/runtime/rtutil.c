// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtutil.h"

int rt_tmpdir(char *dir, const char *tag)
{
	snprintf(dir, 64, "/tmp/xrayfdr-%s-XXXXXX", tag);
	return mkdtemp(dir) ? 0 : -1;
}

int rt_rmdir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

void rt_put_file(const char *dir, const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

void rt_read_log(const char *path, struct event_list *out)
{
	struct read_result res;
	FILE *f = fopen(path, "rb");
	long size;
	void *data;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	memset(out, 0, sizeof(*out));
	read_all(data, (size_t)size, XRAYFDR_READ_NO_CALL_CHECK, out, &res);
	free(data);
	assert_int_equal(res.ret, 0);
	assert_int_equal(res.stats.errors, 0);
}

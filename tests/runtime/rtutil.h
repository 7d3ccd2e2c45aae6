/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the runtime's cmocka suites. */
#ifndef XRAYFDR_TESTS_RUNTIME_RTUTIL_H
#define XRAYFDR_TESTS_RUNTIME_RTUTIL_H

#include <stddef.h>

#include "../unit/testutil.h"

/* A fresh directory /tmp/xrayfdr-TAG-XXXXXX in @dir (64 bytes); 0 or -1. */
int rt_tmpdir(char *dir, const char *tag);
/* Remove it and what it holds; 0 or -1. */
int rt_rmdir(const char *dir);
/* Write @text to DIR/NAME, failing the test if it cannot. */
void rt_put_file(const char *dir, const char *name, const char *text);
/* Read a whole log file with our reader into @out (which must then be
 * freed); fails the test if the log has errors. */
void rt_read_log(const char *path, struct event_list *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stable external sort of variable-length records by a 64-bit key, in
 * bounded memory: records collect in a buffer of a fixed size; a full
 * buffer is sorted and written to a temporary file as a run; at the end
 * the runs are merged.  RAM stays at the buffer size whatever the input,
 * disk grows with it; the input is read once.  Records with equal keys
 * come out in the order they went in.
 */
#ifndef XRAYFDR_TOOLS_SORTER_H
#define XRAYFDR_TOOLS_SORTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sorter;

/* A temporary file in $TMPDIR (default /tmp), already unlinked, with a
 * large buffer, open for writing and reading back; NULL with errno. */
FILE *sorter_temp_file(void);
/* "@what a temporary file in DIR: why" for @err, in @buf. */
void sorter_temp_error(char *buf, size_t len, const char *what, int err);

/*
 * @memory: bytes of RAM for the buffer (at least 1 MiB is used).  Runs go
 * to $TMPDIR (default /tmp), into files already unlinked.
 */
struct sorter *sorter_new(size_t memory);
void sorter_free(struct sorter *s);

/* Add a record.  Return 0, or -errno (a temporary file could not be
 * written: the message from sorter_error() names it). */
int sorter_add(struct sorter *s, uint64_t key, const void *data, size_t len);

/* No more records: prepare to read them back in order.  Return 0 or
 * -errno. */
int sorter_finish(struct sorter *s);

/* The next record: 1 with *key, *data (valid until the next call) and
 * *len; 0 at the end; -errno on a read error. */
int sorter_next(struct sorter *s, uint64_t *key, const void **data,
		size_t *len);

/* Runs written to disk so far, and their bytes. */
uint64_t sorter_spilled_runs(const struct sorter *s);
uint64_t sorter_spilled_bytes(const struct sorter *s);

const char *sorter_error(const struct sorter *s);

#endif

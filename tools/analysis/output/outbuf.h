/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Buffered text output without stdio's per-call locking and formatting:
 * the writers of large text outputs (YAML traces run to gigabytes) append
 * to a buffer that goes to the FILE in large writes.
 */
#ifndef XRAYFDR_TOOLS_OUTBUF_H
#define XRAYFDR_TOOLS_OUTBUF_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OUTBUF_SIZE (256u << 10)

struct outbuf {
	FILE *f;
	size_t len;
	int error; /* errno of a failed write */
	char buf[OUTBUF_SIZE];
};

static inline void ob_init(struct outbuf *o, FILE *f)
{
	o->f = f;
	o->len = 0;
	o->error = 0;
}

/* Write the buffer out.  Return 0 or the errno of the failure. */
int ob_flush(struct outbuf *o);

void ob_write_slow(struct outbuf *o, const void *p, size_t n);

/* Append @n bytes (any size). */
static inline void ob_write(struct outbuf *o, const void *p, size_t n)
{
	if (o->len + n <= OUTBUF_SIZE) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	} else {
		ob_write_slow(o, p, n);
	}
}

static inline void ob_char(struct outbuf *o, char c)
{
	if (o->len == OUTBUF_SIZE)
		ob_flush(o);
	o->buf[o->len++] = c;
}

/* Append @n copies of @c (padding, indentation). */
static inline void ob_fill(struct outbuf *o, char c, size_t n)
{
	while (n) {
		size_t k;

		if (o->len == OUTBUF_SIZE)
			ob_flush(o);
		k = OUTBUF_SIZE - o->len < n ? OUTBUF_SIZE - o->len : n;
		memset(o->buf + o->len, c, k);
		o->len += k;
		n -= k;
	}
}

static inline void ob_str(struct outbuf *o, const char *s)
{
	ob_write(o, s, strlen(s));
}

/*
 * A writer of many short fields keeps its place in a local cursor, not in
 * the buffer's length, which it would otherwise load and store for each
 * field: ob_begin() makes room for at most @n bytes (<= OUTBUF_SIZE) and
 * gives where they go, the ob_put_*() write at the cursor and return its
 * new place, and ob_end() takes the place the writing ended.
 */
static inline char *ob_begin(struct outbuf *o, size_t n)
{
	if (o->len + n > OUTBUF_SIZE)
		ob_flush(o);
	return o->buf + o->len;
}

static inline void ob_end(struct outbuf *o, char *end)
{
	o->len = (size_t)(end - o->buf);
}

#define OB_PUT_LIT(p, s) \
	((char *)memcpy((p), (s), sizeof(s) - 1) + sizeof(s) - 1)

/* At most 20 bytes; 20 for ob_put_i64(). */
char *ob_put_u64(char *p, uint64_t v);
char *ob_put_i64(char *p, int64_t v);

void ob_u64(struct outbuf *o, uint64_t v);
/* @v / 1000 with three decimals: 1234 is "1.234", 5 is "0.005" */
void ob_thousandths(struct outbuf *o, uint64_t v);
void ob_i64(struct outbuf *o, int64_t v);
/* The decimal digits of @v, written to end at @end; where they start. */
char *decimal_before(char *end, uint64_t v);

#endif

// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "outbuf.h"

int ob_flush(struct outbuf *o)
{
	if (o->len && !o->error &&
	    fwrite_unlocked(o->buf, 1, o->len, o->f) != o->len)
		o->error = errno ? errno : EIO;
	o->len = 0;
	return o->error;
}

void ob_write_slow(struct outbuf *o, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t room = OUTBUF_SIZE - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == OUTBUF_SIZE)
			ob_flush(o);
	}
}

void ob_u64(struct outbuf *o, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ob_write(o, tmp + i, sizeof(tmp) - (size_t)i);
}

void ob_i64(struct outbuf *o, int64_t v)
{
	if (v < 0) {
		ob_char(o, '-');
		ob_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		ob_u64(o, (uint64_t)v);
	}
}

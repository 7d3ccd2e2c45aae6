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

/* Two digits a division: numbers are most of what the big outputs hold. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

/* The digits of @v, at least @min of them, ending at @end. */
static char *digits(char *end, uint64_t v, unsigned int min)
{
	char *p = end;

	while (v >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	while (p > end - min)
		*--p = '0';
	return p;
}

/*
 * Append p[0..n) (n <= SHORT), from a buffer that holds SHORT bytes from
 * p: a copy of a fixed size is a few moves, not a call.
 */
#define SHORT 24

static void put_short(struct outbuf *o, const char *p, size_t n)
{
	if (o->len + SHORT > OUTBUF_SIZE) {
		ob_write(o, p, n);
		return;
	}
	memcpy(o->buf + o->len, p, SHORT);
	o->len += n;
}

void ob_u64(struct outbuf *o, uint64_t v)
{
	char tmp[20 + SHORT], *p = digits(tmp + 20, v, 1);

	put_short(o, p, (size_t)(tmp + 20 - p));
}

void ob_thousandths(struct outbuf *o, uint64_t v)
{
	char tmp[21 + SHORT], *p = digits(tmp + 21, v, 4);

	/* "1234" -> "1.234": the integer digits move up over the point */
	memmove(p - 1, p, (size_t)(tmp + 18 - p));
	tmp[17] = '.';
	put_short(o, p - 1, (size_t)(tmp + 21 - (p - 1)));
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

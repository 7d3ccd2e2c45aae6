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

static const uint64_t powers_of_ten[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

/* How many decimal digits @v has: log10 from its bit length, then one
 * compare (1233 / 4096 is just above log10(2)). */
static unsigned int decimal_digits(uint64_t v)
{
	unsigned int t = (64 - (unsigned int)__builtin_clzll(v | 1)) * 1233 >>
			 12;

	return v ? t + (v >= powers_of_ten[t]) : 1;
}

/* The digits of @v, ending at @end, two at a time, in 32-bit arithmetic
 * once they fit (cheaper than 64-bit). */
static void put_digits(char *end, uint64_t v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	for (w = (uint32_t)v; w >= 100; w /= 100) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (w % 100), 2);
	}
	if (w >= 10)
		memcpy(end - 2, digit_pairs + 2 * w, 2);
	else
		end[-1] = (char)('0' + w);
}

/* Room for @n more bytes at the end of the buffer; where they go. */
static char *reserve(struct outbuf *o, size_t n)
{
	char *p;

	if (o->len + n > OUTBUF_SIZE)
		ob_flush(o);
	p = o->buf + o->len;
	o->len += n;
	return p;
}

char *ob_put_u64(char *p, uint64_t v)
{
	unsigned int n = decimal_digits(v);

	put_digits(p + n, v);
	return p + n;
}

char *ob_put_i64(char *p, int64_t v)
{
	if (v >= 0)
		return ob_put_u64(p, (uint64_t)v);
	*p = '-';
	return ob_put_u64(p + 1, (uint64_t)0 - (uint64_t)v);
}

void ob_u64(struct outbuf *o, uint64_t v)
{
	unsigned int n = decimal_digits(v);

	put_digits(reserve(o, n) + n, v);
}

void ob_thousandths(struct outbuf *o, uint64_t v)
{
	uint64_t whole = v / 1000;
	unsigned int n = decimal_digits(whole), frac = (unsigned int)(v % 1000);
	char *p = reserve(o, n + 4);

	put_digits(p + n, whole);
	p[n] = '.';
	p[n + 1] = (char)('0' + frac / 100);
	memcpy(p + n + 2, digit_pairs + 2 * (frac % 100), 2);
}

char *decimal_before(char *end, uint64_t v)
{
	put_digits(end, v);
	return end - decimal_digits(v);
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

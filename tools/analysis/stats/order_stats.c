// SPDX-License-Identifier: GPL-2.0-only
/*
 * Order statistics; see order_stats.h.
 *
 * Each value is kept as one 64-bit key: the set number in the top 24 bits
 * and the value in the low 40, so values up to 2^40 (nine minutes of a
 * 2 GHz TSC) order by the key alone; larger ones saturate the low bits
 * and their exact value is kept beside, in the order they came.
 *
 * In RAM: the keys, 8 bytes a value, in a mapping of their own (it grows
 * without a copy, and gives its pages back as the spill empties it),
 * grouped by set at the end (copied into a new mapping by the counts of
 * each set) and the wanted ranks found by quickselect; a saturated key's
 * rank is looked up in its set's large values, sorted.  The keys take at
 * most 3/5 of the memory given, so that with the external sort's own
 * memory beside them, at the spill, the peak stays near the memory given.
 *
 * Past that, while the sets are few enough for a histogram each (a
 * quarter of the memory): the full array goes to a temporary file as it
 * is, each key counted in its set's histogram (buckets of an eighth of a
 * power of two), and the array fills again.  At the end, the histograms
 * say which bucket holds each wanted rank, one read of the file keeps the
 * values of those buckets alone, and a selection of its own finds the
 * ranks among them.  No sort, one sequential write and read of the keys,
 * packed (pack_key(): 3 or 4 bytes for a short duration).
 *
 * Otherwise, or where that selection itself runs out of memory, through
 * the external sort, with the same keys: the large values carry their
 * exact value as bytes and are put in order within their set when read
 * back.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "order_stats.h"
#include "sorter.h"

#define VALUE_BITS 40
#define VALUE_SAT ((1ull << VALUE_BITS) - 1)

/* A value too large for a key's low bits. */
struct big {
	uint32_t set;
	uint64_t value;
};

struct order_stats {
	size_t memory;
	struct sorter *sorter; /* once the values do not fit in memory */
	uint64_t *keys; /* mapped: keys_bytes */
	size_t n, cap, keys_bytes;
	struct big *bigs; /* the saturated keys' values, in their order */
	size_t nbig, bigcap;
	uint64_t *counts; /* values per set */
	uint32_t nsets, counts_cap;
	/* past memory while the sets are few: the keys go to a file as they
	 * are, and a histogram of each set's values says which to read back
	 * (HIST_BUCKETS per set) */
	FILE *file;
	uint64_t *hist;
	uint32_t hist_sets;
	/* places in the file where a key begins, every CUT_BYTES or so, and
	 * its end, last: where threads can share the reading out */
	off_t *cuts;
	size_t ncuts;
	bool no_file; /* a selection's own values: the external sort */
	unsigned int jobs; /* threads the file may be read back with */
	/* order_stats_defer_spills(): full keys are the caller's to write,
	 * and have been once (deferred) */
	bool defer, deferred;
	uint64_t *spare; /* an array written out, to fill again */
	size_t spare_bytes;
	/* per set below dense_cap, the counts of its values below
	 * DENSE_LIMIT (NULL: they are keys like the others), and how many */
	uint64_t **dense, *small;
	uint32_t dense_cap;
	size_t dense_bytes;
	char err[128];
};

/*
 * Histogram buckets: 0 to 15 alone, then eight a power of two (the three
 * bits after the leading one), then the saturated keys.  Monotonic in the
 * value, so a rank's bucket holds the value at that rank.
 */
#define HIST_BUCKETS 305
#define SAT_BUCKET 304

static unsigned int bucket_of(uint64_t v)
{
	unsigned int bits;

	if (v >= VALUE_SAT)
		return SAT_BUCKET;
	if (v < 16)
		return (unsigned int)v;
	bits = 63 - (unsigned int)__builtin_clzll(v);
	return 16 + (bits - 4) * 8 + (unsigned int)(v >> (bits - 3) & 7);
}

static size_t page_up(size_t bytes)
{
	return (bytes + 4095) & ~(size_t)4095;
}

static uint64_t key_of(uint32_t set, uint64_t value)
{
	return (uint64_t)set << VALUE_BITS |
	       (value < VALUE_SAT ? value : VALUE_SAT);
}

struct order_stats *order_stats_new(size_t memory)
{
	struct order_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->memory = memory;
	s->jobs = 1;
	return s;
}

void order_stats_jobs(struct order_stats *s, unsigned int jobs)
{
	s->jobs = jobs ? jobs : 1;
}

void order_stats_free(struct order_stats *s)
{
	if (!s)
		return;
	sorter_free(s->sorter);
	if (s->keys)
		munmap(s->keys, s->keys_bytes);
	if (s->spare)
		munmap(s->spare, s->spare_bytes);
	for (uint32_t i = 0; i < s->dense_cap; i++)
		free(s->dense[i]);
	free(s->dense);
	free(s->small);
	free(s->bigs);
	free(s->counts);
	free(s->hist);
	free(s->cuts);
	if (s->file)
		fclose(s->file);
	free(s);
}

const char *order_stats_error(const struct order_stats *s)
{
	if (s->err[0])
		return s->err;
	return s->sorter ? sorter_error(s->sorter) : "";
}

const char *order_stats_why(const struct order_stats *s, int err)
{
	return *order_stats_error(s) ? order_stats_error(s) : strerror(-err);
}

static int sort_add(struct order_stats *s, uint32_t set, uint64_t value)
{
	return sorter_add(s->sorter, key_of(set, value), &value,
			  value < VALUE_SAT ? 0 : 8);
}

/*
 * Memory is full: every value so far, and all later, to the sorter.  The
 * keys go from the last, and their array shrinks behind them, so that
 * the sorter's memory grows as theirs goes (order does not matter: equal
 * keys are equal values, and large values are put in order when read).
 */
static int spill(struct order_stats *s)
{
	const size_t chunk = 1 << 16;
	size_t b = s->nbig, i = s->n;
	int ret = 0;

	s->sorter = sorter_new(s->memory);
	if (!s->sorter)
		return -ENOMEM;
	while (i && !ret) {
		size_t stop = i > chunk ? i - chunk : 0, keep;

		for (; i > stop && !ret; i--) {
			uint64_t key = s->keys[i - 1];
			uint32_t set = (uint32_t)(key >> VALUE_BITS);

			ret = sort_add(s, set,
				       (key & VALUE_SAT) == VALUE_SAT && b ?
					       s->bigs[--b].value :
					       key & VALUE_SAT);
		}
		keep = page_up(i * sizeof(*s->keys));
		if (keep && keep < s->keys_bytes) {
			munmap((uint8_t *)s->keys + keep, s->keys_bytes - keep);
			s->keys_bytes = keep;
		}
	}
	if (s->keys)
		munmap(s->keys, s->keys_bytes);
	free(s->bigs);
	s->keys = NULL;
	s->bigs = NULL;
	s->n = s->cap = s->nbig = s->bigcap = s->keys_bytes = 0;
	return ret;
}

/* Room for @cap keys: the mapping grows (moves, at worst) in place. */
static int grow_keys(struct order_stats *s, size_t cap)
{
	size_t bytes = page_up(cap * sizeof(*s->keys));
	void *p = s->keys ? mremap(s->keys, s->keys_bytes, bytes,
				   MREMAP_MAYMOVE) :
			    mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -ENOMEM;
	s->keys = p;
	s->keys_bytes = bytes;
	s->cap = cap;
	return 0;
}

static int keep_big(struct order_stats *s, uint32_t set, uint64_t value)
{
	if (s->nbig == s->bigcap) {
		size_t cap = s->bigcap ? 2 * s->bigcap : 16;
		struct big *b = realloc(s->bigs, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		s->bigs = b;
		s->bigcap = cap;
	}
	s->bigs[s->nbig++] = (struct big){ set, value };
	return 0;
}

static int count_value(struct order_stats *s, uint32_t set)
{
	if (set >= s->counts_cap) {
		uint32_t cap = s->counts_cap ? s->counts_cap : 64;
		uint64_t *c;

		while (cap <= set)
			cap *= 2;
		c = realloc(s->counts, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memset(c + s->counts_cap, 0,
		       (cap - s->counts_cap) * sizeof(*c));
		s->counts = c;
		s->counts_cap = cap;
	}
	if (set >= s->nsets)
		s->nsets = set + 1;
	s->counts[set]++;
	return 0;
}

/*
 * The file's keys, packed: a byte with the byte lengths of the set (0-3)
 * and of the value (0-5), then their low bytes, so that a short duration
 * of an early set takes 3 or 4 bytes, not 8: the write and the read back
 * are most of the cost of a trace beyond memory.  Saturated keys are not
 * written, as their values are in bigs.  The stores and loads are of 8
 * bytes, hence the slack after a buffer's last key.
 */
#define PACK_MAX 9 /* a key's longest form */
#define PACK_SLACK 16
#define PACK_CHUNK (1 << 16)

static unsigned int byte_len(uint64_t x)
{
	return x ? (unsigned int)(71 - __builtin_clzll(x)) / 8 : 0;
}

static void put_le64(uint8_t *p, uint64_t x)
{
	x = htole64(x);
	memcpy(p, &x, sizeof(x));
}

static uint64_t get_le64(const uint8_t *p, unsigned int len)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	return le64toh(x) & ((1ull << len * 8) - 1); /* @len < 8 */
}

static uint8_t *pack_key(uint8_t *p, uint64_t key)
{
	uint64_t set = key >> VALUE_BITS, value = key & VALUE_SAT;
	unsigned int sl = byte_len(set), vl = byte_len(value);

	p[0] = (uint8_t)(sl | vl << 2);
	put_le64(p + 1, set);
	put_le64(p + 1 + sl, value);
	return p + 1 + sl + vl;
}

/* The histogram grows to @nsets sets. */
static int hist_grow(struct order_stats *s, uint32_t nsets)
{
	if (nsets > s->hist_sets) {
		uint64_t *h = realloc(s->hist, (size_t)nsets * HIST_BUCKETS *
						       sizeof(*h));

		if (!h)
			return -ENOMEM;
		memset(h + (size_t)s->hist_sets * HIST_BUCKETS, 0,
		       (size_t)(nsets - s->hist_sets) * HIST_BUCKETS *
			       sizeof(*h));
		s->hist = h;
		s->hist_sets = nsets;
	}
	return 0;
}

static int file_error(struct order_stats *s, const char *what)
{
	int err = errno ? errno : EIO;

	sorter_temp_error(s->err, sizeof(s->err), what, err);
	return -err;
}

#define CUT_BYTES (4 << 20)

/* The file's end is a place a key begins: noted if @always or if the
 * last is CUT_BYTES behind. */
static int note_cut(struct order_stats *s, bool always)
{
	off_t at = ftello(s->file), *c;

	if (at < 0)
		return file_error(s, "cannot tell the position in");
	if (!always && s->ncuts && at - s->cuts[s->ncuts - 1] < CUT_BYTES)
		return 0;
	c = realloc(s->cuts, (s->ncuts + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->cuts = c;
	c[s->ncuts++] = at;
	return 0;
}

/* Whether a histogram of every set takes a quarter of the memory at most */
static bool hist_fits(const struct order_stats *s)
{
	return (size_t)s->nsets * HIST_BUCKETS * sizeof(*s->hist) <=
	       s->memory / 4;
}

/* @n keys of sets below @nsets to the file, counted in the histogram. */
static int write_keys(struct order_stats *s, const uint64_t *keys, size_t n,
		      uint32_t nsets)
{
	int ret = hist_grow(s, nsets);

	if (ret)
		return ret;
	/* one pass over the keys: they are larger than the caches */
	for (size_t i = 0; i < n;) {
		uint8_t buf[PACK_CHUNK + PACK_SLACK], *p = buf;

		for (; i < n && p - buf <= PACK_CHUNK - PACK_MAX; i++) {
			uint64_t key = keys[i], v = key & VALUE_SAT;

			s->hist[(key >> VALUE_BITS) * HIST_BUCKETS +
				bucket_of(v)]++;
			if (v != VALUE_SAT)
				p = pack_key(p, key);
		}
		if (fwrite_unlocked(buf, 1, (size_t)(p - buf), s->file) !=
		    (size_t)(p - buf))
			return file_error(s, "cannot write");
		ret = note_cut(s, i == n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Memory is full: the keys go to the file as they are, counted in the
 * histogram, and the array is empty again.  -EAGAIN if the histograms of
 * this many sets would take more than a quarter of the memory: then the
 * external sort takes over (spill()).
 */
static int file_keys(struct order_stats *s)
{
	int ret;

	if (!s->file) {
		if (s->no_file || !hist_fits(s))
			return -EAGAIN;
		s->file = sorter_temp_file();
		if (!s->file)
			return file_error(s, "cannot create");
	}
	ret = write_keys(s, s->keys, s->n, s->nsets);
	if (!ret)
		s->n = 0;
	return ret;
}

/* The keys in RAM at most. */
static size_t most_keys(const struct order_stats *s)
{
	size_t most = s->memory / 5 * 3 / sizeof(*s->keys);

	/* one array filling while the one before is written */
	return s->defer ? most / 2 : most;
}

void order_stats_defer_spills(struct order_stats *s)
{
	s->defer = true;
}

void order_stats_take_keys(struct order_stats *s, struct order_stats_keys *k)
{
	*k = (struct order_stats_keys){ .keys = s->keys,
					.n = s->n,
					.bytes = s->keys_bytes,
					.nsets = s->nsets };
	s->keys = NULL;
	s->n = s->cap = s->keys_bytes = 0;
}

int order_stats_spill_keys(struct order_stats *s, struct order_stats_keys *k)
{
	int ret = 0;

	if (!s->file) {
		s->file = sorter_temp_file();
		if (!s->file)
			ret = file_error(s, "cannot create");
	}
	if (!ret)
		ret = write_keys(s, k->keys, k->n, k->nsets);
	k->n = 0;
	return ret;
}

void order_stats_return_keys(struct order_stats *s, struct order_stats_keys *k)
{
	if (k->keys && !s->spare) {
		s->spare = k->keys;
		s->spare_bytes = k->bytes;
	} else if (k->keys) {
		munmap(k->keys, k->bytes);
	}
	memset(k, 0, sizeof(*k));
}

/*
 * Short values of the first sets seen are counted, not kept: a row of
 * counts per set, for values below DENSE_LIMIT, while the rows take
 * DENSE_MOST bytes at most (and an eighth of the memory).  A set gets its
 * row at its first value, or never, so that its counted values are all
 * below its kept ones and a rank falls in one or the other.  Durations
 * of most calls are that short: they then cost neither the array nor the
 * file.  The rows are bumped at random, so they are kept within a core's
 * cache: with 32 MiB of rows, graph's hundreds of edges took 60% longer,
 * with 2 MiB 2%; with 1 MiB, as long as with none.
 */
#define DENSE_LIMIT (1u << 13)
#define DENSE_MOST (1u << 20)

static bool dense_row(struct order_stats *s, uint32_t set)
{
	if (set < s->dense_cap && s->dense[set])
		return true;
	if ((set < s->counts_cap && s->counts[set]) || s->no_file ||
	    s->dense_bytes + DENSE_LIMIT * sizeof(uint64_t) >
		    (s->memory / 8 < DENSE_MOST ? s->memory / 8 : DENSE_MOST))
		return false;
	if (set >= s->dense_cap) {
		uint32_t cap = s->dense_cap ? s->dense_cap : 16;
		uint64_t **d, *n;

		while (cap <= set)
			cap *= 2;
		d = realloc(s->dense, cap * sizeof(*d));
		if (!d)
			return false;
		s->dense = d;
		n = realloc(s->small, cap * sizeof(*n));
		if (!n)
			return false;
		s->small = n;
		memset(d + s->dense_cap, 0, (cap - s->dense_cap) * sizeof(*d));
		memset(n + s->dense_cap, 0, (cap - s->dense_cap) * sizeof(*n));
		s->dense_cap = cap;
	}
	s->dense[set] = calloc(DENSE_LIMIT, sizeof(uint64_t));
	if (!s->dense[set])
		return false;
	s->dense_bytes += DENSE_LIMIT * sizeof(uint64_t);
	return true;
}

static __attribute__((noinline)) int add_slow(struct order_stats *s,
					      uint32_t set, uint64_t value)
{
	int ret;

	if (set >= ORDER_STATS_MAX_SETS)
		return -E2BIG;
	if (value < DENSE_LIMIT && dense_row(s, set)) {
		s->dense[set][value]++;
		s->small[set]++;
		return 0;
	}
	/* full, and the keys can go to the file: the caller writes them */
	if (s->defer && !s->sorter && s->n == s->cap && s->n >= most_keys(s) &&
	    (s->deferred || hist_fits(s))) {
		s->deferred = true;
		return -ENOBUFS;
	}
	ret = count_value(s, set);
	if (ret)
		return ret;
	if (s->sorter)
		return sort_add(s, set, value);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		size_t most = most_keys(s);

		if (cap > most) {
			cap = most;
			if (cap <= s->n) {
				ret = file_keys(s);
				if (ret != -EAGAIN && ret)
					return ret;
				if (ret) {
					ret = spill(s);
					return ret ? ret :
						     sort_add(s, set, value);
				}
			}
		}
		/* an array written out (order_stats_return_keys()) */
		if (!s->keys && s->spare) {
			s->keys = s->spare;
			s->keys_bytes = s->spare_bytes;
			s->cap = s->keys_bytes / sizeof(*s->keys);
			if (s->cap > most)
				s->cap = most;
			s->spare = NULL;
		}
		/* after file_keys() the array is empty, with room */
		if (s->n == s->cap) {
			ret = grow_keys(s, cap);
			if (ret)
				return ret;
		}
	}
	if (value >= VALUE_SAT) {
		ret = keep_big(s, set, value);
		if (ret)
			return ret;
	}
	s->keys[s->n++] = key_of(set, value);
	return 0;
}

int order_stats_add(struct order_stats *s, uint32_t set, uint64_t value)
{
	if (value < DENSE_LIMIT && set < s->dense_cap && s->dense[set]) {
		s->dense[set][value]++;
		s->small[set]++;
		return 0;
	}
	/* a set seen before, room in memory, a value that fits its key */
	if (set < s->nsets && s->n < s->cap && value < VALUE_SAT &&
	    !s->sorter) {
		s->counts[set]++;
		s->keys[s->n++] = key_of(set, value);
		return 0;
	}
	return add_slow(s, set, value);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/*
 * A partition without a branch on the data: random durations would make
 * a compare-and-branch mispredict half the time.  It returns j with
 * v[0..j) below the pivot (or equal to it, @with_equal) and the rest
 * after; the loop keeps that
 * true of v[0..i) by swapping v[i] into place and counting it in.
 */
static size_t partition(uint64_t *v, size_t n, uint64_t pivot, bool with_equal)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];

		v[i] = v[j];
		v[j] = x;
		j += x < pivot || (with_equal && x == pivot);
	}
	return j;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
	if (a > b)
		swap(&a, &b);
	return c <= a ? a : c >= b ? b : c;
}

/*
 * Put the @k-th smallest of v[0..n) at v[k], smaller ones before it and
 * larger ones after (quickselect; a median of three picks the pivot).
 * Each round shrinks the range: by the values below the pivot, or, when
 * there are none, by the values equal to it.  Inputs that defeat the
 * pivot get sorted instead, so time stays O(n log n) at worst.
 */
static void select_nth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	unsigned int rounds = 32;

	for (size_t m = n; m; m >>= 1)
		rounds += 2;
	while (hi - lo > 16) {
		uint64_t pivot =
			median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
		size_t j;

		if (!rounds--) {
			qsort(v + lo, hi - lo, sizeof(*v), cmp_u64);
			return;
		}
		j = lo + partition(v + lo, hi - lo, pivot, false);
		if (k < j) {
			hi = j;
			continue;
		}
		if (j == lo) {
			/* the pivot is the least here: step over its equals */
			j = lo + partition(v + lo, hi - lo, pivot, true);
			if (k < j)
				return;
		}
		lo = j;
	}
	/* a few left: insertion sort */
	for (size_t i = lo + 1; i < hi; i++) {
		uint64_t x = v[i];
		size_t j = i;

		for (; j > lo && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The distinct ranks @ranks wants of @set, ascending; how many. */
static unsigned int
wanted_ranks(unsigned int (*ranks)(void *ctx, uint32_t set, uint64_t count,
				   uint64_t *out),
	     void *ctx, uint32_t set, uint64_t count, uint64_t *out)
{
	unsigned int n = ranks(ctx, set, count, out), k = 0;

	if (n > ORDER_STATS_MAX_RANKS)
		n = ORDER_STATS_MAX_RANKS;
	qsort(out, n, sizeof(*out), cmp_u64);
	for (unsigned int i = 0; i < n; i++)
		if (out[i] < count && (!k || out[i] != out[k - 1]))
			out[k++] = out[i];
	return k;
}

static int cmp_big(const void *x, const void *y)
{
	const struct big *a = x, *b = y;

	if (a->set != b->set)
		return a->set < b->set ? -1 : 1;
	return a->value < b->value ? -1 : a->value > b->value;
}

/*
 * Put the keys in the order of their sets, by copying into a new mapping:
 * each set's run is written in sequence (moving keys round their cycles
 * in place missed the cache on nearly every key), and the old array's
 * pages go back as they are read, so memory stays about one array.
 * @next: nsets places.  0 or -ENOMEM.
 */
static int group_by_set_copy(struct order_stats *s, uint64_t *next)
{
	const size_t chunk = 1 << 17; /* keys: 1 MiB */
	size_t bytes = page_up(s->n * sizeof(*s->keys)), freed = 0;
	uint64_t *to, pos = 0;

	if (!s->n)
		return 0;
	to = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED)
		return -ENOMEM;
	for (uint32_t set = 0; set < s->nsets; set++) {
		next[set] = pos;
		pos += s->counts[set];
	}
	for (size_t i = 0; i < s->n;) {
		size_t stop = s->n - i > chunk ? i + chunk : s->n, done;

		for (; i < stop; i++) {
			uint64_t key = s->keys[i];

			to[next[key >> VALUE_BITS]++] = key;
		}
		done = i * sizeof(*s->keys) & ~(size_t)4095;
		if (done > freed) {
			madvise((uint8_t *)s->keys + freed, done - freed,
				MADV_DONTNEED);
			freed = done;
		}
	}
	munmap(s->keys, s->keys_bytes);
	s->keys = to;
	s->keys_bytes = bytes;
	s->cap = bytes / sizeof(*s->keys);
	return 0;
}

static int select_in_memory(struct order_stats *s,
			    unsigned int (*ranks)(void *ctx, uint32_t set,
						  uint64_t count,
						  uint64_t *out),
			    void (*visit)(void *ctx, uint32_t set,
					  uint64_t rank, uint64_t value),
			    void *ctx)
{
	uint64_t *next = malloc(((size_t)s->nsets + 1) * sizeof(*next));
	uint64_t want[ORDER_STATS_MAX_RANKS], pos = 0;
	size_t b = 0;
	int ret = next ? group_by_set_copy(s, next) : -ENOMEM;

	free(next);
	if (ret)
		return ret;
	if (s->nbig)
		qsort(s->bigs, s->nbig, sizeof(*s->bigs), cmp_big);
	for (uint32_t set = 0; set < s->nsets; set++) {
		uint64_t n = s->counts[set], *v = s->keys + pos, done = 0;
		size_t first_big = b;
		unsigned int k;

		pos += n;
		/* this set's large values: its top ranks, in order */
		while (b < s->nbig && s->bigs[b].set == set)
			b++;
		if (!n)
			continue;
		k = wanted_ranks(ranks, ctx, set, n, want);
		/* each selection leaves the larger values after its rank */
		for (unsigned int i = 0; i < k; i++) {
			uint64_t key, rank = want[i];

			select_nth(v + done, n - done, rank - done);
			key = v[rank];
			visit(ctx, set, rank,
			      (key & VALUE_SAT) != VALUE_SAT ?
				      key & VALUE_SAT :
				      s->bigs[first_big + rank -
					      (n - (b - first_big))]
					      .value);
			done = rank;
		}
	}
	return 0;
}

/* Through the external sort: every value in order, the wanted ones
 * visited. */
static int select_sorted(struct order_stats *s,
			 unsigned int (*ranks)(void *ctx, uint32_t set,
					       uint64_t count, uint64_t *out),
			 void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				       uint64_t value),
			 void *ctx)
{
	uint64_t key, rank = 0, *big = NULL, want[ORDER_STATS_MAX_RANKS];
	size_t nbig = 0, bigcap = 0, len;
	unsigned int nwant = 0, next = 0;
	uint32_t set = 0;
	bool have = false;
	const void *data;
	int ret = sorter_finish(s->sorter);

	while (!ret) {
		ret = sorter_next(s->sorter, &key, &data, &len);
		if (ret < 0)
			break;
		if (ret == 0 || !have || key >> VALUE_BITS != set) {
			/* the set's large values, in order, after the others */
			if (nbig) {
				qsort(big, nbig, sizeof(*big), cmp_u64);
				for (size_t i = 0; i < nbig; i++, rank++)
					if (next < nwant && want[next] == rank)
						visit(ctx, set, want[next++],
						      big[i]);
			}
			nbig = 0;
			rank = 0;
			if (ret == 0)
				break;
			set = (uint32_t)(key >> VALUE_BITS);
			have = true;
			nwant = wanted_ranks(ranks, ctx, set, s->counts[set],
					     want);
			next = 0;
		}
		ret = 0;
		if ((key & VALUE_SAT) == VALUE_SAT && len == 8) {
			if (nbig == bigcap) {
				size_t cap = bigcap ? 2 * bigcap : 16;
				uint64_t *n = realloc(big, cap * sizeof(*n));

				if (!n) {
					ret = -ENOMEM;
					break;
				}
				big = n;
				bigcap = cap;
			}
			memcpy(&big[nbig++], data, 8);
			continue;
		}
		if (next < nwant && want[next] == rank)
			visit(ctx, set, want[next++], key & VALUE_SAT);
		rank++;
	}
	free(big);
	return ret;
}

/* A wanted rank of the bucketed selection (select_bucketed()). */
struct wanted {
	uint32_t set, bucket;
	uint32_t target; /* the sub-selection's set; UINT32_MAX: a large value */
	uint64_t rank, sub_rank, value;
};

struct bucketed {
	struct wanted *w;
	size_t *first; /* per target: its first entry in w */
	size_t nw;
};

static unsigned int target_ranks(void *ctx, uint32_t t, uint64_t count,
				 uint64_t *out)
{
	struct bucketed *b = ctx;
	unsigned int k = 0;

	(void)count;
	for (size_t i = b->first[t];
	     i < b->nw && b->w[i].target == t && k < ORDER_STATS_MAX_RANKS; i++)
		out[k++] = b->w[i].sub_rank;
	return k;
}

static void target_visit(void *ctx, uint32_t t, uint64_t sub_rank,
			 uint64_t value)
{
	struct bucketed *b = ctx;

	for (size_t i = b->first[t]; i < b->nw && b->w[i].target == t; i++)
		if (b->w[i].sub_rank == sub_rank)
			b->w[i].value = value;
}

/*
 * The wanted ranks of every set and the bucket that holds each; each
 * distinct (set, bucket) wanted is a target, a set of the sub-selection.
 * A set's histogram row becomes, once read, each bucket's target + 1, or
 * 0 for a bucket nobody wants.
 */
static int plan_targets(struct order_stats *s, struct bucketed *b,
			unsigned int (*ranks)(void *ctx, uint32_t set,
					      uint64_t count, uint64_t *out),
			void *ctx, uint32_t *ntargets)
{
	size_t most = (size_t)s->nsets * ORDER_STATS_MAX_RANKS + 1, big = 0;
	uint64_t want[ORDER_STATS_MAX_RANKS];

	b->w = malloc(most * sizeof(*b->w));
	b->first = malloc(most * sizeof(*b->first));
	if (!b->w || !b->first)
		return -ENOMEM;
	if (s->nbig)
		qsort(s->bigs, s->nbig, sizeof(*s->bigs), cmp_big);
	for (uint32_t set = 0; set < s->hist_sets; set++) {
		uint64_t *h = s->hist + (size_t)set * HIST_BUCKETS, cum = 0;
		size_t first_big = big, from = b->nw;
		unsigned int k = 0, bucket = 0;

		while (big < s->nbig && s->bigs[big].set == set)
			big++;
		if (set < s->nsets && s->counts[set])
			k = wanted_ranks(ranks, ctx, set, s->counts[set], want);
		for (unsigned int i = 0; i < k; i++) {
			struct wanted *e = &b->w[b->nw++];

			/* the counts add up to the set's: a bucket is found */
			while (cum + h[bucket] <= want[i] &&
			       bucket < SAT_BUCKET)
				cum += h[bucket++];
			*e = (struct wanted){ .set = set,
					      .bucket = bucket,
					      .target = UINT32_MAX,
					      .rank = want[i],
					      .sub_rank = want[i] - cum };
			if (bucket == SAT_BUCKET)
				e->value =
					s->bigs[first_big + e->sub_rank].value;
		}
		memset(h, 0, HIST_BUCKETS * sizeof(*h));
		for (size_t i = from; i < b->nw; i++) {
			struct wanted *e = &b->w[i];

			if (e->bucket == SAT_BUCKET)
				continue;
			if (!h[e->bucket]) {
				b->first[*ntargets] = i;
				h[e->bucket] = ++*ntargets;
			}
			e->target = (uint32_t)(h[e->bucket] - 1);
		}
	}
	return 0;
}

/* Bytes [@from, @to) of the file: each key of a target's bucket to @sub
 * (as its target's value).  0 or -errno: *@read_err is the errno of a
 * failed read (EIO: the file's bytes are not keys), or 0 where @sub
 * failed.  Nothing is said (two threads may be reading). */
static int read_targets(const struct order_stats *s, off_t from, off_t to,
			struct order_stats *sub, int *read_err)
{
	uint8_t buf[PACK_CHUNK + PACK_SLACK];
	size_t have = 0;
	ssize_t got;
	int ret = 0;

	memset(buf, 0, sizeof(buf));
	do {
		const uint8_t *p = buf, *end;
		size_t want = PACK_CHUNK - have;

		if ((off_t)want > to - from)
			want = (size_t)(to - from);
		got = want ? pread(fileno(s->file), buf + have, want, from) : 0;
		if (got < 0) {
			*read_err = errno ? errno : EIO;
			return -*read_err;
		}
		from += got;
		end = buf + have + got;
		/* a key may end past the bytes read but the last */
		while (!ret && p < end && (end - p >= PACK_MAX || !got)) {
			unsigned int sl = p[0] & 3, vl = p[0] >> 2;
			uint64_t set = get_le64(p + 1, sl);
			uint64_t v = get_le64(p + 1 + sl, vl), t;

			if (vl > 5 || 1 + sl + vl > end - p) {
				*read_err = EIO;
				return -EIO;
			}
			p += 1 + sl + vl;
			if (set >= s->hist_sets)
				continue;
			t = s->hist[set * HIST_BUCKETS + bucket_of(v)];
			if (t)
				ret = order_stats_add(sub, (uint32_t)t - 1, v);
		}
		have = (size_t)(end - p);
		memmove(buf, p, have);
	} while (!ret && got);
	return ret;
}

static struct order_stats *new_sub(size_t memory)
{
	struct order_stats *sub = order_stats_new(memory);

	if (sub)
		sub->no_file = true;
	return sub;
}

struct read_part {
	const struct order_stats *s;
	struct order_stats *sub;
	off_t from, to;
	int ret, read_err;
};

static void *read_part(void *p)
{
	struct read_part *h = p;

	h->ret = read_targets(h->s, h->from, h->to, h->sub, &h->read_err);
	return NULL;
}

static off_t distance(off_t a, off_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * Two threads read the file where it can be cut (cuts): each reads
 * about half (cut at the noted place nearest the middle) into a
 * sub-selection of half the memory, then the second's values go into the
 * first's.  0 with *@sub made, 1 if one thread is to read the file
 * instead (a part ran out of memory: it went to the external sort), or
 * -errno.
 */
static int read_in_two(struct order_stats *s, struct order_stats **sub,
		       int *read_err)
{
	off_t end = s->cuts[s->ncuts - 1], mid = 0;
	struct read_part h[2] = { { .s = s }, { .s = s } };
	pthread_t thread;
	int ret = 1;

	for (size_t i = 0; i + 1 < s->ncuts; i++)
		if (!mid ||
		    distance(s->cuts[i], end / 2) < distance(mid, end / 2))
			mid = s->cuts[i];
	h[0].sub = new_sub(s->memory / 2);
	h[1].sub = new_sub(s->memory / 2);
	h[0].to = h[1].from = mid;
	h[1].to = end;
	if (!h[0].sub || !h[1].sub ||
	    pthread_create(&thread, NULL, read_part, &h[1]))
		goto out;
	read_part(&h[0]);
	pthread_join(thread, NULL);
	ret = h[0].ret ? h[0].ret : h[1].ret;
	*read_err = h[0].read_err ? h[0].read_err : h[1].read_err;
	if (*read_err)
		goto out;
	if (ret == -ENOMEM || (!ret && h[1].sub->sorter))
		ret = 1;
	for (size_t i = 0; !ret && i < h[1].sub->n; i++) {
		uint64_t key = h[1].sub->keys[i];

		ret = order_stats_add(h[0].sub, (uint32_t)(key >> VALUE_BITS),
				      key & VALUE_SAT);
	}
	if (!ret) {
		*sub = h[0].sub;
		h[0].sub = NULL;
	} else if (ret < 0) {
		/* the sub-selections' temporary files are ours to name */
		for (int k = 0; k < 2 && !s->err[0]; k++)
			snprintf(s->err, sizeof(s->err), "%s",
				 order_stats_error(h[k].sub));
	}
out:
	order_stats_free(h[0].sub);
	order_stats_free(h[1].sub);
	return ret;
}

/* The targets' values, in a sub-selection of their own (*@sub). */
static int read_all_targets(struct order_stats *s, struct order_stats **sub)
{
	off_t end = s->ncuts ? s->cuts[s->ncuts - 1] : 0;
	int ret = 1, read_err = 0;

	if (s->jobs >= 2 && s->ncuts >= 2)
		ret = read_in_two(s, sub, &read_err);
	if (ret == 1) {
		*sub = new_sub(s->memory);
		ret = *sub ? read_targets(s, 0, end, *sub, &read_err) : -ENOMEM;
	}
	if (read_err) {
		errno = read_err;
		ret = file_error(s, "cannot read");
	}
	return ret;
}

/*
 * After file_keys(): every key is in the file and counted.  Plan the
 * targets, read the file once keeping the values of the targets' buckets
 * in a selection of their own (which may use the external sort), select
 * there, and visit in the order order_stats_select() promises.
 */
static int select_bucketed(struct order_stats *s,
			   unsigned int (*ranks)(void *ctx, uint32_t set,
						 uint64_t count, uint64_t *out),
			   void (*visit)(void *ctx, uint32_t set, uint64_t rank,
					 uint64_t value),
			   void *ctx)
{
	struct bucketed b = { 0 };
	struct order_stats *sub = NULL;
	uint32_t ntargets = 0;
	int ret = file_keys(s);

	if (s->keys) {
		munmap(s->keys, s->keys_bytes);
		s->keys = NULL;
		s->n = s->cap = s->keys_bytes = 0;
	}
	if (s->spare) {
		munmap(s->spare, s->spare_bytes);
		s->spare = NULL;
	}
	if (!ret)
		ret = plan_targets(s, &b, ranks, ctx, &ntargets);
	if (!ret && ntargets && fflush(s->file))
		ret = file_error(s, "cannot write");
	if (!ret && ntargets)
		ret = read_all_targets(s, &sub);
	if (!ret && ntargets)
		ret = order_stats_select(sub, target_ranks, target_visit, &b);
	/* the sub-selection's temporary files are ours to name */
	if (ret && sub && !s->err[0] && *order_stats_error(sub))
		snprintf(s->err, sizeof(s->err), "%s", order_stats_error(sub));
	for (size_t i = 0; !ret && i < b.nw; i++)
		visit(ctx, b.w[i].set, b.w[i].rank, b.w[i].value);
	order_stats_free(sub);
	free(b.w);
	free(b.first);
	return ret;
}

static int select_kept(struct order_stats *s,
		       unsigned int (*ranks)(void *ctx, uint32_t set,
					     uint64_t count, uint64_t *out),
		       void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				     uint64_t value),
		       void *ctx)
{
	if (s->sorter)
		return select_sorted(s, ranks, visit, ctx);
	if (s->file)
		return select_bucketed(s, ranks, visit, ctx);
	return select_in_memory(s, ranks, visit, ctx);
}

/* An answer of select_dense(), before they are put in order. */
struct answer {
	uint32_t set;
	uint64_t rank, value;
};

struct dense_select {
	const struct order_stats *s;
	/* per set: the wanted ranks among its kept values */
	uint64_t *want;
	uint8_t *nwant;
	struct answer *counted, *kept;
	size_t ncounted, nkept;
};

static uint64_t small_of(const struct order_stats *s, uint32_t set)
{
	return set < s->dense_cap && s->dense[set] ? s->small[set] : 0;
}

static unsigned int kept_ranks(void *ctx, uint32_t set, uint64_t count,
			       uint64_t *out)
{
	struct dense_select *d = ctx;

	(void)count;
	memcpy(out, d->want + (size_t)set * ORDER_STATS_MAX_RANKS,
	       d->nwant[set] * sizeof(*out));
	return d->nwant[set];
}

static void kept_visit(void *ctx, uint32_t set, uint64_t rank, uint64_t value)
{
	struct dense_select *d = ctx;

	d->kept[d->nkept++] =
		(struct answer){ set, rank + small_of(d->s, set), value };
}

/* The value at @rank of a row of counts. */
static uint64_t counted_at(const uint64_t *row, uint64_t rank)
{
	uint64_t seen = 0, v = 0;

	while (v < DENSE_LIMIT - 1 && seen + row[v] <= rank)
		seen += row[v++];
	return v;
}

/*
 * The wanted ranks of each set: those among its counted values answered
 * from its row, the others asked of its kept values (ranks shifted by the
 * counted ones, which are all smaller); the answers then visited in
 * order, set by set.
 */
static int select_dense(struct order_stats *s,
			unsigned int (*ranks)(void *ctx, uint32_t set,
					      uint64_t count, uint64_t *out),
			void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				      uint64_t value),
			void *ctx)
{
	uint32_t nsets = s->nsets > s->dense_cap ? s->nsets : s->dense_cap;
	size_t most = (size_t)nsets * ORDER_STATS_MAX_RANKS + 1;
	struct dense_select d = { .s = s };
	uint64_t want[ORDER_STATS_MAX_RANKS];
	int ret = -ENOMEM;

	d.want = malloc(most * sizeof(*d.want));
	d.nwant = calloc((size_t)nsets + 1, sizeof(*d.nwant));
	d.counted = malloc(most * sizeof(*d.counted));
	d.kept = malloc(most * sizeof(*d.kept));
	if (!d.want || !d.nwant || !d.counted || !d.kept)
		goto out;
	for (uint32_t set = 0; set < nsets; set++) {
		uint64_t small = small_of(s, set);
		uint64_t kept = set < s->nsets ? s->counts[set] : 0;
		unsigned int k;

		if (!small && !kept)
			continue;
		k = wanted_ranks(ranks, ctx, set, small + kept, want);
		for (unsigned int i = 0; i < k; i++) {
			if (want[i] < small)
				d.counted[d.ncounted++] = (struct answer){
					set, want[i],
					counted_at(s->dense[set], want[i])
				};
			else
				d.want[(size_t)set * ORDER_STATS_MAX_RANKS +
				       d.nwant[set]++] = want[i] - small;
		}
	}
	ret = select_kept(s, kept_ranks, kept_visit, &d);
	/* both lists are by set, then rank; a set's counted ranks come first */
	for (size_t i = 0, j = 0; !ret && (i < d.ncounted || j < d.nkept);) {
		const struct answer *a =
			j == d.nkept || (i < d.ncounted &&
					 d.counted[i].set <= d.kept[j].set) ?
				&d.counted[i++] :
				&d.kept[j++];

		visit(ctx, a->set, a->rank, a->value);
	}
out:
	free(d.want);
	free(d.nwant);
	free(d.counted);
	free(d.kept);
	return ret;
}

int order_stats_select(struct order_stats *s,
		       unsigned int (*ranks)(void *ctx, uint32_t set,
					     uint64_t count, uint64_t *out),
		       void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				     uint64_t value),
		       void *ctx)
{
	if (s->dense_bytes)
		return select_dense(s, ranks, visit, ctx);
	return select_kept(s, ranks, visit, ctx);
}

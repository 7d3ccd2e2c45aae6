// SPDX-License-Identifier: GPL-2.0-only
/* External merge sort; see sorter.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sorter.h"

#define MIN_MEMORY (1u << 20)
#define EMPTY_RECORD UINT64_MAX
/* in the arena: the length in 4 bytes, 4 bytes of padding, the bytes */
#define RECORD_HEAD 8
#define RUN_IO_BUFFER (1u << 20)

/* In memory: an index of (key, offset) into the arena, where each record
 * is its length then its bytes.  Sorting the index by (key, offset) keeps
 * equal keys in arrival order. */
struct entry {
	uint64_t key;
	uint64_t off;
};

struct run {
	FILE *f;
	uint64_t key;
	uint32_t len;
	uint8_t *data;
	size_t cap;
	bool done;
};

struct sorter {
	uint8_t *arena;
	size_t arena_cap, arena_len;
	struct entry *index, *tmp;
	size_t nindex, index_cap;
	size_t memory;

	struct run *runs;
	size_t nruns;
	uint64_t spilled_bytes;

	/* reading back */
	bool finished;
	size_t next; /* in-memory: next index entry */
	size_t *heap; /* run numbers, a min-heap on (key, run) */
	size_t nheap;
	char err[256];
};

struct sorter *sorter_new(size_t memory)
{
	struct sorter *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->memory = memory < MIN_MEMORY ? MIN_MEMORY : memory;
	/* half for the records' bytes (touched only as used: bare keys
	 * need none), half for the index and the radix sort's copy of it */
	s->arena_cap = s->memory / 2;
	s->index_cap = (s->memory - s->arena_cap) / 2 / sizeof(struct entry);
	if (s->index_cap > UINT32_MAX)
		s->index_cap =
			UINT32_MAX; /* the radix sort counts in 32 bits */
	s->arena = malloc(s->arena_cap);
	s->index = malloc(s->index_cap * sizeof(*s->index));
	s->tmp = malloc(s->index_cap * sizeof(*s->tmp));
	if (!s->arena || !s->index || !s->tmp) {
		sorter_free(s);
		return NULL;
	}
	return s;
}

void sorter_free(struct sorter *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nruns; i++) {
		if (s->runs[i].f)
			fclose(s->runs[i].f);
		free(s->runs[i].data);
	}
	free(s->runs);
	free(s->heap);
	free(s->arena);
	free(s->index);
	free(s->tmp);
	free(s);
}

const char *sorter_error(const struct sorter *s)
{
	return s->err;
}

uint64_t sorter_spilled_runs(const struct sorter *s)
{
	return s->nruns;
}

uint64_t sorter_spilled_bytes(const struct sorter *s)
{
	return s->spilled_bytes;
}

/* LSD radix sort on the key, 11 bits a pass (the counts stay in the L1
 * cache): stable, so entries with equal keys stay in arrival order.
 * Passes where every key has the same digit are skipped (the high bits
 * of small keys). */
#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)

static void sort_index(struct sorter *s)
{
	uint32_t count[RADIX]; /* 8 KiB: workers may sort at once */
	struct entry *src = s->index, *dst = s->tmp, *t;
	size_t n = s->nindex;
	uint64_t all_or = 0, all_and = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		all_or |= src[i].key;
		all_and &= src[i].key;
	}
	for (unsigned int shift = 0; shift < 64; shift += RADIX_BITS) {
		uint32_t sum = 0;

		/* every key has the same bits here: nothing to do */
		if (!(((all_or ^ all_and) >> shift) & (RADIX - 1)))
			continue;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(src[i].key >> shift) & (RADIX - 1)]++;
		for (size_t d = 0; d < RADIX; d++) {
			uint32_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & (RADIX - 1)]++] =
				src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != s->index) {
		s->tmp = s->index;
		s->index = src;
	}
}

static const char *temp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

void sorter_temp_error(char *buf, size_t len, const char *what, int err)
{
	snprintf(buf, len, "%s a temporary file in %s: %s", what, temp_dir(),
		 strerror(err));
}

static int fail(struct sorter *s, int err, const char *what)
{
	sorter_temp_error(s->err, sizeof(s->err), what, err);
	return -err;
}

FILE *sorter_temp_file(void)
{
	char path[4096];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/xrayfdr-sort-XXXXXX", temp_dir());
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	f = fdopen(fd, "w+b");
	if (!f) {
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, RUN_IO_BUFFER);
	return f;
}

/* Sort what is in memory and write it out as a run. */
static int spill(struct sorter *s)
{
	struct run *runs, *r;
	FILE *f;

	sort_index(s);
	runs = realloc(s->runs, (s->nruns + 1) * sizeof(*runs));
	if (!runs)
		return fail(s, ENOMEM, "cannot track");
	s->runs = runs;
	f = sorter_temp_file();
	if (!f)
		return fail(s, errno, "cannot create");
	r = &s->runs[s->nruns++];
	*r = (struct run){ .f = f };
	/* bare keys are written in batches; records with bytes one by one */
	for (size_t i = 0; i < s->nindex;) {
		uint8_t batch[12 * 512];
		size_t nb = 0;

		while (i < s->nindex && s->index[i].off == EMPTY_RECORD &&
		       nb < sizeof(batch)) {
			memcpy(batch + nb, &s->index[i].key, 8);
			memset(batch + nb + 8, 0, 4);
			nb += 12;
			i++;
		}
		if (nb && fwrite_unlocked(batch, nb, 1, f) != 1)
			return fail(s, errno ? errno : EIO, "cannot write");
		s->spilled_bytes += nb;
		if (i < s->nindex && s->index[i].off != EMPTY_RECORD) {
			const uint8_t *rec = s->arena + s->index[i].off;
			uint32_t len;

			memcpy(&len, rec, sizeof(len));
			memcpy(batch, &s->index[i].key, 8);
			memcpy(batch + 8, &len, 4);
			if (fwrite_unlocked(batch, 12, 1, f) != 1 ||
			    (len && fwrite_unlocked(rec + RECORD_HEAD, len, 1,
						    f) != 1))
				return fail(s, errno ? errno : EIO,
					    "cannot write");
			s->spilled_bytes += 12 + (uint64_t)len;
			i++;
		}
	}
	if (fflush(f) || fseeko(f, 0, SEEK_SET))
		return fail(s, errno ? errno : EIO, "cannot write");
	s->nindex = 0;
	s->arena_len = 0;
	return 0;
}

int sorter_add(struct sorter *s, uint64_t key, const void *data, size_t len)
{
	/* records start 8-byte aligned, and so do their bytes */
	size_t need = RECORD_HEAD + ((len + 7) & ~(size_t)7);
	uint32_t len32 = (uint32_t)len;

	if (len > UINT32_MAX - 8)
		return -EMSGSIZE;
	if (s->nindex == s->index_cap || s->arena_len + need > s->arena_cap) {
		int ret;

		if (need > s->arena_cap) {
			/* a record larger than the whole buffer: make room */
			uint8_t *a = realloc(s->arena, need);

			if (!a)
				return -ENOMEM;
			s->arena = a;
			s->arena_cap = need;
		}
		ret = s->nindex ? spill(s) : 0;
		if (ret)
			return ret;
	}
	if (!len) {
		/* most records are a bare key: no bytes in the arena */
		s->index[s->nindex++] =
			(struct entry){ .key = key, .off = EMPTY_RECORD };
		return 0;
	}
	s->index[s->nindex++] =
		(struct entry){ .key = key, .off = s->arena_len };
	memcpy(s->arena + s->arena_len, &len32, 4);
	memcpy(s->arena + s->arena_len + RECORD_HEAD, data, len);
	s->arena_len += need;
	return 0;
}

/* Read a run's next record into the run; false at its end or on error. */
static int run_advance(struct sorter *s, struct run *r)
{
	uint8_t head[12];

	if (fread_unlocked(head, 12, 1, r->f) != 1) {
		if (ferror(r->f))
			return fail(s, EIO, "cannot read");
		r->done = true;
		return 0;
	}
	memcpy(&r->key, head, 8);
	memcpy(&r->len, head + 8, 4);
	if (r->len > r->cap) {
		uint8_t *d = realloc(r->data, r->len);

		if (!d)
			return -ENOMEM;
		r->data = d;
		r->cap = r->len;
	}
	if (r->len && fread_unlocked(r->data, r->len, 1, r->f) != 1)
		return fail(s, EIO, "cannot read");
	return 0;
}

static bool run_less(const struct sorter *s, size_t a, size_t b)
{
	const struct run *x = &s->runs[a], *y = &s->runs[b];

	return x->key != y->key ? x->key < y->key : a < b;
}

static void heap_down(struct sorter *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->nheap && run_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nheap && run_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

int sorter_finish(struct sorter *s)
{
	int ret;

	s->finished = true;
	if (!s->nruns) {
		sort_index(s);
		return 0;
	}
	if (s->nindex && (ret = spill(s)))
		return ret;
	/* the buffer is not needed any more: the runs have it all */
	free(s->arena);
	free(s->index);
	free(s->tmp);
	s->arena = NULL;
	s->index = NULL;
	s->tmp = NULL;
	s->heap = malloc(s->nruns * sizeof(*s->heap));
	if (!s->heap)
		return -ENOMEM;
	for (size_t i = 0; i < s->nruns; i++) {
		ret = run_advance(s, &s->runs[i]);
		if (ret)
			return ret;
		if (!s->runs[i].done)
			s->heap[s->nheap++] = i;
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		heap_down(s, i);
	return 0;
}

int sorter_next(struct sorter *s, uint64_t *key, const void **data, size_t *len)
{
	struct run *r;
	int ret;

	if (!s->nruns) {
		const uint8_t *rec;
		uint32_t n;

		if (s->next == s->nindex)
			return 0;
		*key = s->index[s->next].key;
		if (s->index[s->next].off == EMPTY_RECORD) {
			s->next++;
			*data = "";
			*len = 0;
			return 1;
		}
		rec = s->arena + s->index[s->next++].off;
		memcpy(&n, rec, 4);
		*data = rec + RECORD_HEAD;
		*len = n;
		return 1;
	}
	if (!s->nheap)
		return 0;
	/* The top run's record was handed out last time: advance it now. */
	r = &s->runs[s->heap[0]];
	if (s->next) {
		ret = run_advance(s, r);
		if (ret)
			return ret;
		if (r->done) {
			s->heap[0] = s->heap[--s->nheap];
			if (!s->nheap)
				return 0;
		}
		heap_down(s, 0);
		r = &s->runs[s->heap[0]];
	}
	s->next = 1;
	*key = r->key;
	*data = r->data;
	*len = r->len;
	return 1;
}

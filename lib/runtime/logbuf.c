// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Log buffers from what the sinks keep (see logbuf.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "logbuf.h"
#include "state.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE

int rt_logbuf_scratch(uint8_t **buf, size_t *size, size_t capacity)
{
	if (*buf && *size == capacity)
		return 0;
	if (*buf)
		munmap(*buf, *size);
	*size = 0;
	*buf = mmap(NULL, capacity, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*buf == MAP_FAILED) {
		*buf = NULL;
		return -ENOMEM;
	}
	*size = capacity;
	return 0;
}

int rt_last_times_init(struct rt_last_times *m, size_t threads)
{
	size_t cap = 64;

	while (cap < 2 * threads)
		cap *= 2;
	if (m->slot && m->cap == cap) {
		rt_last_times_clear(m);
		return 0;
	}
	rt_last_times_free(m);
	m->slot = mmap(NULL, cap * sizeof(*m->slot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->slot == MAP_FAILED) {
		m->slot = NULL;
		return -ENOMEM;
	}
	m->cap = cap;
	return 0;
}

void rt_last_times_free(struct rt_last_times *m)
{
	if (m->slot)
		munmap(m->slot, m->cap * sizeof(*m->slot));
	*m = (struct rt_last_times){ 0 };
}

void rt_last_times_clear(struct rt_last_times *m)
{
	/* (no memset: a flush in a signal handler may call this) */
	for (size_t i = 0; m->used && i < m->cap; i++)
		m->slot[i] = (struct rt_last_time){ 0 };
	m->used = 0;
}

/* @tid's slot, or the free one where it would go; NULL if none. */
static struct rt_last_time *last_slot(const struct rt_last_times *m,
				      uint32_t tid)
{
	uint64_t key = (uint64_t)tid + 1;

	if (!m->slot)
		return NULL;
	for (size_t i = (tid * 0x9e3779b9u) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1))
		if (m->slot[i].key == key || !m->slot[i].key)
			return &m->slot[i];
}

uint64_t rt_last_times_get(const struct rt_last_times *m, uint32_t tid)
{
	const struct rt_last_time *s = last_slot(m, tid);

	return s && s->key ? s->tsc : 0;
}

void rt_last_times_put(struct rt_last_times *m, uint32_t tid, uint64_t tsc)
{
	struct rt_last_time *s = last_slot(m, tid);

	if (!s)
		return;
	if (!s->key) {
		if (4 * (m->used + 1) > 3 * m->cap) {
			rt_last_times_clear(m);
			s = last_slot(m, tid);
		}
		s->key = (uint64_t)tid + 1;
		s->tsc = 0;
		m->used++;
	}
	if (tsc > s->tsc)
		s->tsc = tsc;
}

void rt_logbuf_init(struct rt_logbuf *o, uint8_t *buf, size_t size,
		    unsigned int version, uint64_t threshold)
{
	*o = (struct rt_logbuf){ .p = buf,
				 .end = buf + size,
				 .cpu = UINT32_MAX,
				 .version = version,
				 .threshold = threshold };
}

static size_t room(const struct rt_logbuf *o)
{
	return (size_t)(o->end - o->p);
}

/* @tsc, or the time before it where a monotonic buffer may not go back. */
static uint64_t not_back(const struct rt_logbuf *o, uint64_t tsc)
{
	return o->monotonic && tsc < o->last ? o->last : tsc;
}

int rt_logbuf_time(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc, size_t need,
		   bool signed_delta)
{
	struct xrayfdr_metadata md = { .tsc = tsc };
	int64_t sd = (int64_t)(tsc - o->last);

	if (cpu != o->cpu) {
		md.kind = XRAYFDR_MD_NEW_CPU_ID;
		md.cpu = (uint16_t)cpu;
	} else if (signed_delta ? sd < INT32_MIN || sd > INT32_MAX :
				  tsc < o->last || tsc - o->last > UINT32_MAX) {
		md.kind = XRAYFDR_MD_TSC_WRAP;
	} else {
		return room(o) >= need ? 0 : -1;
	}
	if (room(o) < MD + need)
		return -1;
	fdr_put_metadata(o->p, false, o->version, &md);
	o->p += MD;
	o->args_open = false;
	o->cpu = cpu;
	o->last = tsc;
	return 1;
}

bool rt_logbuf_function_slow(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
			     uint32_t word)
{
	unsigned int kind = fdr_function_kind(word, false);
	/* an entry's argument comes in the same buffer */
	size_t need = FN + (kind == XRAYFDR_FUNC_ENTRY_ARGS ? MD : 0);
	int wrote;

	tsc = not_back(o, tsc);
	wrote = rt_logbuf_time(o, cpu, tsc, need, false);

	if (wrote < 0)
		return false;
	if (rt_rewind_short(&o->rewind, kind, wrote, tsc, o->threshold)) {
		uint8_t *before = o->p;

		rt_rewind_erase(&o->rewind, &o->p, &o->last, tsc, o->threshold);
		/* (it erases function records only) */
		o->events -= (uint64_t)(before - o->p) / FN;
		o->args_open = false;
		return true;
	}
	fdr_put_function(o->p, false, kind, fdr_function_id(word, false),
			 (uint32_t)(tsc - o->last));
	o->p += FN;
	o->args_open = kind == XRAYFDR_FUNC_ENTRY_ARGS;
	o->last = tsc;
	o->events++;
	rt_rewind_note(&o->rewind, kind, wrote, tsc);
	return true;
}

bool rt_logbuf_argument(struct rt_logbuf *o, const uint8_t *md)
{
	rt_rewind_reset(&o->rewind);
	if (!o->args_open)
		return true; /* no entry before it here: damage */
	if (room(o) < MD)
		return false;
	memcpy(o->p, md, MD);
	o->p += MD;
	return true;
}

static void put_event(struct rt_logbuf *o, const struct xrayfdr_metadata *md,
		      const void *data, size_t size)
{
	fdr_put_metadata(o->p, false, o->version, md);
	memcpy(o->p + MD, data, size);
	o->p += MD + size;
	o->args_open = false;
	o->events++;
}

bool rt_logbuf_marker(struct rt_logbuf *o, uint32_t cpu, uint64_t base,
		      const uint8_t *p, const void *data, size_t size)
{
	struct xrayfdr_metadata md;
	uint64_t tsc;

	rt_rewind_reset(&o->rewind); /* nothing before an event */
	fdr_decode_metadata(p, false, o->version, &md);
	md.event_size = (int32_t)size;
	if (md.kind == XRAYFDR_MD_TYPED_EVENT_MARKER || o->version >= 5) {
		tsc = not_back(o, base + (uint32_t)md.tsc_delta);
		if (rt_logbuf_time(o, cpu, tsc, MD + size, true) < 0)
			return false;
		md.tsc_delta = (int32_t)(tsc - o->last);
		o->last = tsc;
	} else if (rt_logbuf_time(o, cpu, o->cpu == cpu ? o->last : md.tsc,
				  MD + size, false) < 0) {
		return false;
	}
	put_event(o, &md, data, size);
	return true;
}

bool rt_logbuf_custom(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
		      const void *data, size_t size)
{
	struct xrayfdr_metadata md = { .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
				       .event_size = (int32_t)size,
				       .cpu = (uint16_t)cpu,
				       .tsc = tsc };
	bool delta = o->version >= 5;

	tsc = not_back(o, tsc);
	md.tsc = tsc;
	rt_rewind_reset(&o->rewind);
	if (rt_logbuf_time(o, cpu, delta || o->cpu != cpu ? tsc : o->last,
			   MD + size, delta) < 0)
		return false;
	if (delta) {
		md.tsc_delta = (int32_t)(tsc - o->last);
		o->last = tsc;
	}
	put_event(o, &md, data, size);
	return true;
}

/* The comm of thread @tid of this process into @name[16]; its length, 0
 * if the thread is gone. */
static size_t read_comm(uint32_t tid, char *name)
{
	static const char dir[] = "/proc/self/task/", file[] = "/comm";
	char path[sizeof(dir) + 24 + sizeof(file)], num[24];
	size_t n = 0;
	ssize_t k;
	int fd;

	for (const char *s = dir; *s; s++)
		path[n++] = *s;
	for (const char *s = rt_utoa(tid, num); *s; s++)
		path[n++] = *s;
	for (const char *s = file; *s; s++)
		path[n++] = *s;
	path[n] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	k = read(fd, name, 16);
	close(fd);
	n = k > 0 ? (size_t)k : 0;
	if (n && name[n - 1] == '\n')
		n--; /* the kernel ends it with a newline */
	name[n < 16 ? n : 15] = '\0';
	return n < 16 ? n : 15;
}

int rt_logbuf_name_now(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
		       uint32_t tid, const char *last)
{
	uint8_t payload[8 + XRAYFDR_THREAD_NAME_MAX];
	char name[16];
	size_t n = read_comm(tid, name), i;

	for (i = 0; i < n && name[i] && name[i] == last[i]; i++)
		;
	if (!n || (i == n && !last[n]))
		return 0;
	n = xrayfdr_thread_name_encode(payload, tid, name);
	return rt_logbuf_custom(o, cpu, tsc, payload, n) ? 1 : -1;
}

bool rt_logbuf_own_name(const uint8_t *payload, size_t size, uint32_t tid,
			char *name)
{
	uint32_t of;

	if (!xrayfdr_thread_name_decode(payload, size, &of, name))
		return false;
	if (of != tid)
		name[0] = '\0';
	return of == tid;
}

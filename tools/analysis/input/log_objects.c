// SPDX-License-Identifier: GPL-2.0-only
/* The objects a log was recorded from (see log_objects.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_objects.h"

/* The info event is at most 16 KiB of text, in the log's last buffer: the
 * file's last 64 KiB hold it whatever the buffer's framing. */
#define TAIL 65536

static const char magic[] = "xrayfdr-info 1\n";

/* The last occurrence of @needle in @len bytes at @hay, or NULL. */
static const char *last_of(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = len >= n ? len - n + 1 : 0; i-- > 0;)
		if (!memcmp(hay + i, needle, n))
			return hay + i;
	return NULL;
}

/* "object=INDEX FIRST_ID BIAS PATH" */
static void parse_object(const char *v, size_t len, struct log_objects *out)
{
	struct log_object *o;
	char line[4200];
	int at = 0;

	if (out->n == LOG_OBJECTS_MAX || len >= sizeof(line))
		return;
	memcpy(line, v, len);
	line[len] = '\0';
	o = &out->obj[out->n];
	if (sscanf(line, "%u %*u %*s %n", &o->index, &at) < 1 || !at ||
	    !line[at])
		return;
	snprintf(o->path, sizeof(o->path), "%s", line + at);
	o->build_id[0] = '\0';
	out->n++;
}

/* "key=NUMBER" of line @s (@n bytes) into *@v if @s has @key. */
static bool number_of(const char *s, size_t n, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	uint64_t x = 0;

	if (n <= k + 1 || memcmp(s, key, k) || s[k] != '=')
		return false;
	for (size_t i = k + 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return true;
}

static void parse_trigger(const char *s, size_t n, struct log_trigger *t)
{
	uint64_t v;

	if (n > 8 && !memcmp(s, "trigger=", 8) && n - 8 < sizeof(t->spec)) {
		memcpy(t->spec, s + 8, n - 8);
		t->spec[n - 8] = '\0';
		t->set = true;
	} else if (number_of(s, n, "trigger_tid", &v) && v <= UINT32_MAX) {
		t->tid = (uint32_t)v;
	} else if (number_of(s, n, "trigger_function", &v) && v <= INT32_MAX) {
		t->function = (int32_t)v;
	} else if (number_of(s, n, "trigger_duration_ns", &v)) {
		t->duration_ns = v;
	} else if (number_of(s, n, "trigger_tsc", &v)) {
		t->tsc = v;
	}
}

static void parse_info(const char *text, size_t len, struct log_objects *out)
{
	const char *end = text + len;

	for (const char *s = text; s < end;) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n;

		if (!eol)
			break; /* cut short: the last line is not whole */
		n = (size_t)(eol - s);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20)
				return; /* past the text */
		if (n > 7 && !memcmp(s, "object=", 7))
			parse_object(s + 7, n - 7, out);
		else if (n > 9 && !memcmp(s, "build_id=", 9) && out->n &&
			 n - 9 < BUILD_ID_MAX)
			snprintf(out->obj[out->n - 1].build_id, BUILD_ID_MAX,
				 "%.*s", (int)(n - 9), s + 9);
		else if (!number_of(s, n, "tsc_hz", &out->tsc_hz))
			parse_trigger(s, n, &out->trigger);
		s = eol + 1;
	}
}

/* Whether @fd starts with an XRay log's header (version 1-5, type 0 or
 * 1, either byte order), not text that could quote an info event. */
static bool xray_log(int fd)
{
	unsigned char h[4];

	if (pread(fd, h, sizeof(h), 0) != sizeof(h))
		return false;
	return (h[1] == 0 && h[0] >= 1 && h[0] <= 5 && h[3] == 0 &&
		h[2] <= 1) ||
	       (h[0] == 0 && h[1] >= 1 && h[1] <= 5 && h[2] == 0 && h[3] <= 1);
}

int log_objects_read(const char *path, struct log_objects *out)
{
	char *buf;
	const char *info;
	struct stat st;
	ssize_t got;
	off_t from;
	int fd, ret = 0;

	out->n = 0;
	out->trigger = (struct log_trigger){ 0 };
	out->tsc_hz = 0;
	if (!strcmp(path, "-"))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !xray_log(fd)) {
		close(fd);
		return 0;
	}
	buf = malloc(TAIL);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	from = st.st_size > TAIL ? st.st_size - TAIL : 0;
	got = pread(fd, buf, TAIL, from);
	if (got < 0)
		ret = -errno;
	close(fd);
	if (got > 0) {
		info = last_of(buf, (size_t)got, magic);
		if (info) {
			parse_info(info, (size_t)(buf + got - info), out);
			ret = 1;
		}
	}
	free(buf);
	return ret;
}

int elf_build_id(const char *path, char id[BUILD_ID_MAX])
{
	struct stat st;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, ret = 0;

	id[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* @path may come from a log's info event, which a traced process
	 * wrote: a FIFO or a device there must not hang or feed the tool */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		ret = -EINVAL;
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off,
						   &desc_off)) > 0) {
			const unsigned char *d =
				(const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU",
				   4) ||
			    !nh.n_descsz ||
			    nh.n_descsz > (BUILD_ID_MAX - 1) / 2)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(id + 2 * i, "%02x", d[i]);
			ret = 1;
			break;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

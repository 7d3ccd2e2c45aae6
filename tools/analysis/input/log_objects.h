/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The objects a log says it was recorded from: the runtime's info event
 * (Documentation/runtime.rst, "The info event") names each instrumented
 * object with its path and GNU build id, so the tools can find the
 * program's symbols without -m and tell when -m names another binary.
 */
#ifndef XRAYFDR_TOOLS_LOG_OBJECTS_H
#define XRAYFDR_TOOLS_LOG_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOG_OBJECTS_MAX 64
#define BUILD_ID_MAX 81 /* up to 40 bytes in hex (as the runtime keeps them) */

struct log_object {
	unsigned int index; /* 0: the program */
	char path[4096];
	char build_id[BUILD_ID_MAX]; /* lowercase hex, "" if none */
};

/* What fired, in a snapshot a trigger took (runtime.rst, "Triggers"). */
struct log_trigger {
	bool set;
	char spec[256]; /* "slow>1ms", "signal=USR2" */
	uint32_t tid; /* a duration trigger's call: thread, function */
	int32_t function;
	uint64_t duration_ns;
	uint64_t tsc; /* when the call returned, or the signal came */
};

struct log_objects {
	struct log_object obj[LOG_OBJECTS_MAX];
	unsigned int n;
	struct log_trigger trigger;
	uint64_t tsc_hz; /* the info event's tsc_hz= (0: none) */
};

/*
 * The objects of the info event at the end of the log at @path (the last
 * buffer holds it), and its TSC frequency and trigger, into @out.  Return 1 if the log has one, 0 if not
 * (not an xrayfdr log, a text format, standard input), or -errno if the
 * file cannot be read.
 */
int log_objects_read(const char *path, struct log_objects *out);

/*
 * The GNU build id of the ELF file @path, in lowercase hex, into @id.
 * Return 1, 0 if it has none, or -errno if it is not an ELF file that
 * can be read.
 */
int elf_build_id(const char *path, char id[BUILD_ID_MAX]);

#endif

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * XRay log files: the flight-data-recorder (FDR) format, versions 1 to 5,
 * and the basic ("naive") format, versions 1 to 3.
 *
 * Three layers, each usable alone:
 *
 *  - Encoders: one record into a caller's buffer, byte-exact, in either
 *    byte order (xrayfdr_encode_*()).
 *  - Writer: turns a stream of events (function entries and exits, custom
 *    and typed events) into a valid log, keeping one open buffer per thread
 *    and emitting the metadata records the format needs on its own (buffer
 *    preambles, CPU changes, TSC wraps, buffer extents or end-of-buffer).
 *  - Reader: a streaming, verifying state machine.  It never holds more than
 *    one record (plus its payload) of the file in memory, so it reads logs
 *    larger than RAM, from a file, a pipe or a memory buffer.  It yields
 *    either the raw records (with their file offsets) or decoded events with
 *    absolute TSC, thread, process and CPU.
 *
 * Documentation/fdr-format.rst describes the format itself.
 */
#ifndef XRAYFDR_FDR_H
#define XRAYFDR_FDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes of the on-disk units, in bytes. */
#define XRAYFDR_FILE_HEADER_SIZE 32
#define XRAYFDR_FUNCTION_RECORD_SIZE 8
#define XRAYFDR_METADATA_RECORD_SIZE 16
#define XRAYFDR_BASIC_RECORD_SIZE 32

/* Function ids are 28 bits wide in FDR function records. */
#define XRAYFDR_FUNC_ID_MASK 0x0fffffffu

/* The file type field of the header. */
enum xrayfdr_file_type {
	XRAYFDR_FILE_BASIC = 0, /* "naive" mode: 32-byte records */
	XRAYFDR_FILE_FDR = 1,
};

/* Versions this library reads; it writes all of them too. */
#define XRAYFDR_FDR_VERSION_MIN 1
#define XRAYFDR_FDR_VERSION_MAX 5
#define XRAYFDR_FDR_VERSION_DEFAULT 5
#define XRAYFDR_BASIC_VERSION_MIN 1
#define XRAYFDR_BASIC_VERSION_MAX 3
#define XRAYFDR_BASIC_VERSION_DEFAULT 3

/* The action of a function record (3 bits), numbered as in XRay. */
enum xrayfdr_func_kind {
	XRAYFDR_FUNC_ENTRY = 0,
	XRAYFDR_FUNC_EXIT = 1,
	XRAYFDR_FUNC_TAIL_EXIT = 2,
	XRAYFDR_FUNC_ENTRY_ARGS = 3,
};

/* The kind of a metadata record (7 bits). */
enum xrayfdr_md_kind {
	XRAYFDR_MD_NEW_BUFFER = 0,
	XRAYFDR_MD_END_OF_BUFFER = 1,
	XRAYFDR_MD_NEW_CPU_ID = 2,
	XRAYFDR_MD_TSC_WRAP = 3,
	XRAYFDR_MD_WALLTIME_MARKER = 4,
	XRAYFDR_MD_CUSTOM_EVENT_MARKER = 5,
	XRAYFDR_MD_CALL_ARGUMENT = 6,
	XRAYFDR_MD_BUFFER_EXTENTS = 7,
	XRAYFDR_MD_TYPED_EVENT_MARKER = 8,
	XRAYFDR_MD_PID = 9,
	XRAYFDR_MD_KIND_COUNT,
};

/* The decoded file header. */
struct xrayfdr_file_header {
	uint16_t version;
	uint16_t type; /* enum xrayfdr_file_type */
	bool constant_tsc;
	bool nonstop_tsc;
	bool big_endian; /* byte order the file was written in */
	uint64_t cycle_frequency; /* Hz */
	uint64_t buffer_size; /* FDR: bytes per thread buffer; basic: 0 */
};

/*
 * One metadata record, decoded.  Which fields mean something depends on
 * kind; the others are zero.  For custom and typed events, payload points at
 * event_size bytes that follow the record in the file.
 */
struct xrayfdr_metadata {
	uint8_t kind; /* enum xrayfdr_md_kind */
	int32_t tid; /* NewBuffer */
	int32_t pid; /* Pid */
	uint16_t cpu; /* NewCPUId; CustomEventMarker version 4 */
	uint64_t tsc; /* NewCPUId, TSCWrap; CustomEventMarker v1-4 */
	uint64_t seconds; /* WallTimeMarker */
	uint32_t micros; /* WallTimeMarker */
	int32_t event_size; /* Custom/TypedEventMarker payload bytes */
	int32_t tsc_delta; /* CustomEventMarker v5, TypedEventMarker */
	uint16_t event_type; /* TypedEventMarker */
	uint64_t arg; /* CallArgument */
	uint64_t extents; /* BufferExtents: bytes of buffer that follow */
	const void *payload;
};

/* Encode the 32-byte file header into @buf. */
XRAYFDR_API void
xrayfdr_encode_file_header(void *buf, const struct xrayfdr_file_header *h);

/* Encode an 8-byte function record into @buf. @func_id is masked to 28 bits. */
XRAYFDR_API void xrayfdr_encode_function(void *buf, bool big_endian,
					 enum xrayfdr_func_kind kind,
					 int32_t func_id, uint32_t tsc_delta);

/*
 * Encode a 16-byte metadata record into @buf.  @version selects the layout
 * of CustomEventMarker (absolute TSC in 1-3, plus CPU in 4, delta in 5).
 * The payload of an event marker is not written.
 * Return: 0, or -EINVAL for an unknown kind or version.
 */
XRAYFDR_API int xrayfdr_encode_metadata(void *buf, bool big_endian,
					unsigned int version,
					const struct xrayfdr_metadata *md);

/* Names for messages: "NewBuffer", "Function Exit", ... ("?" if unknown). */
XRAYFDR_API const char *xrayfdr_md_kind_name(unsigned int kind);
XRAYFDR_API const char *xrayfdr_func_kind_name(unsigned int kind);

/*
 * Events: what a trace means, independent of how it was encoded.
 */
enum xrayfdr_event_kind {
	XRAYFDR_EV_ENTRY = 0, /* numbered as XRay's RecordTypes */
	XRAYFDR_EV_EXIT = 1,
	XRAYFDR_EV_TAIL_EXIT = 2,
	XRAYFDR_EV_ENTRY_ARGS = 3,
	XRAYFDR_EV_CUSTOM = 4,
	XRAYFDR_EV_TYPED = 5,
};

/* llvm-xray's spelling: "function-enter", ..., "custom-event". */
XRAYFDR_API const char *xrayfdr_event_kind_name(unsigned int kind);

struct xrayfdr_event {
	uint64_t offset; /* file offset of the record carrying the event */
	uint64_t tsc; /* absolute timestamp counter */
	uint64_t wall_sec; /* wall time at the start of its buffer (FDR) */
	uint32_t wall_usec;
	uint32_t kind; /* enum xrayfdr_event_kind */
	int32_t func_id; /* function events; 0 otherwise */
	uint32_t tid;
	uint32_t pid; /* 0 where the format does not record it */
	uint16_t cpu;
	uint16_t event_type; /* typed events */
	uint32_t nargs; /* entry-with-args: number of arguments */
	const uint64_t *args;
	uint32_t data_size; /* custom and typed events: payload */
	const void *data;
	/* FDR: file offset of the thread buffer the event came from (its
	 * BufferExtents, or NewBuffer in version 1); 0 in basic logs */
	uint64_t buffer_offset;
};

/*
 * Scheduler events.  What the kernel module sees of a traced thread
 * (switched out, switched in, moved to another CPU) travels in FDR logs as
 * a custom event whose 16-byte payload is:
 *
 *   offset 0  4  magic "XFSC"
 *   offset 4  1  kind (enum xrayfdr_sched_kind)
 *   offset 5  1  flags: bit 0 = switched out while runnable (preempted)
 *   offset 6  2  u16 CPU where it happened
 *   offset 8  2  u16 previous CPU (migrations; else equal to the CPU)
 *   offset 10 2  zero
 *   offset 12 4  u32 thread id
 *
 * little endian, whatever the byte order of the log.  The event's TSC is
 * the time of the switch.  llvm-xray shows them as ordinary custom events.
 */
#define XRAYFDR_SCHED_PAYLOAD_SIZE 16
#define XRAYFDR_SCHED_PREEMPTED 0x1u

enum xrayfdr_sched_kind {
	XRAYFDR_SCHED_SWITCH_OUT = 1,
	XRAYFDR_SCHED_SWITCH_IN = 2,
	XRAYFDR_SCHED_MIGRATE = 3,
};

struct xrayfdr_sched_event {
	uint8_t kind; /* enum xrayfdr_sched_kind */
	uint8_t flags;
	uint16_t cpu;
	uint16_t prev_cpu;
	uint32_t tid;
};

/* Encode the 16-byte payload of a scheduler event into @buf. */
XRAYFDR_API void xrayfdr_sched_encode(void *buf,
				      const struct xrayfdr_sched_event *se);
/*
 * Decode a custom event's payload.  Return 1 if it is a scheduler event
 * (and fill *se), 0 if it is some other custom event.
 */
XRAYFDR_API int xrayfdr_sched_decode(const void *data, size_t size,
				     struct xrayfdr_sched_event *se);

/*
 * Thread names.  The runtime records the name of each traced thread (its
 * Linux comm, as pthread_setname_np() or prctl(PR_SET_NAME) set it; none
 * for a thread that has only the name exec gave the process) in the
 * thread's own stream, as a custom event whose payload of 9 to 23 bytes
 * is:
 *
 *   offset 0  4  magic "XFTN"
 *   offset 4  4  u32 thread id
 *   offset 8  N  the name's bytes, 1 <= N <= 15, no NUL
 *
 * little endian, whatever the byte order of the log.  The name holds from
 * the event on, until the thread's next thread-name event (one the
 * runtime adds at the end of a trace, for a rename it saw only then, has
 * the time of the thread's last event).  llvm-xray shows them as ordinary
 * custom events.
 */
#define XRAYFDR_THREAD_NAME_MAX 15

/*
 * Encode the payload of a thread-name event into @buf (at least
 * 8 + XRAYFDR_THREAD_NAME_MAX bytes).  @name is cut to
 * XRAYFDR_THREAD_NAME_MAX bytes; no more of it is read.
 * Return: the payload size, 8 + strlen(name) clipped to 15 (an empty
 * name gives 8, which no decoder accepts).
 */
XRAYFDR_API size_t xrayfdr_thread_name_encode(void *buf, uint32_t tid,
					      const char *name);
/*
 * Decode a custom event's payload.  Return 1 if it is a thread-name
 * event (and fill *tid and @name, XRAYFDR_THREAD_NAME_MAX + 1 bytes,
 * with the name NUL-terminated), 0 if it is some other custom event.
 * Reads no byte past @size; a name that is empty, longer than 15 bytes
 * or holds a NUL is not a thread-name event.
 */
XRAYFDR_API int xrayfdr_thread_name_decode(const void *data, size_t size,
					   uint32_t *tid, char *name);

/*
 * Reader.
 */

/* Options for the reader; fill with XRAYFDR_OPTS(xrayfdr_reader_opts, ...). */
enum xrayfdr_severity {
	XRAYFDR_SEV_ERROR,
	XRAYFDR_SEV_WARNING,
};

/* A problem found in a file: where, in which record, which rule. */
struct xrayfdr_diag {
	enum xrayfdr_severity severity;
	int error; /* negative errno: -EBADMSG, -ENOTSUP, -EIO.. */
	uint64_t offset; /* byte offset of the offending record */
	const char *record; /* record name, e.g. "NewCPUId" */
	const char *rule; /* stable rule id, see fdr-format.rst */
	const char *message; /* "FILE: offset 0x30: NewCPUId: ..." */
};

typedef void (*xrayfdr_diag_fn)(void *ctx, const struct xrayfdr_diag *diag);

/* Reader flags. */
enum {
	/* On an error, report it, skip to the next buffer and go on. */
	XRAYFDR_READ_KEEP_GOING = 1u << 0,
	/* Do not follow call stacks (no "exit without entry" warnings). */
	XRAYFDR_READ_NO_CALL_CHECK = 1u << 1,
	/*
	 * A thread whose time goes back (rule time-order, checked with the
	 * call stacks) is an error that does not stop the reader, not a
	 * warning: for logs whose writer keeps each thread's records in
	 * time order, as xrayfdr's runtime does.
	 */
	XRAYFDR_READ_TIME_ERRORS = 1u << 2,
};

struct xrayfdr_reader_opts {
	size_t sz;
	unsigned int flags;
	/* largest custom/typed event payload accepted; 0: 16 MiB */
	size_t max_payload;
	/* called for each warning, and each error skipped in keep-going mode */
	xrayfdr_diag_fn on_diag;
	void *diag_ctx;
	/*
	 * FDR logs: if set, the buffers of the threads it returns 0 for are
	 * skipped whole after their NewBuffer record, unread and unchecked
	 * (one XRAYFDR_REC_PADDING record each), so that readers of the
	 * same log can share its threads out.  A version 1 log whose header
	 * gives no buffer_size cannot be cut into buffers: its buffers are
	 * all read.
	 */
	int (*keep_thread)(void *ctx, uint32_t tid);
	void *keep_ctx;
};

struct xrayfdr_reader_stats {
	uint64_t bytes; /* bytes consumed, header included */
	uint64_t records; /* records decoded */
	uint64_t buffers; /* thread buffers started */
	uint64_t events; /* events yielded */
	uint64_t errors; /* errors (only > 1 in keep-going mode) */
	uint64_t warnings;
	uint64_t skipped_bytes; /* bytes skipped after errors */
	uint64_t skipped_buffers;
	uint64_t unmatched_exits; /* exits with no entry on the thread's stack */
	/*
	 * Exits that found their thread's stack empty: of calls entered
	 * before the log's window began (a flight recorder keeps the newest
	 * buffers, which start inside calls).  Counted, not warned about,
	 * and not in unmatched_exits; window_threads: the threads that had
	 * one.
	 */
	uint64_t window_exits;
	uint64_t window_threads;
	/*
	 * Checksums (fdr-format.rst, "Checksums"): buffers whose checksum
	 * matched; damage they revealed (a buffer that fails its checksum
	 * or lacks the one its log's other buffers carry, a header that
	 * fails theirs), each also an error (rule "checksum") that does not
	 * stop the reader.  A log from a writer without checksums has none
	 * of either.
	 */
	uint64_t sum_ok;
	uint64_t sum_failed;
	/*
	 * Steps back in a thread's time (rule time-order): a record of the
	 * thread before the one it follows in the log.  Counted unless
	 * XRAYFDR_READ_NO_CALL_CHECK.
	 */
	uint64_t time_back;
};

/* Kinds of raw record the reader yields. */
enum xrayfdr_record_type {
	XRAYFDR_REC_FUNCTION,
	XRAYFDR_REC_METADATA,
	XRAYFDR_REC_PADDING, /* version 1: bytes after EndOfBuffer; or a
			      * buffer keep_thread left out */
	XRAYFDR_REC_BASIC, /* basic format: a function record */
	XRAYFDR_REC_BASIC_ARG, /* basic format: an argument payload */
};

struct xrayfdr_record {
	uint64_t offset;
	uint64_t size; /* bytes in the file, payload included */
	enum xrayfdr_record_type type;
	/* XRAYFDR_REC_FUNCTION and XRAYFDR_REC_BASIC */
	uint8_t func_kind; /* enum xrayfdr_func_kind */
	int32_t func_id;
	uint32_t tsc_delta; /* FDR */
	/* absolute TSC after this record (function records and events) */
	uint64_t tsc;
	/* XRAYFDR_REC_METADATA */
	struct xrayfdr_metadata md;
	/* XRAYFDR_REC_BASIC and XRAYFDR_REC_BASIC_ARG */
	uint8_t cpu;
	uint32_t tid;
	uint32_t pid;
	uint64_t arg;
};

struct xrayfdr_reader;

/*
 * Create a reader.  Nothing is read yet: errors in the file, the header
 * included, are reported by the xrayfdr_reader_*() calls that read.
 * @name names the input in messages.
 */
XRAYFDR_API struct xrayfdr_reader *
xrayfdr_reader_open(const char *path, const struct xrayfdr_reader_opts *opts);
XRAYFDR_API struct xrayfdr_reader *
xrayfdr_reader_new_fd(int fd, const char *name,
		      const struct xrayfdr_reader_opts *opts);
XRAYFDR_API struct xrayfdr_reader *
xrayfdr_reader_new_mem(const void *data, size_t size, const char *name,
		       const struct xrayfdr_reader_opts *opts);
XRAYFDR_API void xrayfdr_reader_free(struct xrayfdr_reader *r);

/* Read and check the file header (done implicitly by the next_* calls). */
XRAYFDR_API int xrayfdr_reader_header(struct xrayfdr_reader *r,
				      const struct xrayfdr_file_header **hdr);

/*
 * Next raw record.  *rec points into the reader and stays valid until the
 * next call.  Return: 1 with a record, 0 at the end, negative errno on error
 * (see xrayfdr_reader_error()).  Do not mix with xrayfdr_reader_next_event().
 */
XRAYFDR_API int xrayfdr_reader_next_record(struct xrayfdr_reader *r,
					   const struct xrayfdr_record **rec);

/*
 * Next event, as xrayfdr_reader_next_record() but decoded: entries carry
 * their arguments, events their payloads, all an absolute TSC.
 */
XRAYFDR_API int xrayfdr_reader_next_event(struct xrayfdr_reader *r,
					  const struct xrayfdr_event **ev);

/* A function entry or exit, as xrayfdr_reader_next_calls() gives it. */
struct xrayfdr_call_event {
	uint64_t tsc; /* absolute */
	int32_t func_id;
	uint32_t kind; /* XRAYFDR_EV_ENTRY, _EXIT or _TAIL_EXIT */
};

/*
 * The events xrayfdr_reader_next_event() would return next, up to @max
 * at once, while they are function entries and exits without arguments
 * of one thread's buffer: most of an FDR log, decoded by a loop that does
 * nothing else.  Return how many; *@last is then the last of them as
 * xrayfdr_reader_next_event() would have returned it (its thread,
 * process, CPU and wall time are all of theirs; out[i] was at file offset
 * (*last)->offset - 8 * (n - 1 - i)).  Return 0, reading nothing, where
 * the next event is another kind, or at a buffer's end or the end of
 * what is read in: xrayfdr_reader_next_event() takes it from there.
 * Only readers made with XRAYFDR_READ_NO_CALL_CHECK give batches.
 */
XRAYFDR_API size_t xrayfdr_reader_next_calls(struct xrayfdr_reader *r,
					     struct xrayfdr_call_event *out,
					     size_t max,
					     const struct xrayfdr_event **last);

/* The error that stopped the reader (NULL if none). */
XRAYFDR_API const struct xrayfdr_diag *
xrayfdr_reader_error(const struct xrayfdr_reader *r);
XRAYFDR_API const struct xrayfdr_reader_stats *
xrayfdr_reader_stats(const struct xrayfdr_reader *r);

/*
 * Writer.
 */
typedef int (*xrayfdr_write_fn)(void *ctx, const void *data, size_t size);

struct xrayfdr_writer_opts {
	size_t sz;
	bool basic; /* basic-mode log instead of FDR */
	unsigned int version; /* 0: FDR 5, basic 3 */
	bool big_endian;
	bool constant_tsc;
	bool nonstop_tsc;
	uint64_t cycle_frequency; /* Hz, written to the header */
	uint64_t buffer_size; /* FDR bytes per thread buffer; 0: 16384 */
};

struct xrayfdr_writer;

/*
 * Create a writer that emits through @write (which must write all bytes or
 * return a negative errno).  The file header is written at once.
 */
XRAYFDR_API struct xrayfdr_writer *
xrayfdr_writer_new(xrayfdr_write_fn write, void *ctx,
		   const struct xrayfdr_writer_opts *opts);
/* Same, writing to @fd. */
XRAYFDR_API struct xrayfdr_writer *
xrayfdr_writer_new_fd(int fd, const struct xrayfdr_writer_opts *opts);

/*
 * Append an event.  The thread (pid, tid) gets a buffer of its own;
 * ev->offset is ignored, the wall time is used when a buffer is opened.
 * Return: 0, -EMSGSIZE if it cannot fit in one buffer, -EOPNOTSUPP if the
 * format or version cannot represent it (typed events in FDR version 1,
 * custom events in the basic format), -EINVAL for a bad kind, or the write
 * callback's error.
 */
XRAYFDR_API int xrayfdr_writer_event(struct xrayfdr_writer *w,
				     const struct xrayfdr_event *ev);

/* Close the buffer of one thread now (it is written out). */
XRAYFDR_API int xrayfdr_writer_close_thread(struct xrayfdr_writer *w,
					    uint32_t pid, uint32_t tid);

/* Write out every open buffer.  The writer can go on afterwards. */
XRAYFDR_API int xrayfdr_writer_flush(struct xrayfdr_writer *w);

/* Bytes written so far, header included. */
XRAYFDR_API uint64_t xrayfdr_writer_bytes(const struct xrayfdr_writer *w);

/* Flush, then free.  Return: the flush's result. */
XRAYFDR_API int xrayfdr_writer_close(struct xrayfdr_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* XRAYFDR_FDR_H */

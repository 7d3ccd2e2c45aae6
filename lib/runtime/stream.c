// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Streaming: the writer thread (see stream.h). */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logfile.h"
#include "sink.h"
#include "state.h"
#include "stream.h"

static struct {
	pthread_t thread;
	bool running; /* a thread to join */
	volatile int stop;
	volatile int halt; /* the emergency flush: no more passes */
	volatile int busy; /* in a pass */
	int fd;
	int error; /* the first write error, negative */
	uint64_t events, buffers;
} st = { .fd = -1 };

static int write_chunk(void *ctx, const struct rt_chunk *c)
{
	int ret = rt_log_chunk(&rt_live, *(int *)ctx, c);

	if (!ret) {
		st.events += c->events;
		st.buffers++;
	}
	return ret;
}

/* The writer stops writing: what finds no room now is counted as
 * dropped, and no thread waits for it any more. */
static void stop_writing(void)
{
	__atomic_store_n(&rt_live.stream_alive, 0, __ATOMIC_RELEASE);
	rt_stream_wake(RT_STREAM_ANY);
}

static void *writer(void *arg)
{
	(void)arg;
	rt_internal_thread_begin();
	for (;;) {
		/* read before the pass: a thread that finds no room after
		 * it changes it, and the nap below does not start */
		uint32_t kick =
			__atomic_load_n(&rt_live.stream_kick, __ATOMIC_SEQ_CST);
		int ret;

		__atomic_store_n(&st.busy, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&st.halt, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&st.busy, 0, __ATOMIC_RELEASE);
			break;
		}
		ret = rt_live.sink->stream_one(write_chunk, &st.fd);
		__atomic_store_n(&st.busy, 0, __ATOMIC_RELEASE);

		if (ret < 0) {
			st.error = ret;
			stop_writing(); /* waiting threads give up */
			break;
		}
		if (!ret) {
			struct timespec nap = { 0, 200000 };

			if (__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE))
				break;
			syscall(SYS_futex, &rt_live.stream_kick,
				FUTEX_WAIT_PRIVATE, kick, &nap, NULL, 0);
		}
	}
	return NULL;
}

/* The trace's log with its header, open for appending: the descriptor, or
 * a negative errno with the reason in @err. */
static int open_log(char *err, size_t errlen)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	int fd = rt_open_log(&rt_live.opts, rt_live.last_log,
			     sizeof(rt_live.last_log));
	int ret;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the log '%s': %s",
			 rt_live.last_log, strerror(errno));
		return ret;
	}
	/* the writer's appends and an emergency flush's stay whole */
	rt_log_header(&rt_live, hdr);
	ret = fcntl(fd, F_SETFL, O_APPEND) ? -errno :
					     rt_write_all(fd, hdr, sizeof(hdr));
	if (ret) {
		snprintf(err, errlen, "cannot write the log '%s': %s",
			 rt_live.last_log, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int rt_stream_start(char *err, size_t errlen)
{
	sigset_t all, old;
	int ret;

	if (!rt_live.sink->stream_one) {
		snprintf(err, errlen, "%s mode cannot stream",
			 rt_live.sink->name);
		return -EOPNOTSUPP;
	}
	st.fd = open_log(err, errlen);
	if (st.fd < 0)
		return st.fd;
	st.stop = 0;
	st.halt = 0;
	st.error = 0;
	st.events = st.buffers = 0;
	__atomic_store_n(&rt_live.stream_alive, 1, __ATOMIC_RELEASE);
	/* no signal of the program's lands in the writer */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&st.thread, NULL, writer, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		__atomic_store_n(&rt_live.stream_alive, 0, __ATOMIC_RELEASE);
		close(st.fd);
		st.fd = -1;
		snprintf(err, errlen, "cannot start the stream's writer: %s",
			 strerror(ret));
		return -ret;
	}
	st.running = true;
	return 0;
}

int rt_stream_stop(void)
{
	if (st.running) {
		__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
		pthread_join(st.thread, NULL);
		st.running = false;
	}
	stop_writing();
	return st.error;
}

void rt_stream_halt(void)
{
	struct timespec ms = { 0, 1000000 };

	if (!st.running)
		return;
	__atomic_store_n(&st.halt, 1, __ATOMIC_SEQ_CST);
	/* (bounded: the writer may be the thread that crashed) */
	for (int i = 0; i < 1000 && __atomic_load_n(&st.busy, __ATOMIC_ACQUIRE);
	     i++)
		nanosleep(&ms, NULL);
	stop_writing();
}

int rt_stream_fd(void)
{
	return st.fd;
}

void rt_stream_totals(uint64_t *events, uint64_t *buffers)
{
	*events = st.events;
	*buffers = st.buffers;
}

void rt_stream_close(void)
{
	if (st.fd >= 0)
		close(st.fd);
	st.fd = -1;
}

void rt_stream_fork_child(void)
{
	if (st.fd >= 0)
		close(st.fd);
	st.fd = -1;
	st.running = false;
	__atomic_store_n(&rt_live.stream_alive, 0, __ATOMIC_RELEASE);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Call stacks from the replay driver (replay.h): a trie of every thread's
 * stacks (trie.h), built by the call matcher's hooks in one pass, with
 * llvm-xray's order of threads and its merge of them; and the outputs of
 * a line per stack: FlameGraph's folded stacks (exclusive time) and
 * llvm-xray stack's --all-stacks.  'stack' draws its reports and SVG
 * from it; 'convert -f folded' writes with it.
 */
#ifndef XRAYFDR_TOOLS_STACKS_H
#define XRAYFDR_TOOLS_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "calls.h"
#include "replay.h"
#include "../input/source.h"
#include "trie.h"

struct analysis_opts;
struct symbols;

/* Each thread's: call_thread.user */
struct stacks_thread {
	struct trie_thread roots;
	bool rooted;
	uint64_t root_seq; /* where its first root call was */
	uint64_t rank; /* stacks_order_threads()'s */
	/* the path hashes of the entries of the run being fed (the calls'
	 * ahead hook), and a stack of them to work them out */
	uint32_t *ahead, nahead, next_ahead, ahead_cap;
};

struct stacks {
	struct trie trie;
	struct replay *replay;
	/* stacks_read_shared(): the drivers whose threads the trie holds
	 * (replay is NULL then) */
	struct replay **shares;
	unsigned int nshares;
	struct symbols *syms;
	const char *cmd; /* for messages */
	bool keep_going;
	bool strict; /* llvm-xray's matching: an unmatched exit is an error */
	bool close_all; /* a worker of stacks_read_shared(): close its calls */
};

static inline struct stacks_thread *stacks_thread_of(struct call_thread *t)
{
	return t->user;
}

/*
 * llvm-xray's Roots: a DenseMap from thread id to the thread's roots,
 * filled as each thread makes its first root call.
 */
struct stacks_order {
	struct call_thread **threads;
	uint32_t n;
};

/*
 * The replay driver that fills @s (whose syms, strict and keep_going the
 * caller sets), with @mode's matching and @o's threads and time range
 * (@o may be NULL).  NULL if out of memory.
 */
struct replay *stacks_replay(struct stacks *s, enum calls_mode mode,
			     const struct trace_opts *in,
			     const struct analysis_opts *o);
void stacks_free(struct stacks *s);

/*
 * Read @path with @n drivers that share its threads out, each building
 * a trie of its own, in a thread of its own (replay_run_shared()); their
 * tries then become @s's, which has the drivers as its shares.  @s is as
 * stacks_replay() would make it of one driver reading the log, and
 * calls_close_all() has run if @close_all.  0 done; 1 if one driver is to
 * read the log (nothing was said); or -ENOMEM.
 */
int stacks_read_shared(struct stacks *s, enum calls_mode mode,
		       const struct trace_opts *in,
		       const struct analysis_opts *o, const char *path,
		       unsigned int n, bool close_all);

/* The frequency of the log read, and the note of replay_note_window(). */
double stacks_freq(const struct stacks *s);
/* Say on stderr, once, how many stacks' sums stopped at the largest
 * value (trie_sum_add()); nothing if none did. */
void stacks_note_saturated(const struct stacks *s, const char *path);

void stacks_note_window(const struct stacks *s, const char *path);

/* The threads that made a root call, in llvm-xray's order; free
 * ro->threads.  0 or -ENOMEM. */
int stacks_order_threads(struct stacks *s, struct stacks_order *ro);
/* llvm-xray's mergeAcrossThreads: @ro's roots merged into @merged. */
int stacks_merge(struct stacks *s, const struct stacks_order *ro,
		 struct trie_thread *merged);
/* Push @n node numbers on a work stack that grows: a pre-order walk pops
 * them last first, as llvm-xray's does.  0 or -ENOMEM. */
int stacks_push_children(uint32_t **work, uint32_t *nwork, uint32_t *cap,
			 const uint32_t *children, uint32_t n);

/* A thread's first frame in folded lines: "thread_T" (llvm-xray's), or
 * ours with the thread's name. */
void stacks_thread_prefix(const struct call_thread *t, bool llvm, char *buf,
			  size_t len);
/*
 * Every stack under @roots, a line each, after @prefix (NULL: none):
 * llvm-xray's "f;g; VALUE" (inclusive time, or @count), or ours
 * "f;g SELF" for stacks with exclusive time.
 */
int stacks_print_all(struct stacks *s, FILE *out, const uint32_t *roots,
		     uint32_t nroots, const char *prefix, bool llvm_style,
		     bool count);
/* stacks_print_all() of every thread, in llvm-xray's order. */
int stacks_write_folded_lines(struct stacks *s, FILE *out, bool llvm_style,
			      bool count);

/* convert -f folded: read @t, write its folded stacks.  An exit status
 * (report.h); says what went wrong itself. */
int stacks_write_folded(struct trace *t, const char *path, struct symbols *syms,
			FILE *out, const struct analysis_opts *o);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flame graph as one self-contained SVG file: every frame a rectangle as
 * wide as its time, callers below callees, a tooltip per frame with its
 * total and self time, no script and nothing fetched.  Frames narrower
 * than a tenth of a pixel are left out (their time stays in their parent's
 * width).
 */
#ifndef XRAYFDR_TOOLS_FLAMEGRAPH_H
#define XRAYFDR_TOOLS_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

/* The tree to draw, through callbacks (nodes are the caller's ids). */
struct flame_tree {
	uint32_t nroots;
	uint32_t (*root)(void *ctx, uint32_t i);
	uint32_t (*nchildren)(void *ctx, uint32_t node);
	uint32_t (*child)(void *ctx, uint32_t node, uint32_t i);
	uint64_t (*self)(void *ctx, uint32_t node);
	const char *(*name)(void *ctx, uint32_t node);
	void *ctx;
};

struct flame_opts {
	const char *title;
	const char *subtitle;
	double ticks_per_second; /* 0: show ticks */
	unsigned int width; /* pixels; 0: 1200 */
};

/* Write the SVG.  Return 0, or -ENOMEM, or -E2BIG for a tree deeper than
 * the drawing allows (4096 levels). */
int flamegraph_write(FILE *out, const struct flame_tree *tree,
		     const struct flame_opts *opts);

#endif

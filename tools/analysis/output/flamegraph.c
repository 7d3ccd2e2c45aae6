// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SVG flame graph (see flamegraph.h).  Two walks over the tree: one
 * for each node's total (its self time plus its children's totals, and
 * the depth), one to draw.  Both use explicit stacks: traces can nest
 * deeper than the C stack likes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"

#define FRAME_HEIGHT 16
#define FONT_SIZE 11
#define CHAR_WIDTH 6.6
#define TOP_MARGIN 56
#define BOTTOM_MARGIN 24
#define SIDE_MARGIN 10
#define MAX_DEPTH 4096

struct work {
	uint32_t node;
	uint32_t next_child;
	uint32_t depth;
	double x;
};

/* Totals: computed by a post-order walk into an array indexed by node. */
struct totals {
	uint64_t *v;
	uint32_t cap;
};

static int set_total(struct totals *t, uint32_t node, uint64_t v)
{
	if (node >= t->cap) {
		uint32_t cap = t->cap ? t->cap : 1024;
		uint64_t *n;

		while (cap <= node)
			cap *= 2;
		n = realloc(t->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + t->cap, 0, (cap - t->cap) * sizeof(*n));
		t->v = n;
		t->cap = cap;
	}
	t->v[node] = v;
	return 0;
}

static int push(struct work **s, uint32_t *n, uint32_t *cap, struct work w)
{
	if (*n == *cap) {
		uint32_t c = *cap ? 2 * *cap : 64;
		struct work *ns = realloc(*s, c * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		*s = ns;
		*cap = c;
	}
	(*s)[(*n)++] = w;
	return 0;
}

/* @a + @b, stopping at the largest (a hostile log's times can add up
 * past 2^64 ticks). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Post-order: total = self + sum of the children's totals. */
static int compute_totals(const struct flame_tree *tr, struct totals *tot,
			  uint32_t *max_depth, uint64_t *grand)
{
	struct work *s = NULL;
	uint32_t n = 0, cap = 0;
	int ret = 0;

	*grand = 0;
	*max_depth = 0;
	for (uint32_t r = 0; r < tr->nroots && !ret; r++) {
		ret = push(&s, &n, &cap,
			   (struct work){ .node = tr->root(tr->ctx, r) });
		while (n && !ret) {
			struct work *w = &s[n - 1];

			if (w->depth + 1 > *max_depth)
				*max_depth = w->depth + 1;
			if (w->next_child < tr->nchildren(tr->ctx, w->node)) {
				uint32_t c = tr->child(tr->ctx, w->node,
						       w->next_child++);

				if (w->depth + 1 >= MAX_DEPTH) {
					ret = -E2BIG;
					break;
				}
				ret = push(
					&s, &n, &cap,
					(struct work){ .node = c,
						       .depth = w->depth + 1 });
				continue;
			}
			uint64_t sum = tr->self(tr->ctx, w->node);

			for (uint32_t i = 0;
			     i < tr->nchildren(tr->ctx, w->node); i++)
				sum = add_sat(
					sum,
					tot->v[tr->child(tr->ctx, w->node, i)]);
			ret = set_total(tot, w->node, sum);
			if (!ret && w->depth == 0)
				*grand = add_sat(*grand, sum);
			n--;
		}
	}
	free(s);
	return ret;
}

static void xml_text(FILE *out, const char *s, size_t max)
{
	size_t i = 0;

	for (; *s && i < max; s++, i++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			/* control characters are not allowed in XML */
			putc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

/* A warm colour from the name, so a function keeps its colour. */
static void colour(const char *name, unsigned int *r, unsigned int *g,
		   unsigned int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + (h % 50);
	*g = 80 + ((h >> 8) % 150);
	*b = 40 + ((h >> 16) % 50);
}

static void format_time(char *buf, size_t len, uint64_t ticks, double tps)
{
	double s;

	if (!tps) {
		snprintf(buf, len, "%" PRIu64 " ticks", ticks);
		return;
	}
	s = (double)ticks / tps;
	if (s >= 1)
		snprintf(buf, len, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else if (s >= 1e-6)
		snprintf(buf, len, "%.3f us", s * 1e6);
	else
		snprintf(buf, len, "%.0f ns", s * 1e9);
}

static void draw_frame(FILE *out, const struct flame_tree *tr,
		       const struct flame_opts *o, uint32_t node,
		       uint64_t total, uint64_t grand, double x, double w,
		       double y)
{
	const char *name = tr->name(tr->ctx, node);
	unsigned int r, g, b;
	char t1[32], t2[32];
	size_t fit;

	colour(name, &r, &g, &b);
	format_time(t1, sizeof(t1), total, o->ticks_per_second);
	format_time(t2, sizeof(t2), tr->self(tr->ctx, node),
		    o->ticks_per_second);
	fputs("<g><title>", out);
	xml_text(out, name, SIZE_MAX);
	fprintf(out, " (%s, %.2f%%; self %s)</title>", t1,
		grand ? 100.0 * (double)total / (double)grand : 0.0, t2);
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
		x, y, w, FRAME_HEIGHT - 1, r, g, b);
	fit = w > 3 * CHAR_WIDTH ? (size_t)((w - 6) / CHAR_WIDTH) : 0;
	if (fit) {
		size_t len = strlen(name);

		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3,
			y + FRAME_HEIGHT - 4.5);
		if (len <= fit) {
			xml_text(out, name, len);
		} else {
			xml_text(out, name, fit - 2);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

int flamegraph_write(FILE *out, const struct flame_tree *tr,
		     const struct flame_opts *o)
{
	struct totals tot = { 0 };
	struct work *s = NULL;
	uint32_t n = 0, cap = 0, depth;
	unsigned int width = o->width ? o->width : 1200;
	double scale, x = SIDE_MARGIN;
	uint64_t grand;
	char total_s[32];
	int ret, height;

	ret = compute_totals(tr, &tot, &depth, &grand);
	if (ret) {
		free(tot.v);
		return ret;
	}
	height = TOP_MARGIN + (int)depth * FRAME_HEIGHT + BOTTOM_MARGIN;
	scale = grand ? (width - 2.0 * SIDE_MARGIN) / (double)grand : 0;
	format_time(total_s, sizeof(total_s), grand, o->ticks_per_second);
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%d\" viewBox=\"0 0 %u %d\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}"
		"rect:hover{stroke:#000;stroke-width:0.5}"
		".title{font-size:17px;text-anchor:middle}"
		".sub{font-size:12px;text-anchor:middle;fill:#555}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"title\" x=\"%.1f\" y=\"24\">",
		width, height, width, height, FONT_SIZE, width / 2.0);
	xml_text(out, o->title ? o->title : "Flame Graph", SIZE_MAX);
	fprintf(out, "</text>\n<text class=\"sub\" x=\"%.1f\" y=\"42\">",
		width / 2.0);
	if (o->subtitle) {
		xml_text(out, o->subtitle, SIZE_MAX);
		fputs(" - ", out);
	}
	fprintf(out, "exclusive time, %s in all</text>\n", total_s);

	/* pre-order, each frame at its parent's x plus its elder
	 * siblings' widths; callers at the bottom */
	for (uint32_t r = 0; r < tr->nroots && !ret; r++) {
		uint32_t root = tr->root(tr->ctx, r);

		ret = push(&s, &n, &cap, (struct work){ .node = root, .x = x });
		x += (double)tot.v[root] * scale;
		while (n && !ret) {
			struct work w = s[--n];
			uint64_t total = tot.v[w.node];
			double wd = (double)total * scale, cx = w.x;
			double y = height - BOTTOM_MARGIN -
				   (double)(w.depth + 1) * FRAME_HEIGHT;

			if (wd < 0.1)
				continue;
			draw_frame(out, tr, o, w.node, total, grand, w.x, wd,
				   y);
			for (uint32_t i = 0;
			     i < tr->nchildren(tr->ctx, w.node) && !ret; i++) {
				uint32_t c = tr->child(tr->ctx, w.node, i);

				ret = push(&s, &n, &cap,
					   (struct work){ .node = c,
							  .depth = w.depth + 1,
							  .x = cx });
				cx += (double)tot.v[c] * scale;
			}
		}
	}
	fputs("</svg>\n", out);
	free(s);
	free(tot.v);
	return ret;
}

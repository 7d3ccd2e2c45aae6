/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * YAML scalars written the way LLVM's YAML library writes them, so that
 * `xrayfdr extract` and `xrayfdr convert --output-format=yaml` produce the
 * bytes `llvm-xray` produces: plain where the text cannot be mistaken for
 * anything else, 'single-quoted' where it could, "double-quoted" with
 * escapes where it holds control characters or non-ASCII bytes.
 */
#ifndef XRAYFDR_TOOLS_YAML_SCALAR_H
#define XRAYFDR_TOOLS_YAML_SCALAR_H

#include <stddef.h>
#include <stdio.h>

enum yaml_quoting {
	YAML_PLAIN,
	YAML_SINGLE,
	YAML_DOUBLE,
};

/* Which quoting LLVM's emitter picks for @len bytes at @s. */
enum yaml_quoting yaml_quoting(const char *s, size_t len);

/*
 * Write @len bytes at @s as a scalar.  An empty string is ''.  Like LLVM,
 * a double-quoted scalar ends at the first byte that does not start valid
 * UTF-8 (written as U+FFFD): such text cannot round-trip through LLVM's
 * YAML, and we reproduce what it writes rather than invent a form.
 */
void yaml_write_scalar(FILE *out, const char *s, size_t len);

struct outbuf;
/* Same, into an output buffer (outbuf.h). */
void yaml_put_scalar(struct outbuf *out, const char *s, size_t len);

/* Same, for a NUL-terminated string. */
void yaml_write_str(FILE *out, const char *s);

#endif

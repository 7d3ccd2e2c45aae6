// SPDX-License-Identifier: GPL-2.0-only
/*
 * LLVM's rules for YAML scalars (llvm/Support/YAMLTraits.h needsQuotes and
 * YAMLParser.cpp escape), re-implemented from their description and checked
 * against llvm-xray's output by tests/tools/test_llvm_golden.py.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "outbuf.h"
#include "yaml_scalar.h"

static bool equals(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_digits(const char *s, size_t len, size_t i)
{
	while (i < len && is_digit(s[i]))
		i++;
	return i;
}

static bool only_chars(const char *s, size_t len, size_t from, const char *set)
{
	if (from >= len)
		return false;
	for (size_t i = from; i < len; i++)
		if (!strchr(set, s[i]) || !s[i])
			return false;
	return true;
}

/* YAML 1.2 core schema numbers, as LLVM recognises them. */
static bool is_numeric(const char *s, size_t len)
{
	size_t i = 0;

	if (!len || equals(s, len, "+") || equals(s, len, "-"))
		return false;
	if (equals(s, len, ".nan") || equals(s, len, ".NaN") ||
	    equals(s, len, ".NAN"))
		return true;
	if (s[0] == '-' || s[0] == '+')
		i = 1;
	if (equals(s + i, len - i, ".inf") || equals(s + i, len - i, ".Inf") ||
	    equals(s + i, len - i, ".INF"))
		return true;
	/* octal and hex take no sign */
	if (len >= 2 && s[0] == '0' && s[1] == 'o')
		return only_chars(s, len, 2, "01234567");
	if (len >= 2 && s[0] == '0' && s[1] == 'x')
		return only_chars(s, len, 2, "0123456789abcdefABCDEF");
	if (i < len && s[i] == '.' && (i + 1 == len || !is_digit(s[i + 1])))
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
		return false;
	i = skip_digits(s, len, i);
	if (i == len)
		return true;
	if (s[i] == '.') {
		i = skip_digits(s, len, i + 1);
		if (i == len)
			return true;
	}
	if (s[i] != 'e' && s[i] != 'E')
		return false;
	i++;
	if (i == len)
		return false;
	if (s[i] == '+' || s[i] == '-') {
		i++;
		if (i == len)
			return false;
	}
	return skip_digits(s, len, i) == len;
}

static bool is_c_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

enum yaml_quoting yaml_quoting(const char *s, size_t len)
{
	enum yaml_quoting q = YAML_PLAIN;

	if (!len)
		return YAML_SINGLE;
	/* what needs single quotes at least; the bytes may need double
	 * quotes still (a text ending in a line feed) */
	if (is_c_space(s[0]) || is_c_space(s[len - 1]) ||
	    equals(s, len, "null") || equals(s, len, "Null") ||
	    equals(s, len, "NULL") || equals(s, len, "~") ||
	    equals(s, len, "true") || equals(s, len, "True") ||
	    equals(s, len, "TRUE") || equals(s, len, "false") ||
	    equals(s, len, "False") || equals(s, len, "FALSE") ||
	    is_numeric(s, len) ||
	    /* indicators that cannot start a plain scalar */
	    (s[0] && strchr("-?:\\,[]{}#&*!|>'\"%@`", s[0])))
		q = YAML_SINGLE;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_alnum(c))
			continue;
		switch (c) {
		case '_':
		case '-':
		case '^':
		case '.':
		case ',':
		case ' ':
		case '\t':
			continue;
		case 0x7f:
			return YAML_DOUBLE;
		default:
			if (c <= 0x1f || (c & 0x80))
				return YAML_DOUBLE;
			q = YAML_SINGLE;
		}
	}
	return q;
}

/* One UTF-8 sequence at s[0..len): its code point and length, or length
 * 0 if it is not valid (overlong forms and surrogates included). */
static size_t decode_utf8(const unsigned char *s, size_t len, uint32_t *cp)
{
	if (len >= 2 && (s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
		if (*cp >= 0x80)
			return 2;
	}
	if (len >= 3 && (s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 &&
	    (s[2] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 0x0f) << 12 |
		      (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		if (*cp >= 0x800 && (*cp < 0xd800 || *cp > 0xdfff))
			return 3;
	}
	if (len >= 4 && (s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 &&
	    (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80) {
		*cp = (uint32_t)(s[0] & 0x07) << 18 |
		      (uint32_t)(s[1] & 0x3f) << 12 |
		      (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
		if (*cp >= 0x10000 && *cp <= 0x10ffff)
			return 4;
	}
	return 0;
}

/* Printable code points above ASCII.  LLVM consults a Unicode table; this
 * keeps its ranges for controls, separators and non-characters, and calls
 * every other assigned-looking code point printable. */
static bool printable(uint32_t cp)
{
	if (cp < 0xa0)
		return false;
	if (cp == 0xad || (cp >= 0x2028 && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
	    (cp >= 0xfff9 && cp <= 0xfffb) || (cp & 0xfffe) == 0xfffe ||
	    (cp >= 0xfdd0 && cp <= 0xfdef) || (cp >= 0xe000 && cp <= 0xf8ff) ||
	    cp >= 0xf0000)
		return false;
	return true;
}

static void write_hex_escape(struct outbuf *out, uint32_t cp)
{
	char tmp[16];

	if (cp <= 0xff)
		snprintf(tmp, sizeof(tmp), "\\x%02X", cp);
	else if (cp <= 0xffff)
		snprintf(tmp, sizeof(tmp), "\\u%04X", cp);
	else
		snprintf(tmp, sizeof(tmp), "\\U%08X", cp);
	ob_str(out, tmp);
}

static void write_double_quoted(struct outbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	ob_char(out, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n;

		switch (c) {
		case '\\':
			ob_str(out, "\\\\");
			continue;
		case '"':
			ob_str(out, "\\\"");
			continue;
		case 0:
			ob_str(out, "\\0");
			continue;
		case 0x07:
			ob_str(out, "\\a");
			continue;
		case 0x08:
			ob_str(out, "\\b");
			continue;
		case 0x09:
			ob_str(out, "\\t");
			continue;
		case 0x0a:
			ob_str(out, "\\n");
			continue;
		case 0x0b:
			ob_str(out, "\\v");
			continue;
		case 0x0c:
			ob_str(out, "\\f");
			continue;
		case 0x0d:
			ob_str(out, "\\r");
			continue;
		case 0x1b:
			ob_str(out, "\\e");
			continue;
		default:
			break;
		}
		if (c < 0x20) {
			write_hex_escape(out, c);
			continue;
		}
		if (!(c & 0x80)) {
			ob_char(out, c);
			continue;
		}
		n = decode_utf8(p + i, len - i, &cp);
		if (!n) {
			/* LLVM stops here, with a replacement character */
			ob_str(out, "\xef\xbf\xbd");
			break;
		}
		if (cp == 0x85)
			ob_str(out, "\\N");
		else if (cp == 0xa0)
			ob_str(out, "\\_");
		else if (cp == 0x2028)
			ob_str(out, "\\L");
		else if (cp == 0x2029)
			ob_str(out, "\\P");
		else if (printable(cp))
			ob_write(out, p + i, n);
		else
			write_hex_escape(out, cp);
		i += n - 1;
	}
	ob_char(out, '"');
}

void yaml_put_scalar(struct outbuf *out, const char *s, size_t len)
{
	if (!len) {
		ob_str(out, "''");
		return;
	}
	switch (yaml_quoting(s, len)) {
	case YAML_PLAIN:
		ob_write(out, s, len);
		break;
	case YAML_SINGLE:
		ob_char(out, '\'');
		for (size_t i = 0; i < len; i++) {
			if (s[i] == '\'')
				ob_char(out, '\'');
			ob_char(out, s[i]);
		}
		ob_char(out, '\'');
		break;
	case YAML_DOUBLE:
		write_double_quoted(out, s, len);
		break;
	}
}

void yaml_write_scalar(FILE *f, const char *s, size_t len)
{
	static struct outbuf ob;

	ob_init(&ob, f);
	yaml_put_scalar(&ob, s, len);
	ob_flush(&ob);
}

void yaml_write_str(FILE *out, const char *s)
{
	yaml_write_scalar(out, s, strlen(s));
}

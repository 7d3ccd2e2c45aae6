// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the runtime's parsers of outside input: option
 * strings (XRAY_OPTIONS and friends; the first byte picks which), the
 * function filter (XRAYFDR_FILTER, first byte 0xff) and the kernel
 * module's sysfs values.  Accepted options must be in range and
 * their strings terminated; rejected ones must say why; an accepted
 * sysfs value must read back as the digits it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xrayfdr/common.h>

#include "../../lib/filter/filter.h"
#include "../../lib/runtime/options.h"
#include "../../lib/runtime/tsc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_options o;
	char err[256] = "", digits[32];
	char *text;
	uint64_t v;
	int ret;

	if (!size)
		return 0;
	xrayfdr_set_print(NULL);
	if (data[0] == 0xff) {
		/* rules: an error says which; accepted ones match names */
		static const char *const names[] = { "", "main",
						     "_ZN6Square4areaEv",
						     "twice<long>",
						     "ns::C::f(int) const" };

		struct fn_filter *f = fn_filter_new();

		if (!f)
			return 0;
		ret = fn_filter_parse(f, (const char *)data + 1, size - 1, err,
				      sizeof(err));
		if (ret ? (ret != -EINVAL && ret != -ENOMEM) ||
				    (ret == -EINVAL &&
				     strncmp(err, "rule ", 5)) ||
				    fn_filter_active(f) :
			  0)
			abort();
		for (size_t i = 0; !ret && i < 5; i++)
			(void)fn_filter_match(f, names[i],
					      "/usr/lib/libx.so.1");
		fn_filter_free(f);
		return 0;
	}
	rt_options_defaults(&o);
	/* exactly size - 1 bytes, unterminated, so over-reads are caught */
	text = malloc(size - 1 ? size - 1 : 1);
	memcpy(text, data + 1, size - 1);
	ret = size > 1 ? rt_options_parse(&o, text, size - 1,
					  (enum rt_opt_origin)(data[0] % 4),
					  "FUZZ", err, sizeof(err)) :
			 0;
	if (ret == 0) {
		if (o.buffer_size < RT_MIN_BUFFER_SIZE ||
		    o.buffer_size > RT_MAX_BUFFER_SIZE || !o.buffer_max ||
		    o.buffer_max > RT_MAX_BUFFER_MAX ||
		    (o.version != 1 && o.version != 5) || !o.tsc_sources ||
		    (o.tsc_sources & ~RT_TSC_ALL) ||
		    strnlen(o.output, sizeof(o.output)) == sizeof(o.output) ||
		    strnlen(o.mode, sizeof(o.mode)) == sizeof(o.mode) ||
		    strnlen(o.logfile_base, sizeof(o.logfile_base)) ==
			    sizeof(o.logfile_base) ||
		    strnlen(o.tsc_sysfs, sizeof(o.tsc_sysfs)) ==
			    sizeof(o.tsc_sysfs))
			abort();
	} else if (!err[0] || strncmp(err, "FUZZ: ", 6)) {
		abort(); /* every error names its source */
	}
	free(text);

	if (!rt_tsc_parse_uint((const char *)data, size, &v)) {
		int n = snprintf(digits, sizeof(digits), "%llu",
				 (unsigned long long)v);
		size_t len = size - (data[size - 1] == '\n');

		/* leading zeros aside, the digits are the number */
		while (len > 1 && data[0] == '0' && (size_t)n < len) {
			data++;
			len--;
		}
		if ((size_t)n != len || memcmp(digits, data, len))
			abort();
	}
	return 0;
}

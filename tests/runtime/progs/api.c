// SPDX-License-Identifier: GPL-2.0-only
/*
 * LLVM's XRay API as libxrayfdr implements it: handlers, patching one or
 * all functions, function addresses, event handlers and types, the mode
 * registry, and FDR mode driven by API calls alone.  Prints one
 * "ok - NAME" or "not ok - NAME: why" line per check; with an argument,
 * the FDR log goes to that path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xrayfdr/xray.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
/* Handlers must not be instrumented themselves (built with
 * -fxray-instruction-threshold=1, everything else is). */
#define HANDLER __attribute__((xray_never_instrument))
#define TRACED_ARG \
	__attribute__((xray_always_instrument, xray_log_args(1), noinline))

volatile long sink;
static int failures;

HANDLER static void check(int ok, const char *name, const char *why)
{
	printf("%s - %s%s%s\n", ok ? "ok" : "not ok", name, ok ? "" : ": ",
	       ok ? "" : why);
	failures += !ok;
}

TRACED void target(int i)
{
	sink += i;
}

TRACED void other(int i)
{
	sink -= i;
}

TRACED_ARG void logged(long v)
{
	sink += v;
}

/*
 * Constant sizes: LLVM 14's event sleds push onto the red zone (a leaf's
 * locals at -O0) and move their operands in an order that can clobber
 * one held in %rdi (at -O2), so a size held in a variable may arrive
 * wrong whatever runtime is linked.
 */
TRACED void events(void)
{
	static const char msg[16] = "payload";

	__xray_customevent(msg, 7);
	__xray_typedevent(42, msg, 9);
}

/* What the handlers saw. */
static int32_t id_target, id_other, id_logged;
static int entries[8], exits[8], arg_entries;
static uint64_t last_arg;
static char custom_seen[16];
static size_t custom_size, typed_size;
static uint16_t typed_type;

HANDLER static int slot(int32_t id)
{
	return id == id_target ? 1 :
	       id == id_other  ? 2 :
	       id == id_logged ? 3 :
				 0;
}

HANDLER static void handler(int32_t id, XRayEntryType kind)
{
	if (kind == ENTRY || kind == LOG_ARGS_ENTRY)
		entries[slot(id)]++;
	else if (kind == EXIT || kind == TAIL)
		exits[slot(id)]++;
}

HANDLER static void handler_arg1(int32_t id, XRayEntryType kind, uint64_t arg)
{
	if (kind == LOG_ARGS_ENTRY && id == id_logged) {
		arg_entries++;
		last_arg = arg;
	}
}

HANDLER static void on_custom(void *data, size_t size)
{
	custom_size = size;
	memcpy(custom_seen, data, size < 15 ? size : 15);
}

HANDLER static void on_typed(uint16_t type, const void *data, size_t size)
{
	(void)data;
	typed_type = type;
	typed_size = size;
}

HANDLER static int32_t find_id(void (*fn)(void))
{
	for (size_t id = 1; id <= __xray_max_function_id(); id++)
		if (__xray_function_address((int32_t)id) == (uintptr_t)fn)
			return (int32_t)id;
	return 0;
}

/* A mode of our own, to test the registry. */
static int mode_calls;
HANDLER static XRayLogInitStatus my_init(size_t a, size_t b, void *c, size_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	mode_calls++;
	return XRAY_LOG_INITIALIZED;
}
HANDLER static XRayLogInitStatus my_finalize(void)
{
	mode_calls += 10;
	return XRAY_LOG_FINALIZED;
}
HANDLER static XRayLogFlushStatus my_flush(void)
{
	mode_calls += 100;
	return XRAY_LOG_FLUSHED;
}

static size_t processed_bytes;
static FILE *processed;
HANDLER static void processor(const char *mode, XRayBuffer b)
{
	if (mode && !strcmp(mode, "xray-fdr") && processed)
		fwrite(b.Data, 1, b.Size, processed);
	processed_bytes += b.Size;
}

int main(int argc, char **argv)
{
	char config[4200];
	int ok;

	id_target = find_id((void (*)(void))target);
	id_other = find_id((void (*)(void))other);
	id_logged = find_id((void (*)(void))logged);
	check(__xray_max_function_id() >= 4 && id_target && id_other &&
		      id_logged && id_target != id_other,
	      "function ids and addresses", "cannot find the functions");
	check(__xray_function_address(0) == 0 &&
		      __xray_function_address(100000) == 0,
	      "unknown ids have no address", "an address for a bad id");
	/* LLVM 19's calls per object: the program is object 0 */
	check(__xray_num_objects() >= 1 &&
		      __xray_pack_id(id_target, 0) == id_target &&
		      __xray_pack_id(5, 3) == (3 << 24 | 5) &&
		      __xray_unpack_function_id(3 << 24 | 5) == 5 &&
		      __xray_unpack_object_id(3 << 24 | 5) == 3 &&
		      __xray_max_function_id_in_object(0) ==
			      __xray_max_function_id() &&
		      __xray_max_function_id_in_object(200) == 0 &&
		      __xray_function_address_in_object(id_target, 0) ==
			      __xray_function_address(id_target) &&
		      __xray_function_address_in_object(id_target, 200) == 0,
	      "ids per object", "a per-object call disagrees");
	check(__xray_patch_object(200) == FAILED &&
		      __xray_patch_function_in_object(0, 0) == FAILED,
	      "unknown objects and functions fail", "not FAILED");

	check(__xray_set_handler(handler) == 1, "set handler", "returned 0");
	check(__xray_patch() == SUCCESS, "patch all", "not SUCCESS");
	for (int i = 0; i < 5; i++)
		target(i), other(i);
	check(__xray_unpatch() == SUCCESS, "unpatch all", "not SUCCESS");
	for (int i = 0; i < 5; i++)
		target(i), other(i);
	check(entries[1] == 5 && exits[1] == 5 && entries[2] == 5 &&
		      exits[2] == 5,
	      "handler sees every call while patched, none after",
	      "wrong counts");

	memset(entries, 0, sizeof(entries));
	memset(exits, 0, sizeof(exits));
	check(__xray_patch_function(id_target) == SUCCESS, "patch one function",
	      "not SUCCESS");
	for (int i = 0; i < 3; i++)
		target(i), other(i);
	check(entries[1] == 3 && entries[2] == 0,
	      "only the patched function reports", "wrong counts");
	check(__xray_unpatch_function(id_target) == SUCCESS,
	      "unpatch one function", "not SUCCESS");
	check(__xray_patch_function(-3) == FAILED &&
		      __xray_patch_function(1 << 20) == FAILED,
	      "bad function ids fail", "not FAILED");

	/* one object at a time: the program's, then one function in it */
	memset(entries, 0, sizeof(entries));
	check(__xray_patch_object(0) == SUCCESS, "patch object 0",
	      "not SUCCESS");
	target(0), other(0);
	check(__xray_unpatch_object(0) == SUCCESS, "unpatch object 0",
	      "not SUCCESS");
	target(0), other(0);
	check(__xray_patch_function_in_object(id_target, 0) == SUCCESS,
	      "patch a function of object 0", "not SUCCESS");
	target(0), other(0);
	check(__xray_unpatch_function_in_object(id_target, 0) == SUCCESS,
	      "unpatch a function of object 0", "not SUCCESS");
	check(entries[1] == 2 && entries[2] == 1,
	      "objects patched and unpatched as asked", "wrong counts");

	check(__xray_set_handler_arg1(handler_arg1) == 1, "set arg1 handler",
	      "returned 0");
	__xray_patch_function(id_logged);
	logged(-1234567);
	check(arg_entries == 1 && last_arg == (uint64_t)-1234567,
	      "arg1 handler gets the first argument", "wrong argument");
	__xray_remove_handler_arg1();
	logged(5);
	check(entries[3] == 1,
	      "without an arg1 handler, the arg0 handler gets log-args entries",
	      "no entry");
	__xray_unpatch();
	__xray_remove_handler();

	check(__xray_set_customevent_handler(on_custom) == 1 &&
		      __xray_set_typedevent_handler(on_typed) == 1,
	      "set event handlers", "returned 0");
	__xray_patch();
	events();
	__xray_unpatch();
	check(custom_size == 7 && !memcmp(custom_seen, "payload", 7),
	      "custom event handler gets the payload", "wrong payload");
	check(typed_type == 42 && typed_size == 9,
	      "typed event handler gets type and size", "wrong type or size");
	__xray_remove_customevent_handler();
	__xray_remove_typedevent_handler();
	{
		static const char a[] = "a", b[] = "b";
		uint16_t ta = __xray_register_event_type(a);

		check(ta == __xray_register_event_type(a) &&
			      ta != __xray_register_event_type(b),
		      "event types: one id per descriptor", "ids differ");
	}

	{
		XRayLogImpl impl = { my_init, my_finalize, handler, my_flush };
		XRayLogImpl incomplete = { my_init, NULL, handler, my_flush };

		check(__xray_log_register_mode("mine", impl) ==
				      XRAY_REGISTRATION_OK &&
			      __xray_log_register_mode("mine", impl) ==
				      XRAY_DUPLICATE_MODE &&
			      __xray_log_register_mode("bad", incomplete) ==
				      XRAY_INCOMPLETE_IMPL,
		      "mode registry", "wrong status");
		check(__xray_log_select_mode("none such") ==
			      XRAY_MODE_NOT_FOUND,
		      "selecting an unknown mode fails", "found");
		ok = __xray_log_init_mode("mine", "") == XRAY_LOG_INITIALIZED &&
		     !strcmp(__xray_log_get_current_mode(), "mine") &&
		     __xray_log_finalize() == XRAY_LOG_FINALIZED &&
		     __xray_log_flushLog() == XRAY_LOG_FLUSHED &&
		     mode_calls == 111;
		check(ok,
		      "a registered mode is initialised, finalised, flushed",
		      "calls went astray");
	}

	/* FDR mode through the API alone */
	snprintf(config, sizeof(config), "buffer_size=4096 buffer_max=32%s%s%s",
		 argc > 1 ? " output=\"" : "", argc > 1 ? argv[1] : "",
		 argc > 1 ? "\"" : "");
	check(__xray_log_init_mode("xray-fdr", config) == XRAY_LOG_INITIALIZED,
	      "init xray-fdr", "not initialised");
	check(__xray_log_init_mode("xray-fdr", config) == XRAY_LOG_INITIALIZED,
	      "a second init reports the running state", "changed");
	__xray_patch();
	for (int i = 0; i < 100; i++)
		target(i), logged(i);
	events();
	__xray_unpatch();
	check(__xray_log_flushLog() == XRAY_LOG_NOT_FLUSHING,
	      "no flush before finalize", "flushed");
	check(__xray_log_finalize() == XRAY_LOG_FINALIZED, "finalize",
	      "not finalized");
	if (argc > 2)
		processed = fopen(argv[2], "wb");
	check(__xray_log_process_buffers(processor) == XRAY_LOG_FLUSHED &&
		      processed_bytes > 32,
	      "process_buffers yields the header and the buffers",
	      "nothing yielded");
	if (processed)
		fclose(processed);
	check(__xray_log_flushLog() == XRAY_LOG_FLUSHED, "flush",
	      "not flushed");
	check(__xray_log_init_mode("xray-fdr", "no_file_flush=true") ==
			      XRAY_LOG_INITIALIZED &&
		      __xray_log_finalize() == XRAY_LOG_FINALIZED,
	      "xray-fdr starts again after a flush", "cannot restart");
	return failures ? 1 : 0;
}

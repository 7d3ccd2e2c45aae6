// SPDX-License-Identifier: GPL-2.0-only
/* A shared object attach_server loads while attached (test_attach.py). */
static volatile long plugin_sink;

__attribute__((noinline)) void plugin_fn(long i)
{
	plugin_sink += i;
}

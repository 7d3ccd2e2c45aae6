// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlopen() an instrumented object, patch and trace it, dlclose() it, then
 * unpatch and patch everything: the runtime must not touch the unloaded
 * object's sleds.  Three rounds: each reopened object is traced again,
 * under new ids.  argv[1]: the object (libtraced.so).
 */
#include <dlfcn.h>
#include <stdio.h>

#include <xrayfdr/xray.h>

volatile long sink; /* libtraced's, exported (-rdynamic) */

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		void (*outer)(int);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		if (__xray_patch() != SUCCESS)
			printf("not ok: round %d: __xray_patch\n", round);
		outer = (void (*)(int))dlsym(h, "lib_outer");
		for (int i = 0; outer && i < 100; i++)
			outer(i);
		dlclose(h);
		if (dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD)) {
			printf("not ok: round %d: dlclose left it loaded\n",
			       round);
			return 1;
		}
		/* the unloaded sleds must not be written */
		if (__xray_unpatch() != SUCCESS || __xray_patch() != SUCCESS)
			printf("not ok: round %d: patching after dlclose\n",
			       round);
	}
	printf("ok: survived\n");
	return 0;
}

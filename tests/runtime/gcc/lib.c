/* SPDX-License-Identifier: GPL-2.0-only */
/* The clang XRay shared object of the mixed program. */
__attribute__((noinline)) int lib_inner(int x)
{
	return x + 1;
}

int lib_twice(int x)
{
	return lib_inner(x) * 2;
}

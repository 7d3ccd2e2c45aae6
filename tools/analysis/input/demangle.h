/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef XRAYFDR_TOOLS_DEMANGLE_H
#define XRAYFDR_TOOLS_DEMANGLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Demangle a C++ (Itanium ABI) symbol: a malloc'd string, or NULL if
 * @name is not a mangled name.  demangle.cc, with libstdc++. */
char *demangle(const char *name);

#ifdef __cplusplus
}
#endif

#endif

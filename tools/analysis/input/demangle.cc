// SPDX-License-Identifier: GPL-2.0-only
// C++ demangling is a facility of the C++ runtime: libstdc++'s
// abi::__cxa_demangle, behind one C function.
#include <cstdlib>
#include <cxxabi.h>

#include "demangle.h"

char *demangle(const char *name)
{
	int status = 0;

	if (name[0] != '_' || name[1] != 'Z')
		return nullptr;
	char *out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
	if (status != 0) {
		std::free(out);
		return nullptr;
	}
	return out;
}

// SPDX-License-Identifier: GPL-2.0-only
// C++ exceptions thrown through traced frames: the frames unwound never
// reach their exit sleds.
#include <stdexcept>

#include "counts.h"

volatile long sink;
extern "C" {
COUNTER(thrower);
COUNTER(middle);
COUNTER(catcher);

TRACED void thrower(int i)
{
	HIT(thrower);
	if (i % 4 == 0)
		throw std::runtime_error("four");
	sink += i;
}

TRACED void middle(int i)
{
	HIT(middle);
	thrower(i);
	sink++;
}

TRACED void catcher(int i)
{
	HIT(catcher);
	try {
		middle(i);
	} catch (const std::exception &) {
		sink--;
	}
}
}

int main()
{
	for (int i = 0; i < 400; i++)
		catcher(i);
	PRINT(thrower);
	PRINT(middle);
	PRINT(catcher);
	return 0;
}

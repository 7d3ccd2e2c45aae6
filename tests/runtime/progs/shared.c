// SPDX-License-Identifier: GPL-2.0-only
/* A program whose traced functions are partly in a shared object. */
#include "counts.h"

volatile long sink;
COUNTER(main_work);

void lib_outer(int i);
void lib_print(void);

TRACED void main_work(int i)
{
	HIT(main_work);
	lib_outer(i);
}

int main(void)
{
	for (int i = 0; i < 500; i++)
		main_work(i);
	PRINT(main_work);
	lib_print();
	return 0;
}

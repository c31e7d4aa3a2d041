/* SPDX-License-Identifier: MIT */
/* nvmeof-target: placeholder until the daemon lands. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "nvmeof-target: not built yet\n");
	return 1;
}

/* SPDX-License-Identifier: MIT */
/* Transport registry: listener URI scheme -> ops table, filled by the daemon at start-up. */
#include <errno.h>
#include <string.h>

#include "transport.h"

#define MAX_TRANSPORTS 8

static const struct nvmf_transport_ops *g_transports[MAX_TRANSPORTS];

const struct nvmf_transport_ops *nvmf_transport_find(const char *name)
{
	for (unsigned int i = 0; i < MAX_TRANSPORTS && g_transports[i]; i++)
		if (name && strcmp(g_transports[i]->name, name) == 0)
			return g_transports[i];
	return NULL;
}

int nvmf_transport_register(const struct nvmf_transport_ops *ops)
{
	unsigned int i;

	if (!ops || !ops->name)
		return -EINVAL;
	if (nvmf_transport_find(ops->name))
		return -EEXIST;
	for (i = 0; i < MAX_TRANSPORTS && g_transports[i]; i++)
		;
	if (i == MAX_TRANSPORTS)
		return -ENOSPC;
	g_transports[i] = ops;
	return 0;
}

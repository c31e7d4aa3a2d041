/* SPDX-License-Identifier: MIT */
/*
 * What the backends' tests need of the core: the reservation store's reload call, counted
 * per namespace (resv_store_rados_ut reads the counters).
 */
#include <pthread.h>

#include "core/resv_store.h"

#include "core_fakes.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct nvmf_ns *ns;
	unsigned int n;
} g_reloads[8];

int nvmf_resv_reload(struct nvmf_ns *ns)
{
	pthread_mutex_lock(&g_lock);
	for (unsigned int i = 0; i < 8; i++)
		if (g_reloads[i].ns == ns || !g_reloads[i].ns) {
			g_reloads[i].ns = ns;
			g_reloads[i].n++;
			break;
		}
	pthread_mutex_unlock(&g_lock);
	return 0;
}

unsigned int fake_reloads(struct nvmf_ns *ns)
{
	unsigned int n = 0;

	pthread_mutex_lock(&g_lock);
	for (unsigned int i = 0; i < 8; i++)
		if (g_reloads[i].ns == ns)
			n = g_reloads[i].n;
	pthread_mutex_unlock(&g_lock);
	return n;
}

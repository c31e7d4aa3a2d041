// SPDX-License-Identifier: MIT
/*
 * The SPC-2 RESERVE(6) / RELEASE(6) holder of the iSCSI front end, kept beside the NVMe
 * reservation of the same namespace so that each conflicts with the other.
 */
#include "reservation.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "ctrlr.h"
#include "reservation_internal.h"

int nvmf_resv_legacy_reserve(struct nvmf_ns *ns, const uint8_t hostid[16])
{
	struct nvmf_resv *r = resv_get(ns, true);
	int rc = 0;

	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	if (r->cur.rtype) {
		/* a persistent reservation: only its holder gets GOOD (and nothing changes) */
		if (!resv_is_holder(&r->cur, hostid, resv_find_reg(&r->cur, hostid) != NULL))
			rc = -EBUSY;
	} else if (r->legacy && memcmp(r->legacy_holder, hostid, 16)) {
		rc = -EBUSY;
	} else {
		r->legacy = true;
		memcpy(r->legacy_holder, hostid, 16);
	}
	resv_update_active(r);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void nvmf_resv_legacy_release(struct nvmf_ns *ns, const uint8_t hostid[16])
{
	struct nvmf_resv *r = resv_get(ns, false);

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	if (r->legacy && !memcmp(r->legacy_holder, hostid, 16))
		r->legacy = false;
	resv_update_active(r);
	pthread_mutex_unlock(&r->lock);
}

bool nvmf_resv_legacy_conflict(struct nvmf_ns *ns, const uint8_t hostid[16])
{
	struct nvmf_resv *r = resv_get(ns, false);
	bool conflict;

	if (!r || !__atomic_load_n(&r->active, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&r->lock);
	conflict = r->legacy && memcmp(r->legacy_holder, hostid, 16);
	pthread_mutex_unlock(&r->lock);
	return conflict;
}

void nvmf_resv_legacy_clear(struct nvmf_ns *ns)
{
	struct nvmf_resv *r = resv_get(ns, false);

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->legacy = false;
	resv_update_active(r);
	pthread_mutex_unlock(&r->lock);
}

/* SPDX-License-Identifier: MIT */
/*
 * The TLS PSK of each host, by host NQN (nvmf.h). Written on the main thread by the
 * configuration, read by NVMe/TCP handshakes on the reactors; every access under
 * tgt->lock. Keys live in struct nvme_secret (wiped when freed) and leave the table only
 * as copies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tls_psk.h"
#include "nvmf.h"

struct host_psk {
	char nqn[NVME_NQN_FIELD];
	struct nvme_tls_key key;
	struct host_psk *next;
};

struct nvmf_host_psks {
	struct host_psk *head;
};

static int key_copy(const struct nvme_tls_key *src, struct nvme_tls_key *dst)
{
	dst->hmac = src->hmac;
	dst->psk = nvme_secret_from(src->psk->key, src->psk->len);
	return dst->psk ? 0 : -ENOMEM;
}

static void entry_free(struct host_psk *e)
{
	nvme_tls_key_clear(&e->key);
	free(e);
}

int nvmf_tgt_set_host_psk(struct nvmf_tgt *tgt, const char *hostnqn, const struct nvme_tls_key *key)
{
	struct host_psk *e = NULL, **pp;

	if (!hostnqn || strlen(hostnqn) > NVME_NQN_MAX || (key && !key->psk))
		return -EINVAL;
	if (key) {
		e = calloc(1, sizeof(*e));
		if (!e || key_copy(key, &e->key)) {
			free(e);
			return -ENOMEM;
		}
		snprintf(e->nqn, sizeof(e->nqn), "%s", hostnqn);
	}
	pthread_mutex_lock(&tgt->lock);
	if (!tgt->host_psks) {
		tgt->host_psks = calloc(1, sizeof(*tgt->host_psks));
		if (!tgt->host_psks) {
			pthread_mutex_unlock(&tgt->lock);
			if (e)
				entry_free(e);
			return -ENOMEM;
		}
	}
	for (pp = &tgt->host_psks->head; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->nqn, hostnqn)) {
			struct host_psk *old = *pp;

			*pp = old->next;
			entry_free(old);
			break;
		}
	if (e) {
		e->next = tgt->host_psks->head;
		tgt->host_psks->head = e;
	}
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

int nvmf_tgt_get_host_psk(struct nvmf_tgt *tgt, const char *hostnqn, struct nvme_tls_key *out)
{
	int rc = -ENOENT;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&tgt->lock);
	for (struct host_psk *e = tgt->host_psks ? tgt->host_psks->head : NULL; e; e = e->next)
		if (!strcmp(e->nqn, hostnqn)) {
			rc = key_copy(&e->key, out);
			break;
		}
	pthread_mutex_unlock(&tgt->lock);
	return rc;
}

bool nvmf_tgt_host_has_psk_locked(const struct nvmf_tgt *tgt, const char *hostnqn)
{
	for (struct host_psk *e = tgt->host_psks ? tgt->host_psks->head : NULL; e; e = e->next)
		if (!strcmp(e->nqn, hostnqn))
			return true;
	return false;
}

void nvmf_tgt_clear_host_psks(struct nvmf_tgt *tgt)
{
	struct host_psk *e;

	pthread_mutex_lock(&tgt->lock);
	if (tgt->host_psks) {
		while ((e = tgt->host_psks->head)) {
			tgt->host_psks->head = e->next;
			entry_free(e);
		}
		free(tgt->host_psks);
		tgt->host_psks = NULL;
	}
	pthread_mutex_unlock(&tgt->lock);
}

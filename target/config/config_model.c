/* SPDX-License-Identifier: MIT */
/* The loaded configuration model: lookups, warnings and release (config_file.h). */
#include "config.h" /* _GNU_SOURCE: explicit_bzero */

#include <stdlib.h>
#include <openssl/crypto.h>
#include <string.h>

#include "config_file.h"
#include "common/log.h"

static void free_lists(struct tgt_config *cfg)
{
	unsigned int i;

	/* List counts include an item that failed half-way: its arrays are freed too. */
	for (i = 0; cfg->ports && i < cfg->nports; i++) {
		free(cfg->ports[i].subsystems);
		free(cfg->ports[i].referrals);
		free(cfg->ports[i].ana_groups);
	}
	for (i = 0; cfg->subsystems && i < cfg->nsubsystems; i++) {
		free(cfg->subsystems[i].namespaces);
		free(cfg->subsystems[i].allowed_hosts);
	}
}

void config_free(struct tgt_config *cfg)
{
	unsigned int i;

	if (!cfg)
		return;
	free_lists(cfg);
	free(cfg->ports);
	free(cfg->subsystems);
	free(cfg->hosts);
	if (cfg->host_keys)
		explicit_bzero(cfg->host_keys, cfg->nhost_keys * sizeof(*cfg->host_keys));
	free(cfg->host_keys);
	if (cfg->iscsi_json) /* CHAP secrets */
		explicit_bzero(cfg->iscsi_json, strlen(cfg->iscsi_json));
	if (cfg->host_psks)
		explicit_bzero(cfg->host_psks, cfg->nhost_psks * sizeof(*cfg->host_psks));
	free(cfg->host_psks);
	free(cfg->iscsi_json);
	for (i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	free(cfg);
}

void config_log_warnings(const struct tgt_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->nwarnings; i++)
		log_warn("%s", cfg->warnings[i]);
}

const struct config_port *config_find_port(const struct tgt_config *cfg, uint16_t portid)
{
	unsigned int i;

	for (i = 0; i < cfg->nports; i++)
		if (cfg->ports[i].portid == portid)
			return &cfg->ports[i];
	return NULL;
}

const struct config_subsys *config_find_subsys(const struct tgt_config *cfg, const char *nqn)
{
	unsigned int i;

	for (i = 0; i < cfg->nsubsystems; i++)
		if (!strcmp(cfg->subsystems[i].nqn, nqn))
			return &cfg->subsystems[i];
	return NULL;
}

const struct config_ns *config_find_ns(const struct config_subsys *s, uint32_t nsid)
{
	unsigned int i;

	for (i = 0; i < s->nnamespaces; i++)
		if (s->namespaces[i].nsid == nsid)
			return &s->namespaces[i];
	return NULL;
}

const struct config_host_key *config_find_host_key(const struct tgt_config *cfg,
						   const char *hostnqn)
{
	for (unsigned int i = 0; i < cfg->nhost_keys; i++)
		if (!strcmp(cfg->host_keys[i].nqn, hostnqn))
			return &cfg->host_keys[i];
	return NULL;
}

/* Every field that decides how a host authenticates (a new one belongs here too). */
static bool host_key_same(const struct config_host_key *a, const struct config_host_key *b)
{
	return !strcmp(a->key, b->key) && !strcmp(a->ctrl_key, b->ctrl_key) &&
	       !strcmp(a->hash, b->hash) && !strcmp(a->dhgroup, b->dhgroup);
}

bool config_host_keys_changed(const struct tgt_config *old, const struct tgt_config *cfg,
			      const char *hostnqn)
{
	const struct config_host_key *a = config_find_host_key(old, hostnqn);
	const struct config_host_key *b = config_find_host_key(cfg, hostnqn);

	if (!a || !b)
		return a != b;
	return !host_key_same(a, b);
}

const struct config_host_psk *config_find_host_psk(const struct tgt_config *cfg,
						   const char *hostnqn)
{
	for (unsigned int i = 0; cfg && i < cfg->nhost_psks; i++)
		if (!strcmp(cfg->host_psks[i].nqn, hostnqn))
			return &cfg->host_psks[i];
	return NULL;
}

bool config_host_psk_changed(const struct tgt_config *old, const struct tgt_config *cfg,
			     const char *hostnqn)
{
	const struct config_host_psk *a = config_find_host_psk(old, hostnqn);
	const struct config_host_psk *b = config_find_host_psk(cfg, hostnqn);

	if (!a || !b)
		return a != b;
	return CRYPTO_memcmp(a->psk, b->psk, sizeof(a->psk)) != 0;
}

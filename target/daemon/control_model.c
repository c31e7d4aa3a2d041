/* SPDX-License-Identifier: MIT */
/* Control methods' edits of a copy of the running model: subsystems, host and port
 * lists, and moving the target to the edited model. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "config/config_file.h"
#include "control.h"
#include "control_internal.h"
#include "core/nvmf.h"

/* ---- Editing a copy of the running model ------------------------------------------------- */

int subsys_index(const struct tgt_config *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nsubsystems; i++)
		if (!strcmp(cfg->subsystems[i].nqn, nqn))
			return (int)i;
	return -1;
}

bool host_in_list(char (*list)[NVME_NQN_FIELD], unsigned int n, const char *nqn)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(list[i], nqn))
			return true;
	return false;
}

int push_nqn(char (**list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn)
{
	char(*v)[NVME_NQN_FIELD] = realloc(*list, (*n + 1) * sizeof(**list));

	if (!v)
		return -ENOMEM;
	snprintf(v[*n], NVME_NQN_FIELD, "%s", nqn);
	*list = v;
	(*n)++;
	return 0;
}

bool drop_nqn(char (*list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn)
{
	for (unsigned int i = 0; i < *n; i++)
		if (!strcmp(list[i], nqn)) {
			memmove(list[i], list[i + 1], (*n - i - 1) * sizeof(*list));
			(*n)--;
			return true;
		}
	return false;
}

static void drop_port(struct tgt_config *cfg, unsigned int i)
{
	free(cfg->ports[i].subsystems);
	free(cfg->ports[i].referrals);
	free(cfg->ports[i].ana_groups);
	memmove(&cfg->ports[i], &cfg->ports[i + 1], (cfg->nports - i - 1) * sizeof(*cfg->ports));
	cfg->nports--;
}

/* Ports left without a subsystem (and without referrals) stop listening. */
void drop_empty_ports(struct tgt_config *cfg)
{
	for (unsigned int i = cfg->nports; i-- > 0;)
		if (!cfg->ports[i].nsubsystems && !cfg->ports[i].nreferrals)
			drop_port(cfg, i);
}

/* A host no subsystem lists any more leaves "hosts" (and its keys go with it). */
void drop_unused_host(struct tgt_config *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nsubsystems; i++)
		if (host_in_list(cfg->subsystems[i].allowed_hosts,
				 cfg->subsystems[i].nallowed_hosts, nqn))
			return;
	drop_nqn(cfg->hosts, &cfg->nhosts, nqn);
	for (unsigned int i = 0; i < cfg->nhost_keys; i++)
		if (!strcmp(cfg->host_keys[i].nqn, nqn)) {
			explicit_bzero(&cfg->host_keys[i], sizeof(cfg->host_keys[i]));
			memmove(&cfg->host_keys[i], &cfg->host_keys[i + 1],
				(cfg->nhost_keys - i - 1) * sizeof(*cfg->host_keys));
			cfg->nhost_keys--;
			break;
		}
}

/* Copy the running model, or fail with an internal error. */
struct tgt_config *model_begin(struct control_ctx *ctx, struct rpc_err *e)
{
	struct tgt_config *next = NULL;

	if (config_dup(*ctx->cfg, &next)) {
		rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
		return NULL;
	}
	return next;
}

/* Move the target to @next (consumed): on success it becomes the running model. */
int model_commit(struct control_ctx *ctx, struct tgt_config *next, const char *what,
		 struct rpc_err *e)
{
	char err[512] = "";
	int rc;

	rc = config_reload(ctx->tgt, *ctx->cfg, next, err, sizeof(err));
	if (rc) {
		config_free(next);
		return rpc_fail(e, rc, "%s: %s", what, err[0] ? err : strerror(-rc));
	}
	config_free(*ctx->cfg);
	*ctx->cfg = next;
	ctx->dirty = true;
	ctx->changes++;
	log_notice("control: %s", what);
	return 0;
}

struct config_subsys *need_subsys(struct tgt_config *cfg, const char *nqn, struct rpc_err *e)
{
	int i = subsys_index(cfg, nqn);

	if (i < 0) {
		rpc_fail(e, -ENOENT, "parameter \"nqn\": subsystem \"%s\" does not exist", nqn);
		return NULL;
	}
	return &cfg->subsystems[i];
}

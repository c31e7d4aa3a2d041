/* SPDX-License-Identifier: MIT */
/*
 * ANA group states of the configuration (ports[].ana_groups[], as nvmetcli saves them)
 * applied to the running ports: at start, on SIGHUP and from the control socket. A group
 * a port does not list is optimized there; a group dropped from the list becomes
 * optimized again.
 */
#include <config.h> /* autoconf */

#include "config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "core/ana.h"
#include "core/nvmf.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The state @cp gives group @grpid (optimized when not listed). */
static uint8_t wanted(const struct config_port *cp, uint32_t grpid)
{
	uint8_t st = NVME_ANA_OPTIMIZED;

	for (unsigned int i = 0; cp && i < cp->nana_groups; i++)
		if (cp->ana_groups[i].grpid == grpid)
			nvmf_ana_state_parse(cp->ana_groups[i].state, &st);
	return st;
}

/* Calls @fn for each group either model lists for port @cp. */
static int each_group(const struct config_port *was, const struct config_port *cp,
		      int (*fn)(uint32_t grpid, void *arg), void *arg)
{
	int rc;

	for (unsigned int i = 0; i < cp->nana_groups; i++)
		if ((rc = fn(cp->ana_groups[i].grpid, arg)))
			return rc;
	for (unsigned int i = 0; was && i < was->nana_groups; i++)
		if ((rc = fn(was->ana_groups[i].grpid, arg)))
			return rc;
	return 0;
}

struct ana_walk {
	struct nvmf_port *port;
	const struct config_port *cp;
	unsigned int pi;
	char *err;
	size_t errlen;
	uint64_t now_ns;
};

static int check_one(uint32_t grpid, void *arg)
{
	struct ana_walk *w = arg;
	uint8_t from = nvmf_ana_get_state(w->port, grpid), to = wanted(w->cp, grpid);

	if (nvmf_ana_transition_check(from, to) == 0)
		return 0;
	snprintf(w->err, w->errlen,
		 "ports[%u].ana_groups: group %u is %s on portid %u and cannot become %s "
		 "(set it to change first)",
		 w->pi, grpid, nvmf_ana_state_name(from), w->cp->portid, nvmf_ana_state_name(to));
	return -EPERM;
}

static int apply_one(uint32_t grpid, void *arg)
{
	struct ana_walk *w = arg;
	int rc = nvmf_ana_set_state(w->port, grpid, wanted(w->cp, grpid), w->now_ns);

	if (rc)
		log_warn("portid %u: ANA group %u: %s", w->cp->portid, grpid, strerror(-rc));
	return 0;
}

static int walk(struct nvmf_tgt *tgt, const struct tgt_config *old, const struct tgt_config *cfg,
		int (*fn)(uint32_t, void *), char *err, size_t errlen)
{
	for (unsigned int i = 0; i < cfg->nports; i++) {
		const struct config_port *cp = &cfg->ports[i];
		struct ana_walk w = {
			.cp = cp, .pi = i, .err = err, .errlen = errlen, .now_ns = mono_ns()
		};
		int rc;

		w.port = nvmf_port_find(tgt, cp->portid);
		if (!w.port)
			continue; /* created by the apply, all groups optimized */
		rc = each_group(old ? config_find_port(old, cp->portid) : NULL, cp, fn, &w);
		if (rc)
			return rc;
	}
	return 0;
}

int config_ana_check(struct nvmf_tgt *tgt, const struct tgt_config *old,
		     const struct tgt_config *cfg, char *err, size_t errlen)
{
	return walk(tgt, old, cfg, check_one, err, errlen);
}

void config_ana_apply(struct nvmf_tgt *tgt, const struct tgt_config *old,
		      const struct tgt_config *cfg)
{
	walk(tgt, old, cfg, apply_one, NULL, 0);
}

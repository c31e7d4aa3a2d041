/* SPDX-License-Identifier: MIT */
/* Asymmetric Namespace Access: group states per port, the log page, the I/O check (ana.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "reactor/reactor.h"

static const struct {
	uint8_t state;
	const char *name;
} ana_names[] = {
	{ NVME_ANA_OPTIMIZED, "optimized" },
	{ NVME_ANA_NON_OPTIMIZED, "non-optimized" },
	{ NVME_ANA_INACCESSIBLE, "inaccessible" },
	{ NVME_ANA_PERSISTENT_LOSS, "persistent-loss" },
	{ NVME_ANA_CHANGE, "change" },
};

int nvmf_ana_state_parse(const char *name, uint8_t *state)
{
	for (size_t i = 0; name && i < sizeof(ana_names) / sizeof(ana_names[0]); i++) {
		if (!strcmp(name, ana_names[i].name)) {
			*state = ana_names[i].state;
			return 0;
		}
	}
	return -EINVAL;
}

const char *nvmf_ana_state_name(uint8_t state)
{
	for (size_t i = 0; i < sizeof(ana_names) / sizeof(ana_names[0]); i++)
		if (ana_names[i].state == state)
			return ana_names[i].name;
	return "?";
}

bool nvmf_ana_state_valid(uint8_t state)
{
	return strcmp(nvmf_ana_state_name(state), "?") != 0;
}

int nvmf_ana_transition_check(uint8_t from, uint8_t to)
{
	if (!nvmf_ana_state_valid(from) || !nvmf_ana_state_valid(to))
		return -EINVAL;
	if (from == NVME_ANA_PERSISTENT_LOSS && to != NVME_ANA_PERSISTENT_LOSS &&
	    to != NVME_ANA_CHANGE)
		return -EPERM;
	return 0;
}

void nvmf_ana_port_init(struct nvmf_port *port)
{
	memset(port->ana_state, NVME_ANA_OPTIMIZED, sizeof(port->ana_state));
	memset(port->ana_next, 0, sizeof(port->ana_next));
	port->ana_chgcnt = 1;
	port->ana_change_deadline_ns = 0;
}

uint8_t nvmf_ana_get_state(const struct nvmf_port *port, uint32_t grpid)
{
	if (!port || grpid == 0 || grpid > NVMF_ANA_MAX_GRPS)
		return NVME_ANA_OPTIMIZED;
	return __atomic_load_n(&port->ana_state[grpid], __ATOMIC_RELAXED);
}

/* ---- ANA Change notices ------------------------------------------------------------------ */

static void ana_changed_msg(void *arg)
{
	struct nvmf_ctrlr *c = arg;

	nvmf_ctrlr_aen_raise(c, NVMF_AEN_ANA_CHANGED);
	nvmf_ctrlr_put(c);
}

/* Every live I/O controller whose admin queue came in through @port. */
static void notify_port(struct nvmf_port *port)
{
	struct nvmf_tgt *tgt = port->tgt;
	struct nvmf_subsys *s;
	struct nvmf_ctrlr *c;

	if (!tgt)
		return;
	pthread_mutex_lock(&tgt->lock); /* then s->lock, as everywhere */
	TAILQ_FOREACH(s, &tgt->subsystems, link)
	{
		pthread_mutex_lock(&s->lock);
		TAILQ_FOREACH(c, &s->ctrlrs, link)
		{
			if (c->port != port || c->local || c->discovery || !c->admin_reactor ||
			    __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == NVMF_CTRLR_DEAD ||
			    !nvmf_ctrlr_get_unless_zero(c))
				continue;
			if (reactor_send_msg(c->admin_reactor, ana_changed_msg, c))
				nvmf_ctrlr_put(c);
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&tgt->lock);
}

/* The one place a group's state changes. */
static void ana_store(struct nvmf_port *port, uint32_t grpid, uint8_t state, uint8_t next)
{
	uint8_t was = port->ana_state[grpid];

	port->ana_next[grpid] = next;
	__atomic_store_n(&port->ana_state[grpid], state, __ATOMIC_RELEASE);
	__atomic_add_fetch(&port->ana_chgcnt, 1, __ATOMIC_RELEASE);
	log_notice("port %u: ANA group %u: %s -> %s", port->portid, grpid, nvmf_ana_state_name(was),
		   nvmf_ana_state_name(state));
	notify_port(port);
}

int nvmf_ana_set_state(struct nvmf_port *port, uint32_t grpid, uint8_t state, uint64_t now_ns)
{
	uint8_t cur, next = 0;
	int rc;

	if (!port || grpid == 0 || grpid > NVMF_ANA_MAX_GRPS)
		return -EINVAL;
	cur = port->ana_state[grpid];
	rc = nvmf_ana_transition_check(cur, state);
	if (rc)
		return rc;
	if (cur == state)
		return 0;
	if (state == NVME_ANA_CHANGE) {
		next = cur == NVME_ANA_PERSISTENT_LOSS ? NVME_ANA_INACCESSIBLE : cur;
		port->ana_change_deadline_ns = now_ns + (uint64_t)NVMF_ANATT_S * 1000000000ull;
	}
	ana_store(port, grpid, state, next);
	return 0;
}

unsigned int nvmf_ana_tick(struct nvmf_tgt *tgt, uint64_t now_ns)
{
	struct nvmf_port *port, **v = NULL;
	unsigned int n = 0, moved = 0;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH(port, &tgt->ports, link)
	if (port->ana_change_deadline_ns && now_ns >= port->ana_change_deadline_ns)
		n++;
	if (n && (v = calloc(n, sizeof(*v)))) {
		n = 0;
		TAILQ_FOREACH(port, &tgt->ports, link)
		if (port->ana_change_deadline_ns && now_ns >= port->ana_change_deadline_ns)
			v[n++] = port;
	} else {
		n = 0;
	}
	pthread_mutex_unlock(&tgt->lock);
	/* Ports are created and destroyed on this (the main) thread only. */
	for (unsigned int i = 0; i < n; i++) {
		port = v[i];
		port->ana_change_deadline_ns = 0;
		for (uint32_t g = 1; g <= NVMF_ANA_MAX_GRPS; g++) {
			if (port->ana_state[g] != NVME_ANA_CHANGE || !port->ana_next[g])
				continue;
			ana_store(port, g, port->ana_next[g], 0);
			moved++;
		}
	}
	free(v);
	return moved;
}

/* ---- I/O ----------------------------------------------------------------------------------- */

uint16_t nvmf_ana_io_status(struct nvmf_qpair *qp, uint32_t nsid)
{
	const struct nvmf_ns *ns;
	uint8_t state;

	if (!qp->port || !qp->ctrlr || nsid == 0 || nsid > NVMF_MAX_NAMESPACES)
		return ST_OK;
	/* No reference needed: a namespace's structure outlives its subsystem's table slot,
	 * and only anagrpid, fixed for its lifetime, is read. */
	ns = __atomic_load_n(&qp->ctrlr->subsys->ns[nsid], __ATOMIC_ACQUIRE);
	if (!ns)
		return ST_OK; /* the row's namespace check answers */
	state = __atomic_load_n(&qp->port->ana_state[ns->anagrpid], __ATOMIC_RELAXED);
	if (state == NVME_ANA_OPTIMIZED || state == NVME_ANA_NON_OPTIMIZED)
		return ST_OK;
	__atomic_add_fetch(&qp->port->ana_refused, 1, __ATOMIC_RELAXED);
	switch (state) {
	case NVME_ANA_PERSISTENT_LOSS:
		return NVMF_ST(NVME_SCT_PATH, NVME_SC_ANA_PERSISTENT_LOSS);
	case NVME_ANA_CHANGE:
		return NVMF_ST(NVME_SCT_PATH, NVME_SC_ANA_TRANSITION);
	default:
		return NVMF_ST(NVME_SCT_PATH, NVME_SC_ANA_INACCESSIBLE);
	}
}

/* ---- Log page 0Ch -------------------------------------------------------------------------- */

void *nvmf_ana_log_build(struct nvmf_ctrlr *c, bool rgo, size_t *len)
{
	struct nvmf_subsys *s = c->subsys;
	uint32_t *count, *at;
	uint32_t nns = 0, ngrps = 0;
	uint64_t chgcnt = c->port ? __atomic_load_n(&c->port->ana_chgcnt, __ATOMIC_ACQUIRE) : 1;
	struct nvme_ana_log_hdr *hdr;
	uint8_t *buf;
	size_t size, off;

	count = calloc(2 * (NVMF_ANA_MAX_GRPS + 1), sizeof(*count));
	if (!count)
		return NULL;
	at = count + NVMF_ANA_MAX_GRPS + 1;
	pthread_mutex_lock(&s->lock);
	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		const struct nvmf_ns *ns = s->ns[nsid];

		if (!ns)
			continue;
		if (!count[ns->anagrpid]++)
			ngrps++;
		nns++;
	}
	size = sizeof(*hdr) + ngrps * sizeof(struct nvme_ana_group_desc) +
	       (rgo ? 0 : nns * sizeof(uint32_t));
	buf = calloc(1, size);
	if (!buf) {
		pthread_mutex_unlock(&s->lock);
		free(count);
		return NULL;
	}
	hdr = (struct nvme_ana_log_hdr *)buf;
	put_le64(&hdr->chgcnt, chgcnt);
	put_le16(&hdr->ngrps, (uint16_t)ngrps);
	/* Descriptors in group order; at[g]: where group g's next NSID goes. */
	off = sizeof(*hdr);
	for (uint32_t g = 1; g <= NVMF_ANA_MAX_GRPS; g++) {
		/* Only 4-byte aligned after an odd NSID count: fields written by offset. */
		uint8_t *d = buf + off;

		if (!count[g])
			continue;
		put_le32(d + offsetof(struct nvme_ana_group_desc, grpid), g);
		put_le32(d + offsetof(struct nvme_ana_group_desc, nnsids), rgo ? 0 : count[g]);
		put_le64(d + offsetof(struct nvme_ana_group_desc, chgcnt), chgcnt);
		d[offsetof(struct nvme_ana_group_desc, state)] = nvmf_ana_get_state(c->port, g);
		off += sizeof(struct nvme_ana_group_desc);
		at[g] = (uint32_t)off;
		if (!rgo)
			off += count[g] * sizeof(uint32_t);
	}
	for (uint32_t nsid = 1; !rgo && nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		const struct nvmf_ns *ns = s->ns[nsid];

		if (!ns)
			continue;
		put_le32(buf + at[ns->anagrpid], nsid);
		at[ns->anagrpid] += sizeof(uint32_t);
	}
	pthread_mutex_unlock(&s->lock);
	free(count);
	*len = size;
	return buf;
}

/* ---- Identify ------------------------------------------------------------------------------ */

void nvmf_ana_id_ctrl(struct nvme_id_ctrl *id)
{
	id->cmic |= NVME_CTRL_CMIC_MULTI_PORT | NVME_CTRL_CMIC_MULTI_CTRL | NVME_CTRL_CMIC_ANA;
	put_le32(&id->oaes, get_le32(&id->oaes) | NVME_CTRL_OAES_ANA_CHANGE);
	id->anatt = NVMF_ANATT_S;
	id->anacap = NVME_CTRL_ANACAP_OPTIMIZED | NVME_CTRL_ANACAP_NON_OPTIMIZED |
		     NVME_CTRL_ANACAP_INACCESSIBLE | NVME_CTRL_ANACAP_PERSISTENT_LOSS |
		     NVME_CTRL_ANACAP_CHANGE | NVME_CTRL_ANACAP_GRPID_STATIC;
	put_le32(&id->anagrpmax, NVMF_ANA_MAX_GRPS);
	put_le32(&id->nanagrpid, NVMF_ANA_MAX_GRPS);
	/* Hosts size the log page from NANAGRPID and MNAN. */
	put_le32(&id->mnan, NVMF_MAX_NAMESPACES);
}

void nvmf_ana_id_ns(const struct nvmf_ns *ns, struct nvme_id_ns *id)
{
	put_le32(&id->anagrpid, ns->anagrpid);
	id->nmic |= NVME_NS_NMIC_SHARED;
}

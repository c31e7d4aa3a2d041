// SPDX-License-Identifier: MIT
/*
 * NVMe reservations per namespace: registrants (host identifier + key), the reservation
 * (type, holder), the generation counter, Persist Through Power Loss, the command conflict
 * table (the notifications are in reservation_notify.c, the SPC-2 RESERVE(6) holder of
 * the iSCSI front end in reservation_legacy.c). Reservation commands are rare: they take the
 * namespace's reservation lock. Other commands only read an atomic "anything reserved?"
 * flag unless a reservation exists.
 *
 * A change (Register, Acquire, Release, Set Features Reservation Persistence) is built on
 * a copy of the working state (r->next), saved through the namespace's store when one
 * keeps the state (resv_store.h), and only then made the working copy, notified and
 * completed. One change is in flight per namespace; the others wait in arrival order:
 *
 *   RESV_IDLE     nothing in flight: a command may build a change
 *   RESV_SAVING   r->next is with the store; changing commands queue on r->waiting
 *   RESV_HANDOFF  the oldest waiting command was posted back to its own reactor and has
 *                 the next turn; new commands still queue behind the others
 */
#include "reservation.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "common/log.h"
#include "dispatch.h"
#include "reactor/reactor.h"
#include "resv_store.h"

#include "reservation_internal.h"

static const char *const state_names[] = {
	[RESV_IDLE] = "idle",
	[RESV_SAVING] = "saving",
	[RESV_HANDOFF] = "handoff",
};

/* The one transition of the save machine (caller holds r->lock). */
static void resv_set_state(struct nvmf_resv *r, enum resv_save_state to)
{
	static const bool legal[3][3] = {
		[RESV_IDLE] = { [RESV_IDLE] = true, [RESV_SAVING] = true },
		[RESV_SAVING] = { [RESV_IDLE] = true,
				  [RESV_HANDOFF] = true,
				  [RESV_SAVING] = true /* -EAGAIN: rebuilt, saved again */ },
		[RESV_HANDOFF] = { [RESV_IDLE] = true, [RESV_SAVING] = true, [RESV_HANDOFF] = true },
	};

	if (!legal[r->state][to])
		log_err("reservation: illegal transition %s -> %s", state_names[r->state],
			state_names[to]);
	r->state = to;
}

static bool all_regs(uint8_t rtype)
{
	return rtype == NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS ||
	       rtype == NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS;
}

/* The state of @ns, created on first use when @create. */
struct nvmf_resv *resv_get(struct nvmf_ns *ns, bool create)
{
	struct nvmf_resv *r = __atomic_load_n(&ns->resv, __ATOMIC_ACQUIRE), *expected = NULL;

	if (r || !create)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	TAILQ_INIT(&r->waiting);
	r->ns = ns;
	if (!__atomic_compare_exchange_n(&ns->resv, &expected, r, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		pthread_mutex_destroy(&r->lock);
		free(r);
		r = expected;
	}
	return r;
}

void nvmf_resv_free(struct nvmf_ns *ns)
{
	struct nvmf_resv *r = ns->resv;

	if (!r)
		return;
	if (r->store && r->store->ops->close)
		r->store->ops->close(r->store);
	pthread_mutex_destroy(&r->lock);
	free(r);
	ns->resv = NULL;
}

void resv_update_active(struct nvmf_resv *r)
{
	__atomic_store_n(&r->active, r->cur.rtype != 0 || r->legacy, __ATOMIC_RELEASE);
}

/* The host identity of controller @c. A zero host identifier would make every such host
 * one: the controller ID tells them apart then. */
void resv_ctrlr_host(const struct nvmf_ctrlr *c, uint8_t host[16])
{
	static const uint8_t zero[16];

	memcpy(host, c->hostid, 16);
	if (!memcmp(host, zero, 16))
		put_le16(host, c->cntlid);
}

static void req_host(const struct nvmf_req *req, uint8_t host[16], uint16_t *cntlid)
{
	const struct nvmf_ctrlr *c = req->qpair->ctrlr;

	resv_ctrlr_host(c, host);
	*cntlid = c->cntlid;
}

struct resv_reg *resv_find_reg(struct resv_state *r, const uint8_t host[16])
{
	for (unsigned int i = 0; i < r->nregs; i++)
		if (!memcmp(r->regs[i].hostid, host, 16))
			return &r->regs[i];
	return NULL;
}

bool resv_is_holder(const struct resv_state *r, const uint8_t host[16], bool registered)
{
	if (!r->rtype)
		return false;
	if (all_regs(r->rtype))
		return registered;
	return !memcmp(r->holder, host, 16);
}

static void remove_reg(struct resv_state *r, struct resv_reg *reg)
{
	bool was_holder = r->rtype && !all_regs(r->rtype) && !memcmp(r->holder, reg->hostid, 16);

	*reg = r->regs[--r->nregs];
	if (was_holder || (all_regs(r->rtype) && r->nregs == 0))
		r->rtype = 0;
}

/* ---- the state as stores keep it ----------------------------------------------------------- */

static void state_to_image(const struct resv_state *s, struct nvmf_resv_image *img)
{
	memset(img, 0, sizeof(*img));
	img->gen = s->gen;
	img->rtype = s->rtype;
	img->ptpl = s->ptpl;
	if (s->rtype && !all_regs(s->rtype))
		memcpy(img->holder, s->holder, 16);
	img->nregs = s->nregs;
	for (unsigned int i = 0; i < s->nregs; i++) {
		memcpy(img->regs[i].hostid, s->regs[i].hostid, 16);
		img->regs[i].key = s->regs[i].key;
	}
}

/* @img into @s; controller IDs of hosts already known in @s are kept. -EINVAL when @img
 * does not hold together (a store must not hand over a state the core cannot enforce). */
static int state_from_image(struct resv_state *s, const struct nvmf_resv_image *img)
{
	struct resv_state old = *s;

	if (img->nregs > NVMF_RESV_MAX_REGS || img->rtype > NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS ||
	    (img->rtype && !img->nregs))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->gen = img->gen;
	s->rtype = img->rtype;
	s->ptpl = img->ptpl;
	memcpy(s->holder, img->holder, 16);
	for (unsigned int i = 0; i < img->nregs; i++) {
		struct resv_reg *known = resv_find_reg(&old, img->regs[i].hostid);

		if (resv_find_reg(s, img->regs[i].hostid))
			return -EINVAL; /* a host registered twice */
		memcpy(s->regs[i].hostid, img->regs[i].hostid, 16);
		s->regs[i].key = img->regs[i].key;
		s->regs[i].cntlid = known ? known->cntlid : CNTLID_NONE;
		s->nregs = i + 1;
	}
	if (s->rtype && !all_regs(s->rtype) && !resv_find_reg(s, s->holder))
		return -EINVAL; /* the holder is always a registrant */
	return 0;
}

/* Whether @a and @b differ in anything a store keeps. */
static bool state_differs(const struct resv_state *a, const struct resv_state *b)
{
	if (a->gen != b->gen || a->rtype != b->rtype || a->ptpl != b->ptpl || a->nregs != b->nregs)
		return true;
	if (a->rtype && !all_regs(a->rtype) && memcmp(a->holder, b->holder, 16))
		return true;
	for (unsigned int i = 0; i < a->nregs; i++)
		if (memcmp(a->regs[i].hostid, b->regs[i].hostid, 16) ||
		    a->regs[i].key != b->regs[i].key)
			return true;
	return false;
}

/* ---- conflict table (NVMe Base 2.0, "Command Behavior in the Presence of a Reservation") - */

/* Commands that modify the namespace (write, deallocate, flush), as their rows say. */
static bool cmd_is_write(uint8_t opc)
{
	const struct nvmf_cmd_desc *d = nvmf_cmd_lookup(nvmf_io_cmds, opc, NVMF_ON_IO);

	return d && (d->needs & NVMF_NEED_RESV_WRITE);
}

uint16_t nvmf_resv_check(struct nvmf_req *req)
{
	struct nvmf_resv *r = req->ns ? resv_get(req->ns, false) : NULL;
	bool write = cmd_is_write(req->cmd.opc), reg, allowed = true;
	uint8_t host[16];
	uint16_t cntlid;

	if (!r || !__atomic_load_n(&r->active, __ATOMIC_ACQUIRE))
		return 0;
	req_host(req, host, &cntlid);
	pthread_mutex_lock(&r->lock);
	if (r->legacy && memcmp(r->legacy_holder, host, 16)) {
		allowed = false;
	} else if (r->cur.rtype) {
		reg = resv_find_reg(&r->cur, host) != NULL;
		if (!resv_is_holder(&r->cur, host, reg)) {
			switch (r->cur.rtype) {
			case NVME_RESV_WRITE_EXCLUSIVE:
				allowed = !write;
				break;
			case NVME_RESV_EXCLUSIVE_ACCESS:
				allowed = false;
				break;
			case NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY:
			case NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS:
				allowed = !write || reg;
				break;
			default: /* exclusive access, registrants only / all registrants */
				allowed = reg;
				break;
			}
		}
	}
	pthread_mutex_unlock(&r->lock);
	return allowed ? 0 : ST_RESV_CONFLICT;
}

/* ---- Reservation Register ---------------------------------------------------------------- */

static uint16_t do_register(struct resv_state *r, const uint8_t host[16], uint16_t cntlid,
			    uint32_t cdw10, uint64_t crkey, uint64_t nrkey)
{
	struct resv_reg *reg = resv_find_reg(r, host);
	bool iekey = RESV_IEKEY(cdw10);

	switch (RESV_ACTION(cdw10)) {
	case 0: /* Register */
		if (reg) {
			if (reg->key != nrkey)
				return ST_RESV_CONFLICT;
			reg->cntlid = cntlid;
			goto cptpl; /* registered already with that key: no new generation */
		}
		if (r->nregs == NVMF_RESV_MAX_REGS)
			return NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED);
		reg = &r->regs[r->nregs++];
		memcpy(reg->hostid, host, 16);
		reg->key = nrkey;
		reg->cntlid = cntlid;
		break;
	case 1: /* Unregister */
		if (!reg || (!iekey && reg->key != crkey))
			return ST_RESV_CONFLICT;
		remove_reg(r, reg);
		break;
	case 2: /* Replace */
		if (!reg) {
			if (!iekey)
				return ST_RESV_CONFLICT;
			if (r->nregs == NVMF_RESV_MAX_REGS)
				return NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_CAPACITY_EXCEEDED);
			reg = &r->regs[r->nregs++];
			memcpy(reg->hostid, host, 16);
		} else if (!iekey && reg->key != crkey) {
			return ST_RESV_CONFLICT;
		}
		reg->key = nrkey;
		reg->cntlid = cntlid;
		break;
	default:
		return ST_INVALID_FIELD;
	}
	r->gen++;
cptpl:
	/* Change Persist Through Power Loss State, with the registration it came with */
	if (RESV_CPTPL(cdw10) == CPTPL_SET)
		r->ptpl = true;
	else if (RESV_CPTPL(cdw10) == CPTPL_CLEAR)
		r->ptpl = false;
	return 0;
}

/* ---- Reservation Acquire -------------------------------------------------------------------- */

/* Remove the registrations holding @key except @keep's; returns how many went. */
static unsigned int remove_key(struct resv_state *r, uint64_t key, const uint8_t keep[16])
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nregs;) {
		if (r->regs[i].key == key && memcmp(r->regs[i].hostid, keep, 16)) {
			r->regs[i] = r->regs[--r->nregs];
			n++;
		} else {
			i++;
		}
	}
	return n;
}

static uint16_t do_acquire(struct resv_state *r, const uint8_t host[16], uint16_t cntlid,
			   uint32_t cdw10, uint64_t crkey, uint64_t prkey)
{
	struct resv_reg *reg = resv_find_reg(r, host);
	uint8_t type = RESV_RTYPE(cdw10);
	uint8_t action = RESV_ACTION(cdw10);

	if (type < NVME_RESV_WRITE_EXCLUSIVE || type > NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS ||
	    action > 2)
		return ST_INVALID_FIELD;
	if (!reg || (!RESV_IEKEY(cdw10) && reg->key != crkey))
		return ST_RESV_CONFLICT;
	reg->cntlid = cntlid;
	if (action == 0) { /* Acquire */
		if (!r->rtype) {
			r->rtype = type;
			memcpy(r->holder, host, 16);
			return 0;
		}
		if (resv_is_holder(r, host, true) && r->rtype == type)
			return 0;
		return ST_RESV_CONFLICT;
	}
	/* Preempt (and abort: the commands of preempted hosts are short-lived here) */
	if (!r->rtype) {
		if (!prkey)
			return ST_INVALID_FIELD;
		if (!remove_key(r, prkey, host))
			return ST_RESV_CONFLICT;
	} else if (all_regs(r->rtype)) {
		if (prkey == 0) {
			/* every other registrant goes; we hold a new reservation */
			for (unsigned int i = 0; i < r->nregs;) {
				if (memcmp(r->regs[i].hostid, host, 16))
					r->regs[i] = r->regs[--r->nregs];
				else
					i++;
			}
			r->rtype = type;
			memcpy(r->holder, host, 16);
		} else if (!remove_key(r, prkey, host)) {
			return ST_RESV_CONFLICT;
		}
	} else {
		struct resv_reg *h = resv_find_reg(r, r->holder);

		if (h && h->key == prkey) {
			remove_key(r, prkey, host);
			r->rtype = type;
			memcpy(r->holder, host, 16);
		} else {
			if (!prkey)
				return ST_INVALID_FIELD;
			if (!remove_key(r, prkey, host))
				return ST_RESV_CONFLICT;
		}
	}
	r->gen++;
	return 0;
}

/* ---- Reservation Release ---------------------------------------------------------------- */

static uint16_t do_release(struct resv_state *r, const uint8_t host[16], uint16_t cntlid,
			   uint32_t cdw10, uint64_t crkey)
{
	struct resv_reg *reg = resv_find_reg(r, host);
	uint8_t action = RESV_ACTION(cdw10);

	if (action > 1)
		return ST_INVALID_FIELD;
	if (!reg || (!RESV_IEKEY(cdw10) && reg->key != crkey))
		return ST_RESV_CONFLICT;
	reg->cntlid = cntlid;
	if (action == 1) { /* Clear */
		r->nregs = 0;
		r->rtype = 0;
		r->gen++;
		return 0;
	}
	if (!r->rtype || !resv_is_holder(r, host, true))
		return 0; /* nothing held by this host: no effect */
	if (RESV_RTYPE(cdw10) != r->rtype)
		return ST_INVALID_FIELD;
	r->rtype = 0;
	return 0;
}

/* ---- Reservation Report (extended data structure) ---------------------------------------- */

static void do_report(struct nvmf_req *req, struct nvmf_resv *r)
{
	uint8_t hdr[64] = { 0 };
	size_t off = sizeof(hdr);

	if (r) {
		const struct resv_state *st = &r->cur;

		put_le32(&hdr[0], st->gen);
		hdr[4] = st->rtype;
		put_le16(&hdr[5], (uint16_t)st->nregs);
		hdr[9] = st->ptpl ? 1 : 0; /* PTPLS */
		for (unsigned int i = 0; i < st->nregs; i++) {
			uint8_t e[64] = { 0 };

			put_le16(&e[0], st->regs[i].cntlid);
			e[2] = resv_is_holder(st, st->regs[i].hostid, true) ? 1 : 0;
			put_le64(&e[8], st->regs[i].key);
			memcpy(&e[16], st->regs[i].hostid, 16);
			if (off + sizeof(e) > req->length)
				break;
			nvmf_req_copy_to(req, off, e, sizeof(e));
			off += sizeof(e);
		}
	}
	nvmf_req_copy_to(req, 0, hdr, sizeof(hdr) < req->length ? sizeof(hdr) : req->length);
	if (off < req->length)
		nvmf_req_zero(req, off);
}

/* ---- changes: build, save, apply, complete --------------------------------------------------- */

static void resv_change(struct nvmf_req *req, bool resumed);

/* Whether r->next must reach the store before it counts. */
static bool must_save(const struct nvmf_resv *r)
{
	if (!r->store || !state_differs(&r->cur, &r->next))
		return false;
	return r->store->ops->always || r->cur.ptpl || r->next.ptpl;
}

static void resume_msg(void *arg)
{
	resv_change(arg, true);
}

/* The change of the command that had the turn is over (caller holds r->lock): give the
 * turn to the oldest waiting command, on its own reactor. Returns it (to post once the
 * lock is dropped) or NULL. */
static struct nvmf_req *pass_turn(struct nvmf_resv *r)
{
	struct nvmf_req *w = TAILQ_FIRST(&r->waiting);

	r->saving = NULL;
	r->retries = 0;
	if (!w) {
		resv_set_state(r, RESV_IDLE);
		return NULL;
	}
	TAILQ_REMOVE(&r->waiting, w, link);
	resv_set_state(r, RESV_HANDOFF);
	return w;
}

static void post_turn(struct nvmf_req *w)
{
	if (!w)
		return;
	if (!w->qpair->reactor || reactor_send_msg(w->qpair->reactor, resume_msg, w))
		resv_change(w, true); /* no reactor (tests) or no memory: run it here */
}

/* r->next becomes the working copy (caller holds r->lock). */
static void apply_next(struct nvmf_resv *r)
{
	r->cur = r->next;
	resv_update_active(r);
	resv_send_notes(r);
}

static void save_done(void *arg, int rc)
{
	struct nvmf_resv *r = arg;
	struct nvmf_req *req, *w;
	uint16_t status = 0;

	pthread_mutex_lock(&r->lock);
	req = r->saving;
	if (rc == -EAGAIN && r->retries < SAVE_RETRIES) {
		/* another gateway changed the stored state: take it and rebuild on it */
		if (!r->store->ops->load(r->store, &r->img))
			state_from_image(&r->cur, &r->img);
		resv_update_active(r);
		r->retries++;
		pthread_mutex_unlock(&r->lock);
		resv_change(req, true);
		return;
	}
	if (rc) {
		log_peer("%s: namespace %u: reservation state not saved (%s store: %s); the "
			 "command fails, the reservation is unchanged",
			 r->ns->subsys ? r->ns->subsys->nqn : "?", r->ns->nsid, r->store->ops->name,
			 strerror(-rc));
		status = ST_INTERNAL;
		r->nnotes = 0;
	} else {
		apply_next(r);
	}
	w = pass_turn(r);
	pthread_mutex_unlock(&r->lock);
	nvmf_req_done(req, status);
	post_turn(w);
}

/* Build the change of @req on r->next (caller holds r->lock). Returns a status. */
static uint16_t build_change(struct nvmf_resv *r, struct nvmf_req *req)
{
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t host[16], keys[16] = { 0 };
	uint16_t cntlid, status;

	r->next = r->cur;
	r->nnotes = 0;
	if (req->cmd.opc == NVME_ADMIN_SET_FEATURES) { /* Reservation Persistence */
		r->next.ptpl = get_le32(&req->cmd.cdw11) & 1;
		return 0;
	}
	req_host(req, host, &cntlid);
	if (r->legacy && memcmp(r->legacy_holder, host, 16))
		return ST_RESV_CONFLICT;
	nvmf_req_copy_from(req, 0, keys, req->cmd.opc == NVME_OPC_RESERVATION_RELEASE ? 8 : 16);
	switch (req->cmd.opc) {
	case NVME_OPC_RESERVATION_REGISTER:
		status = do_register(&r->next, host, cntlid, cdw10, get_le64(&keys[0]),
				     get_le64(&keys[8]));
		break;
	case NVME_OPC_RESERVATION_ACQUIRE:
		status = do_acquire(&r->next, host, cntlid, cdw10, get_le64(&keys[0]),
				    get_le64(&keys[8]));
		break;
	default:
		status = do_release(&r->next, host, cntlid, cdw10, get_le64(&keys[0]));
		break;
	}
	if (!status)
		resv_build_notes(r, req->cmd.opc, cdw10, host);
	return status;
}

/* Register, Acquire, Release and Set Features Reservation Persistence, in turn per
 * namespace. @resumed: @req has the turn (RESV_HANDOFF, or rebuilding after -EAGAIN). */
static void resv_change(struct nvmf_req *req, bool resumed)
{
	struct nvmf_resv *r = resv_get(req->ns, true);
	struct nvmf_req *w = NULL;
	uint16_t status;

	if (!r) {
		nvmf_req_done(req, ST_INTERNAL);
		return;
	}
	pthread_mutex_lock(&r->lock);
	if (!resumed && r->state != RESV_IDLE) {
		TAILQ_INSERT_TAIL(&r->waiting, req, link);
		pthread_mutex_unlock(&r->lock);
		return;
	}
	status = build_change(r, req);
	if (!status && must_save(r)) {
		r->saving = req;
		resv_set_state(r, RESV_SAVING);
		state_to_image(&r->next, &r->img);
		pthread_mutex_unlock(&r->lock);
		r->store->ops->save(r->store, &r->img, save_done, r);
		return;
	}
	if (!status)
		apply_next(r);
	if (resumed)
		w = pass_turn(r);
	pthread_mutex_unlock(&r->lock);
	nvmf_req_done(req, status);
	post_turn(w);
}

static void resv_exec(struct nvmf_req *req)
{
	struct nvmf_resv *r;

	if (req->cmd.opc != NVME_OPC_RESERVATION_REPORT) {
		resv_change(req, false);
		return;
	}
	r = resv_get(req->ns, false);
	if (r)
		pthread_mutex_lock(&r->lock);
	do_report(req, r);
	if (r)
		pthread_mutex_unlock(&r->lock);
	nvmf_req_done(req, 0);
}

/* ---- parse handlers of the reservation rows of the I/O command table --------------------- */

/* Register, Acquire and Release carry their keys as data: @need bytes of it. */
static uint16_t resv_data_parse(struct nvmf_req *req, uint32_t need)
{
	if (req->length < need)
		return ST_SGL_LEN;
	req->execute = resv_exec;
	return 0;
}

static bool has_store(struct nvmf_ns *ns)
{
	struct nvmf_resv *r = resv_get(ns, false);

	return r && __atomic_load_n(&r->store, __ATOMIC_ACQUIRE);
}

uint16_t nvmf_resv_register_parse(struct nvmf_req *req)
{
	uint32_t cptpl = RESV_CPTPL(get_le32(&req->cmd.cdw10));

	if (cptpl == 1) /* reserved */
		return ST_INVALID_FIELD;
	if (cptpl == CPTPL_SET && !has_store(req->ns)) /* nowhere to persist it */
		return ST_INVALID_FIELD;
	return resv_data_parse(req, 16); /* CRKEY, NRKEY */
}

uint16_t nvmf_resv_acquire_parse(struct nvmf_req *req)
{
	return resv_data_parse(req, 16); /* CRKEY, PRKEY */
}

uint16_t nvmf_resv_release_parse(struct nvmf_req *req)
{
	return resv_data_parse(req, 8); /* CRKEY */
}

uint16_t nvmf_resv_report_parse(struct nvmf_req *req)
{
	/* hosts are identified by 128-bit host identifiers on fabrics */
	if (!(get_le32(&req->cmd.cdw11) & RESV_EDS))
		return ST_HOSTID_FORMAT;
	if (req->length < (get_le32(&req->cmd.cdw10) + 1) * 4) /* NUMD, 0's based */
		return ST_SGL_LEN;
	req->execute = resv_exec;
	return 0;
}

uint8_t nvmf_resv_rescap(struct nvmf_ns *ns)
{
	return NVMF_RESV_RESCAP | (has_store(ns) ? NVMF_RESV_RESCAP_PTPL : 0);
}

/* ---- Features 82h (Reservation Notification Mask) and 83h (Reservation Persistence) ----- */

uint16_t nvmf_resv_feat_get(struct nvmf_req *req, uint8_t fid, uint32_t *dw0)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	struct nvmf_resv *r;

	if (!req->ns)
		return ST_INVALID_NS;
	if (fid == NVME_FEAT_RESV_MASK) {
		*dw0 = __atomic_load_n(&c->resv_mask[req->ns->nsid], __ATOMIC_RELAXED);
		return 0;
	}
	r = resv_get(req->ns, false);
	if (r)
		pthread_mutex_lock(&r->lock);
	*dw0 = r && r->cur.ptpl ? 1 : 0;
	if (r)
		pthread_mutex_unlock(&r->lock);
	return 0;
}

uint16_t nvmf_resv_feat_set(struct nvmf_req *req, uint8_t fid)
{
	struct nvmf_ctrlr *c = nvmf_req_ctrlr(req);
	uint32_t v = get_le32(&req->cmd.cdw11);
	uint32_t nsid = get_le32(&req->cmd.nsid);

	if (fid == NVME_FEAT_RESV_MASK) {
		uint8_t mask = (uint8_t)(v & NVMF_RESV_MASK_ALL);

		if (v & ~NVMF_RESV_MASK_ALL)
			return ST_INVALID_FIELD;
		if (nsid == NVMF_NSID_ALL) {
			for (uint32_t i = 1; i <= NVMF_MAX_NAMESPACES; i++)
				__atomic_store_n(&c->resv_mask[i], mask, __ATOMIC_RELAXED);
		} else if (req->ns) {
			__atomic_store_n(&c->resv_mask[nsid], mask, __ATOMIC_RELAXED);
		} else {
			return ST_INVALID_NS;
		}
		nvmf_req_done(req, 0);
		return 0;
	}
	/* Reservation Persistence: namespace-specific, saved like any reservation change */
	if (!req->ns)
		return ST_INVALID_NS;
	if ((v & 1) && !has_store(req->ns))
		return ST_INVALID_FIELD;
	resv_change(req, false);
	return 0;
}

/* ---- stores (resv_store.h) ------------------------------------------------------------------ */

/* A store's changed() hook: another gateway changed the stored state. */
static void resv_store_changed(struct nvmf_resv_store *st)
{
	if (st->ns)
		nvmf_resv_reload(st->ns);
}

int nvmf_resv_store_attach(struct nvmf_ns *ns, struct nvmf_resv_store *st)
{
	struct nvmf_resv *r = resv_get(ns, true);
	struct nvmf_resv_store *old;
	int rc;

	if (!r)
		return -ENOMEM;
	st->ns = ns;
	st->changed = resv_store_changed;
	pthread_mutex_lock(&r->lock);
	old = r->store;
	__atomic_store_n(&r->store, st, __ATOMIC_RELEASE);
	memset(&r->cur, 0, sizeof(r->cur));
	rc = st->ops->load(st, &r->img);
	if (!rc && !r->img.ptpl && !st->ops->always)
		rc = -ENOENT; /* kept without PTPL: cleared at power on, as the spec says */
	if (!rc && state_from_image(&r->cur, &r->img)) {
		memset(&r->cur, 0, sizeof(r->cur));
		log_err("%s: namespace %u: the %s store holds an inconsistent reservation state; "
			"starting with none",
			ns->subsys ? ns->subsys->nqn : "?", ns->nsid, st->ops->name);
		rc = -EINVAL;
	}
	resv_update_active(r);
	pthread_mutex_unlock(&r->lock);
	if (old && old->ops->close)
		old->ops->close(old);
	if (!rc && r->cur.nregs)
		log_notice("%s: namespace %u: reservation restored (%u registrant(s), type %u, "
			   "generation %u)",
			   ns->subsys ? ns->subsys->nqn : "?", ns->nsid, r->cur.nregs, r->cur.rtype,
			   r->cur.gen);
	return rc == -ENOENT ? 0 : rc;
}

int nvmf_resv_reload(struct nvmf_ns *ns)
{
	struct nvmf_resv *r = resv_get(ns, false);
	int rc;

	if (!r || !r->store)
		return -ENOENT;
	pthread_mutex_lock(&r->lock);
	rc = r->store->ops->load(r->store, &r->img);
	if (rc == -ENOENT) {
		memset(&r->img, 0, sizeof(r->img));
		rc = 0;
	}
	if (!rc)
		rc = state_from_image(&r->cur, &r->img);
	resv_update_active(r);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

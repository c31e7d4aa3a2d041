// SPDX-License-Identifier: MIT
/*
 * NVMe reservations per namespace: registrants (host identifier + key), the reservation
 * (type, holder), the generation counter, the command conflict table, and the SPC-2
 * RESERVE(6) holder of the iSCSI front end. Reservation commands are rare: they take the
 * namespace's reservation lock. Other commands only read an atomic "anything reserved?"
 * flag unless a reservation exists.
 */
#include "reservation.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrlr.h"
#include "common/endian.h"
#include "dispatch.h"

/* CDW10 fields */
#define RESV_ACTION(cdw10) ((cdw10) & 0x7)
#define RESV_IEKEY(cdw10) ((cdw10) & (1u << 3))
#define RESV_RTYPE(cdw10) (((cdw10) >> 8) & 0xff)
#define RESV_CPTPL(cdw10) ((cdw10) >> 30)
#define RESV_EDS 0x1

#define ST_RESV_CONFLICT NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_RESERVATION_CONFLICT)
#define ST_HOSTID_FORMAT NVMF_ST_DNR(NVME_SCT_GENERIC, NVME_SC_HOSTID_INCONSISTENT_FORMAT)

struct resv_reg {
	uint8_t hostid[16];
	uint64_t key;
	uint16_t cntlid;
};

struct nvmf_resv {
	pthread_mutex_t lock;
	uint32_t gen;
	uint8_t rtype;			/* 0: no reservation */
	uint8_t holder[16];		/* holder host (types 1-4) */
	struct resv_reg regs[NVMF_RESV_MAX_REGS];
	unsigned int nregs;
	bool legacy;			/* SPC-2 RESERVE(6) held */
	uint8_t legacy_holder[16];
	bool active;			/* atomic: rtype != 0 || legacy */
};

static bool all_regs(uint8_t rtype)
{
	return rtype == NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS ||
	       rtype == NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS;
}

/* The state of @ns, created on first use when @create. */
static struct nvmf_resv *resv_get(struct nvmf_ns *ns, bool create)
{
	struct nvmf_resv *r = __atomic_load_n(&ns->resv, __ATOMIC_ACQUIRE), *expected = NULL;

	if (r || !create)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
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
	pthread_mutex_destroy(&r->lock);
	free(r);
	ns->resv = NULL;
}

static void update_active(struct nvmf_resv *r)
{
	__atomic_store_n(&r->active, r->rtype != 0 || r->legacy, __ATOMIC_RELEASE);
}

/* The host identity of the controller @req came through. A zero host identifier would
 * make every such host one: the controller ID tells them apart then. */
static void req_host(const struct nvmf_req *req, uint8_t host[16], uint16_t *cntlid)
{
	const struct nvmf_ctrlr *c = req->qpair->ctrlr;
	static const uint8_t zero[16];

	memcpy(host, c->hostid, 16);
	if (!memcmp(host, zero, 16))
		put_le16(host, c->cntlid);
	*cntlid = c->cntlid;
}

static struct resv_reg *find_reg(struct nvmf_resv *r, const uint8_t host[16])
{
	for (unsigned int i = 0; i < r->nregs; i++)
		if (!memcmp(r->regs[i].hostid, host, 16))
			return &r->regs[i];
	return NULL;
}

static bool is_holder(const struct nvmf_resv *r, const uint8_t host[16], bool registered)
{
	if (!r->rtype)
		return false;
	if (all_regs(r->rtype))
		return registered;
	return !memcmp(r->holder, host, 16);
}

static void remove_reg(struct nvmf_resv *r, struct resv_reg *reg)
{
	bool was_holder = r->rtype && !all_regs(r->rtype) && !memcmp(r->holder, reg->hostid, 16);

	*reg = r->regs[--r->nregs];
	if (was_holder || (all_regs(r->rtype) && r->nregs == 0))
		r->rtype = 0;
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
	} else if (r->rtype) {
		reg = find_reg(r, host) != NULL;
		if (!is_holder(r, host, reg)) {
			switch (r->rtype) {
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

static uint16_t do_register(struct nvmf_resv *r, const uint8_t host[16], uint16_t cntlid,
			    uint32_t cdw10, uint64_t crkey, uint64_t nrkey)
{
	struct resv_reg *reg = find_reg(r, host);
	bool iekey = RESV_IEKEY(cdw10);

	switch (RESV_ACTION(cdw10)) {
	case 0: /* Register */
		if (reg)
			return reg->key == nrkey ? 0 : ST_RESV_CONFLICT;
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
			reg->cntlid = cntlid;
		} else if (!iekey && reg->key != crkey) {
			return ST_RESV_CONFLICT;
		}
		reg->key = nrkey;
		break;
	default:
		return ST_INVALID_FIELD;
	}
	r->gen++;
	return 0;
}

/* ---- Reservation Acquire -------------------------------------------------------------------- */

/* Remove the registrations holding @key except @keep's; returns how many went. */
static unsigned int remove_key(struct nvmf_resv *r, uint64_t key, const uint8_t keep[16])
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

static uint16_t do_acquire(struct nvmf_resv *r, const uint8_t host[16], uint32_t cdw10,
			   uint64_t crkey, uint64_t prkey)
{
	struct resv_reg *reg = find_reg(r, host);
	uint8_t type = RESV_RTYPE(cdw10);
	uint8_t action = RESV_ACTION(cdw10);

	if (type < NVME_RESV_WRITE_EXCLUSIVE || type > NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS ||
	    action > 2)
		return ST_INVALID_FIELD;
	if (!reg || (!RESV_IEKEY(cdw10) && reg->key != crkey))
		return ST_RESV_CONFLICT;
	if (action == 0) { /* Acquire */
		if (!r->rtype) {
			r->rtype = type;
			memcpy(r->holder, host, 16);
			return 0;
		}
		if (is_holder(r, host, true) && r->rtype == type)
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
		struct resv_reg *h = find_reg(r, r->holder);

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

static uint16_t do_release(struct nvmf_resv *r, const uint8_t host[16], uint32_t cdw10,
			   uint64_t crkey)
{
	struct resv_reg *reg = find_reg(r, host);
	uint8_t action = RESV_ACTION(cdw10);

	if (action > 1)
		return ST_INVALID_FIELD;
	if (!reg || (!RESV_IEKEY(cdw10) && reg->key != crkey))
		return ST_RESV_CONFLICT;
	if (action == 1) { /* Clear */
		r->nregs = 0;
		r->rtype = 0;
		r->gen++;
		return 0;
	}
	if (!r->rtype || !is_holder(r, host, true))
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
		put_le32(&hdr[0], r->gen);
		hdr[4] = r->rtype;
		put_le16(&hdr[5], (uint16_t)r->nregs);
		for (unsigned int i = 0; i < r->nregs; i++) {
			uint8_t e[64] = { 0 };

			put_le16(&e[0], r->regs[i].cntlid);
			e[2] = is_holder(r, r->regs[i].hostid, true) ? 1 : 0;
			put_le64(&e[8], r->regs[i].key);
			memcpy(&e[16], r->regs[i].hostid, 16);
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

static void resv_exec(struct nvmf_req *req)
{
	struct nvmf_resv *r;
	uint32_t cdw10 = get_le32(&req->cmd.cdw10);
	uint8_t host[16], keys[16] = { 0 };
	uint16_t cntlid, status = 0;

	req_host(req, host, &cntlid);
	r = resv_get(req->ns, req->cmd.opc != NVME_OPC_RESERVATION_REPORT);
	if (!r && req->cmd.opc != NVME_OPC_RESERVATION_REPORT) {
		nvmf_req_done(req, ST_INTERNAL);
		return;
	}
	if (req->cmd.opc == NVME_OPC_RESERVATION_REPORT) {
		if (r)
			pthread_mutex_lock(&r->lock);
		do_report(req, r);
		if (r)
			pthread_mutex_unlock(&r->lock);
		nvmf_req_done(req, 0);
		return;
	}
	nvmf_req_copy_from(req, 0, keys, req->cmd.opc == NVME_OPC_RESERVATION_RELEASE ? 8 : 16);
	pthread_mutex_lock(&r->lock);
	if (r->legacy && memcmp(r->legacy_holder, host, 16)) {
		status = ST_RESV_CONFLICT;
	} else {
		switch (req->cmd.opc) {
		case NVME_OPC_RESERVATION_REGISTER:
			status = do_register(r, host, cntlid, cdw10, get_le64(&keys[0]),
					     get_le64(&keys[8]));
			break;
		case NVME_OPC_RESERVATION_ACQUIRE:
			status = do_acquire(r, host, cdw10, get_le64(&keys[0]), get_le64(&keys[8]));
			break;
		default:
			status = do_release(r, host, cdw10, get_le64(&keys[0]));
			break;
		}
	}
	update_active(r);
	pthread_mutex_unlock(&r->lock);
	nvmf_req_done(req, status);
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

uint16_t nvmf_resv_register_parse(struct nvmf_req *req)
{
	/* CPTPL 11b: persist through power loss is not supported */
	if (RESV_CPTPL(get_le32(&req->cmd.cdw10)) == 3)
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

/* ---- SPC-2 RESERVE(6) / RELEASE(6) --------------------------------------------------------- */

int nvmf_resv_legacy_reserve(struct nvmf_ns *ns, const uint8_t hostid[16])
{
	struct nvmf_resv *r = resv_get(ns, true);
	int rc = 0;

	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	if (r->rtype) {
		/* a persistent reservation: only its holder gets GOOD (and nothing changes) */
		if (!is_holder(r, hostid, find_reg(r, hostid) != NULL))
			rc = -EBUSY;
	} else if (r->legacy && memcmp(r->legacy_holder, hostid, 16)) {
		rc = -EBUSY;
	} else {
		r->legacy = true;
		memcpy(r->legacy_holder, hostid, 16);
	}
	update_active(r);
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
	update_active(r);
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
	update_active(r);
	pthread_mutex_unlock(&r->lock);
}

/* SPDX-License-Identifier: MIT */
/* Discovery log page (70h): read consistently (same GENCTR before and after) and decode. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "host_ctrlr.h"

#define DISC_MAX_RECORDS 16384
#define DISC_RETRIES 10

/* Copy a space/NUL padded wire string into a NUL-terminated one. */
static void wire_str(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && dst[n - 1] == ' ')
		dst[--n] = '\0';
}

void disc_entry_from_wire(const struct nvmf_disc_log_entry *w, struct nvmeof_disc_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->trtype = w->trtype;
	e->adrfam = w->adrfam;
	e->subtype = w->subtype;
	e->treq = w->treq;
	e->portid = get_le16(&w->portid);
	e->cntlid = get_le16(&w->cntlid);
	e->asqsz = get_le16(&w->asqsz);
	e->eflags = get_le16(&w->eflags);
	e->sectype = w->trtype == NVMF_TRTYPE_TCP ? w->tsas[0] : 0;
	wire_str(e->trsvcid, sizeof(e->trsvcid), w->trsvcid, sizeof(w->trsvcid));
	wire_str(e->traddr, sizeof(e->traddr), w->traddr, sizeof(w->traddr));
	wire_str(e->subnqn, sizeof(e->subnqn), w->subnqn, sizeof(w->subnqn));
}

static int read_log(struct nvmeof_ctrlr *ctrlr, struct nvmf_disc_log_hdr **logp,
		    uint64_t *numrec_out)
{
	struct nvmf_disc_log_hdr *hdr = NULL, *log = NULL;
	uint64_t gen, numrec;
	int rc;

	hdr = malloc(sizeof(*hdr));
	if (!hdr)
		return set_error(-ENOMEM, "out of memory");
	rc = get_log_page_locked(ctrlr, NVME_LOG_DISCOVERY, 0, 0, hdr, sizeof(*hdr));
	for (int attempt = 0; rc == 0 && attempt < DISC_RETRIES; attempt++) {
		gen = get_le64(&hdr->genctr);
		numrec = get_le64(&hdr->numrec);
		if (numrec > DISC_MAX_RECORDS) {
			rc = set_error(-E2BIG, "discovery log has %llu records (at most %u read)",
				       (unsigned long long)numrec, DISC_MAX_RECORDS);
			break;
		}
		free(log);
		log = malloc(sizeof(*hdr) + numrec * sizeof(struct nvmf_disc_log_entry));
		if (!log) {
			rc = set_error(-ENOMEM, "out of memory");
			break;
		}
		rc = get_log_page_locked(ctrlr, NVME_LOG_DISCOVERY, 0, 0, log,
					 sizeof(*hdr) + numrec * sizeof(struct nvmf_disc_log_entry));
		if (rc)
			break;
		/* The log changed while it was read if the generation moved. */
		if (get_le64(&log->genctr) == gen && get_le64(&log->numrec) == numrec) {
			rc = get_log_page_locked(ctrlr, NVME_LOG_DISCOVERY, 0, 0, hdr, sizeof(*hdr));
			if (rc == 0 && get_le64(&hdr->genctr) == gen) {
				*logp = log;
				*numrec_out = numrec;
				free(hdr);
				return 0;
			}
		} else {
			memcpy(hdr, log, sizeof(*hdr));
		}
	}
	free(hdr);
	free(log);
	if (rc > 0)
		return set_error(-EIO, "Get Log Page (discovery) failed: %s",
				 nvmeof_status_name((uint16_t)rc));
	if (rc < 0)
		return rc;
	return set_error(-EAGAIN, "discovery log kept changing while it was read");
}

int nvmeof_discover(struct nvmeof_ctrlr *ctrlr, struct nvmeof_disc_entry **entries,
		    unsigned int *count, uint64_t *genctr)
{
	struct nvmf_disc_log_hdr *log = NULL;
	const struct nvmf_disc_log_entry *w;
	struct nvmeof_disc_entry *e;
	uint64_t numrec = 0;
	int rc;

	clear_error();
	*entries = NULL;
	*count = 0;
	pthread_mutex_lock(&ctrlr->admin_lock);
	rc = read_log(ctrlr, &log, &numrec);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	if (rc)
		return rc;
	e = calloc(numrec ? numrec : 1, sizeof(*e));
	if (!e) {
		free(log);
		return set_error(-ENOMEM, "out of memory");
	}
	w = (const struct nvmf_disc_log_entry *)(log + 1);
	for (uint64_t i = 0; i < numrec; i++)
		disc_entry_from_wire(&w[i], &e[i]);
	if (genctr)
		*genctr = get_le64(&log->genctr);
	free(log);
	*entries = e;
	*count = (unsigned int)numrec;
	return 0;
}

void nvmeof_disc_free(struct nvmeof_disc_entry *entries)
{
	free(entries);
}

const char *nvmeof_trtype_name(uint8_t trtype)
{
	switch (trtype) {
	case NVMF_TRTYPE_RDMA:
		return "rdma";
	case NVMF_TRTYPE_FC:
		return "fc";
	case NVMF_TRTYPE_TCP:
		return "tcp";
	case NVMF_TRTYPE_LOOP:
		return "loop";
	default:
		return "unrecognized";
	}
}

const char *nvmeof_adrfam_name(uint8_t adrfam)
{
	switch (adrfam) {
	case NVMF_ADRFAM_IPV4:
		return "ipv4";
	case NVMF_ADRFAM_IPV6:
		return "ipv6";
	case NVMF_ADRFAM_IB:
		return "infiniband";
	case NVMF_ADRFAM_FC:
		return "fibre-channel";
	case NVMF_ADRFAM_LOOP:
		return "loop";
	default:
		return "unrecognized";
	}
}

const char *nvmeof_subtype_name(uint8_t subtype)
{
	switch (subtype) {
	case NVMF_SUBTYPE_DISCOVERY_REFERRAL:
		return "discovery subsystem referral";
	case NVMF_SUBTYPE_NVME:
		return "nvme subsystem";
	case NVMF_SUBTYPE_DISCOVERY_CURRENT:
		return "current discovery subsystem";
	default:
		return "unrecognized";
	}
}

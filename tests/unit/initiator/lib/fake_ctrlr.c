/* SPDX-License-Identifier: MIT */
#include "fake_ctrlr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/endian.h"
#include "fake_target.h"
#include "common/nvme_spec.h"

#define PDU_MAX (256 * 1024)

static void ev(struct fake_ctrlr *fc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ev(struct fake_ctrlr *fc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fc->lock);
	if (fc->nevents < FC_MAX_EVENTS) {
		va_start(ap, fmt);
		vsnprintf(fc->events[fc->nevents++], sizeof(fc->events[0]), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&fc->lock);
}

int fc_find(struct fake_ctrlr *fc, const char *prefix, int from)
{
	int r = -1;

	pthread_mutex_lock(&fc->lock);
	for (int i = from < 0 ? 0 : from; i < fc->nevents && r < 0; i++)
		if (strncmp(fc->events[i], prefix, strlen(prefix)) == 0)
			r = i;
	pthread_mutex_unlock(&fc->lock);
	return r;
}

int fc_count(struct fake_ctrlr *fc, const char *prefix)
{
	int n = 0;

	pthread_mutex_lock(&fc->lock);
	for (int i = 0; i < fc->nevents; i++)
		n += strncmp(fc->events[i], prefix, strlen(prefix)) == 0;
	pthread_mutex_unlock(&fc->lock);
	return n;
}

void fc_dump(struct fake_ctrlr *fc)
{
	pthread_mutex_lock(&fc->lock);
	for (int i = 0; i < fc->nevents; i++)
		fprintf(stderr, "    %2d %s\n", i, fc->events[i]);
	pthread_mutex_unlock(&fc->lock);
}

struct conn {
	struct fake_ctrlr *fc;
	struct fake_conn fk;
	uint16_t qid;
	uint8_t *buf;
	void *auth; /* fc->auth's state for this connection */
};

static void put_str(char *dst, size_t len, const char *s)
{
	memset(dst, ' ', len);
	memcpy(dst, s, strlen(s) < len ? strlen(s) : len);
}

static void identify(struct conn *c, const struct nvme_cmd *sqe, uint8_t *out)
{
	struct fake_ctrlr *fc = c->fc;
	uint8_t cns = (uint8_t)get_le32(&sqe->cdw10);
	uint32_t nsid = get_le32(&sqe->nsid);
	bool disc = strcmp(fc->subnqn, NVME_DISCOVERY_NQN) == 0;

	memset(out, 0, 4096);
	ev(fc, "identify cns %u nsid %u", cns, nsid);
	if (cns == NVME_ID_CNS_CTRL) {
		struct nvme_id_ctrl *id = (void *)out;

		put_str(id->sn, sizeof(id->sn), "FAKE0001");
		put_str(id->mn, sizeof(id->mn), "fake controller");
		put_str(id->fr, sizeof(id->fr), "1.0");
		id->mdts = fc->mdts;
		put_le16(&id->cntlid, 1);
		put_le32(&id->ver, NVME_VS(1, 3, 0));
		id->cntrltype = disc ? NVME_CTRL_CNTRLTYPE_DISCOVERY : NVME_CTRL_CNTRLTYPE_IO;
		put_le16(&id->kas, 10);
		put_le16(&id->maxcmd, 128);
		put_le32(&id->nn, 8);
		put_le16(&id->oncs, NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WRITE_ZEROES);
		id->vwc = NVME_CTRL_VWC_PRESENT;
		put_le32(&id->sgls, NVME_CTRL_SGLS_SUPPORTED);
		snprintf(id->subnqn, sizeof(id->subnqn), "%s", fc->subnqn);
		put_le32(&id->ioccsz, fc->ioccsz);
		put_le32(&id->iorcsz, 1);
		id->msdbd = 1;
		put_le16(&id->ofcs, fc->no_disconnect ? 0 : 1);
	} else if (cns == NVME_ID_CNS_NS_ACTIVE_LIST) {
		if (nsid < 1)
			put_le32(out, 1);
		if (nsid < 3)
			put_le32(out + (nsid < 1 ? 4 : 0), 3);
	} else if (cns == NVME_ID_CNS_NS && (nsid == 1 || nsid == 3)) {
		struct nvme_id_ns *id = (void *)out;
		uint64_t blocks = nsid == 1 ? FC_NS_BLOCKS1 : FC_NS_BLOCKS3;

		put_le64(&id->nsze, blocks);
		put_le64(&id->ncap, blocks);
		put_le64(&id->nuse, blocks);
		id->lbaf[0].lbads = nsid == 1 ? 9 : 12;
		if (nsid == 3)
			memset(id->nguid, 0x33, 16);
	} else if (cns == NVME_ID_CNS_NS_DESC_LIST && nsid == 1) {
		struct nvme_ns_id_desc *d = (void *)out;

		d->nidt = NVME_NIDT_UUID;
		d->nidl = 16;
		memset(out + 4, 0x11, 16);
	}
}

static void disc_log(struct conn *c, const struct nvme_cmd *sqe, uint8_t *out, uint32_t len)
{
	struct fake_ctrlr *fc = c->fc;
	uint64_t off = (uint64_t)get_le32(&sqe->cdw13) << 32 | get_le32(&sqe->cdw12);
	size_t total = 1024 + (size_t)fc->disc_records * 1024;
	uint8_t *log = calloc(1, total);
	struct nvmf_disc_log_hdr *h = (void *)log;

	pthread_mutex_lock(&fc->lock);
	fc->disc_reads++;
	if (fc->disc_bump_once && fc->disc_reads == fc->disc_bump_once)
		fc->genctr++;
	put_le64(&h->genctr, fc->genctr);
	pthread_mutex_unlock(&fc->lock);
	put_le64(&h->numrec, (uint64_t)fc->disc_records);
	for (int i = 0; i < fc->disc_records; i++) {
		struct nvmf_disc_log_entry *e = (void *)(log + 1024 + (size_t)i * 1024);

		e->trtype = NVMF_TRTYPE_TCP;
		e->adrfam = NVMF_ADRFAM_IPV4;
		e->subtype = i == 0 ? NVMF_SUBTYPE_DISCOVERY_CURRENT : NVMF_SUBTYPE_NVME;
		e->treq = NVMF_TREQ_SECURE_NOT_SPECIFIED | NVMF_TREQ_DISABLE_SQFLOW;
		put_le16(&e->portid, (uint16_t)(i + 1));
		put_le16(&e->cntlid, 0xffff);
		put_le16(&e->asqsz, 32);
		put_str(e->trsvcid, sizeof(e->trsvcid), "4420");
		put_str(e->traddr, sizeof(e->traddr), "127.0.0.1");
		snprintf(e->subnqn, sizeof(e->subnqn), "nqn.2026-11.io.nvmeof:disc%d", i);
	}
	memset(out, 0, len);
	if (off < total)
		memcpy(out, log + off, total - off < len ? total - off : len);
	ev(fc, "get log 0x%x off %llu len %u", get_le32(&sqe->cdw10) & 0xff,
	   (unsigned long long)off, len);
	free(log);
}

/* The data of a host-to-controller command: in-capsule, or fetched with one R2T. */
static int h2c_data(struct conn *c, const uint8_t *pdu, const struct nvme_cmd *sqe,
		    uint8_t *out, uint32_t len)
{
	uint32_t got = 0, dl;
	const uint8_t *d = fk_pdu_data(&c->fk, pdu, &dl);

	if (dl) {
		if (!d || dl != len)
			return -1;
		memcpy(out, d, len);
		return 0;
	}
	fk_send_r2t(&c->fk, get_le16(&sqe->cid), 1, 0, len);
	while (got < len) {
		const struct nvme_tcp_data_hdr *h = (void *)c->buf;

		if (fk_recv_pdu(&c->fk, c->buf, PDU_MAX) < 0 ||
		    h->ch.pdu_type != NVME_TCP_PDU_H2C_DATA)
			return -1;
		d = fk_pdu_data(&c->fk, c->buf, &dl);
		if (!d || get_le32(&h->datao) != got || got + dl > len)
			return -1;
		memcpy(out + got, d, dl);
		got += dl;
	}
	return 0;
}

static uint16_t sc(uint8_t sct, uint8_t code)
{
	return NVME_STATUS(sct, code);
}

static void handle(struct conn *c, const uint8_t *pdu, const struct nvme_cmd *sqe)
{
	struct fake_ctrlr *fc = c->fc;
	uint16_t cid = get_le16(&sqe->cid), st = 0;
	uint32_t dw0 = 0, dw1 = 0, len = get_le32(sqe->dptr.sgl1.length);
	static __thread uint8_t data[PDU_MAX] __attribute__((aligned(8)));
	bool silent;

	pthread_mutex_lock(&fc->lock);
	silent = fc->silent;
	pthread_mutex_unlock(&fc->lock);
	if (silent) {
		ev(fc, "silent opcode 0x%x", sqe->opc);
		return;
	}
	if (sqe->opc == NVME_OPC_WRITE && c->qid != 0) {
		bool drop;

		pthread_mutex_lock(&fc->lock);
		drop = fc->drop_at_write && fc->writes + 1 == fc->drop_at_write;
		if (drop)
			fc->drop_at_write = 0;
		pthread_mutex_unlock(&fc->lock);
		if (drop) {
			ev(fc, "drop at write");
			fc_drop_all(fc);
			return;
		}
	}
	if (fc->auth && !fc->auth_optional && c->auth && !fc->auth->authenticated(c->auth) &&
	    !(sqe->opc == NVME_ADMIN_FABRICS &&
	      (((const struct nvmf_cmd *)sqe)->fctype == NVMF_FCTYPE_AUTH_SEND ||
	       ((const struct nvmf_cmd *)sqe)->fctype == NVMF_FCTYPE_AUTH_RECV ||
	       ((const struct nvmf_cmd *)sqe)->fctype == NVMF_FCTYPE_CONNECT))) {
		ev(fc, "auth required qid %u opcode 0x%x", c->qid, sqe->opc);
		fk_send_resp(&c->fk, cid, sc(1, 0x91) | NVME_STATUS_DNR, 0, 0);
		return;
	}
	if (sqe->opc == NVME_ADMIN_FABRICS && fc->auth &&
	    (((const struct nvmf_cmd *)sqe)->fctype == NVMF_FCTYPE_AUTH_SEND ||
	     ((const struct nvmf_cmd *)sqe)->fctype == NVMF_FCTYPE_AUTH_RECV)) {
		const uint8_t *a = (const uint8_t *)sqe;
		bool send = a[4] == NVMF_FCTYPE_AUTH_SEND;
		uint32_t al = get_le32(a + 44);
		bool was;
		int n;

		/* SECP E9h, SPSP0 01h, SPSP1 01h, TL/AL the data length, reserved zero. */
		if (a[41] != 1 || a[42] != 1 || a[43] != 0xe9 || a[40] || al != len || !al ||
		    al > PDU_MAX) {
			ev(fc, "auth error: %s qid %u secp 0x%x spsp %u/%u len %u sgl %u",
			   send ? "send" : "recv", c->qid, a[43], a[41], a[42], al, len);
			fk_send_resp(&c->fk, cid, sc(0, NVME_SC_INVALID_FIELD), 0, 0);
			return;
		}
		if (!c->auth)
			c->auth = fc->auth->start(fc->auth_arg, c->qid);
		was = fc->auth->authenticated(c->auth);
		if (send) {
			if (h2c_data(c, pdu, sqe, data, len)) {
				fk_send_resp(&c->fk, cid, sc(0, NVME_SC_DATA_TRANSFER_ERROR), 0, 0);
				return;
			}
			ev(fc, "auth send qid %u type %u id 0x%x len %u", c->qid, data[0], data[1],
			   len);
			fc->auth->send(c->auth, data, len);
			if (!was && fc->auth->authenticated(c->auth))
				ev(fc, "auth ok qid %u", c->qid);
			fk_send_resp(&c->fk, cid, 0, 0, 0);
			return;
		}
		n = fc->auth->recv(c->auth, data, al);
		if (n < 0) {
			ev(fc, "auth stall qid %u", c->qid);
			return;
		}
		ev(fc, "auth recv qid %u type %u id 0x%x len %d", c->qid, data[0], data[1], n);
		if (!was && fc->auth->authenticated(c->auth))
			ev(fc, "auth ok qid %u", c->qid);
		fk_send_c2h(&c->fk, cid, 0, data, al, NVME_TCP_F_DATA_LAST);
		fk_send_resp(&c->fk, cid, 0, 0, 0);
		return;
	}
	if (sqe->opc == NVME_ADMIN_FABRICS) {
		const struct nvmf_cmd *f = (const void *)sqe;

		if (f->fctype == NVMF_FCTYPE_CONNECT) {
			const struct nvmf_connect_cmd *cc = (const void *)sqe;
			const struct nvmf_connect_data *cd = (const void *)data;
			char hostid[40];

			if (h2c_data(c, pdu, sqe, data, len) || len != 1024) {
				ev(fc, "connect: bad data");
				fk_send_resp(&c->fk, cid, sc(0, NVME_SC_INVALID_FIELD), 0, 0);
				return;
			}
			c->qid = get_le16(&cc->qid);
			for (int i = 0; i < 4; i++)
				sprintf(hostid + 2 * i, "%02x", cd->hostid[i]);
			ev(fc, "connect qid %u sqsize %u kato %u cntlid 0x%x host %s hostid %s sub %s",
			   c->qid, get_le16(&cc->sqsize), get_le32(&cc->kato), get_le16(&cd->cntlid),
			   cd->hostnqn, hostid, cd->subnqn);
			pthread_mutex_lock(&fc->lock);
			if (c->qid == 0 && fc->refuse_connects > 0) {
				fc->refuse_connects--;
				pthread_mutex_unlock(&fc->lock);
				ev(fc, "connect refused");
				fk_send_resp(&c->fk, cid, sc(1, NVME_SC_CONNECT_INVALID_PARAMETERS),
					     1u << 16 | offsetof(struct nvmf_connect_data, hostnqn),
					     0);
				return;
			}
			if (c->qid == 0 && fc->refuse_host) {
				pthread_mutex_unlock(&fc->lock);
				ev(fc, "connect refused: host");
				fk_send_resp(&c->fk, cid,
					     sc(1, NVME_SC_CONNECT_INVALID_HOST) | NVME_STATUS_DNR,
					     0, 0);
				return;
			}
			pthread_mutex_unlock(&fc->lock);
			if (strcmp(cd->subnqn, fc->subnqn) != 0) {
				st = sc(1, NVME_SC_CONNECT_INVALID_PARAMETERS) | NVME_STATUS_DNR;
				dw0 = 1u << 16 | offsetof(struct nvmf_connect_data, subnqn);
			} else {
				dw0 = 1;
				if (fc->auth) {
					if (c->auth)
						fc->auth->end(c->auth);
					c->auth = fc->auth->start(fc->auth_arg, c->qid);
					if (!fc->auth_optional)
						dw0 |= 1u << 17; /* AUTHREQ.ATR */
					if (fc->auth_ascr)
						dw0 |= 1u << 18; /* AUTHREQ.ASCR */
				}
			}
		} else if (f->fctype == NVMF_FCTYPE_PROPERTY_GET) {
			const struct nvmf_property_cmd *p = (const void *)sqe;
			uint32_t off = get_le32(&p->offset);
			uint64_t v = 0;

			switch (off) {
			case NVME_REG_CAP:
				v = fc->mqes | 1ull << 16 | 1ull << NVME_CAP_TO_SHIFT | NVME_CAP_CSS_NVM;
				break;
			case NVME_REG_VS:
				v = NVME_VS(1, 3, 0);
				break;
			case NVME_REG_CC:
				v = fc->cc;
				break;
			case NVME_REG_CSTS:
				v = (fc->cc & NVME_CC_EN) && !fc->never_ready ? NVME_CSTS_RDY : 0;
				if ((fc->cc & NVME_CC_SHN_MASK) >> NVME_CC_SHN_SHIFT)
					v |= NVME_CSTS_SHST_COMPLETE << NVME_CSTS_SHST_SHIFT;
				break;
			}
			ev(fc, "prop get 0x%x size %u", off, p->attrib ? 8 : 4);
			dw0 = (uint32_t)v;
			dw1 = (uint32_t)(v >> 32);
		} else if (f->fctype == NVMF_FCTYPE_PROPERTY_SET) {
			const struct nvmf_property_cmd *p = (const void *)sqe;

			ev(fc, "prop set 0x%x = 0x%x", get_le32(&p->offset), (uint32_t)get_le64(&p->value));
			if (get_le32(&p->offset) == NVME_REG_CC)
				fc->cc = (uint32_t)get_le64(&p->value);
		} else if (f->fctype == NVMF_FCTYPE_DISCONNECT) {
			ev(fc, "disconnect qid %u", c->qid);
		} else {
			st = sc(0, NVME_SC_INVALID_OPCODE);
		}
		fk_send_resp(&c->fk, cid, st, dw0, dw1);
		return;
	}
	if (c->qid == 0) {
		switch (sqe->opc) {
		case NVME_ADMIN_IDENTIFY:
			identify(c, sqe, data);
			fk_send_c2h(&c->fk, cid, 0, data, 4096, NVME_TCP_F_DATA_LAST);
			break;
		case NVME_ADMIN_GET_LOG_PAGE:
			disc_log(c, sqe, data, len);
			fk_send_c2h(&c->fk, cid, 0, data, len, NVME_TCP_F_DATA_LAST);
			break;
		case NVME_ADMIN_SET_FEATURES: {
			uint32_t want = (get_le32(&sqe->cdw11) & 0xffff) + 1;
			uint32_t n = want < fc->max_queues ? want : fc->max_queues;

			ev(fc, "set features 0x%x", get_le32(&sqe->cdw10) & 0xff);
			dw0 = (n - 1) | (n - 1) << 16;
			break;
		}
		case NVME_ADMIN_KEEP_ALIVE:
			pthread_mutex_lock(&fc->lock);
			fc->keep_alives++;
			pthread_mutex_unlock(&fc->lock);
			break;
		default:
			ev(fc, "admin opcode 0x%x", sqe->opc);
			st = sc(0, NVME_SC_INVALID_OPCODE);
		}
		fk_send_resp(&c->fk, cid, st, dw0, dw1);
		return;
	}
	{
		uint32_t nsid = get_le32(&sqe->nsid);
		uint64_t lba = (uint64_t)get_le32(&sqe->cdw11) << 32 | get_le32(&sqe->cdw10);
		uint32_t nlb = (get_le32(&sqe->cdw12) & 0xffff) + 1;
		uint32_t shift = nsid == 3 ? 12 : 9;
		uint64_t blocks = nsid == 3 ? FC_NS_BLOCKS3 : FC_NS_BLOCKS1;
		uint8_t *ram = nsid == 3 ? fc->ns3 : fc->ns1;

		if (sqe->opc == NVME_OPC_FLUSH) {
			ev(fc, "flush nsid %u", nsid);
		} else if (sqe->opc != NVME_OPC_READ && sqe->opc != NVME_OPC_WRITE) {
			st = sc(0, NVME_SC_INVALID_OPCODE);
		} else if (lba + nlb > blocks) {
			st = sc(0, NVME_SC_LBA_OUT_OF_RANGE) | NVME_STATUS_DNR;
		} else if (len != nlb << shift) {
			st = sc(0, NVME_SC_DATA_SGL_LENGTH_INVALID);
		} else if (sqe->opc == NVME_OPC_WRITE) {
			if (h2c_data(c, pdu, sqe, ram + (lba << shift), len))
				st = sc(0, NVME_SC_DATA_TRANSFER_ERROR);
			pthread_mutex_lock(&fc->lock);
			fc->writes++;
			pthread_mutex_unlock(&fc->lock);
		} else {
			fk_send_c2h(&c->fk, cid, 0, ram + (lba << shift), len, NVME_TCP_F_DATA_LAST);
			pthread_mutex_lock(&fc->lock);
			fc->reads++;
			pthread_mutex_unlock(&fc->lock);
		}
		fk_send_resp(&c->fk, cid, st, 0, 0);
	}
}

static void *conn_main(void *p)
{
	struct conn *c = p;

	c->buf = malloc(PDU_MAX);
	if (fk_handshake(&c->fk, 8192, -1) >= 0) {
		for (;;) {
			const struct nvme_tcp_cmd *cmd = (void *)c->buf;
			struct nvme_cmd sqe;
			uint8_t *pdu;
			int n = fk_recv_pdu(&c->fk, c->buf, PDU_MAX);

			if (n < 0 || cmd->ch.pdu_type != NVME_TCP_PDU_CAPSULE_CMD)
				break;
			sqe = cmd->sqe;
			pdu = malloc((size_t)n);
			memcpy(pdu, c->buf, (size_t)n);
			handle(c, pdu, &sqe);
			free(pdu);
		}
	}
	if (c->auth)
		c->fc->auth->end(c->auth);
	free(c->buf);
	free(c);
	return NULL;
}

static void *accept_main(void *p)
{
	struct fake_ctrlr *fc = p;

	while (!fc->stop) {
		struct pollfd pfd = { .fd = fc->lfd, .events = POLLIN };
		struct conn *c;
		int fd;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		fd = accept(fc->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		c = calloc(1, sizeof(*c));
		c->fc = fc;
		c->fk.fd = fd;
		pthread_mutex_lock(&fc->lock);
		if (fc->nconns < 32) {
			fc->conn_fds[fc->nconns] = fd;
			pthread_create(&fc->conns[fc->nconns++], NULL, conn_main, c);
		} else {
			close(fd);
			free(c);
		}
		pthread_mutex_unlock(&fc->lock);
	}
	return NULL;
}

int fc_start(struct fake_ctrlr *fc)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	if (!fc->subnqn)
		fc->subnqn = "nqn.2026-11.io.nvmeof:fake";
	if (!fc->mqes)
		fc->mqes = 127;
	if (!fc->ioccsz)
		fc->ioccsz = (8192 + 64) / 16;
	if (!fc->max_queues)
		fc->max_queues = 4;
	fc->genctr = 5;
	pthread_mutex_init(&fc->lock, NULL);
	fc->ns1 = calloc(FC_NS_BLOCKS1, 512);
	fc->ns3 = calloc(FC_NS_BLOCKS3, 4096);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fc->lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (fc->lfd < 0 || bind(fc->lfd, (void *)&sa, sizeof(sa)) || listen(fc->lfd, 16) ||
	    getsockname(fc->lfd, (void *)&sa, &len))
		return -errno;
	fc->port = ntohs(sa.sin_port);
	pthread_create(&fc->acceptor, NULL, accept_main, fc);
	return 0;
}

void fc_drop_all(struct fake_ctrlr *fc)
{
	pthread_mutex_lock(&fc->lock);
	for (int i = 0; i < fc->nconns; i++)
		shutdown(fc->conn_fds[i], SHUT_RDWR);
	pthread_mutex_unlock(&fc->lock);
}

void fc_stop(struct fake_ctrlr *fc)
{
	fc->stop = true;
	pthread_join(fc->acceptor, NULL);
	close(fc->lfd);
	for (int i = 0; i < fc->nconns; i++) {
		shutdown(fc->conn_fds[i], SHUT_RDWR);
		pthread_join(fc->conns[i], NULL);
		close(fc->conn_fds[i]);
	}
	free(fc->ns1);
	free(fc->ns3);
	pthread_mutex_destroy(&fc->lock);
}

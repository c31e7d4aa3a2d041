/* SPDX-License-Identifier: MIT */
#include "fake_target.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"

int fk_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (uint8_t *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int fk_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const uint8_t *)buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

int fk_recv_pdu(struct fake_conn *c, uint8_t *buf, size_t cap)
{
	struct nvme_tcp_common_hdr *ch = (void *)buf;
	uint32_t plen;

	if (fk_read_full(c->fd, buf, sizeof(*ch)))
		return -1;
	plen = get_le32(&ch->plen);
	if (plen < sizeof(*ch) || plen > cap)
		return -1;
	if (fk_read_full(c->fd, buf + sizeof(*ch), plen - sizeof(*ch)))
		return -1;
	return (int)plen;
}

int fk_handshake(struct fake_conn *c, uint32_t maxh2cdata, int force_dgst)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct nvme_tcp_icreq *ic = (void *)buf;
	int dgst;

	if (fk_recv_pdu(c, buf, sizeof(buf)) != (int)sizeof(*ic) ||
	    ic->ch.pdu_type != NVME_TCP_PDU_ICREQ)
		return -1;
	dgst = ic->dgst;
	if (force_dgst >= 0)
		ic->dgst = (uint8_t)force_dgst;
	memset(&c->p, 0, sizeof(c->p));
	c->p.hdgst = ic->dgst & NVME_TCP_DGST_HDR;
	c->p.ddgst = ic->dgst & NVME_TCP_DGST_DATA;
	c->p.maxh2cdata = maxh2cdata;
	c->p.max_icdata = 1u << 20;
	nvme_tcp_build_icresp(buf, c->p.hdgst, c->p.ddgst, 0, maxh2cdata);
	if (fk_write_full(c->fd, buf, sizeof(struct nvme_tcp_icresp)))
		return -1;
	return dgst;
}

const uint8_t *fk_pdu_data(struct fake_conn *c, const uint8_t *pdu, uint32_t *len)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)pdu;

	*len = nvme_tcp_data_len(ch, c->p.ddgst);
	if (!*len)
		return pdu + get_le32(&ch->plen);
	if (c->p.ddgst && get_le32(pdu + ch->pdo + *len) != crc32c(pdu + ch->pdo, *len))
		return NULL;
	return pdu + ch->pdo;
}

void fk_send_resp(struct fake_conn *c, uint16_t cid, uint16_t status, uint32_t dw0,
		  uint32_t dw1)
{
	struct nvme_cpl cqe = { 0 };
	uint8_t buf[NVME_TCP_PSH_MAX] __attribute__((aligned(8)));
	size_t n;

	put_le32(&cqe.dw0, dw0);
	put_le32(&cqe.dw1, dw1);
	put_le16(&cqe.cid, cid);
	put_le16(&cqe.status, status);
	n = nvme_tcp_build_capsule_resp(buf, &cqe, c->p.hdgst);
	fk_write_full(c->fd, buf, n);
}

void fk_send_c2h(struct fake_conn *c, uint16_t cid, uint32_t off, const void *data,
		 uint32_t len, uint8_t flags)
{
	uint8_t hdr[NVME_TCP_PSH_MAX] __attribute__((aligned(8))), dg[4];
	size_t n = nvme_tcp_build_data(hdr, NVME_TCP_PDU_C2H_DATA, cid, 0, off, len, flags, &c->p);

	fk_write_full(c->fd, hdr, n);
	fk_write_full(c->fd, data, len);
	if (c->p.ddgst) {
		put_le32(dg, crc32c(data, len));
		fk_write_full(c->fd, dg, 4);
	}
}

void fk_send_r2t(struct fake_conn *c, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	uint8_t hdr[NVME_TCP_PSH_MAX] __attribute__((aligned(8)));
	size_t n = nvme_tcp_build_r2t(hdr, cid, ttag, off, len, c->p.hdgst);

	fk_write_full(c->fd, hdr, n);
}

void fk_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_create(t, NULL, fn, arg);
}

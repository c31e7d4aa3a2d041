/* SPDX-License-Identifier: MIT */
/*
 * A scripted NVMe/TCP controller for the initiator's unit tests: the test's thread plays
 * the controller on one end of a socketpair (or an accepted 127.0.0.1 connection) using
 * the shared PDU codec, so every byte the host sends can be checked and any malformed
 * reply can be produced.
 */
#ifndef NVMEOF_TESTS_FAKE_TARGET_H
#define NVMEOF_TESTS_FAKE_TARGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_tcp_pdu.h"

struct fake_conn {
	int fd;
	struct nvme_tcp_params p; /* what the fake negotiated */
};

int fk_read_full(int fd, void *buf, size_t len);
int fk_write_full(int fd, const void *buf, size_t len);
/* One whole PDU (PLEN bytes) into @buf; returns PLEN, or -1 on EOF/error/too long. */
int fk_recv_pdu(struct fake_conn *c, uint8_t *buf, size_t cap);
/* Answer the host's ICReq: digests as the host asked (unless @force_dgst >= 0), CPDA 0.
 * Returns the ICReq's DGST byte or -1. */
int fk_handshake(struct fake_conn *c, uint32_t maxh2cdata, int force_dgst);

/* The data of a CapsuleCmd or H2CData PDU in @pdu (after PDO), length in *@len; checks
 * the data digest when in force (returns NULL if wrong). */
const uint8_t *fk_pdu_data(struct fake_conn *c, const uint8_t *pdu, uint32_t *len);

void fk_send_resp(struct fake_conn *c, uint16_t cid, uint16_t status, uint32_t dw0,
		  uint32_t dw1);
void fk_send_c2h(struct fake_conn *c, uint16_t cid, uint32_t off, const void *data,
		 uint32_t len, uint8_t flags);
void fk_send_r2t(struct fake_conn *c, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len);

/* Run @fn(@arg) on a thread. */
void fk_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif

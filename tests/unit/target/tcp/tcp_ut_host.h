/* SPDX-License-Identifier: MIT */
/*
 * Harness of the NVMe/TCP transport unit tests: a real connection on a real reactor over a
 * socketpair, the core replaced at its seam by a small fake (writes land in a 1 MiB array
 * at byte offset CDW10, reads come from it, Connect marks the queue connected, a vendor
 * opcode parks the command until release_held()), and this side of the socket acting as
 * the host with the common PDU codec.
 */
#ifndef NVMEOF_TESTS_TCP_UT_HOST_H
#define NVMEOF_TESTS_TCP_UT_HOST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_tcp_pdu.h"
#include "common/tls_psk.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"

#define OPC_HOLD  0xc0 /* vendor: parked until release_held() */
#define DISK_SIZE (1 << 20)
#define MAX_IO    (128 * 1024)

/* The fake core's state (the reactor thread writes, tests read after a round trip). */
extern uint8_t disk[DISK_SIZE];
extern struct nvmf_tgt tgt;
extern struct nvmf_port port;
extern struct reactor *R;
extern atomic_int n_exec, n_fini, n_disconnected;
/* Reads on a queue that takes mapped data (no data digest) complete with req->iov pointing
 * into disk (when ut_map_reads); nvmf_req_release_data() calls counted. */
extern bool ut_map_reads;
extern atomic_int n_mapped, n_released;
extern struct nvmf_req *held[64];
extern int nheld;
extern struct nvmf_qpair *last_qp; /* the connection nvmf_qpair_init() saw last */
extern int g_small_bufs;           /* next host_open(): tiny socket buffers (partial writes) */
extern char ut_psk_host[];         /* the host nvmf_tgt_get_host_psk() knows, and its key */
extern struct nvme_tls_key ut_psk;

struct host {
	int fd;
	struct nvme_tcp_params p;
	uint16_t cid;
	uint32_t maxh2cdata;
};

void release_held(void);
int wait_fini(int before);
void host_open(struct host *h);
void host_send(struct host *h, const void *buf, size_t len);
int host_recv(struct host *h, uint8_t *buf, size_t max);
bool host_eof(struct host *h);
void host_ic(struct host *h, bool hdgst, bool ddgst, uint8_t hpda);
void make_cmd(struct nvme_cmd *c, uint8_t opc, uint16_t cid, uint32_t cdw10, uint32_t len,
	      bool icdata);
void send_capsule(struct host *h, const struct nvme_cmd *c, const void *data, uint32_t len);
void host_connect(struct host *h, uint16_t qid, uint16_t sqsize, bool no_sqflow);
void check_hdgst(struct host *h, const uint8_t *pdu);
int expect_rsp(struct host *h, uint16_t cid);
void expect_term(struct host *h, uint16_t fes, uint32_t fei, const void *bad, size_t badlen);
void fill(uint8_t *b, size_t n, unsigned int seed);
void write_r2t(struct host *h, uint16_t cid, uint32_t off, const uint8_t *data, uint32_t len,
	       int chunks);
int read_cmd(struct host *h, uint16_t cid, uint32_t off, uint8_t *out, uint32_t len,
	     bool expect_success_flag);

/* CUnit suite init/fini: the target options, one reactor. */
int tcp_ut_suite_init(void);
int tcp_ut_suite_fini(void);

#endif

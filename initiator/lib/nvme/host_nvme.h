/* SPDX-License-Identifier: MIT */
/*
 * libnvmeof's NVMe room as the controller sees it: the NVMe/TCP and NVMe/RDMA transports,
 * the Fabrics commands that bring a queue pair up, and the TLS key of a controller.
 * DH-HMAC-CHAP has its own header (host_auth.h).
 */
#ifndef NVMEOF_INITIATOR_NVME_HOST_NVME_H
#define NVMEOF_INITIATOR_NVME_HOST_NVME_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/host_transport.h"

extern const struct nvmeof_transport_ops host_tcp_transport_ops;
extern const struct nvmeof_transport_ops rdma_transport_ops; /* host_rdma.c, with HAVE_RDMA */

/* NVMe/TCP over an already connected stream socket (tests use a socketpair): takes
 * ownership of @fd and runs ICReq/ICResp. */
int host_tcp_qpair_connect_fd(struct nvmeof_qpair *qp, int fd, int timeout_ms);

/* Fabrics commands (host_fabrics.c) */
int fabrics_connect(struct nvmeof_qpair *qp, uint16_t sqsize, uint32_t kato, uint16_t cntlid,
		    uint16_t *cntlid_out);
int fabrics_prop_get(struct nvmeof_qpair *qp, uint32_t offset, bool eight, uint64_t *value);
int fabrics_prop_set(struct nvmeof_qpair *qp, uint32_t offset, bool eight, uint64_t value);
int fabrics_disconnect(struct nvmeof_qpair *qp);

/* NVMe/TCP over TLS (host_tls.c): the controller's PSK from opts.tls_key, checked and
 * copied at connect (opts.tls_key is not kept); freed (wiped) with the controller. */
struct host_tls_key;
int host_tls_ctrlr_init(struct nvmeof_ctrlr *ctrlr);
void host_tls_key_free(struct host_tls_key *key);

#endif

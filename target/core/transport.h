/* SPDX-License-Identifier: MIT */
/*
 * The seam between fabric transports (tcp, rdma, ...) and the NVMe controller code.
 * A transport embeds struct nvmf_qpair in its own queue pair and struct nvmf_req in its
 * own request, and recovers itself with container_of(). The controller code never
 * touches sockets or verbs.
 */
#ifndef NVMEOF_TARGET_TRANSPORT_H
#define NVMEOF_TARGET_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_spec.h"

struct nvmf_tgt;
struct nvmf_port;
struct nvmf_qpair;
struct nvmf_req;

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#endif

struct nvmf_transport_ops {
	const char *name;	/* "tcp", "rdma": the listener URI scheme */
	uint8_t trtype;		/* NVMF_TRTYPE_* for the discovery log */

	/* Start/stop listening on @port (main thread). Returns 0 or -errno. */
	int (*listen)(struct nvmf_tgt *tgt, struct nvmf_port *port);
	void (*stop_listen)(struct nvmf_port *port);

	/*
	 * The controller code finished @req (status in req->rsp): send its data (for reads)
	 * and its response, then recycle it. Runs on the queue pair's reactor.
	 */
	void (*req_complete)(struct nvmf_req *req);

	/*
	 * Tear the connection down (KATO expiry, controller reset, target shutdown). Runs on
	 * the queue pair's reactor. The transport later calls nvmf_qpair_fini() once no
	 * request is outstanding.
	 */
	void (*qpair_disconnect)(struct nvmf_qpair *qp);

	/*
	 * Optional. Abort the command with @cid of @qp if the transport still holds it back
	 * (waiting for a buffer, or for the host's data): complete it with Command Abort
	 * Requested through the core and return true. Runs on the queue pair's reactor.
	 */
	bool (*req_abort)(struct nvmf_qpair *qp, uint16_t cid);

	/* Fill the transport-specific parts (tsas, treq bits) of a discovery log entry. */
	void (*disc_entry)(const struct nvmf_port *port, struct nvmf_disc_log_entry *e);

	/* Optional. Extra Identify Controller SGLS bits (NVME_CTRL_SGLS_KEYED for RDMA). */
	uint32_t sgls;
	/* Optional. Keyed SGL descriptors a command may carry (Identify MSDBD); 0 means 1. */
	uint8_t msdbd;

	/*
	 * Optional. The local address @qp was accepted on, for a discovery log entry of a
	 * port listening on a wildcard address (0.0.0.0, ::). Writes a NUL-terminated string.
	 */
	void (*local_traddr)(const struct nvmf_qpair *qp, char *buf, size_t len);

	/*
	 * Optional. Whether the connection may Connect as @hostnqn to @subnqn: a TLS queue
	 * pair admits only the host and subsystem its PSK identity named. Called under
	 * tgt->lock during Connect; false refuses the host (Connect Invalid Host).
	 */
	bool (*connect_allowed)(const struct nvmf_qpair *qp, const char *hostnqn,
				const char *subnqn);
};

/*
 * Transports register themselves here; main and nvmf_port_create() look them up by URI
 * scheme / trtype name (transport.c). Each transport is registered once at start-up
 * (the daemon registers NVMe/TCP, NVMe/RDMA and iSCSI).
 */
const struct nvmf_transport_ops *nvmf_transport_find(const char *name);
int nvmf_transport_register(const struct nvmf_transport_ops *ops);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The seam between the initiator's NVMe logic (controller bring-up, request pools,
 * NVM command building) and a transport that carries commands to the controller.
 *
 * A transport embeds struct nvmeof_qpair in its own queue pair and recovers itself with
 * container_of(). It moves SQEs, data and CQEs; it never builds NVMe commands (apart
 * from the data pointer, which is transport specific) and never runs user callbacks:
 * it reports each completion through qpair_complete_cqe()/req_complete() and a fatal
 * error through qpair_fail(), and host_qpair.c runs the callbacks afterwards.
 *
 * Transports: NVMe/TCP and NVMe/RDMA (nvme/host_nvme.h). A transport that is not NVMe over
 * Fabrics underneath (SCSI commands over iSCSI, translated from the NVMe commands built
 * here: scsi/host_iscsi.h) supplies ctrlr_setup to produce the controller's identity and
 * namespaces itself.
 */
#ifndef NVMEOF_INITIATOR_TRANSPORT_H
#define NVMEOF_INITIATOR_TRANSPORT_H

#include <stdint.h>

#include "host_internal.h"

struct nvmeof_transport_ops {
	const char *name;		/* "tcp" */
	enum uri_transport uri_transport;

	/* A zeroed transport queue pair with its generic part embedded. */
	struct nvmeof_qpair *(*qpair_alloc)(void);
	/* Open the connection for @qp (pools already set up by qpair_init()) to the
	 * controller named by qp->ctrlr->uri and run the transport handshake. Blocking,
	 * bounded by @timeout_ms. 0 or -errno with set_error(). */
	int (*qpair_connect)(struct nvmeof_qpair *qp, int timeout_ms);
	/* Close the connection; idempotent. Requests are failed by host_qpair.c. */
	void (*qpair_close)(struct nvmeof_qpair *qp);
	/* Free what qpair_alloc() returned (after qpair_fini()). */
	void (*qpair_free)(struct nvmeof_qpair *qp);

	int (*get_fd)(const struct nvmeof_qpair *qp);
	short (*which_events)(const struct nvmeof_qpair *qp);
	/* Take @req (SQE built, CID set) for transmission. 0 or -errno. */
	int (*submit)(struct nvmeof_qpair *qp, struct nvmeof_req *req);
	/* Send and receive what @revents allows (POLLIN|POLLOUT: try both), non-blocking.
	 * 0, or -errno after qpair_fail(). */
	int (*progress)(struct nvmeof_qpair *qp, short revents);
	/* In-capsule data limit for commands on @qp (after Identify). */
	void (*set_icdata)(struct nvmeof_qpair *qp, uint32_t bytes);
	/* Transport facts for nvmeof_ctrlr_get_info(). */
	void (*get_info)(const struct nvmeof_qpair *qp, struct nvmeof_ctrlr_info *info);

	/* Optional: bring the controller up without the Fabrics sequence (fill cap, vs,
	 * cntlid, id, max_xfer and namespaces). NULL: Fabrics Connect, Property Get/Set
	 * enable and Identify over the admin queue. */
	int (*ctrlr_setup)(struct nvmeof_ctrlr *ctrlr);
	/* Optional: make @r (base and len set) reachable by the controller: fill r->handle
	 * and r->key. 0 or -errno with set_error(). NULL: registered memory is plain memory. */
	int (*mem_register)(struct nvmeof_ctrlr *ctrlr, struct host_mem_region *r);
	void (*mem_unregister)(struct nvmeof_ctrlr *ctrlr, struct host_mem_region *r);
	/* Optional: drop controller-wide transport state once every queue pair is freed. */
	void (*ctrlr_fini)(struct nvmeof_ctrlr *ctrlr);
};

#endif

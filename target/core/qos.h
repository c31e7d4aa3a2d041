/* SPDX-License-Identifier: MIT */
/*
 * QoS inside the core (qos.c): the dispatcher's hook, and the hooks that take waiting
 * commands back (queue pair teardown, and Abort). All on the queue's reactor.
 */
#ifndef NVMEOF_TARGET_QOS_H
#define NVMEOF_TARGET_QOS_H

#include <stdbool.h>
#include <stdint.h>

#include "nvmf.h"

/* A parsed command about to execute: true when QoS queued it (it executes later, from
 * the bucket's timer), false when it may execute now. */
bool nvmf_qos_submit(struct nvmf_req *req);
/* Take command @cid of @qp off its QoS queue (for Abort): the request, which the caller
 * completes, or NULL when no such command waits. */
struct nvmf_req *nvmf_qos_take(struct nvmf_qpair *qp, uint16_t cid);
/* Complete every command of @qp still waiting with Aborted - SQ Deletion. */
void nvmf_qos_qpair_gone(struct nvmf_qpair *qp);
/* Release what the tokens allow on the calling reactor now (the timer's work; tests). */
void nvmf_qos_poll(void);
/* FNV-1a of a host NQN (ctrlr->hostnqn_hash): the I/O path compares it before names. */
uint64_t nvmf_qos_nqn_hash(const char *nqn);
/* With the namespace (no command of it may be waiting). */
void nvmf_qos_free(struct nvmf_ns *ns);

#endif

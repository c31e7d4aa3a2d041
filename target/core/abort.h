/* SPDX-License-Identifier: MIT */
/*
 * Abort (NVM Express Base 2.0, 5.1): commands still waiting to run can be aborted (see
 * abort.c for which); commands already executing in a backend run to completion.
 */
#ifndef NVMEOF_TARGET_ABORT_H
#define NVMEOF_TARGET_ABORT_H

#include <stdbool.h>
#include <stdint.h>

struct nvmf_req;
struct nvmf_qpair;

/* The admin command's execute handler (admin reactor). */
void nvmf_abort_exec(struct nvmf_req *req);
/* On @qp's reactor: abort the command with @cid if it is still waiting; true if so. */
bool nvmf_qpair_abort_cmd(struct nvmf_qpair *qp, uint16_t cid);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Asymmetric Namespace Access. Every namespace belongs to one ANA group of its subsystem
 * (nvmf_ns.anagrpid, default 1); every port holds a state per group, as Linux nvmet and
 * the configs nvmetcli saves have it (ports[].ana_groups[]), so one group's state differs
 * per path. A group not configured on a port is optimized.
 *
 * States move through nvmf_ana_set_state() only (main thread). The rules:
 *   - any state may become any other, except that a group in Persistent Loss only leaves
 *     it through Change: hosts were told the path will not come back, so they must be
 *     told it is changing before it is usable again;
 *   - Change is transient: ANATT seconds after a group entered it, nvmf_ana_tick() moves
 *     it to its next state (the state it had before, or Inaccessible when that was
 *     Persistent Loss), so a host never waits past ANATT (Linux resets the controller at
 *     twice ANATT);
 *   - setting the state a group already has changes nothing (no change count, no event).
 * A change bumps the port's change count and sends the ANA Change notice (03h, log 0Ch)
 * to every controller connected through the port that enabled it.
 *
 * I/O commands for a namespace whose group is Inaccessible, Persistent Loss or Change on
 * the queue's port are answered, from io_dispatch(), with Asymmetric Access Inaccessible,
 * Persistent Loss or Transition (SCT 3h, without DNR so that multipath hosts fail over).
 */
#ifndef NVMEOF_TARGET_ANA_H
#define NVMEOF_TARGET_ANA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_spec.h"
#include "nvmf.h"

struct nvmf_ctrlr;

#define NVMF_ANATT_S 10 /* ANA Transition Time: seconds a group stays in Change at most */

/* "optimized", "non-optimized", "inaccessible", "persistent-loss", "change" (nvmet's
 * configfs names) <-> NVME_ANA_*. parse: 0 or -EINVAL; name: "?" for an invalid state. */
int nvmf_ana_state_parse(const char *name, uint8_t *state);
const char *nvmf_ana_state_name(uint8_t state);
bool nvmf_ana_state_valid(uint8_t state);
/* Whether a group may move @from -> @to: 0, -EINVAL (not a state) or -EPERM. */
int nvmf_ana_transition_check(uint8_t from, uint8_t to);

/* A new port: every group optimized, change count 1 (port.c). */
void nvmf_ana_port_init(struct nvmf_port *port);
/*
 * Set group @grpid (1..NVMF_ANA_MAX_GRPS) of @port to @state, at @now_ns (CLOCK_MONOTONIC;
 * the deadline of a Change counts from it). 0 (also when nothing changed), -EINVAL (group
 * or state) or -EPERM (the rules above). Main thread.
 */
int nvmf_ana_set_state(struct nvmf_port *port, uint32_t grpid, uint8_t state, uint64_t now_ns);
uint8_t nvmf_ana_get_state(const struct nvmf_port *port, uint32_t grpid);
/* Move the groups whose Change is over to their next state (main thread, about once a
 * second). Returns how many groups moved. */
unsigned int nvmf_ana_tick(struct nvmf_tgt *tgt, uint64_t now_ns);

/* The status for an I/O command on @qp for @nsid (0 = go on): one atomic byte load. */
uint16_t nvmf_ana_io_status(struct nvmf_qpair *qp, uint32_t nsid);

/* The ANA log page (0Ch) @c sees, in a malloc'd buffer of *@len bytes; NSID lists are left
 * out when @rgo. NULL on ENOMEM. */
void *nvmf_ana_log_build(struct nvmf_ctrlr *c, bool rgo, size_t *len);
/* Identify hooks: CMIC, OAES, ANATT, ANACAP, ANAGRPMAX, NANAGRPID, MNAN; ANAGRPID. */
void nvmf_ana_id_ctrl(struct nvme_id_ctrl *id);
void nvmf_ana_id_ns(const struct nvmf_ns *ns, struct nvme_id_ns *id);

#endif

/* SPDX-License-Identifier: MIT */
/* Inside target/auth/: what the machine (dhchap_ctrl.c) reads of the settings
 * (dhchap_conf.c) and the message builders (dhchap_msg.c). */
#ifndef NVMEOF_TARGET_AUTH_INTERNAL_H
#define NVMEOF_TARGET_AUTH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dhchap_key.h"
#include "dhchap_ctrl.h"

const struct nvme_dhchap_key *dhchap_conf_key(const struct dhchap_host_conf *c, bool ctrl);
uint8_t dhchap_conf_hash(const struct dhchap_host_conf *c); /* 0: any */
int dhchap_conf_dhgroup(const struct dhchap_host_conf *c);  /* -1: any */

/* Builders: each writes the whole message and returns its length. The caller has checked
 * that @buf holds it. */
size_t dhchap_msg_challenge(uint8_t *buf, uint16_t t_id, uint8_t hash_id, uint8_t hl, uint8_t dhgid,
			    uint32_t s1, const uint8_t *c1, const uint8_t *dhv, uint16_t dhvlen);
size_t dhchap_msg_success1(uint8_t *buf, uint16_t t_id, uint8_t hl, const uint8_t *r2);
size_t dhchap_msg_failure1(uint8_t *buf, uint16_t t_id, uint8_t exp);

#endif

/* SPDX-License-Identifier: MIT */
/* Namespace identities kept in the target's state directory (ns_ident.c). */
#ifndef NVMEOF_TARGET_NS_IDENT_H
#define NVMEOF_TARGET_NS_IDENT_H

#include <stdint.h>

struct nvmf_ns_ident {
	uint8_t nguid[16];
	uint8_t uuid[16];
	uint8_t eui64[8];
};

/*
 * The identity of NSID @nsid of subsystem @nqn kept in @dir (created 0700 if missing):
 * read from its file, or generated at random and stored when there is none yet. 0 or
 * -errno (an unreadable file is an error and is left alone).
 */
int nvmf_ns_ident_get(const char *dir, const char *nqn, uint32_t nsid, struct nvmf_ns_ident *id);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Where a namespace's reservation state lives beyond the daemon's memory: the seam between
 * reservation.c and its stores.
 *
 *   - the state-directory store (resv_store_file.c): written when Persist Through Power
 *     Loss is on (Set Features 83h, Reservation Register CPTPL, SCSI APTPL), so that the
 *     registrants and the holder survive a restart (NVM Express Base 2.0, 8.19.9);
 *   - a cluster store (RBD namespaces: a RADOS object beside the image, with watch/notify),
 *     so that every gateway exporting the image enforces one reservation.
 *
 * reservation.c keeps the working copy in memory. Each change is built as a new image,
 * saved, and only then made the working copy and completed to the host, so an acknowledged
 * change is durable. A store that cannot save fails the command (the host gets an error,
 * the working copy stays as it was). A cluster store calls its changed() hook, which the
 * core set when it attached the store, when another gateway changed the state: the store
 * (a backend, below the core) never calls into the core by name.
 *
 * save() may complete inline (the file store) or later (a cluster store), always on the
 * thread that called it, through @done. It is not called again for a namespace before the
 * previous save completed (reservation.c queues).
 */
#ifndef NVMEOF_TARGET_RESV_STORE_H
#define NVMEOF_TARGET_RESV_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reservation.h"

struct nvmf_ns;

/* One namespace's reservation state, as stores keep it (host identifiers, not cntlids). */
struct nvmf_resv_image {
	uint32_t gen;       /* PRGENERATION */
	uint8_t rtype;      /* 0: no reservation */
	bool ptpl;          /* Persist Through Power Loss state */
	uint8_t holder[16]; /* host identifier of the holder (types 1-4) */
	unsigned int nregs;
	struct {
		uint8_t hostid[16];
		uint64_t key;
	} regs[NVMF_RESV_MAX_REGS];
};

struct nvmf_resv_store;

typedef void (*nvmf_resv_store_done)(void *arg, int rc);

struct nvmf_resv_store_ops {
	const char *name; /* "state-dir", "rados", ... (logs, control socket) */
	/* The stored state: 0, -ENOENT (nothing stored: start empty), or -errno. */
	int (*load)(struct nvmf_resv_store *st, struct nvmf_resv_image *img);
	/* Store @img durably, then @done(@arg, 0 or -errno). -EAGAIN from a cluster store:
	 * the stored generation moved (another gateway); the caller reloads and retries. */
	void (*save)(struct nvmf_resv_store *st, const struct nvmf_resv_image *img,
		     nvmf_resv_store_done done, void *arg);
	/* Whether the state must be saved even with PTPL off (true for cluster stores). */
	bool always;
	void (*close)(struct nvmf_resv_store *st);
};

struct nvmf_resv_store {
	const struct nvmf_resv_store_ops *ops;
	struct nvmf_ns *ns;
	/* Set by nvmf_resv_store_attach(): the stored state changed under us (another
	 * gateway), read it again. Called on the thread the store's save() runs on. */
	void (*changed)(struct nvmf_resv_store *st);
};

/* Attach @st to @ns (before the namespace takes commands) and load its state. A store
 * attached before is closed and replaced (the core attaches the state-directory store to
 * every namespace when there is a state directory; a backend's cluster store may take its
 * place). A state loaded with ptpl false is dropped unless ops->always. Returns 0 (also
 * when nothing was stored) or load()'s -errno: the namespace then starts with no
 * reservation, and the store has logged why (load() names what it could not read). */
int nvmf_resv_store_attach(struct nvmf_ns *ns, struct nvmf_resv_store *st);
/* Re-read the state from the namespace's store (what a store's changed() hook does). */
int nvmf_resv_reload(struct nvmf_ns *ns);

/*
 * The state-directory store (resv_store_file.c): DIR/resv-NGUID.state (the namespace's
 * UUID when it has no NGUID), for subsystem @nqn namespace @ns (its identifiers derived).
 * NULL with @err set when @dir is unusable.
 */
struct nvmf_resv_store *nvmf_resv_store_file_open(const char *dir, const char *nqn,
						  const struct nvmf_ns *ns, char *err,
						  size_t errlen);

#endif

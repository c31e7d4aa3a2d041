/* SPDX-License-Identifier: MIT */
/*
 * Fakes at the target core's seams for its unit tests: a transport that records
 * completions and disconnects, reactors whose messages run inline or on demand, a
 * memory-backed bdev with error injection, and helpers that build and run commands.
 */
#ifndef NVMEOF_TESTS_TARGET_FAKES_H
#define NVMEOF_TESTS_TARGET_FAKES_H

#include "config.h"

#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/ctrlr.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"

#define FAKE_HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555"
#define FAKE_HOSTNQN2 "nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555"
#define FAKE_SUBNQN "nqn.2026-11.io.nvmeof:test"
#define FAKE_DATA_MAX (256 * 1024)

/* ---- transport ---------------------------------------------------------------------- */
struct fake_qpair {
	struct nvmf_qpair qp;
	unsigned int disconnects;  /* ops->qpair_disconnect calls */
	bool auto_fini;		   /* disconnect -> nvmf_qpair_disconnected + fini */
	bool finied;
};

struct fake_req {
	struct nvmf_req req;
	unsigned int completions;
	uint8_t *data;		   /* FAKE_DATA_MAX bytes */
};

extern const struct nvmf_transport_ops fake_transport_ops;
extern unsigned int fake_listens, fake_stop_listens;

void fake_qpair_init(struct fake_qpair *fq, struct nvmf_tgt *tgt, struct nvmf_port *port,
		     struct reactor *r);
void fake_qpair_close(struct fake_qpair *fq); /* disconnected + fini unless done */

struct fake_req *fake_req_alloc(struct fake_qpair *fq);
/* Release @fr as a transport does: nvmf_req_release_data(), then free. */
void fake_req_free(struct fake_req *fr);
/* Prepare @fr with @cmd and @len bytes of data (copied from @in when not NULL); the data
 * lands in fr->data. */
void fake_req_prep(struct fake_req *fr, const struct nvme_cmd *cmd, const void *in,
		   uint32_t len);
/* Status without the phase bit (host order), and completion DW0. */
uint16_t fake_status(const struct fake_req *fr);
uint32_t fake_dw0(const struct fake_req *fr);

/* Build a command with PSDT = SGL and a fresh CID. */
void fake_cmd(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid);
/* Run a command to completion on @fq; returns the status (0xffff if it did not complete).
 * @data (may be NULL) supplies host data and receives controller data (@len bytes). */
uint16_t fake_exec(struct fake_qpair *fq, const struct nvme_cmd *cmd, void *data, uint32_t len,
		   uint32_t *dw0);

/* ---- Fabrics helpers ------------------------------------------------------------------- */
struct fake_connect {
	uint16_t recfmt, qid, sqsize, cntlid;
	uint8_t cattr;
	uint32_t kato;
	const char *subnqn, *hostnqn;
	uint8_t hostid[16];
	uint32_t length;	   /* data length, 0 = 1024 */
};
void fake_connect_defaults(struct fake_connect *c, uint16_t qid);
uint16_t fake_connect(struct fake_qpair *fq, const struct fake_connect *c, uint32_t *dw0);
uint16_t fake_prop_get(struct fake_qpair *fq, uint32_t offset, unsigned int size,
		       uint64_t *val);
uint16_t fake_prop_set(struct fake_qpair *fq, uint32_t offset, uint64_t val);

/* ---- reactors ---------------------------------------------------------------------------- */
extern struct reactor fake_reactor[2];
extern bool fake_msg_defer;	   /* queue messages until fake_msgs_run() */
extern unsigned int fake_msgs_sent;
unsigned int fake_msgs_run(void);
extern size_t fake_buf_size;
extern bool fake_buf_exhausted;

/* ---- bdev -------------------------------------------------------------------------------- */
/*
 * Specs: "ram:SIZE" (no volatile cache), "file:SIZE" (volatile cache, persistent, canonical
 * path "/fake/file:SIZE"), SIZE with K/M suffix.
 */
struct fake_bdev_ctl {
	int fail_rc;		   /* complete matching requests with this (0 = succeed) */
	int fail_op;		   /* bdev_op to fail, -1 = any */
	bool defer;		   /* keep requests pending until fake_bdev_complete() */
	struct bdev_io last;	   /* copy of the last request */
	unsigned int nsubmit[7];   /* per bdev_op */
	uint16_t nvme_status;      /* BDEV_OP_NVME: the "drive" completes with this status */
	unsigned int nopen, nclose;
	struct bdev_io *pending[64];
	unsigned int npending;
	unsigned int nlba_query; /* bdev_lba_query() calls */
	bool map_reads;          /* a READ with map_ok gets the memory itself, as ram does */
};
extern struct fake_bdev_ctl fake_bdev;
void fake_bdev_reset(void);
/* Complete every pending request; returns how many. */
unsigned int fake_bdev_complete(void);
uint8_t *fake_bdev_mem(struct bdev *b);
/* The data behind @b grew (or shrank) to @size bytes by itself, as an RBD image resized in
 * the cluster: the resize hook the core set runs. */
int fake_bdev_grow(struct bdev *b, uint64_t size);

/* ---- a small target ------------------------------------------------------------------------ */
struct fake_env {
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *subsys;
	struct nvmf_port *port;
	struct fake_qpair admin;
	struct fake_qpair io[4];
	uint16_t cntlid;
};
/* Target + subsystem FAKE_SUBNQN (any host) with @ns_spec as namespace 1 (NULL = none),
 * one port exporting it. */
void fake_env_setup(struct fake_env *e, const char *ns_spec);
/* Admin connect (KATO @kato), CC.EN = 1, Number of Queues @nq, then @nio I/O queues. */
void fake_env_connect(struct fake_env *e, uint32_t kato, uint16_t nq, unsigned int nio);
void fake_env_teardown(struct fake_env *e);

/* CUnit main boilerplate */
int fake_run_suite(const char *name, const CU_TestInfo *tests);

#endif

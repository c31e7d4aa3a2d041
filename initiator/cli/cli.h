/* SPDX-License-Identifier: MIT */
/*
 * nvmeof, the command-line host: what the command files share.
 *
 *   cli.c        main, options, the command table; read, write, flush
 *   cli_info.c   discover, identify, list-ns
 *   cli_admin.c  get-log, get-feature, set-feature, id-ctrl, id-ns
 *   cli_nvm.c    compare, write-zeroes, dsm, verify, resv-register/-acquire/-release/
 *                -report
 *   cli_iscsi.c  discover, identify and id-ctrl on iscsi:// URIs (SCSI facts)
 */
#ifndef NVMEOF_CLI_H
#define NVMEOF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/nvmeof.h"

#define EXIT_NVME      1
#define EXIT_USAGE     2
#define EXIT_TRANSPORT 3

#define CHUNK_BYTES (2u << 20) /* read/write moves this much per command */

struct cli {
	const char *cmd;
	const char *uri;
	struct nvmeof_opts opts;
	bool json; /* -o json */
	bool fua;
	bool have_lba, have_blocks;
	bool blocks_from_file; /* write: blocks holds the file's bytes until connected */
	uint64_t lba;
	uint64_t blocks;
	const char *file;
	int verbose;
	/* get-log */
	const char *log_id;
	uint32_t log_len;
	uint32_t nsid;
	/* get-feature / set-feature */
	bool have_fid, have_value;
	uint8_t fid, sel;
	uint32_t value;
	bool save;
	/* reservations */
	uint64_t crkey, nrkey, prkey;
	uint8_t rtype, action;
	uint8_t cptpl; /* resv-register: Change Persist Through Power Loss State */
	bool iekey;
	/* dsm */
	bool ad;
	/* --dhchap-secret, --dhchap-ctrl-secret: the text, wiped at exit */
	char dhchap_secret[256], dhchap_ctrl_secret[256];
};

struct command {
	const char *name;
	int (*run)(struct cli *c);
	const char *args; /* after URI in the synopsis */
	const char *about;
	const char *extra; /* command-specific option help */
	unsigned int uses; /* CLI_O_* options it takes */
};

enum {
	CLI_O_LBA = 1u << 0, /* --lba, --blocks */
	CLI_O_IN = 1u << 1,  /* -i/--input, -d/--data */
	CLI_O_OUT = 1u << 2, /* --output, -d/--data */
	CLI_O_FUA = 1u << 3,
	CLI_O_LOG = 1u << 4,  /* --log-id, --log-len, --nsid */
	CLI_O_FEAT = 1u << 5, /* --feature-id, --value, --sel, --save, --nsid */
	CLI_O_RESV = 1u << 6, /* --crkey, --nrkey, --prkey, --rtype, --action, --iekey, --cptpl */
	CLI_O_AD = 1u << 7,   /* --ad */
};

void die_usage(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* Print one line for a failed call; returns the exit status. */
int fail(const struct cli *c, const char *what, int rc, const struct nvmeof_qpair *qp);
int connect_ctrlr(struct cli *c, unsigned int io_queues, struct nvmeof_ctrlr **ctrlr);
/* Connect with one I/O queue, find the namespace; checks --lba/--blocks when needed. */
int open_io(struct cli *c, struct nvmeof_ctrlr **ctrlr, struct nvmeof_ns **ns, bool need_range);
void hex(char *out, const uint8_t *b, size_t n);
void uuid_text(char *out, const uint8_t *u);
void human_size(char *out, size_t len, uint64_t bytes);
ssize_t read_full(int fd, uint8_t *p, size_t len);
/* One I/O command, waited for: 0, -errno or a positive NVMe status; @cpl may be NULL. */
int io_cmd_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, const struct nvmeof_cmd *cmd,
		void *buf, size_t len, struct nvmeof_cpl *cpl);
/* {"command":..., "status":"ok"} or the human line, for commands without other output. */
void print_done(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_discover(struct cli *c);
bool is_iscsi_uri(const char *uri);
/* SendTargets on the portal of c->uri; the exit status. */
int cmd_discover_iscsi(struct cli *c);
/* What the SCSI logical unit of an iscsi:// controller reported; the exit status. */
int print_scsi_identify(struct cli *c, struct nvmeof_ctrlr *ctrlr);
int cmd_identify(struct cli *c);
int cmd_list_ns(struct cli *c);
int cmd_get_log(struct cli *c);
int cmd_get_feature(struct cli *c);
int cmd_set_feature(struct cli *c);
int cmd_id_ctrl(struct cli *c);
int cmd_id_ns(struct cli *c);
int cmd_compare(struct cli *c);
int cmd_write_zeroes(struct cli *c);
int cmd_dsm(struct cli *c);
int cmd_verify(struct cli *c);
int cmd_resv_register(struct cli *c);
int cmd_resv_acquire(struct cli *c);
int cmd_resv_release(struct cli *c);
int cmd_resv_report(struct cli *c);

#endif

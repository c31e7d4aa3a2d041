/* SPDX-License-Identifier: MIT */
/*
 * durability_writer - the host side of the power-cut durability test (durability.sh).
 *
 *   durability_writer write URI LOG RUN_ID FIRST_LBA MAX_WRITES
 *   durability_writer verify URI LOG
 *
 * write: one 4 KiB write at a time to fresh LBAs from FIRST_LBA on (every LBA written at
 * most once), each block holding a pattern derived from RUN_ID, the write's sequence
 * number and its LBA. Every fourth write carries FUA; after every eighth write a Flush.
 * Each acknowledgement is appended to LOG and made durable there (fdatasync) before the
 * next command is sent:
 *   "W SEQ LBA NBLOCKS FUA"   write SEQ acknowledged (FUA 0 or 1)
 *   "F SEQ"                   Flush acknowledged; it was sent after write SEQ's ack
 * It runs until MAX_WRITES or until the connection fails (the power cut): that is exit 0.
 *
 * verify: reads back every write in LOG. A write acknowledged with FUA, or acknowledged
 * before an acknowledged Flush, is "required" and must read back intact. Any other write
 * may read back intact or as never written (zeroes); every block must be one of the two.
 * Prints one summary line; exit 0 when nothing required is lost and nothing is corrupt,
 * 1 otherwise, 2 on errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/nvmeof.h"

#define WRITE_BYTES 4096u
#define FUA_EVERY 4
#define FLUSH_EVERY 8
#define MAGIC "NVMFDUR1"

struct rec {
	uint64_t seq;
	uint64_t lba;
	uint32_t nblocks;
	bool fua;
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The content of block @lba written by write @seq of run @run_id. */
static void fill_block(uint8_t *b, uint32_t bs, uint64_t run_id, uint64_t seq, uint64_t lba)
{
	uint64_t s = run_id ^ (seq * 0x100000001b3ull) ^ (lba << 20), v;
	uint32_t i;

	memcpy(b, MAGIC, 8);
	memcpy(b + 8, &run_id, 8);
	memcpy(b + 16, &seq, 8);
	memcpy(b + 24, &lba, 8);
	for (i = 32; i + 8 <= bs; i += 8) {
		v = splitmix(&s);
		memcpy(b + i, &v, 8);
	}
}

static int connect_ns(const char *uri, struct nvmeof_ctrlr **ctrlr, struct nvmeof_qpair **qp,
		      struct nvmeof_ns **ns)
{
	struct nvmeof_opts opts;
	int rc;

	nvmeof_opts_init(&opts);
	opts.io_queues = 1;
	opts.io_timeout_ms = 20000;
	/* The power cut ends the run: no reconnect, so that the writer stops with the target
	 * instead of holding its I/O until ctrl_loss_tmo. */
	opts.ctrl_loss_tmo = 0;
	rc = nvmeof_ctrlr_connect(uri, &opts, ctrlr);
	if (rc) {
		fprintf(stderr, "durability_writer: connect %s: %s\n", uri, strerror(-rc));
		return rc;
	}
	*ns = nvmeof_ctrlr_get_ns(*ctrlr, 0);
	*qp = nvmeof_ctrlr_get_qpair(*ctrlr, 0);
	if (!*ns || !*qp) {
		fprintf(stderr, "durability_writer: %s: no namespace or I/O queue\n", uri);
		nvmeof_ctrlr_disconnect(*ctrlr);
		return -ENODEV;
	}
	return 0;
}

static int log_line(int fd, const char *line)
{
	size_t len = strlen(line);

	if (write(fd, line, len) != (ssize_t)len || fdatasync(fd) != 0)
		return -errno;
	return 0;
}

static int do_write(const char *uri, const char *logpath, uint64_t run_id, uint64_t first,
		    uint64_t max_writes)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint64_t seq, lba, acked = 0, flushes = 0;
	uint32_t bs, nb, i;
	uint8_t *buf;
	char line[128];
	int fd, rc;

	if (connect_ns(uri, &ctrlr, &qp, &ns))
		return 2;
	bs = nvmeof_ns_get_block_size(ns);
	nb = WRITE_BYTES / bs;
	buf = malloc(WRITE_BYTES);
	fd = open(logpath, O_WRONLY | O_APPEND);
	if (!buf || fd < 0 || bs == 0 || bs > WRITE_BYTES) {
		fprintf(stderr, "durability_writer: set-up failed (block size %u)\n", bs);
		return 2;
	}
	for (seq = 1; seq <= max_writes; seq++) {
		bool fua = seq % FUA_EVERY == 0;

		lba = first + (seq - 1) * nb;
		for (i = 0; i < nb; i++)
			fill_block(buf + (size_t)i * bs, bs, run_id, seq, lba + i);
		rc = nvmeof_write_sync(qp, ns, lba, nb, buf, fua ? NVMEOF_IO_FUA : 0);
		if (rc) {
			printf("write %" PRIu64 " not acknowledged (%d): stopping\n", seq, rc);
			break;
		}
		snprintf(line, sizeof(line), "W %" PRIu64 " %" PRIu64 " %u %d\n", seq, lba, nb, fua);
		if (log_line(fd, line))
			return 2;
		acked++;
		if (seq % FLUSH_EVERY == 0) {
			rc = nvmeof_flush_sync(qp, ns);
			if (rc) {
				printf("flush after write %" PRIu64 " not acknowledged (%d): stopping\n",
				       seq, rc);
				break;
			}
			snprintf(line, sizeof(line), "F %" PRIu64 "\n", seq);
			if (log_line(fd, line))
				return 2;
			flushes++;
		}
	}
	printf("writer %s: %" PRIu64 " writes and %" PRIu64 " flushes acknowledged\n", uri, acked,
	       flushes);
	close(fd);
	free(buf);
	if (seq > max_writes)
		nvmeof_ctrlr_disconnect(ctrlr);
	return 0;
}

static int do_verify(const char *uri, const char *logpath)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct rec *recs = NULL;
	size_t n = 0, cap = 0, k;
	uint64_t run_id, last_flush = 0, seq, lba;
	uint64_t required = 0, intact = 0, lost = 0, corrupt = 0, opt_intact = 0, opt_old = 0;
	uint32_t bs, i, nb;
	uint8_t *buf, *want, *zero;
	char line[128], kind;
	FILE *f;
	int rc;

	f = fopen(logpath, "r");
	if (!f) {
		fprintf(stderr, "durability_writer: %s: %s\n", logpath, strerror(errno));
		return 2;
	}
	if (!fgets(line, sizeof(line), f) || sscanf(line, "R %" SCNu64, &run_id) != 1) {
		fprintf(stderr, "durability_writer: %s: no run id line\n", logpath);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		int fua;

		if (sscanf(line, "%c %" SCNu64, &kind, &seq) != 2)
			continue; /* a torn last line cannot happen (fdatasync), but be lenient */
		if (kind == 'F') {
			last_flush = seq;
			continue;
		}
		if (kind != 'W' || sscanf(line, "W %" SCNu64 " %" SCNu64 " %u %d", &seq, &lba, &nb,
					  &fua) != 4)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			recs = realloc(recs, cap * sizeof(*recs));
			if (!recs)
				return 2;
		}
		recs[n++] = (struct rec){ .seq = seq, .lba = lba, .nblocks = nb, .fua = fua != 0 };
	}
	fclose(f);

	if (connect_ns(uri, &ctrlr, &qp, &ns))
		return 2;
	bs = nvmeof_ns_get_block_size(ns);
	buf = malloc(WRITE_BYTES);
	want = malloc(bs);
	zero = calloc(1, bs);
	if (!buf || !want || !zero)
		return 2;
	for (k = 0; k < n; k++) {
		const struct rec *r = &recs[k];
		bool req = r->fua || r->seq <= last_flush, all_new = true, all_old = true;

		if ((uint64_t)r->nblocks * bs > WRITE_BYTES)
			return 2;
		rc = nvmeof_read_sync(qp, ns, r->lba, r->nblocks, buf, 0);
		if (rc) {
			fprintf(stderr, "durability_writer: read lba %" PRIu64 ": %d\n", r->lba, rc);
			return 2;
		}
		for (i = 0; i < r->nblocks; i++) {
			const uint8_t *b = buf + (size_t)i * bs;

			fill_block(want, bs, run_id, r->seq, r->lba + i);
			if (memcmp(b, want, bs) == 0) {
				all_old = false;
			} else if (memcmp(b, zero, bs) == 0) {
				all_new = false;
			} else {
				all_new = all_old = false;
				if (corrupt < 5)
					printf("corrupt: write %" PRIu64 " lba %" PRIu64 "\n", r->seq,
					       r->lba + i);
				corrupt++;
			}
		}
		if (req) {
			required++;
			if (all_new) {
				intact++;
			} else {
				if (lost < 5)
					printf("lost: write %" PRIu64 " (lba %" PRIu64 ", %s) acknowledged"
					       " but not read back\n", r->seq, r->lba,
					       r->fua ? "FUA" : "before a Flush");
				lost++;
			}
		} else if (all_new) {
			opt_intact++;
		} else if (all_old) {
			opt_old++;
		}
	}
	nvmeof_ctrlr_disconnect(ctrlr);
	printf("verify %s: acked=%zu required=%" PRIu64 " intact=%" PRIu64 " lost=%" PRIu64
	       " corrupt_blocks=%" PRIu64 " unprotected=%" PRIu64 " (intact %" PRIu64
	       ", unwritten %" PRIu64 ")\n", uri, n, required, intact, lost, corrupt,
	       (uint64_t)n - required, opt_intact, opt_old);
	free(recs);
	free(buf);
	free(want);
	free(zero);
	return lost || corrupt ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "write") == 0) {
		uint64_t run_id = strtoull(argv[4], NULL, 0);
		char line[64];
		int fd;

		/* the run id goes first, so that verify regenerates the same patterns */
		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return 2;
		snprintf(line, sizeof(line), "R %" PRIu64 "\n", run_id);
		if (log_line(fd, line))
			return 2;
		close(fd);
		return do_write(argv[2], argv[3], run_id, strtoull(argv[5], NULL, 0),
				strtoull(argv[6], NULL, 0));
	}
	if (argc == 4 && strcmp(argv[1], "verify") == 0)
		return do_verify(argv[2], argv[3]);
	fprintf(stderr, "usage: durability_writer write URI LOG RUN_ID FIRST_LBA MAX_WRITES\n"
			"       durability_writer verify URI LOG\n");
	return 2;
}

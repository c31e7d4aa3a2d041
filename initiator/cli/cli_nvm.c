/* SPDX-License-Identifier: MIT */
/*
 * nvmeof: the NVM commands beyond read and write: compare, write-zeroes, dsm (deallocate),
 * verify, and the reservation commands (NVMe Base 2.0, 7.2-7.5 and 7.9-7.10).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common/json_writer.h"

#define OPC_VERIFY        0x0c
#define OPC_RESV_REGISTER 0x0d
#define OPC_RESV_REPORT   0x0e
#define OPC_RESV_ACQUIRE  0x11
#define OPC_RESV_RELEASE  0x15

struct sync_wait {
	bool done;
	struct nvmeof_cpl cpl;
};

static void sync_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct sync_wait *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

int io_cmd_sync(struct nvmeof_qpair *qp, struct nvmeof_ns *ns, const struct nvmeof_cmd *cmd,
		void *buf, size_t len, struct nvmeof_cpl *cpl)
{
	struct sync_wait w = { 0 };
	struct iovec iov = { buf, len };
	int rc;

	rc = nvmeof_io_cmd(qp, ns, cmd, len ? &iov : NULL, len ? 1 : 0, sync_done, &w);
	if (rc)
		return rc;
	rc = nvmeof_qpair_drain(qp);
	if (!w.done)
		return rc ? rc : -EIO;
	if (cpl)
		*cpl = w.cpl;
	if (w.cpl.err)
		return w.cpl.err;
	return w.cpl.status;
}

/* ---- compare ----------------------------------------------------------------------------- */
int cmd_compare(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint8_t *buf = NULL;
	uint32_t bs, per;
	uint64_t done = 0;
	int fd = STDIN_FILENO, rc, ret = 0;

	if (c->file && (fd = open(c->file, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "nvmeof: compare: %s: %s\n", c->file, strerror(errno));
		return EXIT_USAGE;
	}
	rc = open_io(c, &ctrlr, &ns, true);
	if (rc)
		goto out_fd;
	qp = nvmeof_ctrlr_get_qpair(ctrlr, 0);
	bs = nvmeof_ns_get_block_size(ns);
	per = CHUNK_BYTES / bs;
	buf = aligned_alloc(4096, (size_t)per * bs);
	if (!buf) {
		ret = fail(c, c->cmd, -ENOMEM, NULL);
		goto out;
	}
	while (done < c->blocks) {
		uint32_t n = c->blocks - done < per ? (uint32_t)(c->blocks - done) : per;
		ssize_t got = read_full(fd, buf, (size_t)n * bs);

		if (got != (ssize_t)((size_t)n * bs)) {
			fprintf(stderr, "nvmeof: compare: %s holds less than %" PRIu64 " bytes\n",
				c->file ? c->file : "standard input", c->blocks * bs);
			ret = EXIT_USAGE;
			break;
		}
		rc = nvmeof_compare_sync(qp, ns, c->lba + done, n, buf, c->fua ? NVMEOF_IO_FUA : 0);
		if (rc) {
			char what[96];

			/* one line, naming the range that differs */
			if (rc == NVMEOF_STATUS(NVMEOF_SCT_MEDIA, NVMEOF_SC_COMPARE_FAILURE))
				snprintf(what, sizeof(what),
					 "compare: the data differs in LBAs %" PRIu64 "-%" PRIu64,
					 c->lba + done, c->lba + done + n - 1);
			else
				snprintf(what, sizeof(what), "compare");
			ret = fail(c, what, rc, qp);
			break;
		}
		done += n;
	}
	if (ret == 0)
		print_done(c, "%" PRIu64 " blocks at LBA %" PRIu64 " match", c->blocks, c->lba);
out:
	free(buf);
	nvmeof_ctrlr_disconnect(ctrlr);
	rc = ret;
out_fd:
	if (fd > STDERR_FILENO)
		close(fd);
	return rc;
}

/* ---- write-zeroes, dsm, verify ----------------------------------------------------------- */
/* Commands on an LBA range in pieces of at most 65536 blocks (a 16-bit NLB). */
static int range_cmd(struct cli *c, const char *what,
		     int (*one)(struct cli *c, struct nvmeof_qpair *qp, struct nvmeof_ns *ns,
				uint64_t lba, uint32_t n))
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint64_t done = 0;
	int rc = open_io(c, &ctrlr, &ns, true);

	if (rc)
		return rc;
	qp = nvmeof_ctrlr_get_qpair(ctrlr, 0);
	while (done < c->blocks) {
		uint32_t n = c->blocks - done < 65536 ? (uint32_t)(c->blocks - done) : 65536;

		rc = one(c, qp, ns, c->lba + done, n);
		if (rc) {
			rc = fail(c, c->cmd, rc, qp);
			break;
		}
		done += n;
	}
	if (rc == 0)
		print_done(c, "%s %" PRIu64 " blocks at LBA %" PRIu64, what, c->blocks, c->lba);
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

static int one_zeroes(struct cli *c, struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t n)
{
	return nvmeof_write_zeroes_sync(
		qp, ns, lba, n, (c->fua ? NVMEOF_IO_FUA : 0) | (c->ad ? NVMEOF_IO_DEALLOCATE : 0));
}

static int one_dealloc(struct cli *c, struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		       uint32_t n)
{
	(void)c;
	return nvmeof_deallocate_sync(qp, ns, lba, n);
}

static int one_verify(struct cli *c, struct nvmeof_qpair *qp, struct nvmeof_ns *ns, uint64_t lba,
		      uint32_t n)
{
	struct nvmeof_cmd cmd = {
		.opc = OPC_VERIFY,
		.cdw10 = (uint32_t)lba,
		.cdw11 = (uint32_t)(lba >> 32),
		.cdw12 = (n - 1) | (c->fua ? 1u << 30 : 0),
	};

	return io_cmd_sync(qp, ns, &cmd, NULL, 0, NULL);
}

int cmd_write_zeroes(struct cli *c)
{
	return range_cmd(c, "zeroed", one_zeroes);
}

int cmd_dsm(struct cli *c)
{
	if (!c->ad)
		die_usage(c, "--ad (deallocate) is the attribute this command sends");
	return range_cmd(c, "deallocated", one_dealloc);
}

int cmd_verify(struct cli *c)
{
	return range_cmd(c, "verified", one_verify);
}

/* ---- reservations ------------------------------------------------------------------------- */
static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static const char *rtype_name(uint8_t t)
{
	static const char *const names[] = {
		"none",
		"write exclusive",
		"exclusive access",
		"write exclusive, registrants only",
		"exclusive access, registrants only",
		"write exclusive, all registrants",
		"exclusive access, all registrants",
	};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "reserved";
}

static int resv_cmd(struct cli *c, uint8_t opc, uint32_t cdw10, const uint8_t *data, size_t len,
		    const char *done)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	struct nvmeof_cmd cmd = { .opc = opc, .cdw10 = cdw10 };
	uint8_t buf[16];
	int rc = open_io(c, &ctrlr, &ns, false);

	if (rc)
		return rc;
	memcpy(buf, data, len);
	rc = io_cmd_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0), ns, &cmd, buf, len, NULL);
	if (rc)
		rc = fail(c, c->cmd, rc, nvmeof_ctrlr_get_qpair(ctrlr, 0));
	else
		print_done(c, "%s", done);
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

int cmd_resv_register(struct cli *c)
{
	uint8_t d[16];
	char msg[96];

	if (c->action > 2)
		die_usage(c, "--action: 0 register, 1 unregister, 2 replace");
	put_le64(d, c->crkey);
	put_le64(d + 8, c->nrkey);
	snprintf(msg, sizeof(msg), "%s key 0x%" PRIx64,
		 c->action == 0   ? "registered"
		 : c->action == 1 ? "unregistered"
				  : "replaced by",
		 c->action == 1 ? c->crkey : c->nrkey);
	return resv_cmd(c, OPC_RESV_REGISTER,
			c->action | (c->iekey ? 1u << 3 : 0) | (uint32_t)c->cptpl << 30, d, 16,
			msg);
}

int cmd_resv_acquire(struct cli *c)
{
	uint8_t d[16];
	char msg[96];

	if (c->action > 2)
		die_usage(c, "--action: 0 acquire, 1 preempt, 2 preempt and abort");
	if (c->rtype < 1 || c->rtype > 6)
		die_usage(c, "--rtype: 1 to 6 (1 write exclusive ... 6 exclusive access, all "
			     "registrants)");
	put_le64(d, c->crkey);
	put_le64(d + 8, c->prkey);
	snprintf(msg, sizeof(msg), "%s a %s reservation", c->action ? "preempted into" : "acquired",
		 rtype_name(c->rtype));
	return resv_cmd(c, OPC_RESV_ACQUIRE,
			c->action | (c->iekey ? 1u << 3 : 0) | (uint32_t)c->rtype << 8, d, 16, msg);
}

int cmd_resv_release(struct cli *c)
{
	uint8_t d[8];

	if (c->action > 1)
		die_usage(c, "--action: 0 release, 1 clear");
	put_le64(d, c->crkey);
	return resv_cmd(c, OPC_RESV_RELEASE,
			c->action | (c->iekey ? 1u << 3 : 0) | (uint32_t)c->rtype << 8, d, 8,
			c->action ? "cleared the reservation and registrations" : "released");
}

/* Reservation Report with the extended data structure (EDS): 128-bit host identifiers,
 * which is what fabrics hosts have; a 64-byte header, then 64 bytes per registrant. */
int cmd_resv_report(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	uint8_t buf[4096];
	struct nvmeof_cmd cmd = {
		.opc = OPC_RESV_REPORT, .cdw10 = sizeof(buf) / 4 - 1, .cdw11 = 1, /* EDS */
	};
	unsigned int nreg;
	char hid[33];
	int rc = open_io(c, &ctrlr, &ns, false);

	if (rc)
		return rc;
	memset(buf, 0, sizeof(buf));
	rc = io_cmd_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0), ns, &cmd, buf, sizeof(buf), NULL);
	if (rc) {
		rc = fail(c, c->cmd, rc, nvmeof_ctrlr_get_qpair(ctrlr, 0));
		goto out;
	}
	nreg = (unsigned int)get_le(buf + 5, 2);
	if (nreg > (sizeof(buf) - 64) / 64)
		nreg = (sizeof(buf) - 64) / 64;
	if (c->json) {
		printf("{\n  \"gen\": %" PRIu64 ",\n  \"rtype\": %u,\n  \"rtype_name\": ",
		       get_le(buf, 4), buf[4]);
		json_write_str(stdout, rtype_name(buf[4]));
		printf(",\n  \"regctl\": %u,\n  \"ptpls\": %u,\n  \"regctlext\": [", nreg, buf[9]);
	} else {
		printf("generation %" PRIu64 ", reservation: %s, %u registrant%s, persist through "
		       "power loss %s\n",
		       get_le(buf, 4), rtype_name(buf[4]), nreg, nreg == 1 ? "" : "s",
		       buf[9] & 1 ? "on" : "off");
	}
	for (unsigned int i = 0; i < nreg; i++) {
		const uint8_t *e = buf + 64 + 64 * i;

		hex(hid, e + 16, 16);
		if (c->json)
			printf("%s\n    {\"cntlid\": %u, \"rcsts\": %u, \"rkey\": %" PRIu64 ", "
			       "\"host"
			       "id\": "
			       "\"%"
			       "s\"}",
			       i ? "," : "", (unsigned int)get_le(e, 2), e[2] & 1, get_le(e + 8, 8),
			       hid);
		else
			printf("  cntlid %-5u hostid %s  rkey 0x%016" PRIx64 "%s\n",
			       (unsigned int)get_le(e, 2), hid, get_le(e + 8, 8),
			       e[2] & 1 ? "  holds the reservation" : "");
	}
	if (c->json)
		printf("%s]\n}\n", nreg ? "\n  " : "");
out:
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

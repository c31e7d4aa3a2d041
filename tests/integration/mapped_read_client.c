/* SPDX-License-Identifier: MIT */
/*
 * Read data still queued in the target while its namespace is removed (driven by
 * mapped-read.sh). Reuses the raw PDU routines of tcp_raw_client.c.
 *
 *   mapped_read_client PORT SUBNQN
 *
 * Writes NREADS x 128 KiB of a pattern over namespace 1 (a RAM namespace: the target sends
 * read data straight from its memory), then sends NREADS reads of it on a connection with
 * a small receive buffer that it does not read: the target's socket fills and the rest of
 * the read data stays queued in the target. Prints "queued" and waits for a line on stdin (the
 * script removes the namespace meanwhile), then takes everything and checks every byte and
 * every status; a new controller must still come up afterwards. Exit status 0 when every
 * check passed.
 */
#define main tcp_raw_client_main
int tcp_raw_client_main(int argc, char **argv);
#include "tcp_raw_client.c"
#undef main

#define NREADS   64
#define READ_LEN (128 * 1024)
#define CID0     1000

static uint8_t want[NREADS][READ_LEN], got[NREADS][READ_LEN];

static int write_all(struct conn *io)
{
	for (int i = 0; i < NREADS; i++) {
		struct nvme_cmd cmd = { 0 };
		int st;

		pattern(want[i], READ_LEN, (unsigned int)i + 17);
		cmd.opc = NVME_OPC_WRITE;
		put_le32(&cmd.nsid, 1);
		put_le64(&cmd.cdw10, (uint64_t)i * (READ_LEN / 512));
		put_le32(&cmd.cdw12, READ_LEN / 512 - 1);
		st = run_cmd(io, &cmd, want[i], READ_LEN, false, NULL, 0, NULL);
		REQUIRE(st == 0, "write %d: status 0x%x", i, st);
	}
	return 0;
}

static int send_reads(struct conn *io)
{
	for (int i = 0; i < NREADS; i++) {
		struct nvme_cmd cmd = { 0 };

		cmd.opc = NVME_OPC_READ;
		cmd.flags = 0x40;
		put_le16(&cmd.cid, (uint16_t)(CID0 + i));
		put_le32(&cmd.nsid, 1);
		put_le64(&cmd.cdw10, (uint64_t)i * (READ_LEN / 512));
		put_le32(&cmd.cdw12, READ_LEN / 512 - 1);
		sgl_transport(&cmd, READ_LEN);
		REQUIRE(send_capsule(io, &cmd, NULL, 0) == 0, "read %d not sent", i);
	}
	return 0;
}

/* Every C2HData and response of the reads; returns how many reads completed. */
static int drain(struct conn *io)
{
	static uint8_t buf[READ_LEN + 1024];
	const struct nvme_tcp_data_hdr *d = (const void *)buf;
	const struct nvme_tcp_rsp *r = (const void *)buf;
	uint32_t have[NREADS] = { 0 };
	int done = 0;

	while (done < NREADS) {
		int plen = recv_pdu(io, buf, sizeof(buf));
		unsigned int i;

		REQUIRE(plen > 0, "connection ended after %d of %d reads", done, NREADS);
		if (d->ch.pdu_type == NVME_TCP_PDU_CAPSULE_RESP) {
			i = (unsigned int)get_le16(&r->cqe.cid) - CID0;
			REQUIRE(i < NREADS, "response for CID %u", get_le16(&r->cqe.cid));
			CHECK((get_le16(&r->cqe.status) & 0xfffe) == 0, "read %u: status 0x%x", i,
			      get_le16(&r->cqe.status));
			CHECK(have[i] == READ_LEN, "read %u: %u data bytes before its response", i,
			      have[i]);
			done++;
			continue;
		}
		REQUIRE(d->ch.pdu_type == NVME_TCP_PDU_C2H_DATA, "PDU type 0x%x", d->ch.pdu_type);
		i = (unsigned int)get_le16(&d->cccid) - CID0;
		REQUIRE(i < NREADS, "C2HData for CID %u", get_le16(&d->cccid));
		REQUIRE(get_le32(&d->datao) == have[i] && get_le32(&d->datal) <= READ_LEN - have[i],
			"read %u: datao %u datal %u after %u bytes", i, get_le32(&d->datao),
			get_le32(&d->datal), have[i]);
		memcpy(got[i] + have[i], buf + d->ch.pdo, get_le32(&d->datal));
		have[i] += get_le32(&d->datal);
		if (d->ch.flags & NVME_TCP_F_DATA_SUCCESS)
			done++;
	}
	return done;
}

int main(int argc, char **argv)
{
	struct conn admin, io, again;
	char line[16];

	if (argc != 3) {
		fprintf(stderr, "usage: %s PORT SUBNQN\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_subnqn = argv[2];
	if (admin_up(&admin, false, false) != 0 || conn_open_opts(&io, 16384, 10) != 0 ||
	    do_ic(&io, false, false) != 0 || fabrics_connect(&io, 1, 128, admin.cntlid) != 0)
		return 1;
	if (write_all(&io) != 0)
		return 1;
	if (send_reads(&io) != 0)
		return 1;
	printf("queued\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (drain(&io) == NREADS)
		for (int i = 0; i < NREADS; i++)
			CHECK(memcmp(got[i], want[i], READ_LEN) == 0,
			      "read %d: data differs from what was written", i);
	conn_close(&io);
	conn_close(&admin);
	/* the target still serves a new controller */
	if (admin_up(&again, false, false) == 0)
		conn_close(&again);
	printf("%d failures\n", g_failures);
	return g_failures ? 1 : 0;
}

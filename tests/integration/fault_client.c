/* SPDX-License-Identifier: MIT */
/*
 * Fault injection against the running daemon (driven by fault-tcp.sh): hostile or broken
 * hosts on their own connections, each followed by a check that a healthy host still
 * does verified I/O. Reuses the raw PDU routines of tcp_raw_client.c.
 *
 *   fault_client PORT SUBNQN SCENARIO [ARG]
 *
 * Scenarios: mid-pdu, mid-transfer, bad-hdgst, big-plen, r2t-abuse, h2c-no-cmd, h2c-early,
 * no-read (commands sent without reading responses: the target stops reading, then an
 * SQ overrun ends only that connection), kato (idle controller closed after KATO),
 * conns N PID (N idle connections with ICReq + admin Connect; prints the daemon's VmRSS
 * before and with them), limit N (connection N+1 is refused), healthy.
 *
 * Hosts that hold what others need (tests/security/): hoard Q N PID (Q I/O queues, N
 * writes each whose data never fully comes, while another host must be served within a
 * second; the daemon's descriptors and VmRSS must come back once the hoarder leaves:
 * hoard Q N PID [PCT], VmRSS within PCT%, default 10),
 * park C QD PID SECS MAXCONN (C controllers whose admin queues fill with aborted writes
 * waiting for data and stop reading; closed, everything must be back within SECS),
 * r2t-silent SECS (an R2T left unanswered ends the queue after SECS), host-limit N (one
 * host NQN gets N queues, no more; another host still connects).
 */
#define main tcp_raw_client_main
int tcp_raw_client_main(int argc, char **argv);
#include "tcp_raw_client.c"
#undef main

#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>

/* A normal host: admin queue, one I/O queue, writes and reads compared. */
static int healthy(void)
{
	struct conn admin, io;
	int rc = 0;

	REQUIRE(admin_up(&admin, false, false) == 0, "healthy admin");
	REQUIRE(conn_open(&io) == 0, "healthy I/O open");
	REQUIRE(do_ic(&io, false, false) == 0, "healthy I/O IC");
	REQUIRE(fabrics_connect(&io, 1, 32, admin.cntlid) == 0, "healthy I/O connect");
	rc |= rw(&io, 1024, 4096, true, 7);
	rc |= rw(&io, 2048, 131072, false, 8);
	conn_close(&io);
	conn_close(&admin);
	return rc;
}

/* Expect a C2HTermReq with @fes (0: any) and then the close, within the receive timeout. */
static int expect_term(struct conn *c, uint16_t fes)
{
	static uint8_t buf[1 << 20];
	const struct nvme_tcp_term_req *t = (const void *)buf;
	int n;

	for (;;) {
		n = recv_pdu(c, buf, sizeof(buf));
		REQUIRE(n > 0, "connection closed without a C2HTermReq");
		if (t->ch.pdu_type == NVME_TCP_PDU_C2H_TERM_REQ)
			break;
		/* responses of commands sent before the fault may come first */
	}
	CHECK(fes == 0 || get_le16(&t->fes) == fes, "FES %u, expected %u", get_le16(&t->fes), fes);
	CHECK(xrecv(c, buf, 1) != 0, "connection still open after the C2HTermReq");
	return 0;
}

/* An I/O queue on a fresh controller (the admin connection is returned too). */
static int io_queue(struct conn *admin, struct conn *io, uint16_t sqsize)
{
	REQUIRE(admin_up(admin, false, false) == 0, "admin");
	REQUIRE(conn_open(io) == 0, "I/O open");
	REQUIRE(do_ic(io, false, false) == 0, "I/O IC");
	REQUIRE(fabrics_connect(io, 1, sqsize, admin->cntlid) == 0, "I/O connect");
	return 0;
}

static void write_cmd(struct nvme_cmd *cmd, uint16_t cid, uint64_t slba, uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_WRITE;
	cmd->flags = 0x40;
	put_le16(&cmd->cid, cid);
	put_le32(&cmd->nsid, 1);
	put_le64(&cmd->cdw10, slba);
	put_le32(&cmd->cdw12, len / 512 - 1);
	sgl_transport(cmd, len);
}

static int scen_mid_pdu(void)
{
	struct conn admin, io;
	uint8_t hdr[NVME_TCP_PSH_MAX];
	struct nvme_cmd cmd;

	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
	write_cmd(&cmd, 1, 0, 4096);
	sgl_incapsule(&cmd, 4096);
	nvme_tcp_build_capsule_cmd(hdr, &cmd, 4096, &io.p);
	REQUIRE(xsend(&io, hdr, 40) == 0, "half a header"); /* then vanish */
	conn_close(&io);
	conn_close(&admin);
	return healthy();
}

static int scen_mid_transfer(void)
{
	struct conn admin, io;
	static uint8_t buf[1 << 17], data[65536];
	uint8_t hdr[NVME_TCP_PSH_MAX];
	struct nvme_cmd cmd;
	const struct nvme_tcp_r2t_hdr *r = (const void *)buf;
	size_t hl;

	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
	write_cmd(&cmd, 1, 0, sizeof(data));
	REQUIRE(send_capsule(&io, &cmd, NULL, 0) == 0, "capsule");
	REQUIRE(recv_pdu(&io, buf, sizeof(buf)) > 0 && r->ch.pdu_type == NVME_TCP_PDU_R2T, "R2T");
	hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 1, get_le16(&r->ttag), 0,
				 get_le32(&r->r2tl), NVME_TCP_F_DATA_LAST, &io.p);
	REQUIRE(xsend(&io, hdr, hl) == 0 && xsend(&io, data, 1000) == 0, "part of the data");
	conn_close(&io); /* mid-transfer, with a request holding buffers */
	/* and the admin connection mid-command: half a capsule */
	REQUIRE(xsend(&admin, hdr, 10) == 0, "admin: part of a header");
	conn_close(&admin);
	return healthy();
}

static int scen_bad_hdgst(void)
{
	struct conn c;
	uint8_t hdr[NVME_TCP_PSH_MAX];
	struct nvme_cmd cmd = { 0 };
	size_t hl;

	REQUIRE(conn_open(&c) == 0 && do_ic(&c, true, false) == 0, "IC with header digest");
	cmd.opc = NVME_ADMIN_KEEP_ALIVE;
	hl = nvme_tcp_build_capsule_cmd(hdr, &cmd, 0, &c.p);
	hdr[hl - 1] ^= 0xff;
	REQUIRE(xsend(&c, hdr, hl) == 0, "capsule");
	expect_term(&c, NVME_TCP_FES_HDR_DIGEST_ERR);
	conn_close(&c);
	return healthy();
}

static int scen_big_plen(void)
{
	struct conn admin, io;
	uint8_t hdr[NVME_TCP_PSH_MAX];
	struct nvme_cmd cmd;
	struct nvme_tcp_common_hdr *ch = (void *)hdr;

	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
	/* in-capsule data far beyond the I/O queue's in-capsule size (ICDOFF/IOCCSZ) */
	write_cmd(&cmd, 1, 0, 1 << 20);
	sgl_incapsule(&cmd, 1 << 20);
	nvme_tcp_build_capsule_cmd(hdr, &cmd, 1 << 20, &io.p);
	put_le32(&ch->plen, sizeof(struct nvme_tcp_cmd) + (1 << 20));
	REQUIRE(xsend(&io, hdr, sizeof(struct nvme_tcp_cmd)) == 0, "capsule header");
	expect_term(&io, 0);
	conn_close(&io);
	/* PLEN of 4 GiB - 1 on the admin queue */
	put_le32(&ch->plen, 0xffffffffu);
	REQUIRE(xsend(&admin, hdr, sizeof(struct nvme_tcp_cmd)) == 0, "admin header");
	expect_term(&admin, 0);
	conn_close(&admin);
	return healthy();
}

static int scen_r2t_abuse(void)
{
	struct conn admin, io;
	static uint8_t buf[1 << 17], data[1 << 17];
	uint8_t hdr[NVME_TCP_PSH_MAX];
	struct nvme_cmd cmd;
	const struct nvme_tcp_r2t_hdr *r = (const void *)buf;
	size_t hl;

	/* data past the window the R2T asked for */
	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
	write_cmd(&cmd, 1, 0, 65536);
	REQUIRE(send_capsule(&io, &cmd, NULL, 0) == 0, "capsule");
	REQUIRE(recv_pdu(&io, buf, sizeof(buf)) > 0 && r->ch.pdu_type == NVME_TCP_PDU_R2T, "R2T");
	hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 1, get_le16(&r->ttag),
				 get_le32(&r->r2tl), 4096, 0, &io.p);
	REQUIRE(xsend(&io, hdr, hl) == 0 && xsend(&io, data, 4096) == 0, "H2CData out of range");
	expect_term(&io, NVME_TCP_FES_DATA_OUT_OF_RANGE);
	conn_close(&io);
	conn_close(&admin);

	/* more data in one H2CData than MAXH2CDATA allows */
	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup 2");
	write_cmd(&cmd, 1, 0, 131072);
	REQUIRE(send_capsule(&io, &cmd, NULL, 0) == 0, "capsule 2");
	REQUIRE(recv_pdu(&io, buf, sizeof(buf)) > 0 && r->ch.pdu_type == NVME_TCP_PDU_R2T, "R2T 2");
	io.p.maxh2cdata = 1 << 20; /* let the builder exceed it */
	hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 1, get_le16(&r->ttag), 0,
				 io.maxh2cdata + 4096, 0, &io.p);
	REQUIRE(xsend(&io, hdr, hl) == 0, "oversized H2CData header");
	xsend(&io, data, io.maxh2cdata + 4096 < sizeof(data) ? io.maxh2cdata + 4096 : sizeof(data));
	expect_term(&io, 0);
	conn_close(&io);
	conn_close(&admin);

	/* H2CData for a write that already has all its data (a second copy of the last PDU) */
	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup 3");
	write_cmd(&cmd, 1, 0, 4096);
	REQUIRE(send_capsule(&io, &cmd, NULL, 0) == 0, "capsule 3");
	REQUIRE(recv_pdu(&io, buf, sizeof(buf)) > 0 && r->ch.pdu_type == NVME_TCP_PDU_R2T, "R2T 3");
	hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 1, get_le16(&r->ttag), 0, 4096,
				 NVME_TCP_F_DATA_LAST, &io.p);
	REQUIRE(xsend(&io, hdr, hl) == 0 && xsend(&io, data, 4096) == 0, "data");
	REQUIRE(xsend(&io, hdr, hl) == 0 && xsend(&io, data, 4096) == 0, "the same data again");
	expect_term(&io, 0);
	conn_close(&io);
	conn_close(&admin);
	return healthy();
}

static int scen_h2c_no_cmd(void)
{
	struct conn admin, io;
	static uint8_t data[4096];
	uint8_t hdr[NVME_TCP_PSH_MAX];
	size_t hl;

	REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
	hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 77, 5, 0, sizeof(data),
				 NVME_TCP_F_DATA_LAST, &io.p);
	REQUIRE(xsend(&io, hdr, hl) == 0 && xsend(&io, data, sizeof(data)) == 0, "H2CData");
	expect_term(&io, NVME_TCP_FES_INVALID_PDU_HDR);
	conn_close(&io);
	conn_close(&admin);
	return healthy();
}

/*
 * H2CData sent together with its write command, before the target's R2T can have left
 * (the host guesses the transfer tag). The target must either take it (R2T already out)
 * or end the connection; it once queued the request's R2T and its response on the same
 * transmit slot and spun forever on the corrupted queue. Repeated for every guess.
 */
static int scen_h2c_early(void)
{
	for (uint16_t ttag = 0; ttag < 4; ttag++) {
		struct conn admin, io;
		static uint8_t pkt[8192 + 512], data[8192];
		uint8_t hdr[NVME_TCP_PSH_MAX];
		struct nvme_cmd cmd;
		size_t n = 0, hl;

		REQUIRE(io_queue(&admin, &io, 32) == 0, "setup");
		write_cmd(&cmd, 7, 0, sizeof(data));
		n += nvme_tcp_build_capsule_cmd(pkt, &cmd, 0, &io.p);
		hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, 7, ttag, 0, sizeof(data),
					 NVME_TCP_F_DATA_LAST, &io.p);
		memcpy(pkt + n, hdr, hl);
		n += hl;
		memcpy(pkt + n, data, sizeof(data));
		n += sizeof(data);
		REQUIRE(xsend(&io, pkt, n) == 0, "capsule + H2CData in one send");
		/* whatever comes back (R2T, response, C2HTermReq), the target must not hang */
		for (int i = 0; i < 4 && recv_pdu(&io, pkt, sizeof(pkt)) > 0; i++)
			;
		conn_close(&io);
		conn_close(&admin);
		REQUIRE(healthy() == 0, "healthy host after early H2CData (ttag %u)", ttag);
	}
	return 0;
}

/*
 * A host that sends reads of 128 KiB and never reads the answers. The target can hand
 * only so much to the kernel; after that its responses cannot leave, the commands stay
 * outstanding, and the host's next commands overrun the submission queue: a fatal
 * transport error for this connection only (C2HTermReq, close), while other hosts go on.
 * Target memory stays bounded by the queue (SQSIZE commands of at most MDTS each).
 */
static int scen_no_read(void)
{
	struct conn admin, io;
	const uint16_t sqsize = 32;
	static uint8_t buf[1 << 18];
	const struct nvme_tcp_term_req *t = (const void *)buf;
	struct timeval tv = { 5, 0 };
	struct nvme_cmd cmd;
	int small = 4096, big = 1 << 20;
	unsigned int sent = 0;
	bool term = false;
	double t0;

	REQUIRE(admin_up(&admin, false, false) == 0, "admin");
	REQUIRE(conn_open(&io) == 0, "I/O open");
	setsockopt(io.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	REQUIRE(do_ic(&io, false, false) == 0, "I/O IC");
	REQUIRE(fabrics_connect(&io, 1, sqsize, admin.cntlid) == 0, "I/O connect");
	setsockopt(io.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	for (unsigned int i = 0; i < 2000; i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_OPC_READ;
		cmd.flags = 0x40;
		put_le16(&cmd.cid, (uint16_t)(100 + i));
		put_le32(&cmd.nsid, 1);
		put_le64(&cmd.cdw10, (uint64_t)(i % 256) * 256);
		put_le32(&cmd.cdw12, 255);
		sgl_transport(&cmd, 131072);
		if (send_capsule(&io, &cmd, NULL, 0) != 0)
			break; /* the target ended the connection */
		sent++;
		if (i == sqsize)
			CHECK(healthy() == 0, "healthy host while one host does not read");
	}
	/* Read what is left: responses, then the C2HTermReq (or just the close). */
	setsockopt(io.fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	t0 = now_s();
	while (recv_pdu(&io, buf, sizeof(buf)) > 0) {
		if (t->ch.pdu_type == NVME_TCP_PDU_C2H_TERM_REQ) {
			term = true;
			CHECK(get_le16(&t->fes) == NVME_TCP_FES_PDU_SEQ_ERR, "FES %u",
			      get_le16(&t->fes));
		}
	}
	printf("no-read: %u reads sent; connection ended %s, %.1f s after the host began to "
	       "read\n", sent, term ? "with a C2HTermReq" : "by close", now_s() - t0);
	/* 2000 reads of 128 KiB cannot all have been answered: EOF means the target ended it
	 * (its C2HTermReq may be stuck behind read data the host never took). */
	CHECK(term || now_s() - t0 < 5.0, "connection not ended %.1f s after the overrun",
	      now_s() - t0);
	conn_close(&io);
	conn_close(&admin);
	return healthy();
}

/* An admin queue with KATO 1 s that then says nothing: the controller goes away. */
static int scen_kato(void)
{
	struct conn c;
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct timeval tv = { 10, 0 };
	uint8_t b[256];
	double t0;
	int st;

	REQUIRE(conn_open(&c) == 0 && do_ic(&c, false, false) == 0, "IC");
	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.sqsize, 31);
	put_le32(&cmd.kato, 1000);
	put_le16(&data.cntlid, 0xffff);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", HOSTNQN);
	st = run_cmd(&c, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, NULL);
	REQUIRE(st == 0, "Connect with KATO 1000: 0x%x", st);
	setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now_s();
	REQUIRE(recv(c.fd, b, sizeof(b), 0) <= 0, "data on an idle admin queue");
	CHECK(now_s() - t0 < 6.0, "closed after %.1f s (KATO 1 s)", now_s() - t0);
	printf("kato: idle admin queue closed after %.2f s\n", now_s() - t0);
	conn_close(&c);
	return healthy();
}

static long vmrss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* @n connections, each with ICReq and an admin Connect (a controller each), held idle. */
static int scen_conns(int n, int pid, long limit_mib)
{
	struct conn *c = calloc((size_t)n, sizeof(*c));
	long before = vmrss_kib(pid), with;
	int up = 0;

	REQUIRE(c != NULL, "memory");
	for (int i = 0; i < n; i++) {
		struct nvmf_connect_cmd cmd = { 0 };
		struct nvmf_connect_data data = { 0 };
		int st;

		if (conn_open(&c[i]) != 0 || do_ic(&c[i], false, false) != 0)
			break;
		cmd.opc = NVME_OPC_FABRICS;
		cmd.fctype = NVMF_FCTYPE_CONNECT;
		put_le16(&cmd.sqsize, 31);
		put_le16(&data.cntlid, 0xffff);
		snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
		snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", HOSTNQN);
		st = run_cmd(&c[i], (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0,
			     NULL);
		if (st != 0)
			break;
		up++;
	}
	with = vmrss_kib(pid);
	printf("conns: %d of %d connections up; daemon VmRSS %ld KiB before, %ld KiB with them "
	       "(%.1f KiB per connection)\n", up, n, before, with,
	       up ? (double)(with - before) / up : 0.0);
	CHECK(up == n, "only %d of %d connections came up", up, n);
	CHECK(with > 0 && with / 1024 < limit_mib, "VmRSS %ld MiB, limit %ld MiB", with / 1024,
	      limit_mib);
	/* the daemon keeps serving while they are all open */
	CHECK(healthy() == 0, "healthy host with %d idle connections", up);
	for (int i = 0; i < n; i++)
		conn_close(&c[i]);
	free(c);
	return 0;
}

/*
 * With --max-connections @n: @n hosts get through Connect; with all @n established, the
 * next connection is closed at once (it could never get through Connect).
 */
static int scen_limit(int n)
{
	struct conn *c = calloc((size_t)n + 1, sizeof(*c));
	uint8_t b[128];

	REQUIRE(c != NULL, "memory");
	for (int i = 0; i < n; i++)
		REQUIRE(admin_up(&c[i], false, false) == 0, "host %d", i);
	REQUIRE(conn_open(&c[n]) == 0, "TCP connect beyond the limit");
	nvme_tcp_build_icreq(b, false, false, 0, 0);
	xsend(&c[n], b, 8);
	CHECK(xrecv(&c[n], b, 8) != 0, "connection %d beyond the limit was served", n + 1);
	for (int i = 0; i <= n; i++)
		conn_close(&c[i]);
	free(c);
	/* once they are gone, new connections work again */
	usleep(200000);
	return healthy();
}

/*
 * @n sockets that never send ICReq (and ten that stop half way: ICReq, then no Connect) do
 * not lock out a real host, and the target closes each of them once the connect deadline
 * (@timeout_s, --connect-timeout) has passed.
 */
static int scen_silent(int n, int timeout_s)
{
	struct conn *c = calloc((size_t)n, sizeof(*c));
	int up = 0, closed = 0;
	uint8_t b[8];

	REQUIRE(c != NULL, "memory");
	for (int i = 0; i < n; i++)
		if (conn_open(&c[i]) == 0)
			up++;
	CHECK(up == n, "%d of %d silent sockets connected", up, n);
	for (int i = 0; i < 10 && i < n; i++)
		CHECK(do_ic(&c[i], false, false) == 0, "ICReq of half-way host %d", i);
	CHECK(healthy() == 0, "a real host beside %d silent sockets", up);
	sleep((unsigned int)timeout_s + 2);
	for (int i = 0; i < n; i++) {
		struct timeval tv = { .tv_sec = 2 };

		if (c[i].fd < 0)
			continue;
		setsockopt(c[i].fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(c[i].fd, b, sizeof(b), 0) == 0)
			closed++;
	}
	printf("silent: %d of %d silent sockets closed by the target after the %d s deadline\n",
	       closed, up, timeout_s);
	CHECK(closed == up, "%d of %d silent sockets still open after the deadline", up - closed,
	      up);
	for (int i = 0; i < n; i++)
		conn_close(&c[i]);
	free(c);
	return healthy();
}

/* ---- hosts that hold what others need ------------------------------------------------ */

#define HOARD_NQN "nqn.2014-08.org.nvmexpress:uuid:0badc0de-5eed-4bad-8bad-00000000a77a"
#define HOARD_IO  (128 * 1024)

static int fd_count(int pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A healthy host's whole round (Connect, enable, Identify, an I/O queue, verified writes
 * and reads), timed. */
static int healthy_timed(double *secs)
{
	const char *who = g_hostnqn;
	double t0 = now_s();
	int rc;

	g_hostnqn = HOSTNQN;
	rc = healthy();
	*secs = now_s() - t0;
	g_hostnqn = who;
	return rc;
}

/* Answer the R2Ts waiting on @c with all of their data but the last 4 KiB: the target
 * holds a filled buffer for a write that never completes. Returns the R2Ts answered. */
static int hoard_answer(struct conn *c)
{
	static uint8_t buf[4096], data[HOARD_IO];
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	int n = 0;

	while (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
		const struct nvme_tcp_r2t_hdr *r = (const void *)buf;
		uint8_t hdr[256];
		uint32_t len;
		size_t hl;

		if (recv_pdu(c, buf, sizeof(buf)) <= 0)
			break;
		if (r->ch.pdu_type != NVME_TCP_PDU_R2T || get_le32(&r->r2tl) <= 4096)
			continue;
		len = get_le32(&r->r2tl) - 4096;
		hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, get_le16(&r->cccid),
					 get_le16(&r->ttag), get_le32(&r->r2to), len, 0, &c->p);
		if (xsend(c, hdr, hl) != 0 || xsend(c, data, len) != 0)
			break;
		n++;
	}
	return n;
}

/*
 * One host (its own NQN) connects @q I/O queues of depth 128 and sends @n writes of 128 KiB
 * on each without their data; each R2T it gets is answered with all but 4 KiB. While it
 * holds that, another host must get through Connect, Identify and verified I/O within a
 * second. Then the hoarder leaves: the daemon's descriptors must be back within 10% of
 * what they were before it came, and its VmRSS within @pct%, within 30 s.
 */
static int scen_hoard(int q, int n, int pid, int pct)
{
	struct conn adm, *io = calloc((size_t)q, sizeof(*io)), vadm, vio;
	static struct nvme_id_ctrl id;
	struct nvme_cmd idc = { 0 };
	long rss0, rss1, rss2 = 0;
	int fd0, fd1, fd2 = 0, r2ts = 0, rc;
	double t, t0, last;

	REQUIRE(io != NULL, "memory");
	REQUIRE(healthy() == 0, "warm-up");
	/* a host connected before the hoarder comes */
	REQUIRE(io_queue(&vadm, &vio, 32) == 0, "connected host");
	sleep(5); /* what the warm-up used goes back (the pool gives idle memory back) */
	rss0 = vmrss_kib(pid);
	fd0 = fd_count(pid);

	g_hostnqn = HOARD_NQN;
	REQUIRE(admin_up(&adm, false, false) == 0, "hoarder admin");
	for (int i = 0; i < q; i++) {
		REQUIRE(conn_open(&io[i]) == 0 && do_ic(&io[i], false, false) == 0, "queue %d", i);
		REQUIRE(fabrics_connect(&io[i], (uint16_t)(i + 1), 128, adm.cntlid) == 0,
			"hoarder I/O queue %d", i + 1);
	}
	for (int i = 0; i < q; i++)
		for (int k = 0; k < n; k++) {
			struct nvme_cmd cmd;

			write_cmd(&cmd, (uint16_t)(k + 1), (uint64_t)((i * n + k) % 256) * 256,
				  HOARD_IO);
			REQUIRE(send_capsule(&io[i], &cmd, NULL, 0) == 0, "write %d on queue %d", k,
				i + 1);
		}
	/* answer R2Ts until none has come for a second */
	for (t0 = last = now_s(); now_s() - last < 1.0 && now_s() - t0 < 15.0;) {
		int got = 0;

		for (int i = 0; i < q; i++)
			got += hoard_answer(&io[i]);
		if (got) {
			r2ts += got;
			last = now_s();
		} else {
			usleep(20000);
		}
	}
	rss1 = vmrss_kib(pid);
	fd1 = fd_count(pid);
	printf("hoard: %d queues x %d writes of 128 KiB, %d R2Ts answered with all but 4 KiB: "
	       "daemon VmRSS %ld -> %ld KiB, descriptors %d -> %d\n",
	       q, n, r2ts, rss0, rss1, fd0, fd1);

	/* the host connected before: Identify, then a verified write and read */
	t0 = now_s();
	idc.opc = NVME_ADMIN_IDENTIFY;
	put_le32(&idc.cdw10, NVME_ID_CNS_CTRL);
	rc = run_cmd(&vadm, &idc, NULL, 0, false, &id, sizeof(id), NULL) != 0;
	rc |= rw(&vio, 4096, HOARD_IO, false, 21);
	t = now_s() - t0;
	printf("hoard: meanwhile the host connected before did Identify, a write and a read in "
	       "%.3f s (%s)\n",
	       t, rc == 0 ? "ok" : "failed");
	CHECK(rc == 0 && t < 1.0, "the connected host: %s after %.3f s", rc ? "failed" : "served",
	      t);
	conn_close(&vio);
	conn_close(&vadm);
	rc = healthy_timed(&t);
	printf("hoard: and a new host connected, identified, wrote and read back in %.3f s (%s)\n",
	       t, rc == 0 ? "ok" : "failed");
	CHECK(rc == 0 && t < 1.0, "the new host: %s after %.3f s", rc ? "failed" : "served", t);

	for (int i = 0; i < q; i++)
		conn_close(&io[i]);
	conn_close(&adm);
	free(io);
	g_hostnqn = HOSTNQN;
	for (t0 = now_s(); now_s() - t0 < 30.0;) {
		usleep(500000);
		rss2 = vmrss_kib(pid);
		fd2 = fd_count(pid);
		if (fd2 <= fd0 + fd0 / 10 && rss2 <= rss0 + rss0 * pct / 100)
			break;
	}
	printf("hoard: %.1f s after the hoarder left: VmRSS %ld KiB (before it came: %ld), "
	       "descriptors %d (before: %d)\n",
	       now_s() - t0, rss2, rss0, fd2, fd0);
	CHECK(fd2 <= fd0 + fd0 / 10, "descriptors %d, %d before the hoarder came", fd2, fd0);
	CHECK(rss2 <= rss0 + rss0 * pct / 100, "VmRSS %ld KiB, %ld KiB before the hoarder came",
	      rss2, rss0);
	return healthy();
}

/* An admin command that writes @len bytes (by R2T beyond the in-capsule size): Firmware
 * Image Download. */
static void admin_write_cmd(struct nvme_cmd *cmd, uint16_t cid, uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = 0x11;
	cmd->flags = 0x40;
	put_le16(&cmd->cid, cid);
	put_le32(&cmd->cdw10, len / 4 - 1);
	sgl_transport(cmd, len);
}

/* Abort command @cid of the admin queue @adm from that queue: both responses come. */
static int abort_admin(struct conn *adm, uint16_t cid, uint16_t abort_cid)
{
	static uint8_t buf[4096];
	const struct nvme_tcp_rsp *r = (const void *)buf;
	struct nvme_cmd cmd = { 0 };
	int seen = 0;

	cmd.opc = 0x08; /* Abort: SQID 0, CID @cid */
	cmd.flags = 0x40;
	put_le16(&cmd.cid, abort_cid);
	put_le32(&cmd.cdw10, (uint32_t)cid << 16);
	REQUIRE(send_capsule(adm, &cmd, NULL, 0) == 0, "Abort");
	while (seen != 3) {
		REQUIRE(recv_pdu(adm, buf, sizeof(buf)) > 0 &&
				r->ch.pdu_type == NVME_TCP_PDU_CAPSULE_RESP,
			"responses to the Abort of cid %u", cid);
		if (get_le16(&r->cqe.cid) == abort_cid)
			seen |= 1;
		else if (get_le16(&r->cqe.cid) == cid)
			seen |= 2;
	}
	return 0;
}

/*
 * @nctl controllers of one host with KATO 0 (nothing reclaims an idle one), each an admin
 * queue of depth 32 (@qd): @qd - 1 admin writes of 16 KiB whose R2Ts the host has read, each
 * aborted (their slots wait for data that never comes), then two more writes, the last
 * of which finds no free slot: the queue stops reading. The host closes every socket:
 * within @secs the daemon's descriptors must be back to what they were, and under
 * --max-connections @maxconn (which the host had filled) a new host must get in.
 */
static int scen_park(int nctl, int qd, int pid, int secs, int maxconn)
{
	struct conn *adm = calloc((size_t)nctl, sizeof(*adm));
	static uint8_t buf[4096];
	int fd0, fd1, fd2 = 0, rc;
	double t0, t;

	REQUIRE(adm, "memory");
	fd0 = fd_count(pid);
	g_hostnqn = HOARD_NQN;
	g_admin_kato = 0;
	for (int c = 0; c < nctl; c++) {
		REQUIRE(admin_up(&adm[c], false, false) == 0, "controller %d", c);
		for (int k = 1; k < qd; k++) {
			struct nvme_cmd cmd;

			admin_write_cmd(&cmd, (uint16_t)k, 16384);
			REQUIRE(send_capsule(&adm[c], &cmd, NULL, 0) == 0, "write %d", k);
		}
		for (int k = 1; k < qd; k++)
			REQUIRE(recv_pdu(&adm[c], buf, sizeof(buf)) > 0 &&
					((struct nvme_tcp_common_hdr *)buf)->pdu_type ==
						NVME_TCP_PDU_R2T,
				"R2T %d of controller %d", k, c);
		for (int k = 1; k < qd; k++)
			REQUIRE(abort_admin(&adm[c], (uint16_t)k, 1000) == 0, "abort %d", k);
		for (int k = qd; k <= qd + 1; k++) {
			struct nvme_cmd cmd;

			admin_write_cmd(&cmd, (uint16_t)k, 16384);
			REQUIRE(send_capsule(&adm[c], &cmd, NULL, 0) == 0, "write %d", k);
		}
	}
	usleep(200000);
	fd1 = fd_count(pid);
	for (int c = 0; c < nctl; c++)
		conn_close(&adm[c]);
	free(adm);
	g_hostnqn = HOSTNQN;
	g_admin_kato = 30000;
	for (t0 = now_s(); now_s() - t0 < secs;) {
		usleep(250000);
		fd2 = fd_count(pid);
		if (fd2 <= fd0)
			break;
	}
	printf("park: %d controllers with %d aborted writes parked each: descriptors %d -> %d, "
	       "%d %.1f s after the host closed them\n",
	       nctl, qd - 1, fd0, fd1, fd2, now_s() - t0);
	CHECK(fd2 <= fd0, "descriptors %d, %d before", fd2, fd0);
	rc = healthy_timed(&t);
	printf("park: with --max-connections %d, a new host %s in %.3f s\n", maxconn,
	       rc == 0 ? "was served" : "was refused", t);
	CHECK(rc == 0, "new host refused after the parked controllers' host left");
	return 0;
}

/* With --r2t-timeout @secs: a write whose R2T the host leaves unanswered ends its queue
 * with a C2HTermReq (PDU Sequence Error) once that has passed, and not before. */
static int scen_r2t_silent(int secs)
{
	struct conn adm, io;
	struct nvme_cmd cmd;
	static uint8_t buf[4096];
	double t0, t;

	REQUIRE(io_queue(&adm, &io, 32) == 0, "I/O queue");
	write_cmd(&cmd, 1, 0, HOARD_IO);
	REQUIRE(send_capsule(&io, &cmd, NULL, 0) == 0, "write");
	REQUIRE(recv_pdu(&io, buf, sizeof(buf)) > 0 &&
			((struct nvme_tcp_common_hdr *)buf)->pdu_type == NVME_TCP_PDU_R2T,
		"R2T");
	t0 = now_s();
	REQUIRE(expect_term(&io, NVME_TCP_FES_PDU_SEQ_ERR) == 0, "no C2HTermReq after %.1f s",
		now_s() - t0);
	t = now_s() - t0;
	printf("r2t-silent: C2HTermReq %.1f s after the unanswered R2T (r2t timeout %d s)\n", t,
	       secs);
	CHECK(t >= secs - 0.5 && t < secs + 2.5, "after %.1f s", t);
	conn_close(&io);
	conn_close(&adm);
	return healthy();
}

/* With --max-host-connections @n: one host NQN gets @n queues, the next Connect fails
 * with Controller Busy; another host is still served. */
static int scen_host_limit(int n)
{
	struct conn *c = calloc((size_t)n + 1, sizeof(*c));
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct nvme_cpl cpl;
	double t;
	int st, rc;

	REQUIRE(c != NULL, "memory");
	g_hostnqn = HOARD_NQN;
	for (int i = 0; i < n; i++) {
		REQUIRE(conn_open(&c[i]) == 0 && do_ic(&c[i], false, false) == 0, "conn %d", i);
		REQUIRE(fabrics_connect(&c[i], 0, 32, 0xffff) == 0, "queue %d of %d", i + 1, n);
	}
	REQUIRE(conn_open(&c[n]) == 0 && do_ic(&c[n], false, false) == 0, "conn %d", n);
	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.sqsize, 31);
	put_le16(&data.cntlid, 0xffff);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", HOARD_NQN);
	st = run_cmd(&c[n], (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, &cpl);
	printf("host-limit: Connect %d of one host: status 0x%x\n", n + 1, st);
	CHECK(st == ((NVME_SCT_COMMAND_SPECIFIC << 9) | (NVME_SC_CONNECT_CONTROLLER_BUSY << 1)),
	      "Connect beyond the host's limit: status 0x%x", st);
	g_hostnqn = HOSTNQN;
	rc = healthy_timed(&t);
	printf("host-limit: another host served in %.3f s beside them\n", t);
	CHECK(rc == 0, "another host refused");
	for (int i = 0; i <= n; i++)
		conn_close(&c[i]);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *s;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s PORT SUBNQN SCENARIO [ARGS]\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_subnqn = argv[2];
	s = argv[3];
	if (!strcmp(s, "mid-pdu"))
		rc = scen_mid_pdu();
	else if (!strcmp(s, "mid-transfer"))
		rc = scen_mid_transfer();
	else if (!strcmp(s, "bad-hdgst"))
		rc = scen_bad_hdgst();
	else if (!strcmp(s, "big-plen"))
		rc = scen_big_plen();
	else if (!strcmp(s, "r2t-abuse"))
		rc = scen_r2t_abuse();
	else if (!strcmp(s, "h2c-no-cmd"))
		rc = scen_h2c_no_cmd();
	else if (!strcmp(s, "h2c-early"))
		rc = scen_h2c_early();
	else if (!strcmp(s, "no-read"))
		rc = scen_no_read();
	else if (!strcmp(s, "kato"))
		rc = scen_kato();
	else if (!strcmp(s, "conns") && argc == 7)
		rc = scen_conns(atoi(argv[4]), atoi(argv[5]), atol(argv[6]));
	else if (!strcmp(s, "limit") && argc == 5)
		rc = scen_limit(atoi(argv[4]));
	else if (!strcmp(s, "silent") && argc == 6)
		rc = scen_silent(atoi(argv[4]), atoi(argv[5]));
	else if (!strcmp(s, "hoard") && (argc == 7 || argc == 8))
		rc = scen_hoard(atoi(argv[4]), atoi(argv[5]), atoi(argv[6]),
				argc == 8 ? atoi(argv[7]) : 10);
	else if (!strcmp(s, "park") && argc == 9)
		rc = scen_park(atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7]),
			       atoi(argv[8]));
	else if (!strcmp(s, "r2t-silent") && argc == 5)
		rc = scen_r2t_silent(atoi(argv[4]));
	else if (!strcmp(s, "host-limit") && argc == 5)
		rc = scen_host_limit(atoi(argv[4]));
	else if (!strcmp(s, "healthy"))
		rc = healthy();
	else {
		fprintf(stderr, "unknown scenario '%s'\n", s);
		return 2;
	}
	if (rc != 0 && g_failures == 0)
		g_failures++;
	printf("%s %s\n", g_failures ? "FAIL" : "PASS", s);
	return g_failures ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP receive path as a host drives it: every input is the byte stream a host
 * sends on one connection, fed over a socketpair to a real NVMe/TCP queue pair
 * (target/tcp_*.c) on a real reactor, with the real target core and a RAM namespace
 * behind it. Whatever the bytes, the connection must end cleanly once the host closes
 * its side (or the target gives up on it), with every request and buffer released;
 * ASan/LeakSanitizer check the rest.
 *
 * Input: [mode][stream...]. Mode bit 0 set: before the stream, a scripted host brings up
 * a controller on a separate admin connection (ICReq, Connect with controller ID FFFFh,
 * CC.EN = 1, two I/O queues), so the stream can Connect an I/O queue to controller 1 and
 * move data. Bits 7:1 pick the size of the pieces the stream is written in (0: whole).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/endian.h"
#include "common/log.h"
#include "common/nvme_tcp_pdu.h"
#include "fuzz.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"
#include "tcp/tcp_internal.h"

#define SUBNQN "nqn.2026-11.io.nvmeof:fuzz"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:0f0f0f0f-1111-2222-3333-444444444444"
#define STREAM_TIMEOUT_MS 5000

static struct nvmf_tgt *g_tgt;
static struct nvmf_subsys *g_sub;
static struct nvmf_port *g_port;
static struct reactor *g_r;

static int setup(void)
{
	struct nvmf_tgt_opts o;
	struct nvmf_port_opts po = {
		.portid = 1, .trtype = "tcp", .adrfam = "ipv4", .traddr = "127.0.0.1",
		.trsvcid = "4420",
	};
	struct nvmf_ns_opts no = { .path = "ram:1M", .enabled = true };
	char err[256];

	log_set_level(getenv("FUZZ_VERBOSE") ? LOG_LVL_INFO : LOG_LVL_ERR);
	reactors_configure(128 * 1024, 64, REACTOR_PIN_OFF);
	if (reactors_start(1) != 0)
		return -1;
	g_r = reactor_get(0);
	if (!nvmf_transport_find("tcp") && nvmf_transport_register(&nvmf_tcp_transport_ops) != 0)
		return -1;
	nvmf_tgt_opts_default(&o);
	g_tgt = nvmf_tgt_create(&o);
	if (!g_tgt)
		return -1;
	g_sub = nvmf_subsys_create(g_tgt, SUBNQN);
	if (!g_sub)
		return -1;
	nvmf_subsys_set_allow_any_host(g_sub, true);
	if (nvmf_subsys_add_ns(g_sub, &no, err, sizeof(err)) != 1) {
		fprintf(stderr, "fuzz_tcp_recv: %s\n", err);
		return -1;
	}
	g_port = nvmf_port_create(g_tgt, &po, err, sizeof(err));
	if (!g_port || nvmf_port_add_subsys(g_port, g_sub) != 0) {
		fprintf(stderr, "fuzz_tcp_recv: port: %s\n", err);
		return -1;
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (setup() != 0) {
		fprintf(stderr, "fuzz_tcp_recv: cannot set up the target\n");
		return 1;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- connections ----------------------------------------------------------------------- */

struct kill_arg {
	struct tcp_qpair *tq;
	volatile int done;
};

/* On the reactor: close @tq if it is still one of the reactor's connections. */
static void kill_msg(void *p)
{
	struct kill_arg *ka = p;
	struct tcp_reactor *trr = tcp_reactor_get(reactor_self());
	struct tcp_qpair *it;

	if (trr)
		TAILQ_FOREACH (it, &trr->conns, link)
			if (it == ka->tq && !it->closing)
				tcp_qpair_close(it, "fuzz: stream ended");
	__atomic_store_n(&ka->done, 1, __ATOMIC_RELEASE);
}

/* A queue pair on the reactor for one end of a socketpair; the host gets the other. */
static int conn_open(struct tcp_qpair **tqp)
{
	int sv[2];
	struct tcp_qpair *tq;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	tq = tcp_qpair_create(sv[0], g_tgt, g_port, "fuzz");
	if (!tq || reactor_send_msg(g_r, tcp_qpair_start, tq) != 0)
		abort();
	*tqp = tq;
	return sv[1];
}

static uint64_t closed_count(void)
{
	struct nvmf_tcp_stats st;

	nvmf_tcp_get_stats(&st);
	return st.closed;
}

/* Wait until @n more connections have been torn down (freed) than @before. */
static void wait_closed(uint64_t before, unsigned int n)
{
	uint64_t t0 = now_ms();

	while (closed_count() < before + n) {
		if (now_ms() - t0 > 10000) {
			fprintf(stderr, "fuzz_tcp_recv: connection not torn down\n");
			abort();
		}
		usleep(200);
	}
}

/* Wait until every controller of earlier inputs is freed; one that never is leaked. */
static void wait_no_ctrlrs(void)
{
	uint64_t t0 = now_ms();

	while (__atomic_load_n(&g_tgt->nctrlrs, __ATOMIC_ACQUIRE) != 0) {
		if (now_ms() - t0 > 10000) {
			fprintf(stderr, "fuzz_tcp_recv: %u controllers never freed\n",
				__atomic_load_n(&g_tgt->nctrlrs, __ATOMIC_ACQUIRE));
			abort();
		}
		usleep(200);
	}
}

/*
 * Write @len bytes in pieces of @piece (0: as much as fits), reading and dropping what
 * the target sends meanwhile; then half-close and read until the target closes. If the
 * target keeps the connection open (waiting for data the stream never sent), it is
 * closed from the reactor side, as the keep-alive timer or shutdown would.
 */
static void pump(int fd, struct tcp_qpair *tq, const uint8_t *d, size_t len, size_t piece)
{
	uint64_t t0 = now_ms();
	size_t off = 0;
	bool wr_open = true, killed = false;
	uint8_t sink[65536];

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int rc;

		if (wr_open && off == len) {
			shutdown(fd, SHUT_WR);
			wr_open = false;
		}
		if (wr_open)
			pfd.events |= POLLOUT;
		rc = poll(&pfd, 1, 50);
		if (rc < 0 && errno != EINTR)
			abort();
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, sink, sizeof(sink), 0);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break; /* target closed */
		}
		if (wr_open && (pfd.revents & POLLOUT)) {
			size_t want = len - off;
			ssize_t n;

			if (piece && want > piece)
				want = piece;
			n = send(fd, d + off, want, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				wr_open = false; /* target closed: stop writing, read to EOF */
		}
		if (!killed && now_ms() - t0 > STREAM_TIMEOUT_MS) {
			struct kill_arg ka = { .tq = tq };

			killed = true;
			if (reactor_send_msg(g_r, kill_msg, &ka) != 0)
				abort();
			while (!__atomic_load_n(&ka.done, __ATOMIC_ACQUIRE))
				usleep(100);
		}
	}
	close(fd);
}

/* ---- the scripted admin connection (mode bit 0) --------------------------------------- */

static int xfer_full(int fd, void *buf, size_t len, bool wr)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = { .fd = fd, .events = wr ? POLLOUT : POLLIN };
		int pr = poll(&pfd, 1, 5000);
		ssize_t n;

		if (pr < 0 && errno == EINTR)
			continue; /* libFuzzer's timeout alarm, not the target */
		if (pr <= 0) {
			if (pr == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		n = wr ? send(fd, (uint8_t *)buf + done, len - done, MSG_NOSIGNAL)
		       : recv(fd, (uint8_t *)buf + done, len - done, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET; /* the target closed it */
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static int admin_cmd(int fd, struct nvme_cmd *cmd, const void *icdata, uint32_t len)
{
	static const struct nvme_tcp_params p = { .max_icdata = 8192, .maxh2cdata = 8192 };
	uint8_t hdr[NVME_TCP_PSH_MAX];
	uint8_t rsp[sizeof(struct nvme_tcp_rsp)];
	const struct nvme_tcp_rsp *r = (const void *)rsp;
	size_t hl;

	cmd->flags = NVME_CMD_PSDT_SGL_MPTR_CONTIG << NVME_CMD_PSDT_SHIFT;
	if (len) {
		put_le32(cmd->dptr.sgl1.length, len);
		cmd->dptr.sgl1.type =
			NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
	}
	hl = nvme_tcp_build_capsule_cmd(hdr, cmd, len, &p);
	if (xfer_full(fd, hdr, hl, true) || (len && xfer_full(fd, (void *)icdata, len, true))) {
		fprintf(stderr, "fuzz_tcp_recv: admin command 0x%02x not sent: %s\n", cmd->opc,
			strerror(errno));
		return -1;
	}
	if (xfer_full(fd, rsp, sizeof(rsp), false)) {
		fprintf(stderr, "fuzz_tcp_recv: no response to admin command 0x%02x: %s\n",
			cmd->opc, strerror(errno));
		return -1;
	}
	if (r->ch.pdu_type != NVME_TCP_PDU_CAPSULE_RESP) {
		fprintf(stderr, "fuzz_tcp_recv: admin command 0x%02x answered by PDU type %u\n",
			cmd->opc, r->ch.pdu_type);
		return -1;
	}
	return get_le16(&r->cqe.status) & 0xfffe;
}

static int admin_up(int fd)
{
	uint8_t ic[128];
	struct nvmf_connect_cmd cc = { 0 };
	struct nvmf_connect_data cd = { 0 };
	struct nvmf_property_cmd pc = { 0 };
	struct nvme_cmd sf = { 0 };
	int rc;

	nvme_tcp_build_icreq(ic, false, false, 0, 0);
	if (xfer_full(fd, ic, sizeof(ic), true) || xfer_full(fd, ic, sizeof(ic), false)) {
		fprintf(stderr, "fuzz_tcp_recv: ICReq/ICResp exchange failed: %s\n",
			strerror(errno));
		return -1;
	}
	cc.opc = NVME_OPC_FABRICS;
	cc.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cc.sqsize, 31);
	put_le16(&cd.cntlid, 0xffff);
	memset(cd.hostid, 0x0f, sizeof(cd.hostid));
	snprintf(cd.subnqn, sizeof(cd.subnqn), "%s", SUBNQN);
	snprintf(cd.hostnqn, sizeof(cd.hostnqn), "%s", HOSTNQN);
	rc = admin_cmd(fd, (struct nvme_cmd *)&cc, &cd, sizeof(cd));
	if (rc != 0) {
		fprintf(stderr, "fuzz_tcp_recv: admin Connect: status 0x%x\n", (unsigned int)rc);
		return -1;
	}
	pc.opc = NVME_OPC_FABRICS;
	pc.fctype = NVMF_FCTYPE_PROPERTY_SET;
	put_le32(&pc.offset, NVME_REG_CC);
	put_le64(&pc.value, NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT);
	rc = admin_cmd(fd, (struct nvme_cmd *)&pc, NULL, 0);
	if (rc != 0) {
		fprintf(stderr, "fuzz_tcp_recv: Property Set CC.EN: status 0x%x\n", (unsigned int)rc);
		return -1;
	}
	sf.opc = NVME_ADMIN_SET_FEATURES;
	put_le32(&sf.cdw10, NVME_FEAT_NUM_QUEUES);
	put_le32(&sf.cdw11, 1u | 1u << 16);
	rc = admin_cmd(fd, &sf, NULL, 0);
	if (rc != 0)
		fprintf(stderr, "fuzz_tcp_recv: Set Features (queues): status 0x%x\n", (unsigned int)rc);
	return rc == 0 ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_qpair *tq, *atq = NULL;
	uint64_t before = closed_count();
	unsigned int nconns = 1;
	int afd = -1, fd;
	size_t piece;

	if (size < 1)
		return 0;
	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	piece = (size_t)(data[0] >> 1) * 7;
	/* Nothing is connected between inputs: controller IDs restart at the minimum, so the
	 * stream can name the controller the admin script creates. A controller of the last
	 * input may still be on its way out (its last reference is dropped on a reactor after
	 * its queues are gone): wait for it, or the new admin queue would get another ID. */
	wait_no_ctrlrs();
	pthread_mutex_lock(&g_sub->lock);
	g_sub->next_cntlid = g_sub->cntlid_min;
	pthread_mutex_unlock(&g_sub->lock);
	if (data[0] & 1) {
		afd = conn_open(&atq);
		nconns++;
		if (admin_up(afd) != 0) {
			fprintf(stderr, "fuzz_tcp_recv: admin queue setup failed\n");
			abort();
		}
	}
	fd = conn_open(&tq);
	pump(fd, tq, data + 1, size - 1, piece);
	if (afd >= 0)
		pump(afd, atq, NULL, 0, 0);
	wait_closed(before, nconns);
	if (getenv("FUZZ_VERBOSE")) {
		struct nvmf_tcp_stats st;

		nvmf_tcp_get_stats(&st);
		fprintf(stderr, "totals: %llu PDUs in, %llu out, %llu C2HTermReq\n",
			(unsigned long long)st.totals.pdus_rx, (unsigned long long)st.totals.pdus_tx,
			(unsigned long long)st.totals.term_reqs_tx);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The iSCSI target's connection (target/iscsi/iscsi_conn.c, login, session, tasks, task
 * management) as an initiator drives it: every input is the byte stream an initiator
 * sends on one connection, fed over a socketpair to a real iSCSI connection on a real
 * reactor, with the real NVMe target core and a RAM namespace behind LUN 0. However the
 * bytes go, the connection must end cleanly once the initiator closes its side, with
 * every task, buffer and session released (ASan/LeakSanitizer check the rest).
 *
 * Input: [piece size / 7][stream...]. Seeds log in straight to the operational stage
 * (no CHAP is configured) and then send SCSI commands with immediate data.
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

#include "common/log.h"
#include "fuzz.h"
#include "iscsi/iscsi.h"
#include "iscsi/iscsi_internal.h"
#include "core/nvmf.h"
#include "reactor/reactor.h"

#define SUBNQN "nqn.2026-11.io.nvmeof:fuzz"
#define STREAM_TIMEOUT_MS 5000

static struct reactor *g_r;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct nvmf_tgt_opts o;
	struct nvmf_ns_opts no = { .path = "ram:1M", .enabled = true };
	struct nvmf_subsys *sub;
	struct nvmf_tgt *tgt;
	char err[256];

	log_set_level(getenv("FUZZ_VERBOSE") ? LOG_LVL_INFO : LOG_LVL_ERR);
	reactors_configure(128 * 1024, 256, REACTOR_PIN_OFF);
	if (reactors_start(1) != 0)
		return 1;
	g_r = reactor_get(0);
	nvmf_tgt_opts_default(&o);
	tgt = nvmf_tgt_create(&o);
	sub = tgt ? nvmf_subsys_create(tgt, SUBNQN) : NULL;
	if (!sub)
		return 1;
	nvmf_subsys_set_allow_any_host(sub, true);
	if (nvmf_subsys_add_ns(sub, &no, err, sizeof(err)) != 1 || iscsi_init(tgt) != 0 ||
	    iscsi_target_add(ISCSI_DEFAULT_IQN, NULL) != 0 ||
	    iscsi_target_add_lun(ISCSI_DEFAULT_IQN, 0, SUBNQN, 1) != 0) {
		fprintf(stderr, "fuzz_iscsi_conn: cannot set up the target\n");
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

struct kill_arg {
	struct iscsi_conn *c;
	volatile int done;
};

/* On the reactor: close @c if it is still a live connection. */
static void kill_msg(void *p)
{
	struct kill_arg *ka = p;
	struct iscsi_conn *it, *found = NULL;

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH (it, &g_iscsi.conns, link)
		if (it == ka->c)
			found = it;
	pthread_mutex_unlock(&g_iscsi.lock);
	if (found)
		iscsi_conn_close(found, "fuzz: stream ended");
	__atomic_store_n(&ka->done, 1, __ATOMIC_RELEASE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iscsi_conn *c;
	uint8_t sink[65536];
	uint64_t t0;
	size_t off = 0, piece;
	bool wr_open = true, killed = false;
	int sv[2], fd;

	if (size < 1)
		return 0;
	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	piece = (size_t)data[0] * 7;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	c = iscsi_conn_create(sv[0], "fuzz");
	if (!c)
		abort();
	snprintf(c->local_addr, sizeof(c->local_addr), "127.0.0.1");
	snprintf(c->local_port, sizeof(c->local_port), "3260");
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_INSERT_TAIL(&g_iscsi.conns, c, link);
	pthread_mutex_unlock(&g_iscsi.lock);
	__atomic_add_fetch(&g_iscsi.nconns, 1, __ATOMIC_RELAXED);
	if (reactor_send_msg(g_r, iscsi_conn_start, c) != 0)
		abort();

	fd = sv[1];
	t0 = now_ms();
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (wr_open && off == size) {
			shutdown(fd, SHUT_WR);
			wr_open = false;
		}
		if (wr_open)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			abort();
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, sink, sizeof(sink), 0);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
		}
		if (wr_open && (pfd.revents & POLLOUT)) {
			size_t want = size - off;
			ssize_t n;

			if (piece && want > piece)
				want = piece;
			n = send(fd, data + off, want, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				wr_open = false;
		}
		if (!killed && now_ms() - t0 > STREAM_TIMEOUT_MS) {
			struct kill_arg ka = { .c = c };

			killed = true;
			if (reactor_send_msg(g_r, kill_msg, &ka) != 0)
				abort();
			while (!__atomic_load_n(&ka.done, __ATOMIC_ACQUIRE))
				usleep(100);
		}
	}
	close(fd);
	t0 = now_ms();
	while (__atomic_load_n(&g_iscsi.nconns, __ATOMIC_ACQUIRE) != 0) {
		if (now_ms() - t0 > 10000) {
			fprintf(stderr, "fuzz_iscsi_conn: connection not torn down\n");
			abort();
		}
		usleep(200);
	}
	return 0;
}

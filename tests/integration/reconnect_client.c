/* SPDX-License-Identifier: MIT */
/*
 * reconnect_client: writes a pattern (block number and generation) to each of N blocks
 * in turn at queue depth Q for S seconds, reads every completed write back and compares
 * it, through one libnvmeof queue pair in a poll() loop that rides through target
 * restarts; at the end every block is read back against the last generation written.
 * Prints the controller's reconnect statistics. Exit 0 when nothing failed.
 *
 *   reconnect_client URI [--secs S] [--blocks N] [--qd Q] [--reconnect-delay D]
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "initiator/lib/nvmeof.h"

#define QD_MAX 64

struct slot {
	bool busy, reading, need_read;
	uint64_t lba;
	uint32_t gen;
	uint8_t *buf, *chk;
	uint64_t started;
};

static uint32_t g_bs;
static uint32_t *g_gen; /* last generation known written, per block (0: none) */
static uint64_t g_ios, g_errors, g_verify_errors, g_last_done, g_max_stall;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pattern(uint8_t *b, uint64_t lba, uint32_t gen)
{
	for (uint32_t i = 0; i < g_bs; i += 16) {
		memcpy(b + i, &lba, 8);
		memcpy(b + i + 8, &gen, 4);
		memcpy(b + i + 12, &i, 4);
	}
}

static void on_state(struct nvmeof_ctrlr *c, enum nvmeof_ctrlr_state from,
		     enum nvmeof_ctrlr_state to, void *arg)
{
	(void)c;
	(void)arg;
	fprintf(stderr, "reconnect_client: %llu ms: controller %s -> %s\n",
		(unsigned long long)now_ms() % 1000000, nvmeof_ctrlr_state_name(from),
		nvmeof_ctrlr_state_name(to));
}

static void note_done(void)
{
	uint64_t t = now_ms();

	if (g_last_done && t - g_last_done > g_max_stall)
		g_max_stall = t - g_last_done;
	g_last_done = t;
}

static void io_done(void *arg, const struct nvmeof_cpl *cpl)
{
	struct slot *s = arg;
	char st[96];

	s->busy = false;
	note_done();
	g_ios++;
	if (!nvmeof_cpl_ok(cpl)) {
		g_errors++;
		fprintf(stderr, "reconnect_client: %s of LBA %llu failed: %s\n",
			s->reading ? "read" : "write", (unsigned long long)s->lba,
			cpl->err ? nvmeof_strerror(cpl->err)
				 : nvmeof_status_str(cpl->status, st, sizeof(st)));
		return;
	}
	if (!s->reading) {
		g_gen[s->lba] = s->gen;
		s->need_read = true; /* read it back next */
		return;
	}
	if (memcmp(s->buf, s->chk, g_bs)) {
		g_verify_errors++;
		fprintf(stderr, "reconnect_client: LBA %llu reads back wrong\n",
			(unsigned long long)s->lba);
	}
	s->reading = false;
}

int main(int argc, char **argv)
{
	unsigned int qd = 8, nslots;
	uint64_t blocks = 1024, next = 0, end;
	double secs = 8;
	int delay = 1, rc;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	struct nvmeof_ctrlr_stats st;
	struct slot slots[QD_MAX];
	uint32_t gen = 1;
	uint8_t *rb;

	if (argc < 2) {
		fprintf(stderr, "usage: reconnect_client URI [--secs S] [--blocks N] [--qd Q] "
				"[--reconnect-delay D]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--blocks"))
			blocks = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--qd"))
			qd = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--reconnect-delay"))
			delay = atoi(argv[i + 1]);
	}
	if (qd < 1 || qd > QD_MAX || blocks < qd)
		return 2;
	nvmeof_opts_init(&o);
	o.queue_depth = qd;
	o.reconnect_delay = delay;
	o.ctrl_loss_tmo = 60;
	o.kato_ms = 5000;
	o.io_timeout_ms = 5000;
	rc = nvmeof_ctrlr_connect(argv[1], &o, &c);
	if (rc) {
		fprintf(stderr, "reconnect_client: %s\n", nvmeof_last_error());
		return 1;
	}
	nvmeof_ctrlr_set_state_fn(c, on_state, NULL);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 0);
	if (!ns)
		return 1;
	g_bs = nvmeof_ns_get_block_size(ns);
	if (blocks > nvmeof_ns_get_num_blocks(ns))
		blocks = nvmeof_ns_get_num_blocks(ns);
	g_gen = calloc(blocks, sizeof(*g_gen));
	rb = malloc(g_bs);
	nslots = qd;
	for (unsigned int i = 0; i < nslots; i++) {
		memset(&slots[i], 0, sizeof(slots[i]));
		slots[i].buf = malloc(g_bs);
		slots[i].chk = malloc(g_bs);
	}

	end = now_ms() + (uint64_t)(secs * 1000);
	while (now_ms() < end || nvmeof_qpair_outstanding(qp)) {
		struct pollfd p[2];
		int t, t2;

		for (unsigned int i = 0; i < nslots && now_ms() < end; i++) {
			struct slot *s = &slots[i];
			struct iovec v;

			if (s->busy)
				continue;
			if (s->need_read) { /* the read-back of a completed write */
				v.iov_base = s->buf;
				v.iov_len = g_bs;
				memset(s->buf, 0, g_bs);
				s->reading = true;
				if (nvmeof_read(qp, ns, s->lba, 1, &v, 1, 0, io_done, s) == 0) {
					s->busy = true;
					s->need_read = false;
				}
				continue;
			}
			s->lba = next;
			next = (next + 1) % blocks;
			s->gen = gen++;
			s->reading = false;
			pattern(s->chk, s->lba, s->gen);
			memcpy(s->buf, s->chk, g_bs);
			v.iov_base = s->buf;
			v.iov_len = g_bs;
			if (nvmeof_write(qp, ns, s->lba, 1, &v, 1, 0, io_done, s) == 0)
				s->busy = true;
		}
		p[0].fd = nvmeof_qpair_get_fd(qp);
		p[0].events = nvmeof_qpair_which_events(qp);
		p[1].fd = nvmeof_ctrlr_get_fd(c);
		p[1].events = nvmeof_ctrlr_which_events(c);
		t = nvmeof_qpair_timeout_ms(qp);
		t2 = nvmeof_ctrlr_timeout_ms(c);
		if (t < 0 || (t2 >= 0 && t2 < t))
			t = t2;
		if (t < 0 || t > 100)
			t = 100;
		poll(p, 2, t);
		if (nvmeof_qpair_service(qp, p[0].revents) < 0) {
			fprintf(stderr, "reconnect_client: queue pair failed: %s\n",
				nvmeof_qpair_error(qp));
			break;
		}
		nvmeof_ctrlr_service(c, p[1].revents);
		if (now_ms() > end + 60000)
			break;
	}
	/* Every block against the last generation written there. */
	for (uint64_t lba = 0; lba < blocks; lba++) {
		if (!g_gen[lba])
			continue;
		rc = nvmeof_read_sync(qp, ns, lba, 1, rb, 0);
		pattern(slots[0].chk, lba, g_gen[lba]);
		if (rc || memcmp(rb, slots[0].chk, g_bs)) {
			g_verify_errors++;
			if (g_verify_errors < 5)
				fprintf(stderr, "reconnect_client: final check of LBA %llu: %s\n",
					(unsigned long long)lba, rc ? "read failed" : "wrong data");
		}
	}
	nvmeof_ctrlr_get_stats(c, &st);
	printf("ios %llu errors %llu verify_errors %llu verified_blocks %llu reconnects %llu "
	       "attempts %llu requeued %llu last_outage_ms %llu max_stall_ms %llu\n",
	       (unsigned long long)g_ios, (unsigned long long)g_errors,
	       (unsigned long long)g_verify_errors, (unsigned long long)blocks,
	       (unsigned long long)st.reconnects, (unsigned long long)st.reconnect_attempts,
	       (unsigned long long)st.requeued, (unsigned long long)st.last_outage_ms,
	       (unsigned long long)g_max_stall);
	fflush(stdout);
	nvmeof_ctrlr_disconnect(c);
	for (unsigned int i = 0; i < nslots; i++) {
		free(slots[i].buf);
		free(slots[i].chk);
	}
	free(g_gen);
	free(rb);
	return g_errors || g_verify_errors ? 1 : 0;
}

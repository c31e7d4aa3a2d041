/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-tcp-ceiling: the most NVMe/TCP-shaped request/response traffic loopback TCP
 * carries on this machine, as the reference a target's IOPS is measured against.
 *
 * A server thread and a client thread talk over C connections on 127.0.0.1. The client
 * keeps Q requests of --req bytes in flight per connection; the server answers each with
 * a PDU of --resp bytes (and one of --resp2 bytes when that is not 0). Both sides frame
 * PDUs only by the PLEN field of the 8-byte NVMe/TCP common header, receive into one
 * 256 KiB buffer (many PDUs per recv) and send many PDUs per sendmsg from one template
 * (no copies), with partial writes carried over. The server does nothing else: no parsing,
 * digests, request state or storage, so a target moving the same bytes can only add to
 * its CPU time per request and lose IOPS.
 *
 * Output: IOPS, the server thread's CPU time per request, and the client's; --json prints
 * one object (iops, server_cpu_us_per_req, client_cpu_us_per_req, ...).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define RX_BUF    (256 * 1024)
#define MAX_CONNS 64
#define MAX_IOV   64
#define CH_LEN    8 /* NVMe/TCP common header: type, flags, hlen, pdo, plen (LE32) */

struct opts {
	unsigned int secs, qd, conns;
	uint32_t req, resp, resp2;
	int srv_cpu, cli_cpu;
	bool json;
};

/* Receive framing: PDUs counted by their PLEN, headers possibly split across reads. */
struct rx {
	uint8_t hdr[CH_LEN];
	unsigned int have;  /* header bytes collected */
	uint64_t remaining; /* body bytes of the current PDU still to skip */
};

/* Send side: @pending PDUs still to go, @off bytes of the first one already sent,
 * @phase which template the first one is (a server's replies alternate resp, resp2). */
struct tx {
	uint64_t pending;
	size_t off;
	unsigned int phase;
};

struct conn {
	int fd;
	struct rx rx;
	struct tx tx;
	uint64_t done;         /* client: responses completed; server: requests answered */
	unsigned int pdus_per; /* PDUs that make one reply (1 or 2) */
	unsigned int pdu_seen; /* of the current reply */
};

struct side {
	const struct opts *o;
	struct conn c[MAX_CONNS];
	unsigned int n;
	int ep;
	bool server;
	uint8_t *tpl[2]; /* PDU templates: server resp/resp2, client req */
	uint32_t len[2];
	volatile bool *stop;
	double cpu_s;
	uint64_t total;
};

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		fprintf(stderr, "nvmeof-tcp-ceiling: cannot pin to CPU %d\n", cpu);
}

static uint8_t *make_pdu(uint32_t len)
{
	uint8_t *p = calloc(1, len);

	if (!p)
		return NULL;
	p[0] = 0x04; /* any type: only PLEN matters to either side */
	p[2] = len < 72 ? (uint8_t)len : 72;
	p[4] = (uint8_t)len;
	p[5] = (uint8_t)(len >> 8);
	p[6] = (uint8_t)(len >> 16);
	p[7] = (uint8_t)(len >> 24);
	return p;
}

/* Count whole PDUs in @n received bytes. */
static uint64_t rx_feed(struct rx *r, const uint8_t *b, size_t n)
{
	uint64_t pdus = 0;

	while (n) {
		if (r->remaining) {
			size_t k = n < r->remaining ? n : (size_t)r->remaining;

			r->remaining -= k;
			b += k;
			n -= k;
			if (!r->remaining)
				pdus++;
			continue;
		}
		while (r->have < CH_LEN && n) {
			r->hdr[r->have++] = *b++;
			n--;
		}
		if (r->have < CH_LEN)
			break;
		r->have = 0;
		r->remaining = ((uint64_t)r->hdr[4] | (uint64_t)r->hdr[5] << 8 |
				(uint64_t)r->hdr[6] << 16 | (uint64_t)r->hdr[7] << 24);
		if (r->remaining < CH_LEN)
			return UINT64_MAX; /* not our peer */
		r->remaining -= CH_LEN;
		if (!r->remaining)
			pdus++;
	}
	return pdus;
}

/* Send as much of the pending PDUs as the socket takes. 0, or -errno on a dead socket. */
static int tx_flush(struct side *s, struct conn *c)
{
	struct iovec iov[MAX_IOV];

	while (c->tx.pending) {
		unsigned int n = 0, per = s->len[1] ? 2 : 1;
		uint64_t pdus = c->tx.pending;
		size_t off = c->tx.off;
		uint64_t i;
		ssize_t w;

		for (i = 0; i < pdus && n < MAX_IOV; i++) {
			unsigned int k = (unsigned int)((c->tx.phase + i) % per);

			iov[n].iov_base = s->tpl[k] + off;
			iov[n].iov_len = s->len[k] - off;
			off = 0;
			n++;
		}
		w = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = n },
			    MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		for (i = 0; i < n && w > 0; i++) {
			if ((size_t)w >= iov[i].iov_len) {
				w -= (ssize_t)iov[i].iov_len;
				c->tx.pending--;
				c->tx.off = 0;
				c->tx.phase = (c->tx.phase + 1) % per;
			} else {
				c->tx.off += (size_t)w;
				w = 0;
			}
		}
	}
	return 0;
}

static void want_out(struct side *s, struct conn *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c };

	epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void *side_run(void *arg)
{
	struct side *s = arg;
	struct epoll_event ev[MAX_CONNS];
	uint8_t *buf = malloc(RX_BUF);
	unsigned int i;

	pin(s->server ? s->o->srv_cpu : s->o->cli_cpu);
	if (!buf)
		return NULL;
	for (i = 0; i < s->n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &s->c[i] };

		epoll_ctl(s->ep, EPOLL_CTL_ADD, s->c[i].fd, &e);
		if (!s->server) {
			s->c[i].tx.pending = s->o->qd; /* the first window of requests */
			tx_flush(s, &s->c[i]);
			want_out(s, &s->c[i], s->c[i].tx.pending != 0);
		}
	}
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);

	while (!*s->stop) {
		int k = epoll_wait(s->ep, ev, MAX_CONNS, 100);

		for (int e = 0; e < k; e++) {
			struct conn *c = ev[e].data.ptr;
			bool had = c->tx.pending != 0;

			if (ev[e].events & EPOLLIN) {
				ssize_t r = recv(c->fd, buf, RX_BUF, 0);
				uint64_t pdus;

				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
					*s->stop = true;
					break;
				}
				pdus = r > 0 ? rx_feed(&c->rx, buf, (size_t)r) : 0;
				if (pdus == UINT64_MAX) {
					fprintf(stderr, "nvmeof-tcp-ceiling: bad PDU length\n");
					*s->stop = true;
					break;
				}
				if (s->server) {
					/* one reply (resp [+ resp2]) per request */
					c->done += pdus;
					c->tx.pending += pdus * (s->len[1] ? 2 : 1);
				} else {
					uint64_t replies;

					c->pdu_seen += (unsigned int)pdus;
					replies = c->pdu_seen / c->pdus_per;
					c->pdu_seen %= c->pdus_per;
					c->done += replies;
					c->tx.pending += replies;
				}
			}
			if (c->tx.pending && tx_flush(s, c) < 0) {
				*s->stop = true;
				break;
			}
			if (had != (c->tx.pending != 0))
				want_out(s, c, c->tx.pending != 0);
		}
	}
	s->cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
	for (i = 0; i < s->n; i++)
		s->total += s->c[i].done;
	free(buf);
	return NULL;
}

static int connect_pairs(struct side *srv, struct side *cli, unsigned int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	unsigned int i;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, (int)n) != 0 || getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
		return -errno;
	for (i = 0; i < n; i++) {
		int cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), sfd;

		if (cfd < 0)
			return -errno;
		if (connect(cfd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS)
			return -errno;
		sfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		if (sfd < 0)
			return -errno;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		srv->c[i] = (struct conn){ .fd = sfd, .pdus_per = 1 };
		cli->c[i] = (struct conn){ .fd = cfd, .pdus_per = srv->len[1] ? 2 : 1 };
	}
	srv->n = cli->n = n;
	close(lfd);
	return 0;
}

static const char usage[] = "Usage: nvmeof-tcp-ceiling [OPTIONS]\n"
			    "The loopback ceiling for NVMe/TCP-shaped traffic: a server and a "
			    "client thread on\n"
			    "127.0.0.1 that only frame PDUs by length and answer each request.\n"
			    "  -t, --time SECS     run time (default 5)\n"
			    "  -q, --qd N          requests in flight per connection (default 32)\n"
			    "  -c, --conns N       connections (default 1, at most 64)\n"
			    "      --req BYTES     request PDU size (default 72: a CapsuleCmd)\n"
			    "      --resp BYTES    first reply PDU size (default 4120: C2HData "
			    "with 4 KiB)\n"
			    "      --resp2 BYTES   second reply PDU size, 0 for none (default 24: "
			    "CapsuleResp)\n"
			    "      --pin S,C       server thread on CPU S, client thread on CPU C\n"
			    "      --json          one JSON object instead of the table\n"
			    "  -V, --version       print the version\n"
			    "  -h, --help          this text\n";

static int parse_u32(const char *opt, const char *v, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno || end == v || *end || x < min || x > max) {
		fprintf(stderr, "nvmeof-tcp-ceiling: %s: bad value '%s' (%u..%u)\n", opt, v, min,
			max);
		return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "time", required_argument, NULL, 't' },
					    { "qd", required_argument, NULL, 'q' },
					    { "conns", required_argument, NULL, 'c' },
					    { "req", required_argument, NULL, 1 },
					    { "resp", required_argument, NULL, 2 },
					    { "resp2", required_argument, NULL, 3 },
					    { "pin", required_argument, NULL, 4 },
					    { "json", no_argument, NULL, 5 },
					    { "version", no_argument, NULL, 'V' },
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	struct opts o = { .secs = 5,
			  .qd = 32,
			  .conns = 1,
			  .req = 72,
			  .resp = 4120,
			  .resp2 = 24,
			  .srv_cpu = -1,
			  .cli_cpu = -1 };
	static struct side srv, cli;
	volatile bool stop = false;
	pthread_t ts, tc;
	double t0, el;
	uint32_t v;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "t:q:c:Vh", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (parse_u32("--time", optarg, 1, 3600, &v))
				return 2;
			o.secs = v;
			break;
		case 'q':
			if (parse_u32("--qd", optarg, 1, 4096, &v))
				return 2;
			o.qd = v;
			break;
		case 'c':
			if (parse_u32("--conns", optarg, 1, MAX_CONNS, &v))
				return 2;
			o.conns = v;
			break;
		case 1:
			if (parse_u32("--req", optarg, CH_LEN, 16u << 20, &o.req))
				return 2;
			break;
		case 2:
			if (parse_u32("--resp", optarg, CH_LEN, 16u << 20, &o.resp))
				return 2;
			break;
		case 3:
			if (strcmp(optarg, "0") &&
			    parse_u32("--resp2", optarg, CH_LEN, 16u << 20, &o.resp2))
				return 2;
			if (!strcmp(optarg, "0"))
				o.resp2 = 0;
			break;
		case 4:
			if (sscanf(optarg, "%d,%d", &o.srv_cpu, &o.cli_cpu) != 2 || o.srv_cpu < 0 ||
			    o.cli_cpu < 0) {
				fprintf(stderr, "nvmeof-tcp-ceiling: --pin: bad value '%s' (S,C)\n",
					optarg);
				return 2;
			}
			break;
		case 5:
			o.json = true;
			break;
		case 'V':
			printf("nvmeof-tcp-ceiling %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	srv = (struct side){ .o = &o, .server = true, .stop = &stop, .len = { o.resp, o.resp2 } };
	cli = (struct side){ .o = &o, .server = false, .stop = &stop, .len = { o.req, 0 } };
	srv.tpl[0] = make_pdu(o.resp);
	srv.tpl[1] = o.resp2 ? make_pdu(o.resp2) : NULL;
	cli.tpl[0] = make_pdu(o.req);
	srv.ep = epoll_create1(0);
	cli.ep = epoll_create1(0);
	if (!srv.tpl[0] || (o.resp2 && !srv.tpl[1]) || !cli.tpl[0] || srv.ep < 0 || cli.ep < 0) {
		fprintf(stderr, "nvmeof-tcp-ceiling: out of memory\n");
		return 1;
	}
	rc = connect_pairs(&srv, &cli, o.conns);
	if (rc) {
		fprintf(stderr, "nvmeof-tcp-ceiling: loopback connections: %s\n", strerror(-rc));
		return 1;
	}
	t0 = now_s(CLOCK_MONOTONIC);
	pthread_create(&ts, NULL, side_run, &srv);
	pthread_create(&tc, NULL, side_run, &cli);
	while (!stop && now_s(CLOCK_MONOTONIC) - t0 < o.secs)
		usleep(10000);
	stop = true;
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	el = now_s(CLOCK_MONOTONIC) - t0;
	if (!cli.total) {
		fprintf(stderr, "nvmeof-tcp-ceiling: no request completed\n");
		return 1;
	}
	double iops = (double)cli.total / el;
	double scpu = srv.cpu_s * 1e6 / (double)srv.total;
	double ccpu = cli.cpu_s * 1e6 / (double)cli.total;

	if (o.json)
		printf("{\"conns\":%u,\"qd\":%u,\"req\":%u,\"resp\":%u,\"resp2\":%u,"
		       "\"seconds\":%.3f,\"requests\":%llu,\"iops\":%.1f,"
		       "\"server_cpu_us_per_req\":%.3f,\"client_cpu_us_per_req\":%.3f,"
		       "\"mb_per_s\":%.1f}\n",
		       o.conns, o.qd, o.req, o.resp, o.resp2, el, (unsigned long long)cli.total,
		       iops, scpu, ccpu, iops * ((double)o.req + o.resp + o.resp2) / 1e6);
	else
		printf("connections %u, QD %u, request %u B, reply %u + %u B, %.1f s\n"
		       "  IOPS                    %12.0f\n"
		       "  server CPU per request  %12.3f us\n"
		       "  client CPU per request  %12.3f us\n",
		       o.conns, o.qd, o.req, o.resp, o.resp2, el, iops, scpu, ccpu);
	for (unsigned int i = 0; i < o.conns; i++) {
		close(srv.c[i].fd);
		close(cli.c[i].fd);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * A small NVMe/TCP controller on 127.0.0.1 for the initiator's unit tests: Connect,
 * Property Get/Set, Identify (controller, namespaces, active list, descriptors), Set
 * Features (Number of Queues), Keep Alive, discovery log, and Read/Write/Flush on RAM.
 * Every command is recorded as a line in an event log so tests can check the host's
 * sequence. One thread per connection.
 */
#ifndef NVMEOF_TESTS_FAKE_CTRLR_H
#define NVMEOF_TESTS_FAKE_CTRLR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FC_MAX_EVENTS 256
#define FC_NS_BLOCKS1 2048 /* NSID 1: 512-byte blocks */
#define FC_NS_BLOCKS3 256  /* NSID 3: 4096-byte blocks */

/* DH-HMAC-CHAP on every connection (fake_auth.c plays it in host_auth_ut): with ops set,
 * Connect answers AUTHREQ.ATR and a queue must authenticate before anything but Fabrics
 * Connect and Authentication Send/Receive is served (else sct 1 sc 0x91). */
struct fc_auth_ops {
	void *(*start)(void *arg, uint16_t qid); /* per connection, at each Connect */
	void (*send)(void *st, const uint8_t *msg, size_t tl);
	int (*recv)(void *st, uint8_t *out, size_t al); /* bytes, or -1: do not answer */
	bool (*authenticated)(void *st);
	void (*end)(void *st);
};

struct fake_ctrlr {
	/* configuration, set before fc_start() */
	const char *subnqn;
	uint8_t mdts;		/* Identify MDTS (units of 4 KiB pages, 0 = none) */
	uint16_t mqes;		/* CAP.MQES (0's based) */
	uint32_t ioccsz;	/* Identify IOCCSZ (16-byte units) */
	uint16_t max_queues;	/* granted by Set Features Number of Queues */
	bool never_ready;	/* CSTS.RDY stays 0 */
	bool no_disconnect;	/* OFCS bit 0 clear: Disconnect not supported */
	int disc_records;	/* discovery log entries */
	int disc_bump_once;	/* bump GENCTR after this many discovery log reads (0: never) */
	/* faults for the host's reconnect (may be changed while running, under lock) */
	int drop_at_write;   /* the Nth write (1-based) drops every connection unanswered */
	int refuse_connects; /* admin Connects still to refuse (sct 1 sc 0x82, DNR clear) */
	bool refuse_host;    /* refuse admin Connects: host not allowed (sct 1 sc 0x84, DNR) */
	bool silent;         /* answer nothing, keep the sockets open (a hung target) */
	const struct fc_auth_ops *auth;
	void *auth_arg;
	bool auth_optional; /* with auth: no AUTHREQ.ATR, commands served unauthenticated */
	bool auth_ascr;     /* with auth: AUTHREQ.ASCR (secure channel concatenation) too */

	/* state */
	int lfd;
	uint16_t port;
	pthread_t acceptor;
	pthread_mutex_t lock;
	char events[FC_MAX_EVENTS][224];
	int nevents;
	uint32_t cc;
	uint64_t genctr;
	int disc_reads;
	int keep_alives;
	int writes, reads;
	uint8_t *ns1, *ns3;
	int nconns;
	pthread_t conns[32];
	int conn_fds[32];
	bool stop;
};

int fc_start(struct fake_ctrlr *fc);
void fc_stop(struct fake_ctrlr *fc);
/* Drop every connection (as a crashed target would). */
void fc_drop_all(struct fake_ctrlr *fc);
/* Index of the first event starting with @prefix at or after @from, or -1. */
int fc_find(struct fake_ctrlr *fc, const char *prefix, int from);
int fc_count(struct fake_ctrlr *fc, const char *prefix);
void fc_dump(struct fake_ctrlr *fc);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Admission of DH-HMAC-CHAP work (the Diffie-Hellman of a Challenge or of a Reply) to the
 * target's pool of authentication threads. The work of a queue that has not yet
 * authenticated is bounded by host NQN, by peer address and in all; what does not fit is
 * refused at once (the exchange ends in AUTH_Failure1) rather than queued past the
 * deadline. The re-authentication of a queue that authenticated before takes a lane of
 * its own, served first and never refused: no one without a secret can delay it.
 *
 * Pure decision over the jobs pending (queued or running) in the shared lane; the pool
 * (target/core/auth_pool.c) keeps that list and the counters.
 */
#ifndef NVMEOF_TARGET_DHCHAP_ADMIT_H
#define NVMEOF_TARGET_DHCHAP_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

#define DHCHAP_ADDR_LEN 48 /* a peer address without its port, NUL included */

struct dhchap_admit_limits {
	unsigned int per_host; /* pending jobs of one host NQN */
	unsigned int per_addr; /* pending jobs from one peer address */
	unsigned int total;    /* pending jobs in the shared lane */
};

/* Who a job is for. */
struct dhchap_admit_key {
	const char *hostnqn;
	char addr[DHCHAP_ADDR_LEN];
	bool authenticated; /* the queue authenticated before: re-authentication */
};

enum dhchap_admit_verdict {
	DHCHAP_ADMIT_SHARED,     /* admitted to the shared lane */
	DHCHAP_ADMIT_PRIORITY,   /* admitted to the re-authentication lane */
	DHCHAP_ADMIT_FULL_TOTAL, /* refused: the shared lane is full */
	DHCHAP_ADMIT_FULL_HOST,  /* refused: this host NQN has its share pending */
	DHCHAP_ADMIT_FULL_ADDR,  /* refused: this peer address has its share pending */
	DHCHAP_ADMIT_NVERDICTS,
};

/* The verdict for @k, given the @npending keys of the shared lane. */
enum dhchap_admit_verdict dhchap_admit(const struct dhchap_admit_limits *lim,
				       const struct dhchap_admit_key *const *pending,
				       unsigned int npending, const struct dhchap_admit_key *k);

/*
 * Which of the @nqueued jobs of the shared lane (oldest first) a free thread takes: the
 * oldest of those whose host NQN and peer address have the fewest jobs among the
 * @nrunning ones running. A flood from one host NQN or one address thus holds at most its
 * share of the threads while others wait, and another host's job is next. Returns an
 * index into @queued (0 when @nqueued is 0).
 */
unsigned int dhchap_admit_pick(const struct dhchap_admit_key *const *queued, unsigned int nqueued,
			       const struct dhchap_admit_key *const *running,
			       unsigned int nrunning);

/* "total", "host", "address" for the refusals; for logs. */
const char *dhchap_admit_verdict_name(enum dhchap_admit_verdict v);

/* The address of "ADDR:PORT" or "[ADDR]:PORT" into @out (as it is when there is no port). */
void dhchap_admit_addr(const char *peer, char *out, size_t len);

#endif

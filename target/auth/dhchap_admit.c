/* SPDX-License-Identifier: MIT */
/* Admission of DH-HMAC-CHAP work to the authentication threads (see dhchap_admit.h). */
#include "config.h"

#include <string.h>

#include "dhchap_admit.h"

static bool same_host(const struct dhchap_admit_key *a, const struct dhchap_admit_key *b)
{
	return a->hostnqn && b->hostnqn && !strcmp(a->hostnqn, b->hostnqn);
}

enum dhchap_admit_verdict dhchap_admit(const struct dhchap_admit_limits *lim,
				       const struct dhchap_admit_key *const *pending,
				       unsigned int npending, const struct dhchap_admit_key *k)
{
	unsigned int host = 0, addr = 0;

	if (k->authenticated)
		return DHCHAP_ADMIT_PRIORITY;
	if (npending >= lim->total)
		return DHCHAP_ADMIT_FULL_TOTAL;
	for (unsigned int i = 0; i < npending; i++) {
		host += same_host(pending[i], k);
		addr += !strcmp(pending[i]->addr, k->addr);
	}
	if (host >= lim->per_host)
		return DHCHAP_ADMIT_FULL_HOST;
	if (addr >= lim->per_addr)
		return DHCHAP_ADMIT_FULL_ADDR;
	return DHCHAP_ADMIT_SHARED;
}

unsigned int dhchap_admit_pick(const struct dhchap_admit_key *const *queued, unsigned int nqueued,
			       const struct dhchap_admit_key *const *running, unsigned int nrunning)
{
	unsigned int best = 0, best_score = ~0u;

	for (unsigned int i = 0; i < nqueued && best_score; i++) {
		unsigned int score = 0;

		for (unsigned int r = 0; r < nrunning; r++)
			score += same_host(queued[i], running[r]) +
				 !strcmp(queued[i]->addr, running[r]->addr);
		if (score < best_score) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

const char *dhchap_admit_verdict_name(enum dhchap_admit_verdict v)
{
	static const char *const names[DHCHAP_ADMIT_NVERDICTS] = {
		[DHCHAP_ADMIT_SHARED] = "shared",     [DHCHAP_ADMIT_PRIORITY] = "priority",
		[DHCHAP_ADMIT_FULL_TOTAL] = "total",  [DHCHAP_ADMIT_FULL_HOST] = "host",
		[DHCHAP_ADMIT_FULL_ADDR] = "address",
	};

	return (unsigned int)v < DHCHAP_ADMIT_NVERDICTS ? names[v] : "?";
}

void dhchap_admit_addr(const char *peer, char *out, size_t len)
{
	const char *colon = strchr(peer, ':');
	size_t n = strlen(peer);

	if (!len)
		return;
	if (peer[0] == '[') { /* "[v6]:port" */
		const char *end = strchr(peer, ']');

		peer++;
		n = end ? (size_t)(end - peer) : n - 1;
	} else if (colon && !strchr(colon + 1, ':')) { /* "v4:port"; a bare v6 stays whole */
		n = (size_t)(colon - peer);
	}
	if (n >= len)
		n = len - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

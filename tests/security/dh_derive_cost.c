/* SPDX-License-Identifier: MIT */
/*
 * What one DH-HMAC-CHAP Reply costs the controller in Diffie-Hellman work, per group:
 * the key pair of the Challenge (nvme_dh_generate) and the shared secret from the host's
 * value (nvme_dh_shared_secret, with the check of that value), in CPU time of this thread
 * averaged over a few rounds.
 * Prints figures for dhchap-flood.sh's log; asserts nothing about time.
 *
 *   dh_derive_cost [ROUNDS]     (default 10)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/dhchap_crypto.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the figure a loaded host leaves */
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;

	if (rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: %s [ROUNDS 1-1000]\n", argv[0]);
		return 2;
	}
	for (uint8_t g = NVME_AUTH_DHGROUP_FFDHE2048; g <= NVME_AUTH_DHGROUP_FFDHE8192; g++) {
		size_t len = nvme_dh_value_len(g);
		struct nvme_dh *host = NULL, *ctrl = NULL;
		uint8_t hv[1024];
		double t0, gen = 0, derive = 0;

		if (nvme_dh_generate(g, &host) || nvme_dh_public(host, hv, len)) {
			fprintf(stderr, "%s: no key pair\n", nvme_auth_dhgroup_name(g));
			return 1;
		}
		for (int i = 0; i < rounds; i++) {
			struct nvme_secret *s = NULL;

			t0 = now_ms();
			if (nvme_dh_generate(g, &ctrl)) {
				fprintf(stderr, "%s: no key pair\n", nvme_auth_dhgroup_name(g));
				return 1;
			}
			gen += now_ms() - t0;
			t0 = now_ms();
			if (nvme_dh_shared_secret(ctrl, hv, len, &s)) {
				fprintf(stderr, "%s: no shared secret\n",
					nvme_auth_dhgroup_name(g));
				return 1;
			}
			derive += now_ms() - t0;
			nvme_secret_free(s);
			nvme_dh_free(ctrl);
		}
		printf("%s: key pair %.2f ms, shared secret (peer check included) %.2f ms of CPU "
		       "per Reply (%d rounds)\n",
		       nvme_auth_dhgroup_name(g), gen / rounds, derive / rounds, rounds);
		nvme_dh_free(host);
	}
	return 0;
}

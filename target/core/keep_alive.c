/* SPDX-License-Identifier: MIT */
/*
 * Keep Alive: the KATO timer on the admin reactor, restarted by admin traffic, and the
 * teardown when it expires.
 */
#include "config.h"

#include "ctrlr.h"
#include "common/log.h"
#include "reactor/reactor.h"

void nvmf_ctrlr_ka_stop(struct nvmf_ctrlr *c)
{
	if (c->ka_active) {
		ev_timer_stop(c->admin_reactor->loop, &c->ka_timer);
		c->ka_active = false;
	}
}

static void ka_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	nvmf_ctrlr_ka_expired(w->data);
}

void nvmf_ctrlr_ka_restart(struct nvmf_ctrlr *c)
{
	double t;

	if (!c->kato_ms || !c->admin_reactor || !c->admin_reactor->loop ||
	    c->state == NVMF_CTRLR_DEAD)
		return;
	/* KATO plus a grace of one KATO, at most a second, for the host's timer slack. */
	t = (c->kato_ms + (c->kato_ms < 1000 ? c->kato_ms : 1000)) / 1000.0;
	if (!c->ka_active) {
		ev_timer_init(&c->ka_timer, ka_timer_cb, 0., t);
		c->ka_timer.data = c;
		c->ka_active = true;
	}
	c->ka_timer.repeat = t;
	ev_timer_again(c->admin_reactor->loop, &c->ka_timer);
}

uint32_t nvmf_kato_clamp(uint32_t kato_ms)
{
	/* Round up to the Keep Alive granularity (KAS, 100 ms) without wrapping, then cap. */
	uint64_t t = ((uint64_t)kato_ms + NVMF_KAS_MS - 1) / NVMF_KAS_MS * NVMF_KAS_MS;

	return t > NVMF_KATO_MAX_MS ? NVMF_KATO_MAX_MS : (uint32_t)t;
}

void nvmf_ctrlr_ka_set(struct nvmf_ctrlr *c, uint32_t kato_ms)
{
	uint32_t t = nvmf_kato_clamp(kato_ms);

	if (t < kato_ms)
		log_peer("%s: KATO %u ms asked by %s, %u ms granted (the most this target keeps "
			 "a silent controller)",
			 c->label, kato_ms, c->hostnqn, t);
	kato_ms = t;
	c->kato_ms = kato_ms;
	if (!kato_ms)
		nvmf_ctrlr_ka_stop(c);
	else
		nvmf_ctrlr_ka_restart(c);
}

void nvmf_ctrlr_ka_expired(struct nvmf_ctrlr *c)
{
	log_warn("%s: keep alive timeout (KATO %u ms) for %s", c->label, c->kato_ms, c->hostnqn);
	nvmf_ctrlr_kill(c, "keep alive expired");
}

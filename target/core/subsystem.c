/* SPDX-License-Identifier: MIT */
/*
 * The target object, subsystems, allowed hosts and namespaces (with their stable
 * identifiers), plus the waits that let configuration changes run on the main thread
 * while controllers live on reactors.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "ctrlr.h"
#include "qos.h"
#include "common/endian.h"
#include "common/log.h"
#include "reactor/reactor.h"
#include "ns_ident.h"
#include "resv_store.h"
#include "reservation.h"

#define WAIT_CTRLRS_MS 10000
#define WAIT_CONNECTIONS_MS 5000
#define WAIT_NS_IDLE_MS 30000

uint64_t nvmf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Every reactor has run a message posted after now: no reactor still uses a pointer it
 * loaded before (a Connect runs to completion within one reactor callback). */
static void quiesce_msg(void *arg)
{
	__atomic_sub_fetch((unsigned int *)arg, 1, __ATOMIC_RELEASE);
}

void nvmf_reactors_quiesce(void)
{
	unsigned int n = reactor_count(), *left;

	if (!n || reactor_self() || !(left = malloc(sizeof(*left))))
		return;
	*left = n;
	for (unsigned int i = 0; i < n; i++)
		if (reactor_send_msg(reactor_get(i), quiesce_msg, left))
			__atomic_sub_fetch(left, 1, __ATOMIC_RELAXED);
	for (unsigned int t = 0; t < 2000 && __atomic_load_n(left, __ATOMIC_ACQUIRE); t++)
		sleep_ms(1);
	if (!__atomic_load_n(left, __ATOMIC_ACQUIRE))
		free(left);
	else
		log_warn("a reactor did not answer within 2 s"); /* @left stays theirs */
}

static void sha256(const void *data, size_t len, uint8_t md[32])
{
	unsigned int mdlen = 32;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL))
		memset(md, 0, 32);
}

/* ---- Target --------------------------------------------------------------------------------- */

void nvmf_tgt_opts_default(struct nvmf_tgt_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_queue_depth = 128;
	o->max_admin_depth = 32;
	o->in_capsule_size = 8192;
	o->max_io_size = 128 * 1024;
	o->max_io_queues = 64;
	o->max_connections = 4096;
	o->max_connecting = 1024;
	o->connect_timeout_ms = 5000;
	o->login_timeout_ms = 5000;
	o->kato_default_ms = 0;
	o->auth_timeout_ms = 5000;
	o->auth_threads = 3;
	o->auth_max_pending = 128;
	o->auth_max_pending_host = 16;
	o->auth_max_pending_addr = 16;
	o->max_host_connections = 1024;
	o->r2t_timeout_ms = 10000;
}

static bool opts_valid(const struct nvmf_tgt_opts *o)
{
	return o->max_queue_depth >= 2 && o->max_queue_depth <= 65535 &&
	       o->max_admin_depth >= 2 && o->max_admin_depth <= 4096 &&
	       o->max_io_size >= 4096 && (o->max_io_size & (o->max_io_size - 1)) == 0 &&
	       o->max_io_size <= (1u << 30) && o->max_io_queues >= 1 &&
	       o->max_io_queues <= NVMF_MAX_IO_QUEUES && o->in_capsule_size <= (1u << 20);
}

static struct nvmf_subsys *subsys_alloc(struct nvmf_tgt *tgt, const char *nqn,
					enum nvmf_subsys_type type)
{
	struct nvmf_subsys *s = calloc(1, sizeof(*s));
	uint8_t md[32];

	if (!s)
		return NULL;
	s->tgt = tgt;
	s->type = type;
	snprintf(s->nqn, sizeof(s->nqn), "%s", nqn);
	sha256(nqn, strlen(nqn), md);
	for (int i = 0; i < 10; i++)
		snprintf(s->serial + 2 * i, 3, "%02x", md[i]);
	snprintf(s->model, sizeof(s->model), "%s", NVMF_MODEL_DEFAULT);
	s->allow_any_host = type == NVMF_SUBSYS_DISCOVERY;
	s->cntlid_min = NVMF_CNTLID_MIN;
	s->cntlid_max = NVMF_CNTLID_MAX;
	s->next_cntlid = NVMF_CNTLID_MIN;
	TAILQ_INIT(&s->hosts);
	TAILQ_INIT(&s->ctrlrs);
	TAILQ_INIT(&s->removed_ns);
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

struct nvmf_tgt *nvmf_tgt_create(const struct nvmf_tgt_opts *opts)
{
	struct nvmf_tgt *tgt;

	if (!opts_valid(opts)) {
		errno = EINVAL;
		return NULL;
	}
	tgt = calloc(1, sizeof(*tgt));
	if (!tgt)
		return NULL;
	tgt->opts = *opts;
	TAILQ_INIT(&tgt->subsystems);
	TAILQ_INIT(&tgt->ports);
	TAILQ_INIT(&tgt->referrals);
	TAILQ_INIT(&tgt->host_shares);
	pthread_mutex_init(&tgt->lock, NULL);
	pthread_mutex_init(&tgt->auth_pool_lock, NULL);
	tgt->start_ns = nvmf_now_ns();
	tgt->genctr = 1;
	tgt->discovery = subsys_alloc(tgt, NVME_DISCOVERY_NQN, NVMF_SUBSYS_DISCOVERY);
	if (!tgt->discovery) {
		pthread_mutex_destroy(&tgt->lock);
		free(tgt);
		errno = ENOMEM;
		return NULL;
	}
	return tgt;
}

/* ---- Namespaces ----------------------------------------------------------------------------- */

static unsigned int ns_slot(const struct reactor *r)
{
	return r ? r->id % NVMF_NS_REF_SLOTS : 0;
}

struct nvmf_ns *nvmf_ns_get(struct nvmf_subsys *s, uint32_t nsid, struct reactor *r)
{
	struct nvmf_ns *ns;
	unsigned int slot = ns_slot(r);

	if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES)
		return NULL;
	ns = __atomic_load_n(&s->ns[nsid], __ATOMIC_ACQUIRE);
	if (!ns)
		return NULL;
	/* Pairs with ns_remove(): it sets removed, then waits for the counters to drain. */
	__atomic_add_fetch(&ns->inflight[slot].n, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ns->removed, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&ns->inflight[slot].n, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	return ns;
}

void nvmf_ns_put(struct nvmf_ns *ns, struct reactor *r)
{
	__atomic_sub_fetch(&ns->inflight[ns_slot(r)].n, 1, __ATOMIC_RELEASE);
}

static uint64_t ns_inflight(const struct nvmf_ns *ns)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < NVMF_NS_REF_SLOTS; i++)
		n += __atomic_load_n(&ns->inflight[i].n, __ATOMIC_SEQ_CST);
	return n;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (*b++)
			return false;
	return true;
}

/*
 * NGUID, UUID and EUI-64 hashed from SHA-256(subsystem NQN, NSID, backend path or spec):
 * only when the target has no state directory (or it cannot be used). A backend with a
 * location-independent identity (an RBD image) gives SHA-256(identity) alone, so every
 * gateway exporting the same data reports the same IDs whatever its spec says.
 */
static void ns_hash_ids(struct nvmf_ns *ns, const struct nvmf_ns_opts *o)
{
	const struct bdev *b = ns->bdev;
	const char *ident = bdev_identity(b);
	const char *what = ident ? ident : b->path[0] ? b->path : b->spec;
	size_t nl = strlen(ns->subsys->nqn), wl = strlen(what);
	uint8_t buf[NVME_NQN_FIELD + 4 + 4096 + 8];
	uint8_t md[32];
	size_t off = 0;

	if (!ident) {
		memcpy(buf, ns->subsys->nqn, nl + 1);
		off = nl + 1;
		put_le32(buf + off, ns->nsid);
		off += 4;
	}
	memcpy(buf + off, what, wl);
	off += wl;
	sha256(buf, off, md);

	if (o->has_nguid && !all_zero(o->nguid, 16))
		memcpy(ns->nguid, o->nguid, 16);
	else
		memcpy(ns->nguid, md, 16);
	if (o->has_uuid && !all_zero(o->uuid, 16)) {
		memcpy(ns->uuid, o->uuid, 16);
	} else {
		memcpy(ns->uuid, md + 16, 16);
		ns->uuid[6] = (uint8_t)((ns->uuid[6] & 0x0f) | 0x40); /* version 4 */
		ns->uuid[8] = (uint8_t)((ns->uuid[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	}
	if (o->has_eui64 && !all_zero(o->eui64, 8)) {
		memcpy(ns->eui64, o->eui64, 8);
	} else {
		memcpy(buf + off, "eui64", 5);
		sha256(buf, off + 5, md);
		memcpy(ns->eui64, md, 8);
		ns->eui64[0] = (uint8_t)((ns->eui64[0] | 0x02) & ~0x01); /* local, unicast */
	}
}

/* Each identifier from the configuration, else the backend's own (bdev ident, or the
 * hash of its location-independent identity), else the one kept in the state directory
 * (generated once), else hashed as above. */
static void ns_derive_ids(struct nvmf_ns *ns, const struct nvmf_ns_opts *o)
{
	const struct bdev_ident *bi = &ns->bdev->ident;
	const char *dir = ns->subsys->tgt->opts.state_dir;
	struct nvmf_ns_ident kept;
	bool have_kept = false;
	int rc;

	ns_hash_ids(ns, o);
	/* an RBD image's identity is the same on every gateway: no per-target state */
	if (dir && dir[0] && !bdev_identity(ns->bdev)) {
		rc = nvmf_ns_ident_get(dir, ns->subsys->nqn, ns->nsid, &kept);
		if (rc)
			log_warn("%s: namespace %u: state directory %s: %s; identifiers hashed "
				 "from the backend path instead",
				 ns->subsys->nqn, ns->nsid, dir, strerror(-rc));
		have_kept = rc == 0;
	}
	if (!(o->has_nguid && !all_zero(o->nguid, 16))) {
		if (!all_zero(bi->nguid, 16))
			memcpy(ns->nguid, bi->nguid, 16);
		else if (have_kept)
			memcpy(ns->nguid, kept.nguid, 16);
	}
	if (!(o->has_uuid && !all_zero(o->uuid, 16))) {
		if (!all_zero(bi->uuid, 16))
			memcpy(ns->uuid, bi->uuid, 16);
		else if (have_kept)
			memcpy(ns->uuid, kept.uuid, 16);
	}
	if (!(o->has_eui64 && !all_zero(o->eui64, 8))) {
		if (!all_zero(bi->eui64, 8))
			memcpy(ns->eui64, bi->eui64, 8);
		else if (have_kept)
			memcpy(ns->eui64, kept.eui64, 8);
	}
}

/* Persist Through Power Loss: the state-directory store, keyed by the identity just
 * derived (a backend's cluster store may replace it). The namespace is not published yet,
 * so nothing else holds its reservation lock under s->lock. */
static void ns_attach_resv_store(struct nvmf_ns *ns)
{
	const char *dir = ns->subsys->tgt->opts.state_dir;
	struct nvmf_resv_store *st;
	char err[256];

	if (!dir || !dir[0])
		return;
	st = nvmf_resv_store_file_open(dir, ns->subsys->nqn, ns, err, sizeof(err));
	if (!st) {
		log_warn("%s: namespace %u: reservations cannot persist: %s", ns->subsys->nqn,
			 ns->nsid, err);
		return;
	}
	nvmf_resv_store_attach(ns, st); /* a bad file is logged; the namespace starts empty */
}

/* Hold a reference on every live controller of @s (caller holds s->lock). */
static unsigned int collect_ctrlrs(struct nvmf_subsys *s, struct nvmf_ctrlr ***out)
{
	struct nvmf_ctrlr *c, **v;
	unsigned int n = 0, i = 0;

	TAILQ_FOREACH (c, &s->ctrlrs, link)
		n++;
	*out = NULL;
	if (!n || !(v = calloc(n, sizeof(*v))))
		return 0;
	TAILQ_FOREACH (c, &s->ctrlrs, link)
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != NVMF_CTRLR_DEAD &&
		    nvmf_ctrlr_get_unless_zero(c))
			v[i++] = c;
	*out = v;
	return i;
}

static void notify_ns_changed(struct nvmf_ctrlr **v, unsigned int n, uint32_t nsid)
{
	for (unsigned int i = 0; i < n; i++) {
		nvmf_ctrlr_notify_ns_changed(v[i], nsid);
		nvmf_ctrlr_put(v[i]);
	}
	free(v);
}

/* The backend's resize hook (its own thread). */
static void ns_bdev_resized(struct bdev *bdev, uint64_t old_size, uint64_t new_size, void *arg)
{
	(void)bdev;
	(void)old_size;
	(void)new_size;
	nvmf_ns_backend_resized(arg);
}

/* Close @bdev and the reservation store opened with it. */
static void ns_open_undo(struct bdev *bdev, struct nvmf_resv_store *store)
{
	if (store)
		store->ops->close(store);
	bdev_close(bdev);
}

int nvmf_subsys_add_ns(struct nvmf_subsys *s, const struct nvmf_ns_opts *o, char *err,
		       size_t errlen)
{
	struct nvmf_resv_store *store = NULL;
	struct nvmf_ctrlr **v;
	struct nvmf_ns *ns;
	struct bdev *bdev;
	uint32_t nsid = o->nsid;
	unsigned int n;
	int rc;

	if (s->type == NVMF_SUBSYS_DISCOVERY || !o->path || nsid > NVMF_MAX_NAMESPACES ||
	    o->anagrpid > NVMF_ANA_MAX_GRPS) {
		snprintf(err, errlen, "invalid namespace (nsid %u)", nsid);
		return -EINVAL;
	}
	rc = bdev_open_ex(o->path,
			  &(struct bdev_open_opts){ .block_size = o->block_size,
						    .buffered_io = o->buffered_io },
			  &bdev, err, errlen);
	if (rc)
		return rc;
	if ((bdev->block_size != 512 && bdev->block_size != 4096) ||
	    bdev->size < bdev->block_size) {
		snprintf(err, errlen, "%s: unsupported geometry (%llu bytes, block size %u)",
			 o->path, (unsigned long long)bdev->size, bdev->block_size);
		bdev_close(bdev);
		return -EINVAL;
	}
	/* Reservations kept with the data (an RBD image's): every gateway enforces them. */
	if (bdev->ops->resv_store_open) {
		rc = bdev->ops->resv_store_open(bdev, o->path, &store, err, errlen);
		if (rc) {
			bdev_close(bdev);
			return rc;
		}
	}
	if (posix_memalign((void **)&ns, 64, sizeof(*ns))) {
		ns_open_undo(bdev, store);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(ns, 0, sizeof(*ns));
	nvmf_ns_locks_init(&ns->locks);
	if (nvmf_ns_iostat_init(ns)) {
		ns_open_undo(bdev, store);
		free(ns);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ns->subsys = s;
	ns->bdev = bdev;
	ns->block_shift = bdev->block_size == 4096 ? 12 : 9;
	ns->nblocks = bdev->size >> ns->block_shift;

	pthread_mutex_lock(&s->lock);
	if (!nsid)
		for (nsid = 1; nsid <= NVMF_MAX_NAMESPACES && s->ns[nsid]; nsid++)
			;
	if (nsid > NVMF_MAX_NAMESPACES || s->ns[nsid]) {
		pthread_mutex_unlock(&s->lock);
		snprintf(err, errlen, nsid > NVMF_MAX_NAMESPACES ? "no free namespace ID"
								  : "namespace %u exists",
			 nsid);
		ns_open_undo(bdev, store);
		nvmf_ns_iostat_free(ns);
		free(ns);
		return nsid > NVMF_MAX_NAMESPACES ? -ENOSPC : -EEXIST;
	}
	ns->nsid = nsid;
	ns->anagrpid = o->anagrpid ? o->anagrpid : NVMF_ANA_GRPID_DEFAULT;
	ns_derive_ids(ns, o);
	/* the data's own store (RBD: the cluster) or else the state directory's */
	if (!store) {
		ns_attach_resv_store(ns);
	} else {
		/* From here the store is the namespace's: nvmf_resv_free() closes it. */
		store->ns = ns;
		rc = nvmf_resv_store_attach(ns, store);
		if (rc) {
			pthread_mutex_unlock(&s->lock);
			snprintf(err, errlen, "%s: reservation state (%s): %s", o->path,
				 store->ops->name, strerror(-rc));
			nvmf_resv_free(ns);
			bdev_close(bdev);
			nvmf_ns_iostat_free(ns);
			free(ns);
			return rc;
		}
	}
	bdev_set_resize_hook(bdev, ns_bdev_resized, ns);
	__atomic_store_n(&s->ns[nsid], ns, __ATOMIC_RELEASE);
	n = collect_ctrlrs(s, &v);
	pthread_mutex_unlock(&s->lock);

	log_notice("%s: namespace %u: %s, %llu blocks of %u bytes%s%s", s->nqn, nsid, o->path,
		   (unsigned long long)ns->nblocks, bdev->block_size,
		   bdev->direct    ? ", direct I/O"
		   : bdev->path[0] ? ", buffered I/O"
				   : "",
		   bdev->volatile_cache ? ", volatile cache" : "");
	notify_ns_changed(v, n, nsid);
	nvmf_tgt_changed(s->tgt);
	return (int)nsid;
}

/* Wait for in-flight commands on @ns to finish, then close its backend. The structure
 * itself stays on removed_ns until the subsystem goes (lookups may still touch it). */
static void ns_retire(struct nvmf_subsys *s, struct nvmf_ns *ns)
{
	unsigned int t = 0;

	while (ns_inflight(ns) && t < WAIT_NS_IDLE_MS) {
		sleep_ms(1);
		if (++t % 5000 == 0)
			log_warn("%s: namespace %u: waiting for %llu command(s)", s->nqn, ns->nsid,
				 (unsigned long long)ns_inflight(ns));
	}
	if (ns_inflight(ns)) {
		log_err("%s: namespace %u still busy; leaving its backend open", s->nqn, ns->nsid);
	} else {
		bdev_close(ns->bdev);
		ns->bdev = NULL;
	}
	pthread_mutex_lock(&s->lock);
	TAILQ_INSERT_TAIL(&s->removed_ns, ns, link);
	pthread_mutex_unlock(&s->lock);
}

int nvmf_subsys_remove_ns(struct nvmf_subsys *s, uint32_t nsid)
{
	struct nvmf_ctrlr **v;
	struct nvmf_ns *ns;
	unsigned int n;

	if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ns = s->ns[nsid];
	if (!ns) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	__atomic_store_n(&ns->removed, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->ns[nsid], NULL, __ATOMIC_RELEASE);
	n = collect_ctrlrs(s, &v);
	pthread_mutex_unlock(&s->lock);

	log_notice("%s: namespace %u removed", s->nqn, nsid);
	notify_ns_changed(v, n, nsid);
	nvmf_tgt_changed(s->tgt);
	ns_retire(s, ns);
	return 0;
}

/* ---- Subsystems ----------------------------------------------------------------------------- */

/* Linux nvmet and hosts accept any printable name (saved nvmetcli configs use names
 * like "testnqn"), so only the length and the characters are checked. */
static bool nqn_valid(const char *nqn)
{
	size_t n = nqn ? strnlen(nqn, NVME_NQN_FIELD) : 0;

	if (n == 0 || n > NVME_NQN_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)nqn[i] <= ' ' || nqn[i] == 0x7f || nqn[i] == '/')
			return false;
	return true;
}

struct nvmf_subsys *nvmf_subsys_find_locked(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s;

	if (!strcmp(nqn, NVME_DISCOVERY_NQN))
		return tgt->discovery;
	TAILQ_FOREACH (s, &tgt->subsystems, link)
		if (!strcmp(s->nqn, nqn))
			return s;
	return NULL;
}

struct nvmf_subsys *nvmf_subsys_find(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s;

	pthread_mutex_lock(&tgt->lock);
	s = nvmf_subsys_find_locked(tgt, nqn);
	pthread_mutex_unlock(&tgt->lock);
	return s;
}

struct nvmf_subsys *nvmf_subsys_create(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s;

	if (!nqn_valid(nqn)) {
		errno = EINVAL;
		return NULL;
	}
	s = subsys_alloc(tgt, nqn, NVMF_SUBSYS_NVME);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&tgt->lock);
	if (nvmf_subsys_find_locked(tgt, nqn)) {
		pthread_mutex_unlock(&tgt->lock);
		pthread_mutex_destroy(&s->lock);
		free(s);
		errno = EEXIST;
		return NULL;
	}
	TAILQ_INSERT_TAIL(&tgt->subsystems, s, link);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);
	log_info("subsystem %s created (serial %s)", s->nqn, s->serial);
	return s;
}

bool nvmf_subsys_host_allowed_locked(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_host *h;

	if (s->allow_any_host)
		return true;
	TAILQ_FOREACH (h, &s->hosts, link)
		if (!strcmp(h->nqn, hostnqn))
			return true;
	return false;
}

bool nvmf_subsys_host_allowed(struct nvmf_subsys *s, const char *hostnqn)
{
	bool ok;

	pthread_mutex_lock(&s->tgt->lock);
	ok = nvmf_subsys_host_allowed_locked(s, hostnqn);
	pthread_mutex_unlock(&s->tgt->lock);
	return ok;
}

int nvmf_subsys_add_host(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_tgt *tgt = s->tgt;
	struct nvmf_host *h;

	if (!hostnqn || !hostnqn[0] || strnlen(hostnqn, NVME_NQN_FIELD) > NVME_NQN_MAX)
		return -EINVAL;
	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (h, &s->hosts, link) {
		if (!strcmp(h->nqn, hostnqn)) {
			pthread_mutex_unlock(&tgt->lock);
			return -EEXIST;
		}
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		pthread_mutex_unlock(&tgt->lock);
		return -ENOMEM;
	}
	snprintf(h->nqn, sizeof(h->nqn), "%s", hostnqn);
	TAILQ_INSERT_TAIL(&s->hosts, h, link);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);
	return 0;
}

int nvmf_subsys_remove_host(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_tgt *tgt = s->tgt;
	struct nvmf_host *h;

	pthread_mutex_lock(&tgt->lock);
	TAILQ_FOREACH (h, &s->hosts, link)
		if (!strcmp(h->nqn, hostnqn))
			break;
	if (h) {
		TAILQ_REMOVE(&s->hosts, h, link);
		free(h);
		nvmf_tgt_changed_locked(tgt);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (!h)
		return -ENOENT;
	nvmf_disc_notify(tgt);
	return 0;
}

void nvmf_subsys_set_allow_any_host(struct nvmf_subsys *s, bool allow)
{
	struct nvmf_tgt *tgt = s->tgt;
	bool changed;

	pthread_mutex_lock(&tgt->lock);
	changed = s->allow_any_host != allow;
	s->allow_any_host = allow;
	if (changed)
		nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	if (changed)
		nvmf_disc_notify(tgt);
}

void nvmf_subsys_kill_ctrlrs(struct nvmf_subsys *s)
{
	struct nvmf_ctrlr **v;
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	s->dying = true;
	n = collect_ctrlrs(s, &v);
	pthread_mutex_unlock(&s->lock);
	for (unsigned int i = 0; i < n; i++) {
		nvmf_ctrlr_kill_async(v[i]);
		nvmf_ctrlr_put(v[i]);
	}
	free(v);
}

bool nvmf_subsys_wait_ctrlrs(struct nvmf_subsys *s, unsigned int timeout_ms)
{
	for (unsigned int t = 0;; t++) {
		bool empty;

		pthread_mutex_lock(&s->lock);
		empty = TAILQ_EMPTY(&s->ctrlrs);
		pthread_mutex_unlock(&s->lock);
		if (empty)
			return true;
		if (t >= timeout_ms)
			return false;
		sleep_ms(1);
	}
}

/* Close every namespace and free @s (no controller left). */
static void subsys_free(struct nvmf_subsys *s)
{
	struct nvmf_host *h;
	struct nvmf_ns *ns;

	for (uint32_t nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++) {
		ns = s->ns[nsid];
		if (!ns)
			continue;
		__atomic_store_n(&ns->removed, true, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->ns[nsid], NULL, __ATOMIC_RELEASE);
		ns_retire(s, ns);
	}
	while ((ns = TAILQ_FIRST(&s->removed_ns))) {
		TAILQ_REMOVE(&s->removed_ns, ns, link);
		if (ns->bdev) /* still busy when retired: cannot be freed safely */
			continue;
		nvmf_resv_free(ns);
		nvmf_qos_free(ns);
		nvmf_ns_iostat_free(ns);
		free(ns);
	}
	while ((h = TAILQ_FIRST(&s->hosts))) {
		TAILQ_REMOVE(&s->hosts, h, link);
		free(h);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void nvmf_subsys_destroy(struct nvmf_subsys *s)
{
	struct nvmf_tgt *tgt = s->tgt;

	if (s->type == NVMF_SUBSYS_DISCOVERY)
		return; /* lives as long as the target */
	pthread_mutex_lock(&tgt->lock);
	TAILQ_REMOVE(&tgt->subsystems, s, link);
	nvmf_port_unexport_all(tgt, s);
	nvmf_tgt_changed_locked(tgt);
	pthread_mutex_unlock(&tgt->lock);
	nvmf_disc_notify(tgt);

	nvmf_subsys_kill_ctrlrs(s);
	if (!nvmf_subsys_wait_ctrlrs(s, WAIT_CTRLRS_MS)) {
		log_err("%s: controllers did not go away; keeping the subsystem allocated",
			s->nqn);
		return;
	}
	nvmf_reactors_quiesce();
	log_info("subsystem %s destroyed", s->nqn);
	subsys_free(s);
}

/* ---- Target teardown ------------------------------------------------------------------------ */

void nvmf_tgt_destroy(struct nvmf_tgt *tgt)
{
	struct nvmf_subsys *s;
	struct nvmf_port *port;
	struct nvmf_referral *ref;
	bool clean = true;
	unsigned int t;

	if (!tgt)
		return;
	TAILQ_FOREACH (port, &tgt->ports, link) {
		if (port->listening && port->ops->stop_listen)
			port->ops->stop_listen(port);
		port->listening = false;
		nvmf_port_disconnect_all(port);
	}
	nvmf_subsys_kill_ctrlrs(tgt->discovery);
	TAILQ_FOREACH (s, &tgt->subsystems, link)
		nvmf_subsys_kill_ctrlrs(s);
	for (t = 0; __atomic_load_n(&tgt->nctrlrs, __ATOMIC_ACQUIRE) && t < WAIT_CTRLRS_MS; t++)
		sleep_ms(1);
	if (__atomic_load_n(&tgt->nctrlrs, __ATOMIC_ACQUIRE)) {
		log_err("target stop: %u controller(s) did not go away", tgt->nctrlrs);
		clean = false;
	}
	for (t = 0; __atomic_load_n(&tgt->nconnections, __ATOMIC_ACQUIRE) &&
		    t < WAIT_CONNECTIONS_MS;
	     t++)
		sleep_ms(1);
	if (__atomic_load_n(&tgt->nconnections, __ATOMIC_ACQUIRE)) {
		log_err("target stop: %u connection(s) still open", tgt->nconnections);
		clean = false;
	}
	nvmf_reactors_quiesce();

	while ((s = TAILQ_FIRST(&tgt->subsystems))) {
		TAILQ_REMOVE(&tgt->subsystems, s, link);
		if (TAILQ_EMPTY(&s->ctrlrs))
			subsys_free(s);
	}
	nvmf_tgt_clear_host_psks(tgt);
	if (!clean)
		return; /* queues may still point at the target and its ports */
	while ((port = TAILQ_FIRST(&tgt->ports))) {
		TAILQ_REMOVE(&tgt->ports, port, link);
		free(port);
	}
	while ((ref = TAILQ_FIRST(&tgt->referrals))) {
		TAILQ_REMOVE(&tgt->referrals, ref, link);
		free(ref);
	}
	subsys_free(tgt->discovery);
	nvmf_auth_tgt_free(tgt);
	pthread_mutex_destroy(&tgt->auth_pool_lock);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
}

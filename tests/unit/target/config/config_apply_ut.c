/* SPDX-License-Identifier: MIT */
/*
 * config_apply() / config_reload() / config_add_default_discovery_ports() against a fake
 * target core: the nvmf.h calls below keep a plain model (subsystems, hosts, namespaces,
 * ports with bind semantics, referrals) and can be told to fail, so the tests check what
 * the target ends up with, including after a failure half-way (all-or-nothing).
 */
#include <config.h> /* autoconf: _GNU_SOURCE (asprintf) */

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "config/config_file.h"
#include "core/ana.h"
#include "core/nvmf.h"
#include "ut.h"

/* ---- Fake core ------------------------------------------------------------------------------- */

static const struct nvmf_transport_ops fake_tcp_ops = {.name = "tcp", .trtype = NVMF_TRTYPE_TCP};

struct fake_referral {
	struct nvmf_referral r;
	char trtype[8];
};

static struct {
	const char *fail_ns_path;      /* nvmf_subsys_add_ns() fails for this path */
	const char *fail_listen_svc;   /* nvmf_port_listen() fails for this trsvcid */
	unsigned int ns_adds, ns_removes; /* each one is a Namespace Attribute Changed */
	struct fake_referral refs[16];
	unsigned int nrefs;
	unsigned int qos_sets;      /* nvmf_ns_set_qos() calls */
	unsigned int host_qos_sets; /* nvmf_ns_set_host_qos() calls, and the last one's host */
	char qos_host[NVME_NQN_FIELD];
	struct nvmf_qos_limits host_qos;
	uint32_t qos_nsid; /* and the last one's arguments */
	struct nvmf_qos_limits qos;
} fake;

static struct nvmf_tgt *fake_tgt_new(void)
{
	struct nvmf_tgt *tgt = calloc(1, sizeof(*tgt));

	TAILQ_INIT(&tgt->subsystems);
	TAILQ_INIT(&tgt->ports);
	TAILQ_INIT(&tgt->referrals);
	pthread_mutex_init(&tgt->lock, NULL);
	memset(&fake, 0, sizeof(fake));
	return tgt;
}

struct nvmf_subsys *nvmf_subsys_find(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s;

	TAILQ_FOREACH(s, &tgt->subsystems, link)
		if (!strcmp(s->nqn, nqn))
			return s;
	return NULL;
}

struct nvmf_subsys *nvmf_subsys_create(struct nvmf_tgt *tgt, const char *nqn)
{
	struct nvmf_subsys *s;

	if (nvmf_subsys_find(tgt, nqn)) {
		errno = EEXIST;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	s->tgt = tgt;
	snprintf(s->nqn, sizeof(s->nqn), "%s", nqn);
	snprintf(s->serial, sizeof(s->serial), "generated");
	snprintf(s->model, sizeof(s->model), "nvmeof");
	s->cntlid_min = 1;
	s->cntlid_max = 0xffef;
	TAILQ_INIT(&s->hosts);
	TAILQ_INSERT_TAIL(&tgt->subsystems, s, link);
	return s;
}

static void free_ns(struct nvmf_ns *ns)
{
	free(ns->bdev);
	free(ns);
}

int nvmf_subsys_remove_ns(struct nvmf_subsys *s, uint32_t nsid)
{
	if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES || !s->ns[nsid])
		return -ENOENT;
	free_ns(s->ns[nsid]);
	s->ns[nsid] = NULL;
	fake.ns_removes++;
	return 0;
}

void nvmf_subsys_destroy(struct nvmf_subsys *s)
{
	struct nvmf_host *h;
	struct nvmf_port *p;
	uint32_t i;

	TAILQ_FOREACH(p, &s->tgt->ports, link)
		nvmf_port_remove_subsys(p, s);
	for (i = 1; i <= NVMF_MAX_NAMESPACES; i++)
		if (s->ns[i]) {
			free_ns(s->ns[i]);
			s->ns[i] = NULL;
		}
	while ((h = TAILQ_FIRST(&s->hosts))) {
		TAILQ_REMOVE(&s->hosts, h, link);
		free(h);
	}
	TAILQ_REMOVE(&s->tgt->subsystems, s, link);
	free(s);
}

int nvmf_subsys_add_host(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_host *h;

	TAILQ_FOREACH(h, &s->hosts, link)
		if (!strcmp(h->nqn, hostnqn))
			return -EEXIST;
	h = calloc(1, sizeof(*h));
	snprintf(h->nqn, sizeof(h->nqn), "%s", hostnqn);
	TAILQ_INSERT_TAIL(&s->hosts, h, link);
	return 0;
}

/* TLS PSKs: counted, not kept (config_apply_psks is exercised by tests/integration/tls.sh). */
static unsigned int g_psk_set, g_psk_removed;

int nvmf_tgt_set_host_psk(struct nvmf_tgt *tgt, const char *hostnqn, const struct nvme_tls_key *key)
{
	(void)tgt;
	(void)hostnqn;
	if (key)
		g_psk_set++;
	else
		g_psk_removed++;
	return 0;
}

int nvmf_subsys_remove_host(struct nvmf_subsys *s, const char *hostnqn)
{
	struct nvmf_host *h;

	TAILQ_FOREACH(h, &s->hosts, link)
		if (!strcmp(h->nqn, hostnqn)) {
			TAILQ_REMOVE(&s->hosts, h, link);
			free(h);
			return 0;
		}
	return -ENOENT;
}

/* Live controllers of hosts no longer allowed: counted, the fake core has none. */
static unsigned int g_revokes;
/* What the last nvmf_tgt_set_host_keys() got: how many hosts, the first one's settings. */
static unsigned int fake_host_keys, fake_host_key_calls;
static char fake_host_key_nqn[256], fake_host_key_hash[32], fake_host_key_dh[32];
static bool fake_host_key_bidi;

int nvmf_tgt_set_host_keys(struct nvmf_tgt *tgt, const struct nvmf_host_dhchap *v, unsigned int n,
			   char *err, size_t errlen)
{
	(void)tgt;
	(void)err;
	(void)errlen;
	fake_host_keys = n;
	fake_host_key_calls++;
	if (n) {
		snprintf(fake_host_key_nqn, sizeof(fake_host_key_nqn), "%s", v[0].hostnqn);
		snprintf(fake_host_key_hash, sizeof(fake_host_key_hash), "%s", v[0].hash);
		snprintf(fake_host_key_dh, sizeof(fake_host_key_dh), "%s", v[0].dhgroup);
		fake_host_key_bidi = v[0].ctrl_key && v[0].ctrl_key[0];
	}
	return 0;
}

unsigned int nvmf_subsys_revoke(struct nvmf_subsys *s)
{
	(void)s;
	g_revokes++;
	return 0;
}

static unsigned int g_rekeyed; /* nvmf_subsys_disconnect_host() calls */

int nvmf_subsys_disconnect_host(struct nvmf_subsys *s, const char *hostnqn)
{
	(void)s;
	(void)hostnqn;
	g_rekeyed++;
	return 1;
}

void nvmf_subsys_set_allow_any_host(struct nvmf_subsys *s, bool allow)
{
	s->allow_any_host = allow;
}

int nvmf_subsys_add_ns(struct nvmf_subsys *s, const struct nvmf_ns_opts *o, char *err,
		       size_t errlen)
{
	struct nvmf_ns *ns;

	if (fake.fail_ns_path && !strcmp(o->path, fake.fail_ns_path)) {
		snprintf(err, errlen, "%s: Input/output error", o->path);
		return -EIO;
	}
	if (o->nsid == 0 || o->nsid > NVMF_MAX_NAMESPACES || s->ns[o->nsid]) {
		snprintf(err, errlen, "NSID %u is in use", o->nsid);
		return -EEXIST;
	}
	ns = calloc(1, sizeof(*ns));
	ns->bdev = calloc(1, sizeof(*ns->bdev));
	snprintf(ns->bdev->spec, sizeof(ns->bdev->spec), "%s", o->path);
	ns->nsid = o->nsid;
	ns->subsys = s;
	if (o->has_uuid)
		memcpy(ns->uuid, o->uuid, 16);
	s->ns[o->nsid] = ns;
	fake.ns_adds++;
	return (int)o->nsid;
}

/* ANA (core/ana.h): the state machine's rule, states kept in the port as the core does. */
int nvmf_ana_state_parse(const char *name, uint8_t *state)
{
	static const char *const names[] = { "optimized", "non-optimized", "inaccessible",
					     "persistent-loss" };

	for (unsigned int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*state = (uint8_t)(i + 1);
			return 0;
		}
	if (!strcmp(name, "change")) {
		*state = NVME_ANA_CHANGE;
		return 0;
	}
	return -EINVAL;
}

const char *nvmf_ana_state_name(uint8_t state)
{
	return state == NVME_ANA_PERSISTENT_LOSS ? "persistent-loss" : "other";
}

uint8_t nvmf_ana_get_state(const struct nvmf_port *port, uint32_t grpid)
{
	return port->ana_state[grpid] ? port->ana_state[grpid] : NVME_ANA_OPTIMIZED;
}

int nvmf_ana_transition_check(uint8_t from, uint8_t to)
{
	return from == NVME_ANA_PERSISTENT_LOSS && to != from && to != NVME_ANA_CHANGE ? -EPERM : 0;
}

int nvmf_ana_set_state(struct nvmf_port *port, uint32_t grpid, uint8_t state, uint64_t now_ns)
{
	int rc = nvmf_ana_transition_check(nvmf_ana_get_state(port, grpid), state);

	(void)now_ns;
	if (!rc)
		port->ana_state[grpid] = state;
	return rc;
}

int nvmf_ns_set_qos(struct nvmf_subsys *s, uint32_t nsid, const struct nvmf_qos_limits *lim)
{
	if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES || !s->ns[nsid])
		return -ENOENT;
	fake.qos_sets++;
	fake.qos_nsid = nsid;
	fake.qos = *lim;
	return 0;
}

int nvmf_ns_set_host_qos(struct nvmf_subsys *s, uint32_t nsid, const char *hostnqn,
			 const struct nvmf_qos_limits *lim)
{
	if (nsid == 0 || nsid > NVMF_MAX_NAMESPACES || !s->ns[nsid])
		return -ENOENT;
	fake.host_qos_sets++;
	snprintf(fake.qos_host, sizeof(fake.qos_host), "%s", hostnqn);
	fake.host_qos = *lim;
	return 0;
}

struct nvmf_port *nvmf_port_find(struct nvmf_tgt *tgt, uint16_t portid)
{
	struct nvmf_port *p;

	TAILQ_FOREACH(p, &tgt->ports, link)
		if (p->portid == portid)
			return p;
	return NULL;
}

struct nvmf_port *nvmf_port_create(struct nvmf_tgt *tgt, const struct nvmf_port_opts *o,
				   char *err, size_t errlen)
{
	struct nvmf_port *p;

	if (strcmp(o->trtype, "tcp")) {
		snprintf(err, errlen, "transport %s is not available", o->trtype);
		return NULL;
	}
	if (nvmf_port_find(tgt, o->portid)) {
		snprintf(err, errlen, "portid %u exists", o->portid);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	p->tgt = tgt;
	p->ops = &fake_tcp_ops;
	p->portid = o->portid;
	p->adrfam = !strcmp(o->adrfam, "ipv6") ? NVMF_ADRFAM_IPV6 : NVMF_ADRFAM_IPV4;
	snprintf(p->traddr, sizeof(p->traddr), "%s", o->traddr);
	snprintf(p->trsvcid, sizeof(p->trsvcid), "%s", o->trsvcid);
	snprintf(p->advertise, sizeof(p->advertise), "%s", o->advertise ? o->advertise : "");
	p->in_capsule_size = o->in_capsule_size;
	p->discovery_only = o->discovery_only;
	TAILQ_INSERT_TAIL(&tgt->ports, p, link);
	return p;
}

int nvmf_port_add_subsys(struct nvmf_port *p, struct nvmf_subsys *s)
{
	unsigned int i;

	for (i = 0; i < p->nsubsys; i++)
		if (p->subsys[i] == s)
			return -EEXIST;
	if (p->nsubsys == 64)
		return -ENOSPC;
	p->subsys[p->nsubsys++] = s;
	return 0;
}

int nvmf_port_remove_subsys(struct nvmf_port *p, struct nvmf_subsys *s)
{
	unsigned int i;

	for (i = 0; i < p->nsubsys; i++)
		if (p->subsys[i] == s) {
			p->subsys[i] = p->subsys[--p->nsubsys];
			return 0;
		}
	return -ENOENT;
}

static bool wildcard(const char *a)
{
	return !strcmp(a, "0.0.0.0") || !strcmp(a, "::");
}

/* Linux bind(): the same port on an overlapping address of the same family is taken. */
int nvmf_port_listen(struct nvmf_port *p)
{
	struct nvmf_port *o;

	if (fake.fail_listen_svc && !strcmp(p->trsvcid, fake.fail_listen_svc))
		return -EACCES;
	TAILQ_FOREACH(o, &p->tgt->ports, link)
		if (o != p && o->listening && o->adrfam == p->adrfam &&
		    !strcmp(o->trsvcid, p->trsvcid) &&
		    (wildcard(o->traddr) || wildcard(p->traddr) || !strcmp(o->traddr, p->traddr)))
			return -EADDRINUSE;
	p->listening = true;
	return 0;
}

void nvmf_port_destroy(struct nvmf_port *p)
{
	TAILQ_REMOVE(&p->tgt->ports, p, link);
	free(p);
}

int nvmf_referral_add(struct nvmf_tgt *tgt, uint16_t portid, const char *trtype,
		      const char *adrfam, const char *traddr, const char *trsvcid)
{
	struct fake_referral *r;
	unsigned int i;

	for (i = 0; i < fake.nrefs; i++)
		if (!strcmp(fake.refs[i].r.traddr, traddr) &&
		    !strcmp(fake.refs[i].r.trsvcid, trsvcid))
			return -EEXIST;
	if (fake.nrefs == 16)
		return -ENOSPC;
	r = &fake.refs[fake.nrefs++];
	memset(r, 0, sizeof(*r));
	r->r.portid = portid;
	r->r.adrfam = !strcmp(adrfam, "ipv6") ? NVMF_ADRFAM_IPV6 : NVMF_ADRFAM_IPV4;
	snprintf(r->trtype, sizeof(r->trtype), "%s", trtype);
	snprintf(r->r.traddr, sizeof(r->r.traddr), "%s", traddr);
	snprintf(r->r.trsvcid, sizeof(r->r.trsvcid), "%s", trsvcid);
	return 0;
}

int nvmf_referral_remove(struct nvmf_tgt *tgt, const char *traddr, const char *trsvcid)
{
	unsigned int i;

	for (i = 0; i < fake.nrefs; i++)
		if (!strcmp(fake.refs[i].r.traddr, traddr) &&
		    !strcmp(fake.refs[i].r.trsvcid, trsvcid)) {
			fake.refs[i] = fake.refs[--fake.nrefs];
			return 0;
		}
	return -ENOENT;
}

static void fake_tgt_free(struct nvmf_tgt *tgt)
{
	struct nvmf_subsys *s;
	struct nvmf_port *p;

	while ((p = TAILQ_FIRST(&tgt->ports)))
		nvmf_port_destroy(p);
	while ((s = TAILQ_FIRST(&tgt->subsystems)))
		nvmf_subsys_destroy(s);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
}

/* The whole fake state as sorted text lines, to compare "before" with "after". */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *snapshot(struct nvmf_tgt *tgt)
{
	char *lines[512], *out;
	unsigned int n = 0, i;
	struct nvmf_subsys *s;
	struct nvmf_port *p;
	struct nvmf_host *h;
	size_t len = 1;
	uint32_t nsid;

	TAILQ_FOREACH(s, &tgt->subsystems, link) {
		if (asprintf(&lines[n++], "subsys %s serial=%s model=%s any=%d cntlid=%u-%u",
			     s->nqn, s->serial, s->model, s->allow_any_host, s->cntlid_min,
			     s->cntlid_max) < 0)
			abort();
		TAILQ_FOREACH(h, &s->hosts, link)
			if (asprintf(&lines[n++], "host %s %s", s->nqn, h->nqn) < 0)
				abort();
		for (nsid = 1; nsid <= NVMF_MAX_NAMESPACES; nsid++)
			if (s->ns[nsid] &&
			    asprintf(&lines[n++], "ns %s %u %s", s->nqn, nsid,
				     s->ns[nsid]->bdev->spec) < 0)
				abort();
	}
	TAILQ_FOREACH(p, &tgt->ports, link) {
		if (asprintf(&lines[n++], "port %u %s:%s adv=%s disc=%d listen=%d", p->portid,
			     p->traddr, p->trsvcid, p->advertise, p->discovery_only,
			     p->listening) < 0)
			abort();
		for (i = 0; i < p->nsubsys; i++)
			if (asprintf(&lines[n++], "export %u %s", p->portid, p->subsys[i]->nqn) < 0)
				abort();
	}
	for (i = 0; i < fake.nrefs; i++)
		if (asprintf(&lines[n++], "referral %u %s %s:%s", fake.refs[i].r.portid,
			     fake.refs[i].trtype, fake.refs[i].r.traddr,
			     fake.refs[i].r.trsvcid) < 0)
			abort();
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	for (i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	out = calloc(1, len);
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	return out;
}

static bool has_line(const char *snap, const char *line)
{
	size_t len = strlen(line);
	const char *p = snap;

	while ((p = strstr(p, line))) {
		if ((p == snap || p[-1] == '\n') && p[len] == '\n')
			return true;
		p += len;
	}
	return false;
}

/* ---- Helpers --------------------------------------------------------------------------------- */

static char g_err[1024];

static char *q(const char *tmpl)
{
	char *out = strdup(tmpl), *c;

	for (c = out; *c; c++)
		if (*c == '\'')
			*c = '"';
	return out;
}

static struct tgt_config *load(const char *tmpl)
{
	struct tgt_config *cfg = NULL;
	char *json = q(tmpl);

	if (config_load_string(json, "t.json", &cfg, g_err, sizeof(g_err)))
		fprintf(stderr, "\nconfig: %s\n", g_err);
	free(json);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	return cfg;
}

#define A "nqn.2026-11.io.test:a"
#define B "nqn.2026-11.io.test:b"
#define H1 "nqn.2014-08.org.nvmexpress:uuid:h1"
#define H2 "nqn.2014-08.org.nvmexpress:uuid:h2"

#define TCP(id, addr, svc, subs)                                                           \
	"{'portid': " id ", 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '" addr    \
	"', 'trsvcid': '" svc "'}, 'subsystems': [" subs "]}"

/* Subsystem A: serial/model, one allowed host, two namespaces (one disabled). */
static const char base_cfg[] =
	"{'hosts': [{'nqn': '" H1 "'}, {'nqn': '" H2 "'}],"
	" 'ports': [{'portid': 1, 'advertise': '10.0.2.2', 'addr': {'trtype': 'tcp', 'adrfam': "
	"'ipv4', 'traddr': '127.0.0.1', 'trsvcid': '4420'}, 'param': {'inline_data_size': "
	"'16384'}, 'subsystems': ['" A "'], 'referrals': [{'name': 'r1', 'addr': {'trtype': "
	"'tcp', 'adrfam': 'ipv4', 'traddr': '192.0.2.7', 'trsvcid': '8009', 'portid': '9'}}]}],"
	" 'subsystems': [{'nqn': '" A "', 'attr': {'allow_any_host': '0', 'serial': 'SER1', "
	"'model': 'Model A', 'cntlid_min': '10', 'cntlid_max': '20'}, 'allowed_hosts': ['" H1 "'],"
	" 'namespaces': [{'nsid': 1, 'enable': 1, 'device': {'path': 'ram:1M', 'uuid': "
	"'d592cdf3-5d1c-44e0-8412-3fcf7d99df27'}}, {'nsid': 2, 'enable': 0, 'device': {'path': "
	"'ram:2M'}}]}]}";

/* ---- Tests ----------------------------------------------------------------------------------- */

static void test_apply_builds_everything(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *cfg = load(base_cfg);
	struct nvmf_subsys *s;
	struct nvmf_port *p;
	char *snap;

	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, cfg, g_err, sizeof(g_err)), 0);
	s = nvmf_subsys_find(tgt, A);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->serial, "SER1");
	CU_ASSERT_STRING_EQUAL(s->model, "Model A");
	CU_ASSERT_EQUAL(s->cntlid_min, 10);
	CU_ASSERT_EQUAL(s->cntlid_max, 20);
	CU_ASSERT_FALSE(s->allow_any_host);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->ns[1]);
	CU_ASSERT_EQUAL(s->ns[1]->uuid[0], 0xd5);
	CU_ASSERT_PTR_NULL(s->ns[2]); /* disabled */
	p = nvmf_port_find(tgt, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->advertise, "10.0.2.2");
	CU_ASSERT_EQUAL(p->in_capsule_size, 16384);

	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "host " A " " H1));
	CU_ASSERT_FALSE(has_line(snap, "host " A " " H2));
	CU_ASSERT_TRUE(has_line(snap, "ns " A " 1 ram:1M"));
	CU_ASSERT_TRUE(has_line(snap, "port 1 127.0.0.1:4420 adv=10.0.2.2 disc=0 listen=1"));
	CU_ASSERT_TRUE(has_line(snap, "export 1 " A));
	CU_ASSERT_TRUE(has_line(snap, "referral 9 tcp 192.0.2.7:8009"));
	/* The built-in discovery listener for 127.0.0.1, on the top reserved portid; it
	 * advertises what the port on that address advertises (hosts behind NAT). */
	CU_ASSERT_TRUE(has_line(snap, "port 65535 127.0.0.1:8009 adv=10.0.2.2 disc=1 listen=1"));
	free(snap);
	config_free(cfg);
	fake_tgt_free(tgt);
}

struct disc_case {
	const char *name;
	const char *ports; /* port objects, all exporting subsystem A */
	const char *want[4]; /* discovery listeners expected, "ADDR:8009" */
};

static const struct disc_case disc_cases[] = {
	{"one address", TCP("1", "127.0.0.1", "4420", "'" A "'"), {"127.0.0.1:8009"}},
	{"two addresses",
	 TCP("1", "127.0.0.1", "4420", "'" A "'") ", " TCP("2", "127.0.0.2", "4420", "'" A "'"),
	 {"127.0.0.1:8009", "127.0.0.2:8009"}},
	{"wildcard covers specific",
	 TCP("1", "127.0.0.1", "4421", "'" A "'") ", " TCP("2", "0.0.0.0", "4420", "'" A "'"),
	 {"0.0.0.0:8009"}},
	{"same address twice",
	 TCP("1", "127.0.0.1", "4420", "'" A "'") ", " TCP("2", "127.0.0.1", "4421", ""),
	 {"127.0.0.1:8009"}},
	{"configured 8009", TCP("1", "127.0.0.1", "8009", "'" A "'"), {NULL}},
	{"configured 8009 on wildcard",
	 TCP("1", "127.0.0.1", "4420", "'" A "'") ", " TCP("2", "0.0.0.0", "8009", ""), {NULL}},
	{"ipv6 beside ipv4",
	 TCP("1", "127.0.0.1", "4420", "'" A "'") ", {'portid': 2, 'addr': {'trtype': 'tcp', "
						  "'adrfam': 'ipv6', 'traddr': '::1', 'trsvcid': "
						  "'4420'}}",
	 {"127.0.0.1:8009", "::1:8009"}},
};

static void test_default_discovery_ports(void)
{
	size_t i, j;

	for (i = 0; i < sizeof(disc_cases) / sizeof(disc_cases[0]); i++) {
		const struct disc_case *dc = &disc_cases[i];
		struct nvmf_tgt *tgt = fake_tgt_new();
		struct tgt_config *cfg;
		struct nvmf_port *p;
		unsigned int ndisc = 0, nwant = 0;
		char doc[2048];

		snprintf(doc, sizeof(doc), "{'ports': [%s], 'subsystems': [{'nqn': '" A "'}]}",
			 dc->ports);
		cfg = load(doc);
		CU_ASSERT_EQUAL_FATAL(config_apply(tgt, cfg, g_err, sizeof(g_err)), 0);
		for (j = 0; j < 4 && dc->want[j]; j++)
			nwant++;
		TAILQ_FOREACH(p, &tgt->ports, link) {
			char addr[300];
			bool expected = false;

			CU_ASSERT_TRUE(p->listening);
			if (!p->discovery_only)
				continue;
			ndisc++;
			snprintf(addr, sizeof(addr), "%s:%s", p->traddr, p->trsvcid);
			for (j = 0; j < nwant; j++)
				expected |= !strcmp(addr, dc->want[j]);
			if (!expected)
				fprintf(stderr, "\n%s: unexpected listener %s\n", dc->name, addr);
			CU_ASSERT_TRUE(expected);
			CU_ASSERT(p->portid >= CONFIG_PORTID_RESERVED);
			CU_ASSERT_EQUAL(p->nsubsys, 0);
		}
		CU_ASSERT_EQUAL(ndisc, nwant);
		/* Idempotent: called again (as after a reload), nothing changes. */
		CU_ASSERT_EQUAL(config_add_default_discovery_ports(tgt, g_err, sizeof(g_err)), 0);
		ndisc = 0;
		TAILQ_FOREACH(p, &tgt->ports, link)
			ndisc += p->discovery_only;
		CU_ASSERT_EQUAL(ndisc, nwant);
		config_free(cfg);
		fake_tgt_free(tgt);
	}
}

/* 8009 already taken (another process): skipped with a warning, the rest still applies. */
static void test_discovery_port_busy(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *cfg = load(base_cfg);
	struct nvmf_port *p;

	fake.fail_listen_svc = "8009";
	CU_ASSERT_EQUAL(config_apply(tgt, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_PTR_NOT_NULL(nvmf_port_find(tgt, 1));
	TAILQ_FOREACH(p, &tgt->ports, link)
		CU_ASSERT_FALSE(p->discovery_only);
	config_free(cfg);
	fake_tgt_free(tgt);
}

struct fail_case {
	const char *name;
	const char *fail_ns_path;
	const char *fail_listen_svc;
	int rc;
	const char *err;
};

static void test_apply_all_or_nothing(void)
{
	static const struct fail_case cases[] = {
		{"namespace", "ram:3M", NULL, -EIO,
		 "t.json: subsystems[1].namespaces[0] (NSID 7, ram:3M): ram:3M: Input/output "
		 "error"},
		{"listen", NULL, "4421", -EACCES,
		 "t.json: ports[1] (portid 2): cannot listen on tcp 127.0.0.1:4421: Permission "
		 "denied"},
	};
	static const char doc[] =
		"{'ports': [" TCP("1", "127.0.0.1", "4420", "'" A "'") ", "
		TCP("2", "127.0.0.1", "4421", "'" B "'") "], "
		"'subsystems': [{'nqn': '" A "', 'namespaces': [{'nsid': 1, 'device': {'path': "
		"'ram:1M'}}]}, {'nqn': '" B "', 'namespaces': [{'nsid': 7, 'device': {'path': "
		"'ram:3M'}}]}]}";
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvmf_tgt *tgt = fake_tgt_new();
		struct tgt_config *cfg = load(doc);
		int rc;

		fake.fail_ns_path = cases[i].fail_ns_path;
		fake.fail_listen_svc = cases[i].fail_listen_svc;
		rc = config_apply(tgt, cfg, g_err, sizeof(g_err));
		if (rc != cases[i].rc || strcmp(g_err, cases[i].err))
			fprintf(stderr, "\n%s: rc %d: %s\n", cases[i].name, rc, g_err);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		CU_ASSERT_STRING_EQUAL(g_err, cases[i].err);
		/* Nothing left behind. */
		CU_ASSERT_TRUE(TAILQ_EMPTY(&tgt->subsystems));
		CU_ASSERT_TRUE(TAILQ_EMPTY(&tgt->ports));
		CU_ASSERT_EQUAL(fake.nrefs, 0);
		config_free(cfg);
		fake_tgt_free(tgt);
	}
}

/* The base config, then a new one: what the target looks like after the reload. */
static void test_reload_changes(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old = load(base_cfg), *cfg;
	char *snap;

	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	fake.ns_adds = fake.ns_removes = 0;
	/* NSID 1 replaced (new path), 2 enabled, 3 added; H2 allowed instead of H1; subsystem
	 * B created and exported on port 1 and a new port 2; referral moved. */
	cfg = load("{'hosts': [{'nqn': '" H1 "'}, {'nqn': '" H2 "'}],"
		   " 'ports': [{'portid': 1, 'advertise': '10.0.2.2', 'addr': {'trtype': 'tcp', "
		   "'adrfam': 'ipv4', 'traddr': '127.0.0.1', 'trsvcid': '4420'}, 'param': "
		   "{'inline_data_size': '16384'}, 'subsystems': ['" A "', '" B "'], 'referrals': "
		   "[{'name': 'r2', 'addr': {'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': "
		   "'192.0.2.8', 'trsvcid': '8009'}}]}, "
		   TCP("2", "127.0.0.2", "4420", "'" B "'") "],"
		   " 'subsystems': [{'nqn': '" A "', 'attr': {'allow_any_host': '0', 'serial': "
		   "'SER1', 'model': 'Model A', 'cntlid_min': '10', 'cntlid_max': '20'}, "
		   "'allowed_hosts': ['" H2 "'], 'namespaces': [{'nsid': 1, 'device': {'path': "
		   "'ram:4M'}}, {'nsid': 2, 'device': {'path': 'ram:2M'}}, {'nsid': 3, 'device': "
		   "{'path': 'null:1M'}}]}, {'nqn': '" B "', 'attr': {'allow_any_host': '1'}, "
		   "'namespaces': [{'nsid': 5, 'device': {'path': 'ram:8M'}}]}]}");
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "ns " A " 1 ram:4M"));
	CU_ASSERT_TRUE(has_line(snap, "ns " A " 2 ram:2M"));
	CU_ASSERT_TRUE(has_line(snap, "ns " A " 3 null:1M"));
	CU_ASSERT_TRUE(has_line(snap, "ns " B " 5 ram:8M"));
	CU_ASSERT_TRUE(has_line(snap, "host " A " " H2));
	CU_ASSERT_FALSE(has_line(snap, "host " A " " H1));
	CU_ASSERT_TRUE(has_line(snap, "subsys " B " serial=generated model=nvmeof any=1 "
				      "cntlid=1-65519"));
	CU_ASSERT_TRUE(has_line(snap, "export 1 " B));
	CU_ASSERT_TRUE(has_line(snap, "export 2 " B));
	CU_ASSERT_TRUE(has_line(snap, "port 2 127.0.0.2:4420 adv= disc=0 listen=1"));
	CU_ASSERT_TRUE(has_line(snap, "port 65534 127.0.0.2:8009 adv= disc=1 listen=1"));
	CU_ASSERT_TRUE(has_line(snap, "referral 0 tcp 192.0.2.8:8009"));
	CU_ASSERT_FALSE(has_line(snap, "referral 9 tcp 192.0.2.7:8009"));
	/* Hosts see: NSID 1 removed + added, 2 and 3 added (5 is on a new subsystem). */
	CU_ASSERT_EQUAL(fake.ns_removes, 1);
	CU_ASSERT_EQUAL(fake.ns_adds, 4);
	free(snap);

	/* And back: everything B and the extra namespaces go away again. */
	fake.ns_adds = fake.ns_removes = 0;
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, cfg, old, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "ns " A " 1 ram:1M"));
	CU_ASSERT_FALSE(has_line(snap, "ns " A " 2 ram:2M"));
	CU_ASSERT_FALSE(has_line(snap, "ns " A " 3 null:1M"));
	CU_ASSERT_PTR_NULL(nvmf_subsys_find(tgt, B));
	CU_ASSERT_PTR_NULL(nvmf_port_find(tgt, 2));
	CU_ASSERT_PTR_NULL(strstr(snap, "127.0.0.2"));
	CU_ASSERT_TRUE(has_line(snap, "host " A " " H1));
	CU_ASSERT_TRUE(has_line(snap, "referral 9 tcp 192.0.2.7:8009"));
	CU_ASSERT_EQUAL(fake.nrefs, 1);
	free(snap);
	config_free(cfg);
	config_free(old);
	fake_tgt_free(tgt);
}

struct refuse_case {
	const char *name;
	const char *from, *to; /* base_cfg text replaced */
	const char *err;
};

static const struct refuse_case refuse_cases[] = {
	{ "port address", "'trsvcid': '4420'}, 'param'", "'trsvcid': '4430'}, 'param'",
	  "t.json: ports[0].addr: portid 1 is running with a different value" },
	{ "advertise", "'advertise': '10.0.2.2'", "'advertise': '10.0.2.3'",
	  "t.json: ports[0].advertise: portid 1 is running" },
	{ "inline size", "'16384'", "'8192'", "ports[0].param.inline_data_size: portid 1" },
	{ "serial", "'SER1'", "'SER2'",
	  "t.json: subsystems[0].attr.serial: cannot change while " A " is exported" },
	{ "model", "'Model A'", "'Model B'", "subsystems[0].attr.model: cannot change" },
	{ "cntlid", "'cntlid_max': '20'", "'cntlid_max': '30'",
	  "subsystems[0].attr.cntlid_min/cntlid_max: cannot change" },
	{ "iscsi portals", "{'hosts'",
	  "{'iscsi': {'portals': [{'addr': '127.0.0.1', 'port': 3260}]}, 'hosts'",
	  "t.json: iscsi.portals: the portals cannot change without a restart" },
};

static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	char *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	out = malloc(strlen(s) + strlen(to) + 1);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

static void test_reload_refuses(void)
{
	size_t i;

	for (i = 0; i < sizeof(refuse_cases) / sizeof(refuse_cases[0]); i++) {
		const struct refuse_case *rc = &refuse_cases[i];
		struct nvmf_tgt *tgt = fake_tgt_new();
		struct tgt_config *old = load(base_cfg), *cfg;
		char *text = replace(base_cfg, rc->from, rc->to), *before, *after;
		int r;

		CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
		/* Along with the refused change, a namespace that would be added. */
		cfg = load(text);
		before = snapshot(tgt);
		r = config_reload(tgt, old, cfg, g_err, sizeof(g_err));
		after = snapshot(tgt);
		if (r != -EBUSY || !strstr(g_err, rc->err))
			fprintf(stderr, "\n%s: rc %d: %s\n", rc->name, r, g_err);
		CU_ASSERT_EQUAL(r, -EBUSY);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_err, rc->err));
		CU_ASSERT_STRING_EQUAL(before, after);
		free(before);
		free(after);
		free(text);
		config_free(cfg);
		config_free(old);
		fake_tgt_free(tgt);
	}
}

/* A host whose authentication keys change (added, altered, removed) loses its live
 * controllers on the subsystems that stay; hosts whose keys stay keep theirs. */
static void test_reload_rekeyed_hosts(void)
{
#define KEY "DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:"
	static const struct {
		const char *from, *to;
		unsigned int rekeyed;
	} t[] = {
		{ "{'nqn': '" H1 "'}", "{'nqn': '" H1 "'}", 0 },
		{ "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "'}}",
		  "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "'}}", 0 },
		{ "{'nqn': '" H1 "'}", "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "'}}", 1 },
		{ "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "'}}", "{'nqn': '" H1 "'}", 1 },
		{ "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "', 'hash': 'hmac(sha256)'}}",
		  "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "', 'hash': 'hmac(sha512)'}}", 1 },
		{ "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "'}}",
		  "{'nqn': '" H1 "', 'dhchap': {'key': '" KEY "', 'ctrl_key': '" KEY "'}}", 1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct nvmf_tgt *tgt = fake_tgt_new();
		char *a = replace(base_cfg, "{'nqn': '" H1 "'}", t[i].from);
		char *b = replace(base_cfg, "{'nqn': '" H1 "'}", t[i].to);
		struct tgt_config *old = load(a), *cfg = load(b);

		CU_ASSERT_PTR_NOT_NULL_FATAL(old);
		CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
		CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
		g_rekeyed = 0;
		CU_ASSERT_EQUAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
		CU_ASSERT_EQUAL(config_host_keys_changed(old, cfg, H1), t[i].rekeyed != 0);
		CU_ASSERT_FALSE(config_host_keys_changed(old, cfg, H2));
		if (g_rekeyed != t[i].rekeyed)
			fprintf(stderr, "rekey case %zu: %u controllers ended\n", i, g_rekeyed);
		CU_ASSERT_EQUAL(g_rekeyed, t[i].rekeyed);
		free(a);
		free(b);
		config_free(cfg);
		config_free(old);
		fake_tgt_free(tgt);
	}
#undef KEY
}

/* A referral whose PORTID changes keeps its address: replaced, not duplicated. */
static void test_reload_referral_changed(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old = load(base_cfg), *cfg;
	char *text = replace(base_cfg, "'portid': '9'", "'portid': '10'"), *snap;

	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	cfg = load(text);
	CU_ASSERT_EQUAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "referral 10 tcp 192.0.2.7:8009"));
	CU_ASSERT_EQUAL(fake.nrefs, 1);
	free(snap);
	free(text);
	config_free(cfg);
	config_free(old);
	fake_tgt_free(tgt);
}

/* A reload failing half-way leaves the target exactly as it was. */
static void test_reload_rollback(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old = load(base_cfg), *cfg;
	char *before, *after;
	int rc;

	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	before = snapshot(tgt);
	/* NSID 1 replaced, host swapped, B created and exported, port 2 added... and then
	 * the last namespace fails to open. */
	cfg = load("{'hosts': [{'nqn': '" H1 "'}, {'nqn': '" H2 "'}],"
		   " 'ports': [{'portid': 1, 'advertise': '10.0.2.2', 'addr': {'trtype': 'tcp', "
		   "'adrfam': 'ipv4', 'traddr': '127.0.0.1', 'trsvcid': '4420'}, 'param': "
		   "{'inline_data_size': '16384'}, 'subsystems': ['" A "', '" B "']}, " TCP(
			   "2", "127.0.0.2", "4420", "'" B "'") "],"
		   " 'subsystems': [{'nqn': '" A "', 'attr': {'allow_any_host': '1', 'serial': "
		   "'SER1', 'model': 'Model A', 'cntlid_min': '10', 'cntlid_max': '20'}, "
		   "'allowed_hosts': ['" H2 "'], 'namespaces': [{'nsid': 1, 'device': {'path': "
		   "'ram:4M'}}]}, {'nqn': '" B "', 'namespaces': [{'nsid': 5, 'device': {'path': "
		   "'ram:8M'}}]}]}");
	fake.fail_listen_svc = NULL;
	fake.fail_ns_path = "ram:8M";
	rc = config_reload(tgt, old, cfg, g_err, sizeof(g_err));
	CU_ASSERT_EQUAL(rc, -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "subsystems[1].namespaces[0] (NSID 5, ram:8M)"));
	after = snapshot(tgt);
	if (strcmp(before, after))
		fprintf(stderr, "\nbefore:\n%safter:\n%s", before, after);
	CU_ASSERT_STRING_EQUAL(before, after);
	free(after);

	/* Failing on the new port's listen instead (after B and the namespaces). */
	fake.fail_ns_path = NULL;
	fake.fail_listen_svc = "4420";
	rc = config_reload(tgt, old, cfg, g_err, sizeof(g_err));
	CU_ASSERT_EQUAL(rc, -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "ports[1] (portid 2): cannot listen"));
	after = snapshot(tgt);
	CU_ASSERT_STRING_EQUAL(before, after);
	free(after);

	/* Nothing failing: it goes through. */
	fake.fail_listen_svc = NULL;
	CU_ASSERT_EQUAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_PTR_NOT_NULL(nvmf_subsys_find(tgt, B));
	CU_ASSERT_TRUE(nvmf_subsys_find(tgt, A)->allow_any_host);
	free(before);
	config_free(cfg);
	config_free(old);
	fake_tgt_free(tgt);
}

/* An address moves to a new portid; a configured 8009 port displaces ours. */
static void test_reload_ports(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old, *cfg, *cfg2;
	char *snap;

	old = load("{'ports': [" TCP("1", "127.0.0.1", "4420", "'" A "'") "], 'subsystems': "
		   "[{'nqn': '" A "'}]}");
	cfg = load("{'ports': [" TCP("3", "127.0.0.1", "4420", "'" A "'") "], 'subsystems': "
		   "[{'nqn': '" A "'}]}");
	cfg2 = load("{'ports': [" TCP("3", "127.0.0.1", "4420", "'" A "'") ", " TCP(
		"4", "127.0.0.1", "8009", "") "], 'subsystems': [{'nqn': '" A "'}]}");
	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "port 3 127.0.0.1:4420 adv= disc=0 listen=1"));
	CU_ASSERT_TRUE(has_line(snap, "export 3 " A));
	CU_ASSERT_PTR_NULL(nvmf_port_find(tgt, 1));
	CU_ASSERT_TRUE(has_line(snap, "port 65535 127.0.0.1:8009 adv= disc=1 listen=1"));
	free(snap);

	CU_ASSERT_EQUAL(config_reload(tgt, cfg, cfg2, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "port 4 127.0.0.1:8009 adv= disc=0 listen=1"));
	CU_ASSERT_PTR_NULL(strstr(snap, "disc=1"));
	free(snap);

	/* And back: the built-in listener returns. */
	CU_ASSERT_EQUAL(config_reload(tgt, cfg2, cfg, g_err, sizeof(g_err)), 0);
	snap = snapshot(tgt);
	CU_ASSERT_TRUE(has_line(snap, "port 65535 127.0.0.1:8009 adv= disc=1 listen=1"));
	free(snap);
	config_free(old);
	config_free(cfg);
	config_free(cfg2);
	fake_tgt_free(tgt);
}

/* SIGHUP path: re-read the file the running model came from. */
static void test_reload_file(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *cur = NULL, *was;
	char dir[] = "/tmp/config_apply_ut.XXXXXX", path[64], *text;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.json", dir);
	text = q("{'ports': [" TCP("1", "127.0.0.1", "4420", "'" A "'") "], 'subsystems': "
		 "[{'nqn': '" A "', 'namespaces': [{'nsid': 1, 'device': {'path': 'ram:1M'}}]}]}");
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	free(text);
	CU_ASSERT_EQUAL_FATAL(config_load(path, &cur, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, cur, g_err, sizeof(g_err)), 0);

	/* A broken file: refused, the model and the target stay. */
	f = fopen(path, "w");
	fputs("{\"ports\": [", f);
	fclose(f);
	was = cur;
	CU_ASSERT_EQUAL(config_reload_file(tgt, &cur, g_err, sizeof(g_err)), -EINVAL);
	CU_ASSERT_PTR_EQUAL(cur, was);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "JSON syntax error"));
	CU_ASSERT_PTR_NOT_NULL(nvmf_subsys_find(tgt, A)->ns[1]);

	/* A good one: a second namespace appears and the model is replaced. */
	text = q("{'ports': [" TCP("1", "127.0.0.1", "4420", "'" A "'") "], 'subsystems': "
		 "[{'nqn': '" A "', 'namespaces': [{'nsid': 1, 'device': {'path': 'ram:1M'}}, "
		 "{'nsid': 2, 'device': {'path': 'null:1G'}}]}]}");
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	free(text);
	CU_ASSERT_EQUAL(config_reload_file(tgt, &cur, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(cur->subsystems[0].nnamespaces, 2);
	CU_ASSERT_STRING_EQUAL(cur->path, path);
	CU_ASSERT_PTR_NOT_NULL(nvmf_subsys_find(tgt, A)->ns[2]);

	config_free(cur);
	unlink(path);
	rmdir(dir);
	fake_tgt_free(tgt);
}

/* ports[].ana_groups: applied at start, changed and dropped on reload; leaving
 * persistent-loss other than through change is refused before anything is touched. */
static void test_ana_groups(void)
{
	struct nvmf_tgt *tgt = fake_tgt_new();
	char *t1 = replace(base_cfg, "'subsystems': ['" A "'], 'referrals'",
			   "'subsystems': ['" A "'], 'ana_groups': [{'grpid': 2, 'ana': {'state': "
			   "'persistent-loss'}}], 'referrals'");
	char *t2 = replace(base_cfg, "'subsystems': ['" A "'], 'referrals'",
			   "'subsystems': ['" A "'], 'referrals'");
	char *t3 = replace(base_cfg, "'subsystems': ['" A "'], 'referrals'",
			   "'subsystems': ['" A "'], 'ana_groups': [{'grpid': 2, 'ana': {'state': "
			   "'change'}}], 'referrals'");
	struct tgt_config *c1 = load(t1), *c2 = load(t2), *c3 = load(t3);
	struct nvmf_port *p;

	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, c1, g_err, sizeof(g_err)), 0);
	p = nvmf_port_find(tgt, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_PERSISTENT_LOSS);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 1), NVME_ANA_OPTIMIZED);
	/* Dropping the group would make it optimized: refused, nothing changes. */
	CU_ASSERT_EQUAL(config_reload(tgt, c1, c2, g_err, sizeof(g_err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "ports[0].ana_groups: group 2"));
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_PERSISTENT_LOSS);
	/* Through change, then dropped: optimized again. */
	CU_ASSERT_EQUAL(config_reload(tgt, c1, c3, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_CHANGE);
	CU_ASSERT_EQUAL(config_reload(tgt, c3, c2, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(nvmf_ana_get_state(p, 2), NVME_ANA_OPTIMIZED);
	config_free(c1);
	config_free(c2);
	config_free(c3);
	free(t1);
	free(t2);
	free(t3);
	fake_tgt_free(tgt);
}

/* Namespace QoS: set with the namespace, changed in place by a reload, left alone when
 * unchanged. */
/* hosts[].dhchap: handed to the target on apply, and again on every reload. */
static void test_host_keys(void)
{
#define KEY "DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:"
#define DH_CFG(dh)                                                                     \
	"{'hosts': [{'nqn': '" H1 "'" dh "}], 'ports': [], 'subsystems': [{'nqn': '" A \
	"', 'attr': {'allow_any_host': '0'}, 'allowed_hosts': ['" H1 "'], 'namespaces': []}]}"
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old =
		load(DH_CFG(", 'dhchap': {'key': '" KEY "', 'ctrl_key': '" KEY "', 'hash': "
			    "'hmac(sha512)', "
			    "'dhgroup': "
			    "'ffdhe4096'}"));
	struct tgt_config *cfg;

	fake_host_key_calls = 0;
	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake_host_key_calls, 1);
	CU_ASSERT_EQUAL(fake_host_keys, 1);
	CU_ASSERT_STRING_EQUAL(fake_host_key_nqn, H1);
	CU_ASSERT_STRING_EQUAL(fake_host_key_hash, "hmac(sha512)");
	CU_ASSERT_STRING_EQUAL(fake_host_key_dh, "ffdhe4096");
	CU_ASSERT_TRUE(fake_host_key_bidi);
	cfg = load(DH_CFG(""));
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake_host_key_calls, 2);
	CU_ASSERT_EQUAL(fake_host_keys, 0); /* the core ends the host's controllers */
	config_free(old);
	config_free(cfg);
	fake_tgt_free(tgt);
#undef DH_CFG
#undef KEY
}

static void test_qos(void)
{
#define QOS_CFG(q)                                                                \
	"{'hosts': [], 'ports': [], 'subsystems': [{'nqn': '" A "', 'attr': "     \
	"{'allow_any_host': '1'}, 'namespaces': [{'nsid': 1, 'device': {'path': " \
	"'ram:4M'}" q "}, {'nsid': 2, 'device': {'path': 'ram:4M'}}]}]}"
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old = load(QOS_CFG(", 'qos': {'rw_ios_per_sec': 1000, "
					      "'r_mbytes_per_sec': 5}"));
	struct tgt_config *cfg;

	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake.qos_sets, 1);
	CU_ASSERT_EQUAL(fake.qos_nsid, 1);
	CU_ASSERT_EQUAL(fake.qos.rw_ios_per_sec, 1000);
	CU_ASSERT_EQUAL(fake.qos.r_mbytes_per_sec, 5);
	CU_ASSERT_EQUAL(fake.qos.w_ios_per_sec, 0);
	fake.ns_adds = fake.ns_removes = 0;
	cfg = load(QOS_CFG(", 'qos': {'w_ios_per_sec': 300}"));
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake.qos_sets, 2);
	CU_ASSERT_EQUAL(fake.qos.rw_ios_per_sec, 0);
	CU_ASSERT_EQUAL(fake.qos.w_ios_per_sec, 300);
	CU_ASSERT_EQUAL(fake.ns_adds + fake.ns_removes, 0); /* not re-created */
	config_free(old);
	old = cfg;
	cfg = load(QOS_CFG(", 'qos': {'w_ios_per_sec': 300}"));
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake.qos_sets, 2); /* unchanged: not set again */
	config_free(old);
	config_free(cfg);
	/* bad keys and values are refused with the key path */
	{
		/* an unknown key is a warning (as everywhere in the file), a bad value an error */
		char *json = q(QOS_CFG(", 'qos': {'iops': 5}"));
		bool warned = false;

		cfg = NULL;
		CU_ASSERT_EQUAL(config_load_string(json, "t.json", &cfg, g_err, sizeof(g_err)), 0);
		for (unsigned int i = 0; cfg && i < cfg->nwarnings; i++)
			warned |= strstr(cfg->warnings[i], "namespaces[0].qos.iops") != NULL;
		CU_ASSERT_TRUE(warned);
		config_free(cfg);
		free(json);
		json = q(QOS_CFG(", 'qos': {'rw_ios_per_sec': -1}"));
		cfg = NULL;
		CU_ASSERT_NOT_EQUAL(config_load_string(json, "t.json", &cfg, g_err, sizeof(g_err)),
				    0);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "namespaces[0].qos.rw_ios_per_sec"));
		free(json);
		/* per host: the host must be an NQN, named once */
		json = q(QOS_CFG(", 'qos': {'hosts': [{'rw_ios_per_sec': 5}]}"));
		cfg = NULL;
		CU_ASSERT_NOT_EQUAL(config_load_string(json, "t.json", &cfg, g_err, sizeof(g_err)),
				    0);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "namespaces[0].qos.hosts[0].host"));
		free(json);
		json = q(QOS_CFG(", 'qos': {'hosts': [{'host': 'nqn.h:a', 'rw_ios_per_sec': 5}, "
				 "{'host': 'nqn.h:a'}]}"));
		CU_ASSERT_NOT_EQUAL(config_load_string(json, "t.json", &cfg, g_err, sizeof(g_err)),
				    0);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "namespaces[0].qos.hosts[1]: host "));
		free(json);
	}
	fake_tgt_free(tgt);
#undef QOS_CFG
}

/* Per-host QoS: set with the namespace, changed by a reload, lifted when a host goes. */
static void test_host_qos(void)
{
#define QOS_CFG(q)                                                                \
	"{'hosts': [], 'ports': [], 'subsystems': [{'nqn': '" A "', 'attr': "     \
	"{'allow_any_host': '1'}, 'namespaces': [{'nsid': 1, 'device': {'path': " \
	"'ram:4M'}" q "}]}]}"
	struct nvmf_tgt *tgt = fake_tgt_new();
	struct tgt_config *old = load(QOS_CFG(", 'qos': {'hosts': [{'host': 'nqn.h:a', "
					      "'rw_ios_per_sec': 700}]}"));
	struct tgt_config *cfg;

	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	memset(&fake.host_qos, 0, sizeof(fake.host_qos));
	fake.host_qos_sets = 0;
	CU_ASSERT_EQUAL_FATAL(config_apply(tgt, old, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake.host_qos_sets, 1);
	CU_ASSERT_STRING_EQUAL(fake.qos_host, "nqn.h:a");
	CU_ASSERT_EQUAL(fake.host_qos.rw_ios_per_sec, 700);
	/* another host instead: the new one set, the old one lifted */
	cfg = load(QOS_CFG(", 'qos': {'hosts': [{'host': 'nqn.h:b', 'w_mbytes_per_sec': 9}]}"));
	CU_ASSERT_EQUAL_FATAL(config_reload(tgt, old, cfg, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(fake.host_qos_sets, 3);
	CU_ASSERT_STRING_EQUAL(fake.qos_host, "nqn.h:a");
	CU_ASSERT_EQUAL(fake.host_qos.rw_ios_per_sec, 0);
	config_free(old);
	config_free(cfg);
	fake_tgt_free(tgt);
#undef QOS_CFG
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "apply builds everything", test_apply_builds_everything },
		{ "default discovery listeners", test_default_discovery_ports },
		{ "discovery port busy", test_discovery_port_busy },
		{ "apply is all-or-nothing", test_apply_all_or_nothing },
		{ "reload applies the difference", test_reload_changes },
		{ "reload refuses what cannot change live", test_reload_refuses },
		{ "reload rolls back on failure", test_reload_rollback },
		{ "reload moves and displaces ports", test_reload_ports },
		{ "reload from the file", test_reload_file },
		{ "reload ends controllers of rekeyed hosts", test_reload_rekeyed_hosts },
		{ "reload replaces a changed referral", test_reload_referral_changed },
		{ "ANA groups of ports", test_ana_groups },
		{ "namespace QoS in the config", test_qos },
		{ "DH-HMAC-CHAP settings of hosts", test_host_keys },
		{ "per-host QoS in the config", test_host_qos },
		CU_TEST_INFO_NULL,
	};

	log_set_level(LOG_LVL_ERR);
	return ut_run("config_apply", NULL, NULL, tests);
}

/* SPDX-License-Identifier: MIT */
/* Target, subsystems, hosts, namespaces and their identifiers, ports, and teardown. */
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "tests/unit/target/core/fakes.h"

static struct nvmf_tgt *new_tgt(void)
{
	struct nvmf_tgt_opts o;

	nvmf_tgt_opts_default(&o);
	return nvmf_tgt_create(&o);
}

static void test_opts(void)
{
	static const struct {
		uint32_t qd, ad, ios, nq;
	} bad[] = {
		{ 1, 32, 131072, 64 },	   /* queue depth too small */
		{ 65536, 32, 131072, 64 }, /* MQES is 16 bits */
		{ 128, 1, 131072, 64 },
		{ 128, 32, 100000, 64 },   /* not a power of 2 */
		{ 128, 32, 2048, 64 },	   /* below one page */
		{ 128, 32, 131072, 0 },
		{ 128, 32, 131072, NVMF_MAX_IO_QUEUES + 1 },
	};
	struct nvmf_tgt_opts o;
	struct nvmf_tgt *t;

	nvmf_tgt_opts_default(&o);
	CU_ASSERT_EQUAL(o.max_queue_depth, 128);
	CU_ASSERT_EQUAL(o.max_admin_depth, 32);
	CU_ASSERT_EQUAL(o.in_capsule_size, 8192);
	CU_ASSERT_EQUAL(o.max_io_size, 131072);
	CU_ASSERT_EQUAL(o.max_io_queues, 64);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.max_queue_depth = bad[i].qd;
		o.max_admin_depth = bad[i].ad;
		o.max_io_size = bad[i].ios;
		o.max_io_queues = bad[i].nq;
		errno = 0;
		CU_ASSERT_PTR_NULL(nvmf_tgt_create(&o));
		CU_ASSERT_EQUAL(errno, EINVAL);
	}
	t = new_tgt();
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_PTR_NOT_NULL(t->discovery);
	CU_ASSERT_STRING_EQUAL(t->discovery->nqn, NVME_DISCOVERY_NQN);
	CU_ASSERT(t->discovery->allow_any_host);
	CU_ASSERT_PTR_EQUAL(nvmf_subsys_find(t, NVME_DISCOVERY_NQN), t->discovery);
	nvmf_tgt_destroy(t);
}

static void test_subsys(void)
{
	struct nvmf_tgt *t = new_tgt(), *t2 = new_tgt();
	struct nvmf_subsys *s, *s2, *other;
	char longnqn[240];

	memset(longnqn, 'x', sizeof(longnqn) - 1);
	longnqn[sizeof(longnqn) - 1] = 0;
	memcpy(longnqn, "nqn.", 4);
	errno = 0;
	CU_ASSERT_PTR_NULL(nvmf_subsys_create(t, "bad name"));
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_PTR_NULL(nvmf_subsys_create(t, ""));
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_PTR_NULL(nvmf_subsys_create(t, longnqn));
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_PTR_NULL(nvmf_subsys_create(t, NVME_DISCOVERY_NQN));
	CU_ASSERT_EQUAL(errno, EEXIST);

	/* Saved nvmetcli configurations use plain names; Linux accepts them. */
	s2 = nvmf_subsys_create(t, "testnqn");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
	nvmf_subsys_destroy(s2);

	s = nvmf_subsys_create(t, FAKE_SUBNQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NULL(nvmf_subsys_create(t, FAKE_SUBNQN));
	CU_ASSERT_EQUAL(errno, EEXIST);
	CU_ASSERT_PTR_EQUAL(nvmf_subsys_find(t, FAKE_SUBNQN), s);
	CU_ASSERT_PTR_NULL(nvmf_subsys_find(t, "nqn.2026-11.io.nvmeof:none"));
	CU_ASSERT_STRING_EQUAL(s->model, "nvmeof");
	CU_ASSERT_EQUAL(strlen(s->serial), 20);
	CU_ASSERT_EQUAL(strspn(s->serial, "0123456789abcdef"), 20);
	CU_ASSERT(!s->allow_any_host);
	CU_ASSERT_EQUAL(s->cntlid_min, 1);
	CU_ASSERT_EQUAL(s->cntlid_max, 0xffef);
	/* serial: stable across targets, different across NQNs */
	s2 = nvmf_subsys_create(t2, FAKE_SUBNQN);
	other = nvmf_subsys_create(t2, "nqn.2026-11.io.nvmeof:other");
	CU_ASSERT_STRING_EQUAL(s->serial, s2->serial);
	CU_ASSERT_STRING_NOT_EQUAL(s->serial, other->serial);

	/* hosts */
	CU_ASSERT(!nvmf_subsys_host_allowed(s, FAKE_HOSTNQN));
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(s, FAKE_HOSTNQN), 0);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(s, FAKE_HOSTNQN), -EEXIST);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(s, ""), -EINVAL);
	CU_ASSERT(nvmf_subsys_host_allowed(s, FAKE_HOSTNQN));
	CU_ASSERT(!nvmf_subsys_host_allowed(s, FAKE_HOSTNQN2));
	nvmf_subsys_set_allow_any_host(s, true);
	CU_ASSERT(nvmf_subsys_host_allowed(s, FAKE_HOSTNQN2));
	nvmf_subsys_set_allow_any_host(s, false);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_host(s, FAKE_HOSTNQN), 0);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_host(s, FAKE_HOSTNQN), -ENOENT);
	CU_ASSERT(!nvmf_subsys_host_allowed(s, FAKE_HOSTNQN));

	nvmf_subsys_destroy(s);
	CU_ASSERT_PTR_NULL(nvmf_subsys_find(t, FAKE_SUBNQN));
	nvmf_tgt_destroy(t);
	nvmf_tgt_destroy(t2);
}

static int add_ns(struct nvmf_subsys *s, const char *path, uint32_t nsid)
{
	struct nvmf_ns_opts o = { .path = path, .nsid = nsid, .enabled = true };
	char err[128];

	return nvmf_subsys_add_ns(s, &o, err, sizeof(err));
}

static void test_namespaces(void)
{
	struct nvmf_tgt *t = new_tgt();
	struct nvmf_subsys *s = nvmf_subsys_create(t, FAKE_SUBNQN);
	struct nvmf_ns_opts o = { .path = "ram:1M", .block_size = 1024 };
	char err[128];
	unsigned int closes;

	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 0), 1);
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 3), 3);
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 0), 2); /* lowest free */
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 0), 4);
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 3), -EEXIST);
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", NVMF_MAX_NAMESPACES + 1), -EINVAL);
	CU_ASSERT_EQUAL(add_ns(s, "nope:1M", 0), -ENOENT);
	CU_ASSERT_EQUAL(add_ns(t->discovery, "ram:1M", 0), -EINVAL);
	CU_ASSERT_EQUAL(nvmf_subsys_add_ns(s, &o, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "block size") != NULL);
	CU_ASSERT_EQUAL(add_ns(s, "ram:0", 0), -EINVAL);
	CU_ASSERT_EQUAL(s->ns[3]->nblocks, 2048);
	CU_ASSERT_EQUAL(s->ns[3]->block_shift, 9);

	closes = fake_bdev.nclose;
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(s, 3), 0);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes + 1);
	CU_ASSERT_PTR_NULL(s->ns[3]);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(s, 3), -ENOENT);
	CU_ASSERT_EQUAL(nvmf_subsys_remove_ns(s, 0), -EINVAL);
	CU_ASSERT_EQUAL(add_ns(s, "ram:1M", 0), 3);
	closes = fake_bdev.nclose;
	nvmf_tgt_destroy(t);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes + 4);
}

static void test_identifiers(void)
{
	struct nvmf_tgt *t1 = new_tgt(), *t2 = new_tgt();
	struct nvmf_subsys *a1 = nvmf_subsys_create(t1, FAKE_SUBNQN);
	struct nvmf_subsys *a2 = nvmf_subsys_create(t2, FAKE_SUBNQN);
	struct nvmf_subsys *b = nvmf_subsys_create(t1, "nqn.2026-11.io.nvmeof:b");
	struct nvmf_ns *x, *y;
	uint8_t zero[16] = { 0 };

	CU_ASSERT_EQUAL(add_ns(a1, "file:1M", 1), 1);
	CU_ASSERT_EQUAL(add_ns(a2, "file:1M", 1), 1);
	CU_ASSERT_EQUAL(add_ns(a1, "file:1M", 2), 2);
	CU_ASSERT_EQUAL(add_ns(b, "file:1M", 1), 1);
	/* same subsystem, NSID and backend: same identifiers (a restart) */
	x = a1->ns[1];
	y = a2->ns[1];
	CU_ASSERT(!memcmp(x->nguid, y->nguid, 16));
	CU_ASSERT(!memcmp(x->uuid, y->uuid, 16));
	CU_ASSERT(!memcmp(x->eui64, y->eui64, 8));
	/* different NSID or subsystem: different */
	CU_ASSERT(memcmp(x->nguid, a1->ns[2]->nguid, 16));
	CU_ASSERT(memcmp(x->uuid, a1->ns[2]->uuid, 16));
	CU_ASSERT(memcmp(x->eui64, a1->ns[2]->eui64, 8));
	CU_ASSERT(memcmp(x->nguid, b->ns[1]->nguid, 16));
	CU_ASSERT(memcmp(x->eui64, b->ns[1]->eui64, 8));
	/* well-formed */
	CU_ASSERT(memcmp(x->nguid, zero, 16));
	CU_ASSERT_EQUAL(x->uuid[6] >> 4, 4);
	CU_ASSERT_EQUAL(x->uuid[8] >> 6, 2);
	CU_ASSERT_EQUAL(x->eui64[0] & 3, 2);

	/* explicit identifiers win; an all-zero one counts as not given */
	{
		struct nvmf_ns_opts o = { .path = "file:1M", .nsid = 5, .has_nguid = true,
					  .has_uuid = true, .has_eui64 = true };
		char err[64];

		for (int i = 0; i < 16; i++)
			o.nguid[i] = (uint8_t)(i + 1);
		memset(o.eui64, 0x42, 8);
		CU_ASSERT_EQUAL(nvmf_subsys_add_ns(a1, &o, err, sizeof(err)), 5);
		CU_ASSERT(!memcmp(a1->ns[5]->nguid, o.nguid, 16));
		CU_ASSERT(!memcmp(a1->ns[5]->eui64, o.eui64, 8));
		CU_ASSERT(memcmp(a1->ns[5]->uuid, zero, 16));
		CU_ASSERT_EQUAL(a1->ns[5]->uuid[6] >> 4, 4);
	}
	nvmf_tgt_destroy(t1);
	nvmf_tgt_destroy(t2);
}

static void test_ports(void)
{
	struct nvmf_tgt *t = new_tgt();
	struct nvmf_subsys *s = nvmf_subsys_create(t, FAKE_SUBNQN);
	struct nvmf_port_opts po = { .portid = 5, .traddr = "127.0.0.1", .trsvcid = "4420" };
	struct nvmf_port *p, *q;
	char err[128];
	unsigned int listens = fake_listens, stops = fake_stop_listens;

	p = nvmf_port_create(t, &po, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->adrfam, NVMF_ADRFAM_IPV4);
	CU_ASSERT_PTR_EQUAL(p->ops, &fake_transport_ops);
	CU_ASSERT_PTR_NULL(nvmf_port_create(t, &po, err, sizeof(err)));
	CU_ASSERT_EQUAL(errno, EEXIST);
	po.trtype = "carrier-pigeon";
	CU_ASSERT_PTR_NULL(nvmf_port_create(t, &po, err, sizeof(err)));
	CU_ASSERT(strstr(err, "carrier-pigeon") != NULL);
	po.trtype = NULL;
	po.adrfam = "appletalk";
	CU_ASSERT_PTR_NULL(nvmf_port_create(t, &po, err, sizeof(err)));
	po.adrfam = NULL;
	po.portid = 0; /* next free */
	po.trsvcid = NULL;
	q = nvmf_port_create(t, &po, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(q->portid, 6);
	CU_ASSERT_STRING_EQUAL(q->trsvcid, "4420");
	CU_ASSERT_PTR_EQUAL(nvmf_port_find(t, 6), q);
	CU_ASSERT_PTR_NULL(nvmf_port_find(t, 7));

	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p, s), 0);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p, t->discovery), -EINVAL);
	CU_ASSERT(nvmf_port_exports(p, s));
	CU_ASSERT(!nvmf_port_exports(q, s));
	CU_ASSERT(nvmf_port_exports(q, t->discovery));
	CU_ASSERT_EQUAL(nvmf_port_listen(p), 0);
	CU_ASSERT_EQUAL(nvmf_port_listen(p), 0);
	CU_ASSERT_EQUAL(fake_listens, listens + 1);
	nvmf_port_destroy(p);
	CU_ASSERT_EQUAL(fake_stop_listens, stops + 1);
	CU_ASSERT_PTR_NULL(nvmf_port_find(t, 5));
	/* a destroyed subsystem leaves the ports that exported it */
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(q, s), 0);
	nvmf_subsys_destroy(s);
	CU_ASSERT_EQUAL(q->nsubsys, 0);
	CU_ASSERT_EQUAL(nvmf_port_listen(q), 0);
	nvmf_tgt_destroy(t);
	CU_ASSERT_EQUAL(fake_stop_listens, stops + 2);
}

static void test_destroy_with_controllers(void)
{
	struct fake_env e;
	unsigned int closes;

	/* the whole target */
	fake_env_setup(&e, "file:1M");
	fake_env_connect(&e, 0, 2, 2);
	closes = fake_bdev.nclose;
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	CU_ASSERT_EQUAL(e.tgt->nconnections, 3);
	nvmf_tgt_destroy(e.tgt);
	CU_ASSERT_EQUAL(e.admin.disconnects, 1);
	CU_ASSERT_EQUAL(e.io[0].disconnects, 1);
	CU_ASSERT_EQUAL(e.io[1].disconnects, 1);
	CU_ASSERT(e.admin.finied && e.io[0].finied && e.io[1].finied);
	CU_ASSERT_EQUAL(fake_bdev.nclose, closes + 1);

	/* one subsystem, with controllers on cross-reactor messages */
	fake_env_setup(&e, "ram:1M");
	fake_env_connect(&e, 0, 2, 2);
	nvmf_subsys_destroy(e.subsys);
	CU_ASSERT(e.admin.finied && e.io[0].finied && e.io[1].finied);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 0);
	CU_ASSERT_EQUAL(e.tgt->nconnections, 0);
	nvmf_tgt_destroy(e.tgt);
}

static void test_port_destroy_kills_its_controllers(void)
{
	struct fake_env e;
	struct nvmf_port_opts po = { .portid = 2, .traddr = "127.0.0.1", .trsvcid = "4430" };
	struct nvmf_port *p2;
	struct fake_qpair q;
	struct fake_connect c;
	char err[64];

	fake_env_setup(&e, "ram:1M");
	p2 = nvmf_port_create(e.tgt, &po, err, sizeof(err));
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p2, e.subsys), 0);
	fake_env_connect(&e, 0, 1, 1);
	struct fake_qpair idle;

	fake_qpair_init(&q, e.tgt, p2, &fake_reactor[1]);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q, &c, NULL), 0);
	fake_qpair_init(&idle, e.tgt, p2, &fake_reactor[0]); /* never sent Connect */
	CU_ASSERT_EQUAL(e.tgt->nconnections, 4);
	nvmf_port_destroy(p2);
	CU_ASSERT(q.finied);
	CU_ASSERT(idle.finied);
	CU_ASSERT_EQUAL(e.tgt->nconnections, 2);
	CU_ASSERT(!e.admin.finied);
	CU_ASSERT_EQUAL(e.tgt->nctrlrs, 1);
	fake_env_teardown(&e);
}

static const CU_TestInfo tests[] = {
	{ "target options", test_opts },
	{ "subsystems and hosts", test_subsys },
	{ "namespaces", test_namespaces },
	{ "namespace identifiers", test_identifiers },
	{ "ports", test_ports },
	{ "destroy with controllers", test_destroy_with_controllers },
	{ "port destroy kills its controllers", test_port_destroy_kills_its_controllers },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("subsystem", tests);
}

// SPDX-License-Identifier: MIT
/*
 * Unit tests for target/reservation.c through the NVMe command executor: three hosts (local
 * controllers with distinct host identifiers) run scripted Reservation Register/Acquire/
 * Release/Report commands and Reads/Writes against the conflict table; plus the SPC-2
 * RESERVE(6) holder; Persist Through Power Loss through a test store at the store seam
 * (save before completion, failing saves, restore, PTPL off), the reservation notification
 * log page and its events. Also fused Compare and Write (fused.c) and Get LBA Allocation Status
 * (lba_status.c), which the SCSI path needs from the executor too.
 */
#include <string.h>

#include "common/endian.h"
#include "fakes.h"
#include "core/fused.h"
#include "core/lba_status.h"
#include "core/reservation.h"
#include "core/resv_store.h"

#define NHOSTS   3
#define ST(sc)   NVME_STATUS(NVME_SCT_GENERIC, sc)
#define CONFLICT ST(NVME_SC_RESERVATION_CONFLICT)
#define INVALID  ST(NVME_SC_INVALID_FIELD)

static struct fake_env env;
static struct fake_qpair hosts[NHOSTS];

static void setup(void)
{
	fake_env_setup(&env, "ram:1M");
	for (int i = 0; i < NHOSTS; i++) {
		uint8_t hostid[16] = { 0x10, (uint8_t)(i + 1) };

		fake_qpair_init(&hosts[i], env.tgt, NULL, &fake_reactor[0]);
		CU_ASSERT_EQUAL(nvmf_local_connect(&hosts[i].qp, env.subsys, FAKE_HOSTNQN, hostid),
				0);
	}
}

static void teardown(void)
{
	for (int i = 0; i < NHOSTS; i++)
		fake_qpair_close(&hosts[i]);
	fake_env_teardown(&env);
}

/* Status without DNR/More bits. */
static uint16_t st(uint16_t s)
{
	return s & ~(NVME_STATUS_DNR | NVME_STATUS_MORE);
}

static uint16_t resv(int h, uint8_t opc, uint32_t cdw10, uint64_t k1, uint64_t k2)
{
	struct nvme_cmd cmd;
	uint8_t keys[16];

	fake_cmd(&cmd, opc, 1);
	put_le32(&cmd.cdw10, cdw10);
	put_le64(&keys[0], k1);
	put_le64(&keys[8], k2);
	return st(fake_exec(&hosts[h], &cmd, keys, opc == NVME_OPC_RESERVATION_RELEASE ? 8 : 16,
			    NULL));
}

static uint16_t rw(int h, bool write)
{
	struct nvme_cmd cmd;
	uint8_t data[512] = { 0 };

	fake_cmd(&cmd, write ? NVME_OPC_WRITE : NVME_OPC_READ, 1);
	return st(fake_exec(&hosts[h], &cmd, data, sizeof(data), NULL));
}

enum step_kind { REG, ACQ, REL, READ, WRITE };

struct step {
	enum step_kind kind;
	int host;
	uint32_t cdw10; /* action | IEKEY << 3 | RTYPE << 8 */
	uint64_t k1, k2;
	uint16_t status;
};

#define T(type) ((uint32_t)(type) << 8)
#define IEKEY   (1u << 3)

static uint16_t run_step(const struct step *s)
{
	switch (s->kind) {
	case REG:
		return resv(s->host, NVME_OPC_RESERVATION_REGISTER, s->cdw10, s->k1, s->k2);
	case ACQ:
		return resv(s->host, NVME_OPC_RESERVATION_ACQUIRE, s->cdw10, s->k1, s->k2);
	case REL:
		return resv(s->host, NVME_OPC_RESERVATION_RELEASE, s->cdw10, s->k1, 0);
	case READ:
		return rw(s->host, false);
	default:
		return rw(s->host, true);
	}
}

static void run_script(const char *name, const struct step *steps, size_t n)
{
	setup();
	for (size_t i = 0; i < n; i++) {
		uint16_t got = run_step(&steps[i]);

		CU_ASSERT_EQUAL(got, steps[i].status);
		if (got != steps[i].status)
			fprintf(stderr, "%s step %zu: status %#x, expected %#x\n", name, i, got,
				steps[i].status);
	}
	teardown();
}

#define RUN(steps) run_script(#steps, steps, sizeof(steps) / sizeof(steps[0]))

static void test_register(void)
{
	static const struct step steps[] = {
		{ REG, 0, 0, 0, 0xa, 0 },          /* register */
		{ REG, 0, 0, 0, 0xa, 0 },          /* same key again: fine */
		{ REG, 0, 0, 0, 0xb, CONFLICT },   /* different key */
		{ REG, 0, 2, 0xb, 0xc, CONFLICT }, /* replace, wrong current key */
		{ REG, 0, 2, 0xa, 0xc, 0 },        /* replace */
		{ REG, 1, 2, 0, 0xd, CONFLICT },   /* replace while not registered */
		{ REG, 1, 2 | IEKEY, 0, 0xd, 0 },  /* ... unless ignoring the key */
		{ REG, 1, 1, 0x0, 0, CONFLICT },   /* unregister, wrong key */
		{ REG, 1, 1, 0xd, 0, 0 },          /* unregister */
		{ REG, 1, 1, 0xd, 0, CONFLICT },   /* not registered any more */
		{ REG, 0, 1 | IEKEY, 0, 0, 0 },    /* unregister ignoring the key */
		{ REG, 0, 3, 0, 0, INVALID },      /* reserved action */
	};
	RUN(steps);
}

static void test_write_exclusive(void)
{
	static const struct step steps[] = {
		{ ACQ, 0, T(NVME_RESV_WRITE_EXCLUSIVE), 0xa, 0, CONFLICT }, /* not registered */
		{ REG, 0, 0, 0, 0xa, 0 },
		{ REG, 1, 0, 0, 0xb, 0 },
		{ ACQ, 0, T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0, CONFLICT }, /* wrong key */
		{ ACQ, 0, T(NVME_RESV_WRITE_EXCLUSIVE), 0xa, 0, 0 },
		{ ACQ, 0, T(NVME_RESV_WRITE_EXCLUSIVE), 0xa, 0, 0 },         /* again: fine */
		{ ACQ, 0, T(NVME_RESV_EXCLUSIVE_ACCESS), 0xa, 0, CONFLICT }, /* other type */
		{ ACQ, 1, T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0, CONFLICT },  /* held */
		{ WRITE, 0, 0, 0, 0, 0 },                                    /* holder */
		{ READ, 1, 0, 0, 0, 0 },                                     /* reads: anyone */
		{ READ, 2, 0, 0, 0, 0 },
		{ WRITE, 1, 0, 0, 0, CONFLICT },                     /* registrant */
		{ WRITE, 2, 0, 0, 0, CONFLICT },                     /* stranger */
		{ REL, 1, T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0, 0 }, /* not holder: nop */
		{ WRITE, 1, 0, 0, 0, CONFLICT },
		{ REL, 0, T(NVME_RESV_EXCLUSIVE_ACCESS), 0xa, 0, INVALID }, /* wrong type */
		{ REL, 0, T(NVME_RESV_WRITE_EXCLUSIVE), 0xa, 0, 0 },
		{ WRITE, 2, 0, 0, 0, 0 },
	};
	RUN(steps);
}

static void test_exclusive_access_reg_only(void)
{
	static const struct step steps[] = {
		{ REG, 0, 0, 0, 0xa, 0 },
		{ REG, 1, 0, 0, 0xb, 0 },
		{ ACQ, 0, T(NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY), 0xa, 0, 0 },
		{ READ, 1, 0, 0, 0, 0 }, /* registrants may read and write */
		{ WRITE, 1, 0, 0, 0, 0 },
		{ READ, 2, 0, 0, 0, CONFLICT }, /* others may not even read */
		{ WRITE, 2, 0, 0, 0, CONFLICT },
		{ REG, 0, 1, 0xa, 0, 0 }, /* the holder unregisters: released */
		{ READ, 2, 0, 0, 0, 0 },
	};
	RUN(steps);
}

static void test_all_registrants(void)
{
	static const struct step steps[] = {
		{ REG, 0, 0, 0, 0xa, 0 },
		{ REG, 1, 0, 0, 0xb, 0 },
		{ ACQ, 0, T(NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS), 0xa, 0, 0 },
		{ ACQ, 1, T(NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS), 0xb, 0, 0 }, /* every one holds */
		{ WRITE, 1, 0, 0, 0, 0 },
		{ WRITE, 2, 0, 0, 0, CONFLICT },
		{ READ, 2, 0, 0, 0, 0 },
		{ REG, 0, 1, 0xa, 0, 0 }, /* one registrant leaves: still reserved */
		{ WRITE, 2, 0, 0, 0, CONFLICT },
		{ REG, 1, 1, 0xb, 0, 0 }, /* the last one leaves: gone */
		{ WRITE, 2, 0, 0, 0, 0 },
	};
	RUN(steps);
}

static void test_preempt_and_clear(void)
{
	static const struct step steps[] = {
		{ REG, 0, 0, 0, 0xa, 0 },
		{ REG, 1, 0, 0, 0xb, 0 },
		{ REG, 2, 0, 0, 0xc, 0 },
		{ ACQ, 0, T(NVME_RESV_EXCLUSIVE_ACCESS), 0xa, 0, 0 },
		{ ACQ, 1, 1 | T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0xd, CONFLICT }, /* no such key */
		{ ACQ, 1, 1 | T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0, INVALID },    /* key 0 */
		{ ACQ, 1, 1 | T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0xa, 0 }, /* preempt holder */
		{ WRITE, 0, 0, 0, 0, CONFLICT }, /* host 0 lost registration and access */
		{ REG, 0, 2, 0xa, 0xe, CONFLICT },
		{ WRITE, 1, 0, 0, 0, 0 },
		{ ACQ, 1, 2 | T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0xc, 0 }, /* preempt+abort c */
		{ REG, 2, 1, 0xc, 0, CONFLICT },                           /* host 2 was removed */
		{ REL, 2, 1, 0xc, 0, CONFLICT }, /* clear needs a registration */
		{ REL, 1, 1, 0xb, 0, 0 },        /* clear */
		{ WRITE, 0, 0, 0, 0, 0 },
		{ ACQ, 1, T(NVME_RESV_WRITE_EXCLUSIVE), 0xb, 0, CONFLICT }, /* cleared too */
	};
	RUN(steps);
}

static void test_report(void)
{
	struct nvme_cmd cmd;
	uint8_t buf[256];
	uint16_t s;

	setup();
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0x1111), 0);
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0x2222), 0);
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_ACQUIRE, T(NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY),
			     0x2222, 0),
			0);
	/* 64-bit host identifiers are not what fabrics use */
	fake_cmd(&cmd, NVME_OPC_RESERVATION_REPORT, 1);
	put_le32(&cmd.cdw10, sizeof(buf) / 4 - 1);
	s = st(fake_exec(&hosts[0], &cmd, buf, sizeof(buf), NULL));
	CU_ASSERT_EQUAL(s, ST(NVME_SC_HOSTID_INCONSISTENT_FORMAT));
	put_le32(&cmd.cdw11, 1);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, buf, sizeof(buf), NULL)), 0);
	CU_ASSERT_EQUAL(get_le32(&buf[0]), 2); /* generation: two registrations */
	CU_ASSERT_EQUAL(buf[4], NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY);
	CU_ASSERT_EQUAL(get_le16(&buf[5]), 2);
	CU_ASSERT_EQUAL(get_le64(&buf[64 + 8]), 0x1111);
	CU_ASSERT_EQUAL(buf[64 + 2], 0);  /* not the holder */
	CU_ASSERT_EQUAL(buf[64 + 17], 1); /* host identifier */
	CU_ASSERT_EQUAL(get_le64(&buf[128 + 8]), 0x2222);
	CU_ASSERT_EQUAL(buf[128 + 2], 1);
	CU_ASSERT_EQUAL(buf[255], 0); /* the rest is zeroed */
	/* a too small buffer for the registrants: only the header and what fits */
	put_le32(&cmd.cdw10, 96 / 4 - 1);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, buf, 96, NULL)), 0);
	CU_ASSERT_EQUAL(get_le16(&buf[5]), 2);
	teardown();
}

static void test_reserve6(void)
{
	struct nvmf_ns *ns;
	uint8_t h0[16] = { 0x10, 1 }, h1[16] = { 0x10, 2 };

	setup();
	ns = env.subsys->ns[1];
	CU_ASSERT_EQUAL(nvmf_resv_legacy_reserve(ns, h0), 0);
	CU_ASSERT_EQUAL(nvmf_resv_legacy_reserve(ns, h0), 0); /* again */
	CU_ASSERT_EQUAL(nvmf_resv_legacy_reserve(ns, h1), -EBUSY);
	CU_ASSERT_TRUE(nvmf_resv_legacy_conflict(ns, h1));
	CU_ASSERT_FALSE(nvmf_resv_legacy_conflict(ns, h0));
	CU_ASSERT_EQUAL(rw(1, false), CONFLICT); /* even reads */
	CU_ASSERT_EQUAL(rw(0, true), 0);
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_REGISTER, 0, 0, 5), CONFLICT);
	nvmf_resv_legacy_release(ns, h1); /* not the holder: nop */
	CU_ASSERT_EQUAL(rw(1, false), CONFLICT);
	nvmf_resv_legacy_clear(ns); /* LU reset */
	CU_ASSERT_EQUAL(rw(1, false), 0);
	/* a persistent reservation: RESERVE(6) only for its holder */
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_REGISTER, 0, 0, 5), 0);
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_ACQUIRE, T(NVME_RESV_WRITE_EXCLUSIVE), 5, 0),
			0);
	CU_ASSERT_EQUAL(nvmf_resv_legacy_reserve(ns, h0), -EBUSY);
	CU_ASSERT_EQUAL(nvmf_resv_legacy_reserve(ns, h1), 0);
	CU_ASSERT_FALSE(nvmf_resv_legacy_conflict(ns, h0));
	teardown();
}

/* ---- fused Compare and Write ------------------------------------------------------------ */

struct fused_pair {
	struct fake_req *first, *second;
};

static void fused_submit(struct fused_pair *p, int h, uint64_t slba, const void *cmp,
			 const void *wr, uint32_t len, uint8_t opc1)
{
	struct nvme_cmd c1, c2;

	p->first = fake_req_alloc(&hosts[h]);
	p->second = fake_req_alloc(&hosts[h]);
	fake_cmd(&c1, opc1, 1);
	c1.flags |= NVME_CMD_FUSE_FIRST;
	put_le64(&c1.cdw10, slba);
	put_le32(&c1.cdw12, len / 512 - 1);
	c2 = c1;
	c2.opc = NVME_OPC_WRITE;
	c2.cid = c1.cid + 1;
	c2.flags = (c1.flags & ~NVME_CMD_FUSE_MASK) | NVME_CMD_FUSE_SECOND;
	fake_req_prep(p->first, &c1, cmp, len);
	fake_req_prep(p->second, &c2, wr, len);
	nvmf_req_exec(&p->first->req);
	nvmf_req_exec(&p->second->req);
}

static void fused_free(struct fused_pair *p)
{
	fake_req_free(p->first);
	fake_req_free(p->second);
}

static void test_fused(void)
{
	uint8_t a[1024], b[1024], rd[1024];
	struct fused_pair p;
	struct nvme_cmd cmd;

	setup();
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	fake_cmd(&cmd, NVME_OPC_WRITE, 1);
	put_le32(&cmd.cdw12, 1);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, a, sizeof(a), NULL)), 0);

	/* match: both complete successfully, the data is written */
	fused_submit(&p, 0, 0, a, b, sizeof(a), NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(p.first->completions, 1);
	CU_ASSERT_EQUAL(p.second->completions, 1);
	CU_ASSERT_EQUAL(st(fake_status(p.first)), 0);
	CU_ASSERT_EQUAL(st(fake_status(p.second)), 0);
	fused_free(&p);
	fake_cmd(&cmd, NVME_OPC_READ, 1);
	put_le32(&cmd.cdw12, 1);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, rd, sizeof(rd), NULL)), 0);
	CU_ASSERT_EQUAL(memcmp(rd, b, sizeof(b)), 0);

	/* miscompare: Compare Failure, the Write is aborted and nothing changes */
	fused_submit(&p, 0, 0, a, a, sizeof(a), NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(fake_status(p.first),
			NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE) | NVME_STATUS_DNR);
	CU_ASSERT_EQUAL(st(fake_status(p.second)), ST(NVME_SC_ABORTED_FAILED_FUSED));
	fused_free(&p);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, rd, sizeof(rd), NULL)), 0);
	CU_ASSERT_EQUAL(memcmp(rd, b, sizeof(b)), 0);

	/* a first command that is not a Compare */
	fused_submit(&p, 0, 0, a, a, sizeof(a), NVME_OPC_READ);
	CU_ASSERT_EQUAL(st(fake_status(p.first)), INVALID);
	CU_ASSERT_EQUAL(st(fake_status(p.second)), ST(NVME_SC_ABORTED_MISSING_FUSED));
	fused_free(&p);

	/* a second command without a first */
	{
		struct fake_req *fr = fake_req_alloc(&hosts[0]);

		fake_cmd(&cmd, NVME_OPC_WRITE, 1);
		cmd.flags |= NVME_CMD_FUSE_SECOND;
		fake_req_prep(fr, &cmd, a, 512);
		nvmf_req_exec(&fr->req);
		CU_ASSERT_EQUAL(st(fake_status(fr)), ST(NVME_SC_ABORTED_MISSING_FUSED));
		fake_req_free(fr);
	}
	/* a reservation holds fused writes off like plain writes */
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_REGISTER, 0, 0, 5), 0);
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_ACQUIRE, T(NVME_RESV_WRITE_EXCLUSIVE), 5, 0),
			0);
	fused_submit(&p, 0, 0, b, a, sizeof(a), NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(st(fake_status(p.second)), CONFLICT);
	CU_ASSERT_EQUAL(p.first->completions, 1);
	fused_free(&p);
	teardown();
}

/* ---- Get LBA Allocation Status ------------------------------------------------------------ */

static void test_lba_status(void)
{
	uint8_t data[4096], buf[4096];
	struct nvme_cmd cmd;

	setup();
	memset(data, 0x5a, sizeof(data));
	fake_cmd(&cmd, NVMF_OPC_VS_LBA_STATUS, 1);
	put_le32(&cmd.cdw12, 15);
	/* the namespace is far beyond: out of range */
	put_le64(&cmd.cdw10, 1 << 20);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, buf, sizeof(buf), NULL)),
			ST(NVME_SC_LBA_OUT_OF_RANGE));
	/* a too small buffer */
	put_le64(&cmd.cdw10, 0);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &cmd, buf, 16, NULL)),
			ST(NVME_SC_DATA_SGL_LENGTH_INVALID));
	{
		struct nvme_cmd w;
		uint16_t s;

		fake_cmd(&w, NVME_OPC_WRITE, 1);
		put_le64(&w.cdw10, 8);
		put_le32(&w.cdw12, 7);
		CU_ASSERT_EQUAL(st(fake_exec(&hosts[0], &w, data, 4096, NULL)), 0);
		s = st(fake_exec(&hosts[0], &cmd, buf, sizeof(buf), NULL));
		/* the fake backend may not track allocation: then Invalid Field */
		if (s == 0) {
			CU_ASSERT_TRUE(get_le32(&buf[0]) >= 1);
			CU_ASSERT_EQUAL(get_le64(&buf[8]), 0);
		} else {
			CU_ASSERT_EQUAL(s, INVALID);
		}
	}
	teardown();
}

/* ---- Persist Through Power Loss, through a test store at the seam ------------------------ */

#define CPTPL_SET       (3u << 30)
#define CPTPL_CLEAR     (2u << 30)
#define ST_INTERNAL_ERR ST(NVME_SC_INTERNAL)

struct test_store {
	struct nvmf_resv_store base;
	struct nvmf_resv_image stored; /* what load() returns */
	int load_rc;
	int save_rc; /* what save() completes with */
	bool defer;  /* keep the save pending until test_store_finish() */
	unsigned int saves, closes;
	struct nvmf_resv_image saved; /* the last image handed to save() */
	nvmf_resv_store_done done;
	void *arg;
};

static struct test_store tstore;

static int ts_load(struct nvmf_resv_store *st, struct nvmf_resv_image *img)
{
	struct test_store *t = (struct test_store *)st;

	if (t->load_rc)
		return t->load_rc;
	*img = t->stored;
	return 0;
}

static void ts_save(struct nvmf_resv_store *st, const struct nvmf_resv_image *img,
		    nvmf_resv_store_done done, void *arg)
{
	struct test_store *t = (struct test_store *)st;

	t->saves++;
	t->saved = *img;
	if (t->defer) {
		t->done = done;
		t->arg = arg;
		return;
	}
	if (!t->save_rc)
		t->stored = *img;
	done(arg, t->save_rc);
}

static void ts_close(struct nvmf_resv_store *st)
{
	((struct test_store *)st)->closes++;
}

static const struct nvmf_resv_store_ops ts_ops = {
	.name = "test",
	.load = ts_load,
	.save = ts_save,
	.close = ts_close,
};

static void test_store_finish(int rc)
{
	nvmf_resv_store_done done = tstore.done;

	tstore.done = NULL;
	if (!rc)
		tstore.stored = tstore.saved;
	done(tstore.arg, rc);
}

/* setup() with the test store on namespace 1 (its load() sees @stored). */
static void setup_store(const struct nvmf_resv_image *stored, int load_rc)
{
	struct nvmf_ns *ns;

	memset(&tstore, 0, sizeof(tstore));
	tstore.base.ops = &ts_ops;
	if (stored)
		tstore.stored = *stored;
	tstore.load_rc = load_rc;
	setup();
	ns = nvmf_ns_get(env.subsys, 1, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	nvmf_resv_store_attach(ns, &tstore.base);
	nvmf_ns_put(ns, NULL);
}

/* Reservation Report header of host @h: generation, type, registrants, PTPLS. */
static void report(int h, uint32_t *gen, uint8_t *rtype, uint16_t *nregs, uint8_t *ptpls,
		   uint8_t *buf, size_t len)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_OPC_RESERVATION_REPORT, 1);
	put_le32(&cmd.cdw10, (uint32_t)(len / 4 - 1));
	put_le32(&cmd.cdw11, 1);
	CU_ASSERT_EQUAL(st(fake_exec(&hosts[h], &cmd, buf, (uint32_t)len, NULL)), 0);
	*gen = get_le32(&buf[0]);
	*rtype = buf[4];
	*nregs = get_le16(&buf[5]);
	*ptpls = buf[9];
}

static uint8_t id_ns_rescap(void)
{
	struct fake_req *fr = fake_req_alloc(&hosts[0]);
	struct nvme_cmd cmd;
	uint8_t rescap;

	fake_cmd(&cmd, NVME_ADMIN_IDENTIFY, 1);
	put_le32(&cmd.cdw10, 0); /* CNS 0: namespace */
	fake_req_prep(fr, &cmd, NULL, 4096);
	nvmf_local_admin_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	rescap = fr->data[31];
	fake_req_free(fr);
	return rescap;
}

static void test_ptpl_save_before_complete(void)
{
	uint8_t buf[4096];
	uint32_t gen;
	uint8_t rtype, ptpls;
	uint16_t nregs;
	struct fake_req *fr, *fr2;
	struct nvme_cmd cmd;
	uint8_t keys[16] = { 0 };

	setup_store(NULL, -ENOENT);
	CU_ASSERT_EQUAL(id_ns_rescap() & NVMF_RESV_RESCAP_PTPL, NVMF_RESV_RESCAP_PTPL);
	/* without PTPL nothing is saved */
	CU_ASSERT_EQUAL(resv(1, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xb), 0);
	CU_ASSERT_EQUAL(tstore.saves, 0);

	/* Register with CPTPL 11b: saved first, completed once the store has it */
	tstore.defer = true;
	fr = fake_req_alloc(&hosts[0]);
	fake_cmd(&cmd, NVME_OPC_RESERVATION_REGISTER, 1);
	put_le32(&cmd.cdw10, CPTPL_SET);
	put_le64(&keys[8], 0xa);
	fake_req_prep(fr, &cmd, keys, 16);
	nvmf_req_exec(&fr->req);
	CU_ASSERT_EQUAL(tstore.saves, 1);
	CU_ASSERT_EQUAL(fr->completions, 0);
	CU_ASSERT_TRUE(tstore.saved.ptpl);
	CU_ASSERT_EQUAL(tstore.saved.nregs, 2);
	/* the working copy is unchanged until then */
	report(2, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 1);
	CU_ASSERT_EQUAL(ptpls, 0);
	/* a second change waits its turn: not saved, not completed */
	fr2 = fake_req_alloc(&hosts[1]);
	fake_cmd(&cmd, NVME_OPC_RESERVATION_ACQUIRE, 1);
	put_le32(&cmd.cdw10, T(NVME_RESV_WRITE_EXCLUSIVE));
	memset(keys, 0, sizeof(keys));
	put_le64(&keys[0], 0xb);
	fake_req_prep(fr2, &cmd, keys, 16);
	nvmf_req_exec(&fr2->req);
	CU_ASSERT_EQUAL(fr2->completions, 0);
	CU_ASSERT_EQUAL(tstore.saves, 1);
	tstore.defer = false;
	test_store_finish(0);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(st(fake_status(fr)), 0);
	fake_req_free(fr);
	CU_ASSERT_EQUAL(fr2->completions, 1);
	CU_ASSERT_EQUAL(st(fake_status(fr2)), 0);
	fake_req_free(fr2);
	/* ... then the waiting Acquire ran, and was saved too (PTPL is on) */
	CU_ASSERT_EQUAL(tstore.saves, 2);
	CU_ASSERT_EQUAL(tstore.stored.rtype, NVME_RESV_WRITE_EXCLUSIVE);
	report(2, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 2);
	CU_ASSERT_EQUAL(ptpls, 1);
	CU_ASSERT_EQUAL(rtype, NVME_RESV_WRITE_EXCLUSIVE);
	CU_ASSERT_EQUAL(rw(0, true), CONFLICT);

	/* Set Features Reservation Persistence off: saved with ptpl false */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 1);
	put_le32(&cmd.cdw10, NVME_FEAT_RESV_PERSIST);
	put_le32(&cmd.cdw11, 0);
	fr = fake_req_alloc(&hosts[0]);
	fake_req_prep(fr, &cmd, NULL, 0);
	nvmf_local_admin_exec(&fr->req);
	CU_ASSERT_EQUAL(fr->completions, 1);
	CU_ASSERT_EQUAL(fake_status(fr), 0);
	fake_req_free(fr);
	CU_ASSERT_EQUAL(tstore.saves, 3);
	CU_ASSERT_FALSE(tstore.stored.ptpl);
	/* and from then on changes stay in memory */
	CU_ASSERT_EQUAL(resv(2, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xc), 0);
	CU_ASSERT_EQUAL(tstore.saves, 3);
	teardown();
	CU_ASSERT_EQUAL(tstore.closes, 1);
}

static void test_ptpl_failing_store(void)
{
	uint8_t buf[4096];
	uint32_t gen;
	uint8_t rtype, ptpls;
	uint16_t nregs;

	setup_store(NULL, -ENOENT);
	tstore.save_rc = -EIO;
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, CPTPL_SET, 0, 0xa), ST_INTERNAL_ERR);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 0);
	CU_ASSERT_EQUAL(ptpls, 0);
	CU_ASSERT_EQUAL(gen, 0);
	/* the store works again: the same command goes through */
	tstore.save_rc = 0;
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, CPTPL_SET, 0, 0xa), 0);
	CU_ASSERT_EQUAL(
		resv(0, NVME_OPC_RESERVATION_ACQUIRE, T(NVME_RESV_EXCLUSIVE_ACCESS), 0xa, 0), 0);
	tstore.save_rc = -ENOSPC;
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_RELEASE, T(NVME_RESV_EXCLUSIVE_ACCESS), 0xa,
			     0),
			ST_INTERNAL_ERR);
	CU_ASSERT_EQUAL(rw(1, false), CONFLICT); /* still held */
	CU_ASSERT_EQUAL(tstore.stored.rtype, NVME_RESV_EXCLUSIVE_ACCESS);
	teardown();
}

static void test_ptpl_restore(void)
{
	struct nvmf_resv_image img = { .gen = 7, .rtype = NVME_RESV_WRITE_EXCLUSIVE, .ptpl = true };
	uint8_t buf[4096];
	uint32_t gen;
	uint8_t rtype, ptpls;
	uint16_t nregs;

	/* hosts[1] (host identifier 10 02 ..) held it before the restart */
	img.holder[0] = 0x10;
	img.holder[1] = 2;
	img.nregs = 2;
	memcpy(img.regs[0].hostid, img.holder, 16);
	img.regs[0].key = 0xb;
	img.regs[1].hostid[0] = 0x10;
	img.regs[1].hostid[1] = 3;
	img.regs[1].key = 0xc;
	setup_store(&img, 0);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(gen, 7);
	CU_ASSERT_EQUAL(rtype, NVME_RESV_WRITE_EXCLUSIVE);
	CU_ASSERT_EQUAL(nregs, 2);
	CU_ASSERT_EQUAL(ptpls, 1);
	CU_ASSERT_EQUAL(get_le16(&buf[64]), 0xffff); /* no controller yet */
	CU_ASSERT_EQUAL(buf[64 + 2], 1);             /* the holder */
	CU_ASSERT_EQUAL(get_le64(&buf[64 + 8]), 0xb);
	CU_ASSERT_EQUAL(rw(0, true), CONFLICT);
	CU_ASSERT_EQUAL(rw(1, true), 0);
	CU_ASSERT_EQUAL(rw(2, false), 0);
	/* the restored keys hold */
	CU_ASSERT_EQUAL(resv(2, NVME_OPC_RESERVATION_REGISTER, 2, 0xd, 0xe), CONFLICT);
	CU_ASSERT_EQUAL(resv(2, NVME_OPC_RESERVATION_REGISTER, 2, 0xc, 0xe), 0);
	CU_ASSERT_EQUAL(tstore.stored.gen, 8);
	/* the cluster store's notification: the stored state replaces the working copy */
	tstore.stored.rtype = 0;
	tstore.stored.gen = 20;
	{
		struct nvmf_ns *ns = nvmf_ns_get(env.subsys, 1, NULL);

		CU_ASSERT_EQUAL(nvmf_resv_reload(ns), 0);
		nvmf_ns_put(ns, NULL);
	}
	CU_ASSERT_EQUAL(rw(0, true), 0);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(gen, 20);
	teardown();

	/* an inconsistent image (holder not registered): start empty */
	img.regs[0].hostid[1] = 9;
	setup_store(&img, 0);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 0);
	CU_ASSERT_EQUAL(rtype, 0);
	teardown();
}

static void test_ptpl_off_cleared(void)
{
	struct nvmf_resv_image img = { .gen = 3, .rtype = NVME_RESV_EXCLUSIVE_ACCESS };
	uint8_t buf[4096];
	uint32_t gen;
	uint8_t rtype, ptpls;
	uint16_t nregs;

	img.holder[0] = 0x10;
	img.holder[1] = 2;
	img.nregs = 1;
	memcpy(img.regs[0].hostid, img.holder, 16);
	img.regs[0].key = 0xb;
	/* kept with PTPL off (a store that always saves): cleared at start */
	setup_store(&img, 0);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 0);
	CU_ASSERT_EQUAL(rtype, 0);
	CU_ASSERT_EQUAL(rw(0, true), 0);
	teardown();
	/* a store that cannot load: empty too */
	setup_store(&img, -EBADMSG);
	report(0, &gen, &rtype, &nregs, &ptpls, buf, sizeof(buf));
	CU_ASSERT_EQUAL(nregs, 0);
	teardown();
	/* no store: no PTPL in RESCAP, CPTPL 11b and Set Features PTPL refused */
	setup();
	CU_ASSERT_EQUAL(id_ns_rescap() & NVMF_RESV_RESCAP_PTPL, 0);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, CPTPL_SET, 0, 0xa), INVALID);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, 1u << 30, 0, 0xa), INVALID);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, CPTPL_CLEAR, 0, 0xa), 0);
	teardown();
}

/* ---- reservation notifications: log page 80h and its events -------------------------------- */

static struct fake_req *post_aer(void)
{
	struct fake_req *aer = fake_req_alloc(&env.admin);
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);
	return aer;
}

static void resv_log(uint8_t page[64])
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, NVMF_NSID_ALL);
	put_le32(&cmd.cdw10, NVME_LOG_RESERVATION | (64 / 4 - 1) << 16);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, page, 64, NULL), 0);
}

static uint16_t fabric_resv(uint8_t opc, uint32_t cdw10, uint64_t k1, uint64_t k2)
{
	struct nvme_cmd cmd;
	uint8_t keys[16];

	fake_cmd(&cmd, opc, 1);
	put_le32(&cmd.cdw10, cdw10);
	put_le64(&keys[0], k1);
	put_le64(&keys[8], k2);
	return st(fake_exec(&env.io[0], &cmd, keys, opc == NVME_OPC_RESERVATION_RELEASE ? 8 : 16,
			    NULL));
}

static void set_mask(uint32_t mask)
{
	struct nvme_cmd cmd;

	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 1);
	put_le32(&cmd.cdw10, NVME_FEAT_RESV_MASK);
	put_le32(&cmd.cdw11, mask);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, NULL), 0);
}

static void test_notifications(void)
{
	const uint32_t aer_dw0 =
		nvme_aer_dw0(NVME_AER_TYPE_IO_CMD_SET, NVME_AER_IO_RESV_LOG, NVME_LOG_RESERVATION);
	struct fake_req *aer;
	uint8_t page[64];
	uint32_t dw0 = 0;
	struct nvme_cmd cmd;

	setup();
	fake_env_connect(&env, 0, 1, 1); /* a fabric host with an admin queue */
	aer = post_aer();
	/* an empty log: count 0 */
	resv_log(page);
	CU_ASSERT_EQUAL(get_le64(&page[0]), 0);
	CU_ASSERT_EQUAL(page[8], 0);

	/* the fabric host registers; host 0 preempts it away: Registration Preempted */
	CU_ASSERT_EQUAL(fabric_resv(NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xf), 0);
	CU_ASSERT_EQUAL(fabric_resv(NVME_OPC_RESERVATION_ACQUIRE,
				    T(NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY), 0xf, 0),
			0);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xa), 0);
	CU_ASSERT_EQUAL(aer->completions, 0); /* nothing to tell yet */
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_ACQUIRE,
			     1 | T(NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY), 0xa, 0xf),
			0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_dw0(aer), aer_dw0);
	fake_req_free(aer);
	resv_log(page);
	CU_ASSERT_EQUAL(get_le64(&page[0]), 1);
	CU_ASSERT_EQUAL(page[8], NVMF_RESV_NOTE_REG_PREEMPTED);
	CU_ASSERT_EQUAL(page[9], 0);
	CU_ASSERT_EQUAL(get_le32(&page[12]), 1);
	resv_log(page); /* read: gone */
	CU_ASSERT_EQUAL(get_le64(&page[0]), 0);

	/* registered again, the holder (host 0) releases a registrants-only reservation:
	 * Reservation Released */
	aer = post_aer();
	CU_ASSERT_EQUAL(fabric_resv(NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xf), 0);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_RELEASE, T(NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY),
			     0xa, 0),
			0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(aer->completions, 1);
	fake_req_free(aer);
	/* Clear by host 0: Reservation Preempted; two pages queued, counted */
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_RELEASE, 1, 0xa, 0), 0);
	resv_log(page);
	CU_ASSERT_EQUAL(get_le64(&page[0]), 2);
	CU_ASSERT_EQUAL(page[8], NVMF_RESV_NOTE_RESV_RELEASED);
	CU_ASSERT_EQUAL(page[9], 1); /* one more waiting */
	resv_log(page);
	CU_ASSERT_EQUAL(get_le64(&page[0]), 3);
	CU_ASSERT_EQUAL(page[8], NVMF_RESV_NOTE_RESV_PREEMPTED);
	CU_ASSERT_EQUAL(page[9], 0);

	/* the mask (feature 82h): Registration Preempted masked, nothing queued */
	set_mask(1u << NVMF_RESV_NOTE_REG_PREEMPTED);
	fake_cmd(&cmd, NVME_ADMIN_GET_FEATURES, 1);
	put_le32(&cmd.cdw10, NVME_FEAT_RESV_MASK);
	CU_ASSERT_EQUAL(fake_exec(&env.admin, &cmd, NULL, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1u << NVMF_RESV_NOTE_REG_PREEMPTED);
	CU_ASSERT_EQUAL(fabric_resv(NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xf), 0);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_REGISTER, 0, 0, 0xa), 0);
	CU_ASSERT_EQUAL(resv(0, NVME_OPC_RESERVATION_ACQUIRE, 1 | T(NVME_RESV_WRITE_EXCLUSIVE), 0xa,
			     0xf),
			0);
	fake_msgs_run();
	resv_log(page);
	CU_ASSERT_EQUAL(get_le64(&page[0]), 0);
	/* bad mask bits, and Get Features of every namespace at once: refused */
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 1);
	put_le32(&cmd.cdw10, NVME_FEAT_RESV_MASK);
	put_le32(&cmd.cdw11, 1);
	CU_ASSERT_EQUAL(st(fake_exec(&env.admin, &cmd, NULL, 0, NULL)), INVALID);
	fake_cmd(&cmd, NVME_ADMIN_GET_FEATURES, NVMF_NSID_ALL);
	put_le32(&cmd.cdw10, NVME_FEAT_RESV_MASK);
	CU_ASSERT_EQUAL(st(fake_exec(&env.admin, &cmd, NULL, 0, NULL)),
			ST(NVME_SC_INVALID_NS_OR_FORMAT));
	teardown();
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "register", test_register },
		{ "write exclusive", test_write_exclusive },
		{ "exclusive access, registrants only", test_exclusive_access_reg_only },
		{ "all registrants", test_all_registrants },
		{ "preempt and clear", test_preempt_and_clear },
		{ "report", test_report },
		{ "RESERVE(6)", test_reserve6 },
		{ "fused compare and write", test_fused },
		{ "LBA allocation status", test_lba_status },
		{ "PTPL: saved before completion", test_ptpl_save_before_complete },
		{ "PTPL: a failing store", test_ptpl_failing_store },
		{ "PTPL: restore", test_ptpl_restore },
		{ "PTPL off: cleared at start", test_ptpl_off_cleared },
		{ "notification log page and events", test_notifications },
		CU_TEST_INFO_NULL,
	};

	return fake_run_suite("reservation", tests);
}

/* SPDX-License-Identifier: MIT */
/* Identities that never move. Namespace identities kept in the state directory: generated
 * once, the same after a restart, different for another target (state directory)
 * exporting the same path, explicit identifiers win, the directory is created 0700.
 * Controller IDs: always within the subsystem's cntlid_min..cntlid_max, so daemons with
 * disjoint ranges exporting one subsystem never hand out the same ID. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ns_ident.h"
#include "tests/unit/target/core/fakes.h"

#define NQN "nqn.2026-11.io.test:ident"

struct ids {
	uint8_t nguid[16], uuid[16], eui64[8];
};

/* A target with @dir as its state directory, NQN with "file:1M" as NSID 1. */
static struct ids export_once(const char *dir, const uint8_t *uuid)
{
	struct nvmf_tgt_opts o;
	struct nvmf_ns_opts no = { .nsid = 1, .path = "file:1M" };
	struct nvmf_tgt *tgt;
	struct nvmf_subsys *s;
	struct ids ids;
	char err[256];

	memset(&ids, 0, sizeof(ids));
	nvmf_tgt_opts_default(&o);
	o.state_dir = dir;
	if (uuid) {
		no.has_uuid = true;
		memcpy(no.uuid, uuid, 16);
	}
	tgt = nvmf_tgt_create(&o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
	s = nvmf_subsys_create(tgt, NQN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(nvmf_subsys_add_ns(s, &no, err, sizeof(err)), 1);
	memcpy(ids.nguid, s->ns[1]->nguid, 16);
	memcpy(ids.uuid, s->ns[1]->uuid, 16);
	memcpy(ids.eui64, s->ns[1]->eui64, 8);
	nvmf_tgt_destroy(tgt);
	return ids;
}

static void test_kept_and_unique(void)
{
	char base[] = "/tmp/ns_ident_ut.XXXXXX", a[64], b[64], file[300], line[256];
	static const uint8_t given[16] = { 0xd5, 0x92, 0xcd, 0xf3, 0x5d, 0x1c, 0x44, 0xe0,
					   0x84, 0x12, 0x3f, 0xcf, 0x7d, 0x99, 0xdf, 0x27 };
	struct ids x, y, z, w, h1, h2;
	struct stat st;
	FILE *f;
	bool found = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
	snprintf(a, sizeof(a), "%s/a", base);
	snprintf(b, sizeof(b), "%s/b", base);

	x = export_once(a, NULL);
	CU_ASSERT_EQUAL(stat(a, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	snprintf(file, sizeof(file), "%s/ns-%s-1.id", a, NQN);
	f = fopen(file, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof(line), f))
		found |= !strncmp(line, "nguid=", 6) && strlen(line) == 6 + 32 + 1;
	fclose(f);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(x.uuid[6] >> 4, 4);       /* version 4 */
	CU_ASSERT_EQUAL(x.uuid[8] & 0xc0, 0x80);  /* RFC 4122 variant */
	CU_ASSERT_EQUAL(x.eui64[0] & 0x03, 0x02); /* local, unicast */

	/* restart: the same identity */
	y = export_once(a, NULL);
	CU_ASSERT_EQUAL(memcmp(&x, &y, sizeof(x)), 0);
	/* another target, same subsystem, NSID and path: another identity */
	z = export_once(b, NULL);
	CU_ASSERT_NOT_EQUAL(memcmp(x.nguid, z.nguid, 16), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(x.uuid, z.uuid, 16), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(x.eui64, z.eui64, 8), 0);
	/* an identifier from the configuration wins; the others stay */
	w = export_once(a, given);
	CU_ASSERT_EQUAL(memcmp(w.uuid, given, 16), 0);
	CU_ASSERT_EQUAL(memcmp(w.nguid, x.nguid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(w.eui64, x.eui64, 8), 0);
	/* no state directory: hashed as before (same for both targets) */
	h1 = export_once(NULL, NULL);
	h2 = export_once(NULL, NULL);
	CU_ASSERT_EQUAL(memcmp(&h1, &h2, sizeof(h1)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(h1.nguid, x.nguid, 16), 0);

	unlink(file);
	snprintf(file, sizeof(file), "%s/ns-%s-1.id", b, NQN);
	unlink(file);
	rmdir(a);
	rmdir(b);
	rmdir(base);
}

static void test_file_errors(void)
{
	char base[] = "/tmp/ns_ident_ut.XXXXXX", file[300];
	struct nvmf_ns_ident id;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(base));
	snprintf(file, sizeof(file), "%s/ns-%s-2.id", base, NQN);
	f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("nguid=zz\n", f);
	fclose(f);
	/* a damaged file is an error, and is not replaced by a new identity */
	CU_ASSERT_EQUAL(nvmf_ns_ident_get(base, NQN, 2, &id), -EINVAL);
	f = fopen(file, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	unlink(file);
	/* the directory cannot be made */
	CU_ASSERT_EQUAL(nvmf_ns_ident_get("/nonexistent-dir/x", NQN, 1, &id), -ENOENT);
	rmdir(base);
}

static void test_cntlid_range(void)
{
	struct fake_env e;
	struct fake_qpair q[4];
	struct fake_connect c;
	uint32_t dw0;
	bool seen[3] = { false };

	fake_env_setup(&e, "ram:1M");
	e.subsys->cntlid_min = 10;
	e.subsys->cntlid_max = 12;
	for (unsigned int i = 0; i < 3; i++) {
		fake_qpair_init(&q[i], e.tgt, e.port, &fake_reactor[0]);
		fake_connect_defaults(&c, 0);
		dw0 = 0;
		CU_ASSERT_EQUAL_FATAL(fake_connect(&q[i], &c, &dw0), 0);
		CU_ASSERT(dw0 >= 10 && dw0 <= 12);
		if (dw0 >= 10 && dw0 <= 12) {
			CU_ASSERT_FALSE(seen[dw0 - 10]);
			seen[dw0 - 10] = true;
		}
	}
	/* the range is used up: Controller Busy, not an ID outside it */
	fake_qpair_init(&q[3], e.tgt, e.port, &fake_reactor[0]);
	fake_connect_defaults(&c, 0);
	CU_ASSERT_EQUAL(fake_connect(&q[3], &c, &dw0),
			NVMF_ST_DNR(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_CONTROLLER_BUSY));
	fake_qpair_close(&q[3]);
	/* one goes: the next controller gets an ID of the range again, many times over */
	for (unsigned int round = 0; round < 20; round++) {
		fake_qpair_close(&q[1]);
		fake_msgs_run();
		fake_qpair_init(&q[1], e.tgt, e.port, &fake_reactor[0]);
		fake_connect_defaults(&c, 0);
		dw0 = 0;
		CU_ASSERT_EQUAL(fake_connect(&q[1], &c, &dw0), 0);
		CU_ASSERT(dw0 >= 10 && dw0 <= 12);
	}
	for (unsigned int i = 0; i < 3; i++)
		fake_qpair_close(&q[i]);
	fake_msgs_run();
	fake_env_teardown(&e);
}

static const CU_TestInfo tests[] = {
	{ "controller IDs stay in cntlid_min..cntlid_max", test_cntlid_range },
	{ "kept across restarts, unique per target", test_kept_and_unique },
	{ "damaged file, missing parent", test_file_errors },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("ns_ident", tests);
}

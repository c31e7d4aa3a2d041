/* SPDX-License-Identifier: MIT */
/*
 * The controller behind an iSCSI URI (iscsi_ctrlr.c): SCSI data parsers (INQUIRY, VPD
 * 80h/83h/B0h/B2h, READ CAPACITY, caching mode page, supported opcodes) with good and
 * malformed input, the synthetic Identify data, and the admin/Fabrics commands answered
 * on the admin session of a controller connected to the fake target.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/scsi/host_iscsi.h"
#include "iscsi_fake_target.h"
#include "ut.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define HOSTID "1b4e28ba-2fa1-11d2-883f-0016d3cca427"

/* ---- INQUIRY -------------------------------------------------------------------------------- */
static void std_inquiry(uint8_t *b, uint8_t periph)
{
	memset(b, 0, 96);
	b[0] = periph;
	b[4] = 91;
	memcpy(b + 8, "ACME    ", 8);
	memcpy(b + 16, "Disk 3000       ", 16);
	memcpy(b + 32, "0042", 4);
}

static void test_inquiry(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[96];

	memset(&lu, 0, sizeof(lu));
	std_inquiry(b, 0x00);
	CU_ASSERT_EQUAL(iscsi_lu_parse_inquiry(&lu, b, 96), 0);
	CU_ASSERT_STRING_EQUAL(lu.vendor, "ACME");
	CU_ASSERT_STRING_EQUAL(lu.product, "Disk 3000");
	CU_ASSERT_STRING_EQUAL(lu.revision, "0042");
	CU_ASSERT_EQUAL(iscsi_lu_parse_inquiry(&lu, b, 35), -EINVAL);
	std_inquiry(b, 0x05); /* CD-ROM */
	CU_ASSERT_EQUAL(iscsi_lu_parse_inquiry(&lu, b, 96), -ENODEV);
	CU_ASSERT_EQUAL(lu.ptype, 5);
	std_inquiry(b, 0x7f); /* no LU at this LUN */
	CU_ASSERT_EQUAL(iscsi_lu_parse_inquiry(&lu, b, 96), -ENODEV);
	std_inquiry(b, 0x00);
	b[9] = 0x01; /* control character */
	b[10] = 0xc3;
	CU_ASSERT_EQUAL(iscsi_lu_parse_inquiry(&lu, b, 96), 0);
	CU_ASSERT_STRING_EQUAL(lu.vendor, "A??E");
}

/* ---- VPD pages ------------------------------------------------------------------------------ */
static void test_serial(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[64] = { 0, SCSI_VPD_UNIT_SERIAL, 0, 10, ' ', ' ', 'S', 'N', '-', '1', '2', ' ',
			  ' ', ' ' };

	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_serial(&lu, b, 14), 0);
	CU_ASSERT_STRING_EQUAL(lu.serial, "SN-12");
	CU_ASSERT_EQUAL(iscsi_lu_parse_serial(&lu, b, 9), 0); /* truncated by the allocation */
	CU_ASSERT_STRING_EQUAL(lu.serial, "SN-");
	b[1] = 0x83;
	CU_ASSERT_EQUAL(iscsi_lu_parse_serial(&lu, b, 14), -EINVAL);
	CU_ASSERT_EQUAL(iscsi_lu_parse_serial(&lu, b, 3), -EINVAL);
}

/* A designation descriptor: codeset, association | type, identifier. */
static size_t desig(uint8_t *p, uint8_t codeset, uint8_t assoc_type, uint8_t len, uint8_t fill)
{
	p[0] = codeset;
	p[1] = assoc_type;
	p[2] = 0;
	p[3] = len;
	memset(p + 4, fill, len);
	return 4u + len;
}

static void test_devid(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[256], want[16];
	size_t p = 4;

	memset(b, 0, sizeof(b));
	b[1] = SCSI_VPD_DEVICE_ID;
	/* Ignored: a target port NAA, an ASCII T10 vendor id. */
	p += desig(b + p, SCSI_CODESET_BINARY, SCSI_ASSOC_PORT | SCSI_DESIG_NAA, 8, 0x11);
	p += desig(b + p, SCSI_CODESET_ASCII, SCSI_ASSOC_LU | SCSI_DESIG_T10_VENDOR, 12, 'x');
	/* LU: NAA 16 bytes, NAA 8 bytes, then a 16-byte EUI-64 based one (preferred). */
	p += desig(b + p, SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_NAA, 16, 0x66);
	p += desig(b + p, SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_NAA, 8, 0x55);
	p += desig(b + p, SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_EUI64, 16, 0xee);
	b[3] = (uint8_t)(p - 4);
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_devid(&lu, b, p), 0);
	memset(want, 0xee, 16);
	CU_ASSERT_TRUE(lu.has_nguid);
	CU_ASSERT_EQUAL(memcmp(lu.nguid, want, 16), 0);
	memset(want, 0x55, 8);
	CU_ASSERT_TRUE(lu.has_eui64);
	CU_ASSERT_EQUAL(memcmp(lu.eui64, want, 8), 0);
	/* Every designator is kept as it came, for nvmeof_ctrlr_get_scsi_info(). */
	CU_ASSERT_EQUAL_FATAL(lu.ndesig, 5);
	CU_ASSERT_EQUAL(lu.desig[0].type, 3);
	CU_ASSERT_EQUAL(lu.desig[0].association, 1); /* target port */
	CU_ASSERT_EQUAL(lu.desig[0].len, 8);
	CU_ASSERT_EQUAL(lu.desig[1].type, 1);
	CU_ASSERT_EQUAL(lu.desig[1].code_set, SCSI_CODESET_ASCII);
	CU_ASSERT_EQUAL(lu.desig[1].id[11], 'x');
	CU_ASSERT_EQUAL(lu.desig[4].type, 2);
	CU_ASSERT_EQUAL(lu.desig[4].association, 0);
	CU_ASSERT_EQUAL(lu.desig[4].len, 16);
	CU_ASSERT_EQUAL(lu.desig[4].id[15], 0xee);

	/* A descriptor running past the page: parsing stops, nothing is invented. */
	memset(&lu, 0, sizeof(lu));
	p = 4;
	p += desig(b + p, SCSI_CODESET_BINARY, SCSI_ASSOC_LU | SCSI_DESIG_NAA, 16, 0x66);
	b[3] = (uint8_t)(p - 4 - 6);
	CU_ASSERT_EQUAL(iscsi_lu_parse_devid(&lu, b, p), 0);
	CU_ASSERT_FALSE(lu.has_nguid);
	CU_ASSERT_FALSE(lu.has_eui64);
	/* The page length beyond what was received is cut to it. */
	b[3] = 200;
	CU_ASSERT_EQUAL(iscsi_lu_parse_devid(&lu, b, 10), 0);
	CU_ASSERT_FALSE(lu.has_nguid);
}

static void test_limits(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[64];

	memset(b, 0, sizeof(b));
	b[1] = SCSI_VPD_BLOCK_LIMITS;
	b[3] = 0x3c;
	b[5] = 32;			/* MAXIMUM COMPARE AND WRITE LENGTH */
	put_be32(b + 8, 4096);		/* MAXIMUM TRANSFER LENGTH */
	put_be16(b + 6, 8);             /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	put_be32(b + 12, 1024);         /* OPTIMAL TRANSFER LENGTH */
	put_be32(b + 20, 1u << 20);     /* MAXIMUM UNMAP LBA COUNT */
	put_be32(b + 24, 300);		/* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	put_be32(b + 28, 16);           /* OPTIMAL UNMAP GRANULARITY */
	put_be64(b + 36, 65536);	/* MAXIMUM WRITE SAME LENGTH */
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_block_limits(&lu, b, 64), 0);
	CU_ASSERT_TRUE(lu.have_limits);
	CU_ASSERT_EQUAL(lu.caw_blocks, 32);
	CU_ASSERT_EQUAL(lu.max_xfer_blocks, 4096);
	CU_ASSERT_EQUAL(lu.unmap_descs, 300);
	CU_ASSERT_EQUAL(lu.ws_blocks, 65536);
	CU_ASSERT_EQUAL(lu.opt_xfer_gran, 8);
	CU_ASSERT_EQUAL(lu.opt_xfer_blocks, 1024);
	CU_ASSERT_EQUAL(lu.unmap_blocks, 1u << 20);
	CU_ASSERT_EQUAL(lu.unmap_gran, 16);
	/* An SBC-2 page (12 bytes): the later fields stay unknown. */
	memset(&lu, 0, sizeof(lu));
	b[3] = 12;
	CU_ASSERT_EQUAL(iscsi_lu_parse_block_limits(&lu, b, 64), 0);
	CU_ASSERT_EQUAL(lu.max_xfer_blocks, 4096);
	CU_ASSERT_EQUAL(lu.unmap_descs, 0);
	CU_ASSERT_EQUAL(lu.unmap_blocks, 0);
	CU_ASSERT_EQUAL(lu.unmap_gran, 0);
	CU_ASSERT_EQUAL(lu.opt_xfer_blocks, 1024);
	CU_ASSERT_EQUAL(lu.ws_blocks, 0);
	b[3] = 8;
	CU_ASSERT_EQUAL(iscsi_lu_parse_block_limits(&lu, b, 64), -EINVAL);

	memset(b, 0, sizeof(b));
	b[1] = SCSI_VPD_LOGICAL_BLOCK_PROVISIONING;
	b[3] = 4;
	b[5] = SCSI_LBP_LBPU | SCSI_LBP_LBPRZ;
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_provisioning(&lu, b, 8), 0);
	CU_ASSERT_TRUE(lu.lbpu);
	CU_ASSERT_FALSE(lu.lbpws);
	CU_ASSERT_TRUE(lu.read_zeroes);
	CU_ASSERT_EQUAL(iscsi_lu_parse_provisioning(&lu, b, 5), -EINVAL);
}

/* ---- Capacity, caching, opcodes ------------------------------------------------------------- */
static void test_capacity(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[32];

	memset(b, 0, sizeof(b));
	put_be64(b, 0x1ffffffffull);
	put_be32(b + 8, 4096);
	b[14] = SCSI_RC16_LBPME;
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity16(&lu, b, 32), 0);
	CU_ASSERT_EQUAL(lu.nblocks, 0x200000000ull);
	CU_ASSERT_EQUAL(lu.block_size, 4096);
	CU_ASSERT_EQUAL(lu.block_shift, 12);
	CU_ASSERT_TRUE(lu.thin);
	CU_ASSERT_FALSE(lu.read_zeroes);
	put_be32(b + 8, 520); /* not a power of two */
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity16(&lu, b, 32), -EINVAL);
	put_be32(b + 8, 256);
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity16(&lu, b, 32), -EINVAL);
	put_be32(b + 8, 512);
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity16(&lu, b, 12), -EINVAL);

	memset(b, 0, sizeof(b));
	put_be32(b, 999);
	put_be32(b + 4, 512);
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity10(&lu, b, 8), 0);
	CU_ASSERT_EQUAL(lu.nblocks, 1000);
	CU_ASSERT_EQUAL(lu.block_shift, 9);
	put_be32(b, 0xffffffffu);
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity10(&lu, b, 8), -E2BIG);
	CU_ASSERT_EQUAL(iscsi_lu_parse_capacity10(&lu, b, 7), -EINVAL);
}

static void test_caching(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[64];

	/* Header, an 8-byte block descriptor, a sub-page, then the caching page. */
	memset(b, 0, sizeof(b));
	b[3] = SCSI_MODE_DSP_WP;
	put_be16(b + 6, 8);
	b[16] = 0x40 | 0x0a; /* SPF: control extension sub-page, 16-bit length */
	b[17] = 0x01;
	put_be16(b + 18, 4);
	b[24] = SCSI_MODE_PAGE_CACHING;
	b[25] = 0x12;
	b[26] = SCSI_MODE_CACHING_WCE;
	put_be16(b, 24 + 20 - 2);
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_caching(&lu, b, 64), 0);
	CU_ASSERT_TRUE(lu.write_cache);
	CU_ASSERT_TRUE(lu.write_protected);
	b[26] = 0;
	CU_ASSERT_EQUAL(iscsi_lu_parse_caching(&lu, b, 64), 0);
	CU_ASSERT_FALSE(lu.write_cache);
	/* Mode data length says the page is not there. */
	put_be16(b, 20);
	CU_ASSERT_EQUAL(iscsi_lu_parse_caching(&lu, b, 64), -ENOENT);
	CU_ASSERT_EQUAL(iscsi_lu_parse_caching(&lu, b, 7), -EINVAL);
}

static void test_opcodes(void)
{
	struct host_iscsi_lu lu;
	uint8_t b[64];

	memset(b, 0, sizeof(b));
	b[4] = SCSI_OP_READ16;
	b[12] = SCSI_OP_WRITE_SAME16;
	b[12 + 5] = 0x02; /* CTDP: a 12-byte timeouts descriptor follows */
	b[32] = SCSI_OP_VERIFY16;
	b[40] = SCSI_OP_COMPARE_AND_WRITE; /* beyond the returned length */
	put_be32(b, 36);
	memset(&lu, 0, sizeof(lu));
	CU_ASSERT_EQUAL(iscsi_lu_parse_opcodes(&lu, b, 64), 0);
	CU_ASSERT_TRUE(lu.opcodes_known);
	CU_ASSERT_TRUE(lu.op_ws16);
	CU_ASSERT_TRUE(lu.op_verify16);
	CU_ASSERT_FALSE(lu.op_caw);
	CU_ASSERT_FALSE(lu.op_unmap);
	CU_ASSERT_EQUAL(iscsi_lu_parse_opcodes(&lu, b, 3), -EINVAL);
}

/* ---- Limits, ONCS and Identify data --------------------------------------------------------- */
static void test_finish(void)
{
	struct host_iscsi_lu lu;

	memset(&lu, 0, sizeof(lu));
	lu.block_shift = 9;
	lu.have_limits = true;
	lu.caw_blocks = 8;
	lu.unmap_descs = 300;
	lu.ws_blocks = 1ull << 40;
	lu.lbpu = lu.lbpws = true;
	iscsi_lu_finish(&lu); /* no opcode list: try what the VPD pages suggest */
	CU_ASSERT_EQUAL(lu.lim.block_shift, 9);
	CU_ASSERT_EQUAL(lu.lim.caw_max_blocks, 8);
	CU_ASSERT_EQUAL(lu.lim.unmap_max_descs, SCSI_ENCAP_UNMAP_DESCS);
	CU_ASSERT_EQUAL(lu.lim.ws_max_blocks, UINT32_MAX);
	CU_ASSERT_TRUE(lu.lim.write_same);
	CU_ASSERT_TRUE(lu.lim.ws_unmap);
	CU_ASSERT_TRUE(lu.lim.verify);
	CU_ASSERT_EQUAL(iscsi_lu_oncs(&lu), NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM |
						    NVME_CTRL_ONCS_WRITE_ZEROES);

	/* The opcode list rules: no COMPARE AND WRITE, no UNMAP, VERIFY(16) known. */
	lu.opcodes_known = true;
	lu.op_ws16 = lu.op_verify16 = true;
	iscsi_lu_finish(&lu);
	CU_ASSERT_EQUAL(lu.lim.caw_max_blocks, 0);
	CU_ASSERT_EQUAL(lu.lim.unmap_max_descs, 0);
	CU_ASSERT_EQUAL(iscsi_lu_oncs(&lu), NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WRITE_ZEROES |
						    NVME_CTRL_ONCS_VERIFY);
	/* Compare needs VERIFY(16): a list without it leaves Compare out. */
	lu.op_verify16 = false;
	iscsi_lu_finish(&lu);
	CU_ASSERT_EQUAL(iscsi_lu_oncs(&lu), NVME_CTRL_ONCS_WRITE_ZEROES);
	lu.op_verify16 = true;

	/* Block Limits says no UNMAP (descriptor count 0) even with LBPU. */
	memset(&lu, 0, sizeof(lu));
	lu.have_limits = true;
	lu.lbpu = true;
	iscsi_lu_finish(&lu);
	CU_ASSERT_EQUAL(lu.lim.unmap_max_descs, 0);
	/* LBPU without Block Limits: one descriptor per UNMAP. */
	lu.have_limits = false;
	iscsi_lu_finish(&lu);
	CU_ASSERT_EQUAL(lu.lim.unmap_max_descs, 1);
}

static void test_identify_data(void)
{
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	struct nvme_id_ns *ns = calloc(1, sizeof(*ns));
	uint8_t *list = calloc(1, NVME_IDENTIFY_DATA_SIZE);
	struct host_iscsi_lu lu;

	memset(&lu, 0, sizeof(lu));
	strcpy(lu.vendor, "ACME");
	strcpy(lu.product, "Disk 3000");
	strcpy(lu.revision, "42");
	strcpy(lu.serial, "SERIAL-NUMBER-LONGER-THAN-TWENTY");
	lu.nblocks = 123456;
	lu.block_size = 4096;
	lu.block_shift = 12;
	lu.write_cache = true;
	lu.thin = lu.read_zeroes = true;
	lu.has_nguid = true;
	memset(lu.nguid, 0xab, 16);
	lu.has_eui64 = true;
	memset(lu.eui64, 0xcd, 8);
	lu.caw_blocks = 1;
	lu.lbpws = true;
	iscsi_lu_finish(&lu);

	iscsi_build_id_ctrl(&lu, "iqn.2026-11.io.nvmeof:x", 1u << 20, 64, id);
	CU_ASSERT_EQUAL(memcmp(id->sn, "SERIAL-NUMBER-LONGER", 20), 0);
	CU_ASSERT_EQUAL(memcmp(id->mn, "ACME Disk 3000                          ", 40), 0);
	CU_ASSERT_EQUAL(memcmp(id->fr, "42      ", 8), 0);
	CU_ASSERT_EQUAL(id->mdts, 8); /* 4 KiB << 8 = 1 MiB */
	CU_ASSERT_EQUAL(get_le16(&id->cntlid), 1);
	CU_ASSERT_EQUAL(get_le32(&id->ver), NVME_VS(1, 4, 0));
	CU_ASSERT_EQUAL(id->cntrltype, NVME_CTRL_CNTRLTYPE_IO);
	CU_ASSERT_EQUAL(get_le32(&id->nn), 1);
	CU_ASSERT_EQUAL(get_le16(&id->maxcmd), 64);
	CU_ASSERT_EQUAL(get_le16(&id->oncs), NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WRITE_ZEROES);
	CU_ASSERT_EQUAL(id->vwc, NVME_CTRL_VWC_PRESENT);
	CU_ASSERT_EQUAL(id->sqes, 0x66);
	CU_ASSERT_EQUAL(id->cqes, 0x44);
	CU_ASSERT_STRING_EQUAL(id->subnqn, "iqn.2026-11.io.nvmeof:x");
	iscsi_build_id_ctrl(&lu, "t", 65536, 1, id);
	CU_ASSERT_EQUAL(id->mdts, 4);

	iscsi_build_id_ns(&lu, ns);
	CU_ASSERT_EQUAL(get_le64(&ns->nsze), 123456);
	CU_ASSERT_EQUAL(get_le64(&ns->ncap), 123456);
	CU_ASSERT_EQUAL(ns->nlbaf, 0);
	CU_ASSERT_EQUAL(ns->flbas, 0);
	CU_ASSERT_EQUAL(ns->lbaf[0].lbads, 12);
	CU_ASSERT_EQUAL(ns->nsfeat, NVME_NS_NSFEAT_THIN);
	CU_ASSERT_EQUAL(ns->dlfeat, NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC);
	CU_ASSERT_EQUAL(memcmp(ns->nguid, lu.nguid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(ns->eui64, lu.eui64, 8), 0);

	iscsi_build_ns_desc_list(&lu, list);
	CU_ASSERT_EQUAL(list[0], NVME_NIDT_EUI64);
	CU_ASSERT_EQUAL(list[1], 8);
	CU_ASSERT_EQUAL(memcmp(list + 4, lu.eui64, 8), 0);
	CU_ASSERT_EQUAL(list[12], NVME_NIDT_NGUID);
	CU_ASSERT_EQUAL(list[13], 16);
	CU_ASSERT_EQUAL(memcmp(list + 16, lu.nguid, 16), 0);
	CU_ASSERT_EQUAL(list[32], 0);
	free(id);
	free(ns);
	free(list);
}

/* ---- A controller on the fake target -------------------------------------------------------- */
static int do_connect(struct fake_target *ft, struct nvmeof_ctrlr **ctrlr)
{
	struct nvmeof_opts o;
	char uri[256];

	nvmeof_opts_init(&o);
	o.hostnqn = HOSTNQN;
	o.hostid = HOSTID;
	o.queue_depth = 16;
	o.connect_timeout_ms = o.admin_timeout_ms = 3000;
	snprintf(uri, sizeof(uri), "iscsi://127.0.0.1:%u/%s/0", ft_port(ft), FT_IQN);
	return nvmeof_ctrlr_connect(uri, &o, ctrlr);
}

static void test_controller(void)
{
	struct ft_config cfg = { .ua_first = true };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ctrlr_info ci;
	struct nvmeof_ns_info ni;
	struct nvmeof_cpl cpl;
	struct nvmeof_ns *ns;
	uint8_t *buf = aligned_alloc(4096, 4096);
	struct nvme_id_ctrl *id = (struct nvme_id_ctrl *)buf;
	struct nvme_id_ns *idns = (struct nvme_id_ns *)buf;
	struct nvmeof_cmd cmd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ft);
	CU_ASSERT_EQUAL_FATAL(do_connect(ft, &ctrlr), 0);
	nvmeof_ctrlr_get_info(ctrlr, &ci);
	CU_ASSERT_STRING_EQUAL(ci.transport, "iscsi");
	CU_ASSERT_PTR_NOT_NULL(strstr(ci.uri, "iscsi://127.0.0.1:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ci.uri, FT_IQN "/0"));
	CU_ASSERT_STRING_EQUAL(ci.subnqn, FT_IQN);
	CU_ASSERT_STRING_EQUAL(ci.mn, "FAKE ISCSI-DISK");
	CU_ASSERT_STRING_EQUAL(ci.sn, "FT0001");
	CU_ASSERT_STRING_EQUAL(ci.fr, "1.0");
	CU_ASSERT_EQUAL(ci.nn, 1);
	CU_ASSERT_EQUAL(ci.mdts_bytes, 1u << 20); /* 2048 blocks of 512 */
	CU_ASSERT_EQUAL(ci.oncs, NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM |
					 NVME_CTRL_ONCS_WRITE_ZEROES | NVME_CTRL_ONCS_VERIFY);
	CU_ASSERT_TRUE(ci.vwc);
	CU_ASSERT_EQUAL(ci.io_queues, 1);
	ns = nvmeof_ctrlr_get_ns(ctrlr, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvmeof_ns_get_id(ns), 1);
	CU_ASSERT_EQUAL(nvmeof_ns_get_num_blocks(ns), 16384);
	CU_ASSERT_EQUAL(nvmeof_ns_get_block_size(ns), 512);
	nvmeof_ns_get_info(ns, &ni);
	CU_ASSERT_TRUE(ni.has_nguid);
	CU_ASSERT_EQUAL(ni.nguid[0], 0x60);
	CU_ASSERT_EQUAL(ni.nguid[15], 0x6f);
	CU_ASSERT_EQUAL(ni.dlfeat, NVME_NS_DLFEAT_READ_ZEROES | NVME_NS_DLFEAT_WZ_DEAC);
	CU_ASSERT_PTR_NULL(nvmeof_ctrlr_get_ns(ctrlr, 2));

	/* Identify answered by the admin session. */
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_CTRL, 0, buf), 0);
	CU_ASSERT_EQUAL(memcmp(id->mn, "FAKE ISCSI-DISK ", 16), 0);
	CU_ASSERT_EQUAL(id->mdts, 8);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_NS, 1, buf), 0);
	CU_ASSERT_EQUAL(get_le64(&idns->nsze), 16384);
	CU_ASSERT_EQUAL(idns->lbaf[0].lbads, 9);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_NS, 2, buf),
			NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_NS_OR_FORMAT));
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_NS_ACTIVE_LIST, 0, buf), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 1);
	CU_ASSERT_EQUAL(get_le32(buf + 4), 0);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_NS_ACTIVE_LIST, 1, buf), 0);
	CU_ASSERT_EQUAL(get_le32(buf), 0);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, NVME_ID_CNS_NS_DESC_LIST, 1, buf), 0);
	CU_ASSERT_EQUAL(buf[0], NVME_NIDT_NGUID);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_identify(ctrlr, 0x10, 0, buf),
			NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));

	/* Features, log pages, Keep Alive and an unknown opcode. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADMIN_GET_FEATURES;
	cmd.cdw10 = NVME_FEAT_VOLATILE_WC;
	CU_ASSERT_EQUAL(nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.dw0, 1);
	cmd.opc = NVME_ADMIN_SET_FEATURES;
	CU_ASSERT_EQUAL(nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl),
			NVMEOF_STATUS(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_FEATURE_NOT_CHANGEABLE));
	cmd.cdw10 = NVME_FEAT_NUM_QUEUES;
	CU_ASSERT_EQUAL(nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.dw0, 1023u | 1023u << 16);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_get_log_page(ctrlr, 0x02, 0xffffffff, 0, buf, 512),
			NVMEOF_STATUS(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE));
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADMIN_KEEP_ALIVE;
	CU_ASSERT_EQUAL(nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl), 0);
	CU_ASSERT_EQUAL(ft_stats(ft)->nop_outs, 1);
	cmd.opc = NVME_ADMIN_FIRMWARE_COMMIT;
	CU_ASSERT_EQUAL(nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl),
			NVMEOF_STATUS(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
	CU_ASSERT_TRUE(cpl.dnr);

	/* More queue pairs are more sessions. */
	{
		struct nvmeof_qpair *qp2;

		CU_ASSERT_EQUAL(nvmeof_qpair_alloc(ctrlr, 8, &qp2), 0);
		CU_ASSERT_EQUAL(nvmeof_read_sync(qp2, ns, 0, 8, buf, 0), 0);
		nvmeof_qpair_free(qp2);
		CU_ASSERT_EQUAL(ft_stats(ft)->logins, 3);
	}

	/* A normal shutdown flushes the volatile cache (SYNCHRONIZE CACHE), then logs out. */
	CU_ASSERT_EQUAL(ft_stats(ft)->syncs, 0);
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_stop(ft);
	CU_ASSERT_EQUAL(ft_stats(ft)->syncs, 1);
	CU_ASSERT_EQUAL(ft_stats(ft)->logouts, 3);
	CU_ASSERT_EQUAL(ft_stats(ft)->protocol_errors, 0);
	ft_free(ft);
	free(buf);
}

/* Without REPORT SUPPORTED OPERATION CODES, and with 4 KiB blocks. */
static void test_controller_variants(void)
{
	struct ft_config cfg = { .no_rsoc = true, .block_size = 4096, .nblocks = 4096,
				 .no_caw = true };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ctrlr_info ci;
	uint8_t *buf = aligned_alloc(4096, 8 * 4096);

	CU_ASSERT_EQUAL_FATAL(do_connect(ft, &ctrlr), 0);
	nvmeof_ctrlr_get_info(ctrlr, &ci);
	/* No opcode list: VERIFY(16) is tried, so Compare is offered (COMPARE AND WRITE
	 * length 0 does not matter); UNMAP and WRITE SAME from B2h. */
	CU_ASSERT_EQUAL(ci.oncs,
			NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES);
	CU_ASSERT_EQUAL(ci.mdts_bytes, 1u << 20); /* 2048 x 4 KiB capped at 1 MiB */
	CU_ASSERT_EQUAL(nvmeof_ns_get_block_size(nvmeof_ctrlr_get_ns(ctrlr, 0)), 4096);
	memset(buf, 0x5c, 8 * 4096);
	CU_ASSERT_EQUAL(nvmeof_write_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0),
					  nvmeof_ctrlr_get_ns(ctrlr, 0), 7, 8, buf, 0),
			0);
	CU_ASSERT_EQUAL(memcmp(ft_disk(ft) + 7 * 4096, buf, 8 * 4096), 0);
	CU_ASSERT_EQUAL(nvmeof_compare_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0),
					    nvmeof_ctrlr_get_ns(ctrlr, 0), 7, 1, buf, 0),
			0);
	buf[100] ^= 1;
	CU_ASSERT_EQUAL(nvmeof_compare_sync(nvmeof_ctrlr_get_qpair(ctrlr, 0),
					    nvmeof_ctrlr_get_ns(ctrlr, 0), 7, 1, buf, 0),
			NVMEOF_STATUS(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILURE));
	nvmeof_ctrlr_disconnect(ctrlr);
	ft_free(ft);
	free(buf);
}

/* A target that refuses the login: the connect fails with its reason, nothing leaks. */
static void test_refused(void)
{
	struct ft_config cfg = { .chap = true, .chap_user = "u", .chap_secret = "s" };
	struct fake_target *ft = ft_start(&cfg);
	struct nvmeof_ctrlr *ctrlr = (struct nvmeof_ctrlr *)1;

	CU_ASSERT_EQUAL(do_connect(ft, &ctrlr), -EACCES);
	CU_ASSERT_PTR_NULL(ctrlr);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "authentication failed"));
	ft_free(ft);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "INQUIRY", test_inquiry },
		{ "unit serial number", test_serial },
		{ "device identification", test_devid },
		{ "block limits and provisioning", test_limits },
		{ "capacity", test_capacity },
		{ "caching mode page", test_caching },
		{ "supported opcodes", test_opcodes },
		{ "translation limits", test_finish },
		{ "identify data", test_identify_data },
		{ "controller on a target", test_controller },
		{ "controller variants", test_controller_variants },
		{ "login refused", test_refused },
		CU_TEST_INFO_NULL,
	};

	return ut_run("iscsi_ctrlr", NULL, NULL, tests);
}

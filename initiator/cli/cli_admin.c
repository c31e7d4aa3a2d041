/* SPDX-License-Identifier: MIT */
/*
 * nvmeof: admin commands in nvme-cli's shape: get-log (SMART, error, firmware, changed
 * namespaces, commands supported and effects), get-feature, set-feature, and id-ctrl /
 * id-ns with the Identify data structures' raw fields.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_writer.h"

#define OPC_SET_FEATURES 0x09
#define OPC_GET_FEATURES 0x0a

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A fixed-width text field without its trailing spaces. */
static void text_field(char *out, const uint8_t *p, size_t n)
{
	memcpy(out, p, n);
	out[n] = '\0';
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\0'))
		out[--n] = '\0';
}

/* ---- field tables: name, offset, width (0: text of @len bytes) ------------------------- */
struct field {
	const char *name;
	uint16_t off;
	uint8_t width; /* 1, 2, 4, 8 bytes little endian; 0: text; 16: 128-bit (low 64 shown) */
	uint16_t len;  /* text length */
};

static void print_fields(const struct cli *c, const uint8_t *d, const struct field *f, size_t n,
			 bool last_json)
{
	for (size_t i = 0; i < n; i++) {
		char txt[260];

		if (c->json) {
			printf("  \"%s\": ", f[i].name);
			if (f[i].width == 0) {
				text_field(txt, d + f[i].off, f[i].len);
				json_write_str(stdout, txt);
			} else {
				printf("%" PRIu64,
				       le(d + f[i].off, f[i].width == 16 ? 8 : f[i].width));
			}
			printf("%s\n", i + 1 < n || !last_json ? "," : "");
		} else if (f[i].width == 0) {
			text_field(txt, d + f[i].off, f[i].len);
			printf("%-10s: %s\n", f[i].name, txt);
		} else {
			uint64_t v = le(d + f[i].off, f[i].width == 16 ? 8 : f[i].width);

			printf("%-10s: %" PRIu64 "%s", f[i].name, v, f[i].width > 1 ? "" : "");
			if (f[i].width > 1 && f[i].width != 16 && v > 9)
				printf(" (0x%" PRIx64 ")", v);
			printf("\n");
		}
	}
}

/* ---- get-log ------------------------------------------------------------------------------ */
static const struct field smart_fields[] = {
	{ "critical_warning", 0, 1, 0 },
	{ "temperature", 1, 2, 0 },
	{ "avail_spare", 3, 1, 0 },
	{ "spare_thresh", 4, 1, 0 },
	{ "percent_used", 5, 1, 0 },
	{ "endurance_grp_critical_warning_summary", 6, 1, 0 },
	{ "data_units_read", 32, 16, 0 },
	{ "data_units_written", 48, 16, 0 },
	{ "host_read_commands", 64, 16, 0 },
	{ "host_write_commands", 80, 16, 0 },
	{ "controller_busy_time", 96, 16, 0 },
	{ "power_cycles", 112, 16, 0 },
	{ "power_on_hours", 128, 16, 0 },
	{ "unsafe_shutdowns", 144, 16, 0 },
	{ "media_errors", 160, 16, 0 },
	{ "num_err_log_entries", 176, 16, 0 },
	{ "warning_temp_time", 192, 4, 0 },
	{ "critical_comp_time", 196, 4, 0 },
};

struct log_kind {
	const char *name;
	uint8_t lid;
	uint32_t len; /* default length */
	bool ns;      /* namespace-scoped by default */
};

static const struct log_kind log_kinds[] = {
	{ "error", 0x01, 64 * 16, false }, { "smart", 0x02, 512, false },
	{ "fw-slot", 0x03, 512, false },   { "changed-ns", 0x04, 4096, false },
	{ "effects", 0x05, 4096, false },
	/* ANA (0x0c) once the target reports it: its decoder goes here */
};

static void print_error_log(const struct cli *c, const uint8_t *d, uint32_t len)
{
	unsigned int n = len / 64, shown = 0;

	if (c->json)
		printf("{\n  \"errors\": [");
	for (unsigned int i = 0; i < n; i++) {
		const uint8_t *e = d + 64 * i;

		if (!le(e, 8))
			continue; /* an empty entry */
		if (c->json)
			printf("%s\n    {\"error_count\": %" PRIu64 ", \"sqid\": %u, \"cmdid\": "
			       "%u, "
			       "\"status_field\": %u, \"parm_error_location\": %u, \"lba\": "
			       "%" PRIu64 ", \"nsid\": %u}",
			       shown ? "," : "", le(e, 8), (unsigned int)le(e + 8, 2),
			       (unsigned int)le(e + 10, 2), (unsigned int)le(e + 12, 2) >> 1,
			       (unsigned int)le(e + 14, 2), le(e + 16, 8),
			       (unsigned int)le(e + 24, 4));
		else
			printf("entry %u: error_count %" PRIu64 " sqid %u cmdid %u status 0x%x "
			       "lba %" PRIu64 " nsid %u\n",
			       i, le(e, 8), (unsigned int)le(e + 8, 2), (unsigned int)le(e + 10, 2),
			       (unsigned int)le(e + 12, 2) >> 1, le(e + 16, 8),
			       (unsigned int)le(e + 24, 4));
		shown++;
	}
	if (c->json)
		printf("%s]\n}\n", shown ? "\n  " : "");
	else if (!shown)
		printf("error log: no entries\n");
}

static void print_fw_log(const struct cli *c, const uint8_t *d)
{
	char frs[9];
	bool first = true;

	if (c->json)
		printf("{\n  \"afi\": %u", d[0]);
	else
		printf("afi       : 0x%x (active slot %u, next reset slot %u)\n", d[0], d[0] & 7,
		       (d[0] >> 4) & 7);
	for (unsigned int i = 0; i < 7; i++) {
		text_field(frs, d + 8 + 8 * i, 8);
		if (!frs[0])
			continue;
		if (c->json) {
			printf(",\n  \"frs%u\": ", i + 1);
			json_write_str(stdout, frs);
		} else {
			printf("frs%u      : %s\n", i + 1, frs);
		}
		first = false;
	}
	(void)first;
	if (c->json)
		printf("\n}\n");
}

static void print_changed_ns(const struct cli *c, const uint8_t *d, uint32_t len)
{
	unsigned int shown = 0;

	if (c->json)
		printf("{\n  \"changed_ns\": [");
	for (uint32_t i = 0; i + 4 <= len; i += 4) {
		uint32_t nsid = (uint32_t)le(d + i, 4);

		if (!nsid)
			break;
		if (c->json)
			printf("%s%u", shown ? ", " : "", nsid);
		else
			printf("%s%u", shown ? " " : "changed namespaces: ", nsid);
		shown++;
		if (nsid == 0xffffffff)
			break; /* more than 1024 changed */
	}
	if (c->json)
		printf("]\n}\n");
	else
		printf("%s\n", shown ? "" : "no namespace changed since the log was last read");
}

static void print_effects(const struct cli *c, const uint8_t *d)
{
	static const char *const set[2] = { "admin", "io" };
	bool first = true;

	if (c->json)
		printf("{\n  \"commands\": [");
	for (unsigned int s = 0; s < 2; s++)
		for (unsigned int opc = 0; opc < 256; opc++) {
			uint32_t e = (uint32_t)le(d + 1024 * s + 4 * opc, 4);

			if (!(e & 1))
				continue;
			if (c->json)
				printf("%s\n    {\"set\": \"%s\", \"opcode\": %u, \"effects\": %u}",
				       first ? "" : ",", set[s], opc, e);
			else
				printf("%-5s opcode 0x%02x  effects 0x%08x%s%s%s\n", set[s], opc, e,
				       e & 2 ? "  LBCC" : "", e & 4 ? "  NCC" : "",
				       e & 8 ? "  NIC" : "");
			first = false;
		}
	if (c->json)
		printf("%s]\n}\n", first ? "" : "\n  ");
}

int cmd_get_log(struct cli *c)
{
	const struct log_kind *k = NULL;
	struct nvmeof_ctrlr *ctrlr;
	uint8_t *buf;
	uint32_t len;
	unsigned long lid;
	char *end;
	int rc;

	if (!c->log_id)
		die_usage(c, "--log-id is required (smart, error, fw-slot, changed-ns, effects "
			     "or a number)");
	for (size_t i = 0; i < sizeof(log_kinds) / sizeof(log_kinds[0]); i++)
		if (!strcmp(c->log_id, log_kinds[i].name))
			k = &log_kinds[i];
	if (!k) {
		lid = strtoul(c->log_id, &end, 0);
		if (*end || lid > 255)
			die_usage(c, "--log-id: bad value '%s'", c->log_id);
		for (size_t i = 0; i < sizeof(log_kinds) / sizeof(log_kinds[0]); i++)
			if (log_kinds[i].lid == lid)
				k = &log_kinds[i];
	} else {
		lid = k->lid;
	}
	len = c->log_len ? c->log_len : k ? k->len : 0;
	if (!len)
		die_usage(c, "--log-len is required for log page 0x%lx", lid);
	if (len % 4 || len > (1u << 20))
		die_usage(c, "--log-len: bad value '%u': a multiple of 4 up to 1M", len);
	rc = connect_ctrlr(c, 0, &ctrlr);
	if (rc)
		return rc;
	buf = calloc(1, len);
	if (!buf) {
		nvmeof_ctrlr_disconnect(ctrlr);
		return fail(c, c->cmd, -ENOMEM, NULL);
	}
	rc = nvmeof_ctrlr_get_log_page(ctrlr, (uint8_t)lid, c->nsid ? c->nsid : 0xffffffff, 0, buf,
				       len);
	if (rc) {
		rc = fail(c, c->cmd, rc, NULL);
	} else if (lid == 0x02 && len >= 512) {
		if (c->json)
			printf("{\n");
		print_fields(c, buf, smart_fields, sizeof(smart_fields) / sizeof(smart_fields[0]),
			     true);
		if (c->json)
			printf("}\n");
	} else if (lid == 0x01) {
		print_error_log(c, buf, len);
	} else if (lid == 0x03 && len >= 64) {
		print_fw_log(c, buf);
	} else if (lid == 0x04) {
		print_changed_ns(c, buf, len);
	} else if (lid == 0x05 && len >= 2048) {
		print_effects(c, buf);
	} else {
		char h[33];

		if (c->json)
			printf("{\n  \"lid\": %lu,\n  \"data\": \"", lid);
		for (uint32_t i = 0; i < len; i += 16) {
			uint32_t n = len - i < 16 ? len - i : 16;

			hex(h, buf + i, n);
			if (c->json)
				printf("%s", h);
			else
				printf("%06x: %s\n", i, h);
		}
		if (c->json)
			printf("\"\n}\n");
	}
	free(buf);
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

/* ---- get-feature / set-feature ------------------------------------------------------------- */
static const char *feature_name(uint8_t fid)
{
	switch (fid) {
	case 0x01:
		return "Arbitration";
	case 0x02:
		return "Power Management";
	case 0x04:
		return "Temperature Threshold";
	case 0x06:
		return "Volatile Write Cache";
	case 0x07:
		return "Number of Queues";
	case 0x08:
		return "Interrupt Coalescing";
	case 0x0a:
		return "Write Atomicity Normal";
	case 0x0b:
		return "Asynchronous Event Configuration";
	case 0x0f:
		return "Keep Alive Timer";
	case 0x81:
		return "Host Identifier";
	case 0x83:
		return "Reservation Persistence";
	default:
		return "";
	}
}

static int feature_cmd(struct cli *c, bool set)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_cpl cpl = { 0 };
	struct nvmeof_cmd cmd = {
		.opc = set ? OPC_SET_FEATURES : OPC_GET_FEATURES,
		.nsid = c->nsid,
		.cdw10 = c->fid | (set ? (c->save ? 1u << 31 : 0) : (uint32_t)(c->sel & 7) << 8),
		.cdw11 = set ? c->value : 0,
	};
	int rc;

	if (!c->have_fid)
		die_usage(c, "--feature-id is required");
	if (set && !c->have_value)
		die_usage(c, "--value is required");
	rc = connect_ctrlr(c, 0, &ctrlr);
	if (rc)
		return rc;
	rc = nvmeof_admin_cmd_sync(ctrlr, &cmd, NULL, 0, &cpl);
	if (rc) {
		rc = fail(c, c->cmd, rc, NULL);
	} else if (c->json) {
		printf("{\n  \"feature_id\": %u,\n  \"name\": ", c->fid);
		json_write_str(stdout, feature_name(c->fid));
		printf(",\n  \"%s\": %u\n}\n", set ? "set" : "value", set ? c->value : cpl.dw0);
	} else if (set) {
		printf("set-feature: feature 0x%02x (%s) set to 0x%x%s, result 0x%x\n", c->fid,
		       feature_name(c->fid), c->value, c->save ? ", saved" : "", cpl.dw0);
	} else {
		printf("get-feature: feature 0x%02x (%s), %s value: 0x%08x\n", c->fid,
		       feature_name(c->fid),
		       c->sel == 1   ? "default"
		       : c->sel == 2 ? "saved"
				     : "current",
		       cpl.dw0);
	}
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

int cmd_get_feature(struct cli *c)
{
	return feature_cmd(c, false);
}

int cmd_set_feature(struct cli *c)
{
	return feature_cmd(c, true);
}

/* ---- id-ctrl / id-ns ----------------------------------------------------------------------- */
static const struct field ctrl_fields[] = {
	{ "vid", 0, 2, 0 },         { "ssvid", 2, 2, 0 },     { "sn", 4, 0, 20 },
	{ "mn", 24, 0, 40 },        { "fr", 64, 0, 8 },       { "rab", 72, 1, 0 },
	{ "ieee", 73, 2, 0 },       { "cmic", 76, 1, 0 },     { "mdts", 77, 1, 0 },
	{ "cntlid", 78, 2, 0 },     { "ver", 80, 4, 0 },      { "rtd3r", 84, 4, 0 },
	{ "rtd3e", 88, 4, 0 },      { "oaes", 92, 4, 0 },     { "ctratt", 96, 4, 0 },
	{ "cntrltype", 111, 1, 0 }, { "oacs", 256, 2, 0 },    { "acl", 258, 1, 0 },
	{ "aerl", 259, 1, 0 },      { "frmw", 260, 1, 0 },    { "lpa", 261, 1, 0 },
	{ "elpe", 262, 1, 0 },      { "npss", 263, 1, 0 },    { "kas", 320, 2, 0 },
	{ "anatt", 343, 1, 0 },     { "anacap", 344, 1, 0 },  { "sqes", 512, 1, 0 },
	{ "cqes", 513, 1, 0 },      { "maxcmd", 514, 2, 0 },  { "nn", 516, 4, 0 },
	{ "oncs", 520, 2, 0 },      { "fuses", 522, 2, 0 },   { "fna", 524, 1, 0 },
	{ "vwc", 525, 1, 0 },       { "awun", 526, 2, 0 },    { "awupf", 528, 2, 0 },
	{ "sgls", 536, 4, 0 },      { "mnan", 540, 4, 0 },    { "subnqn", 768, 0, 256 },
	{ "ioccsz", 1792, 4, 0 },   { "iorcsz", 1796, 4, 0 }, { "icdoff", 1800, 2, 0 },
	{ "fcatt", 1802, 1, 0 },    { "msdbd", 1803, 1, 0 },  { "ofcs", 1804, 2, 0 },
};

static const struct field ns_fields[] = {
	{ "nsze", 0, 8, 0 },    { "ncap", 8, 8, 0 },       { "nuse", 16, 8, 0 },
	{ "nsfeat", 24, 1, 0 }, { "nlbaf", 25, 1, 0 },     { "flbas", 26, 1, 0 },
	{ "mc", 27, 1, 0 },     { "dpc", 28, 1, 0 },       { "dps", 29, 1, 0 },
	{ "nmic", 30, 1, 0 },   { "rescap", 31, 1, 0 },    { "fpi", 32, 1, 0 },
	{ "dlfeat", 33, 1, 0 }, { "nawun", 34, 2, 0 },     { "nawupf", 36, 2, 0 },
	{ "nacwu", 38, 2, 0 },  { "nabsn", 40, 2, 0 },     { "nabo", 42, 2, 0 },
	{ "nabspf", 44, 2, 0 }, { "noiob", 46, 2, 0 },     { "anagrpid", 92, 4, 0 },
	{ "nsattr", 99, 1, 0 }, { "nvmsetid", 100, 2, 0 },
};

int cmd_id_ctrl(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	uint8_t buf[4096];
	int rc = connect_ctrlr(c, 0, &ctrlr);

	if (rc)
		return rc;
	if (is_iscsi_uri(c->uri)) {
		rc = print_scsi_identify(c, ctrlr);
		nvmeof_ctrlr_disconnect(ctrlr);
		return rc;
	}
	rc = nvmeof_ctrlr_identify(ctrlr, 0x01, 0, buf);
	if (rc) {
		rc = fail(c, c->cmd, rc, NULL);
	} else {
		if (c->json)
			printf("{\n");
		else
			printf("NVME Identify Controller:\n");
		print_fields(c, buf, ctrl_fields, sizeof(ctrl_fields) / sizeof(ctrl_fields[0]),
			     true);
		if (c->json)
			printf("}\n");
	}
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

int cmd_id_ns(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns;
	uint8_t buf[4096];
	char h[33];
	int rc = connect_ctrlr(c, 0, &ctrlr);

	if (rc)
		return rc;
	ns = nvmeof_ctrlr_get_ns(ctrlr, c->nsid);
	if (!ns) {
		fprintf(stderr, "nvmeof: id-ns: %s\n", nvmeof_last_error());
		nvmeof_ctrlr_disconnect(ctrlr);
		return EXIT_NVME;
	}
	rc = nvmeof_ctrlr_identify(ctrlr, 0x00, nvmeof_ns_get_id(ns), buf);
	if (rc) {
		rc = fail(c, c->cmd, rc, NULL);
		goto out;
	}
	if (c->json)
		printf("{\n  \"nsid\": %u,\n", nvmeof_ns_get_id(ns));
	else
		printf("NVME Identify Namespace %u:\n", nvmeof_ns_get_id(ns));
	print_fields(c, buf, ns_fields, sizeof(ns_fields) / sizeof(ns_fields[0]), false);
	hex(h, buf + 104, 16);
	if (c->json)
		printf("  \"nguid\": \"%s\",\n", h);
	else
		printf("%-10s: %s\n", "nguid", h);
	hex(h, buf + 120, 8);
	if (c->json)
		printf("  \"eui64\": \"%s\",\n  \"lbafs\": [", h);
	else
		printf("%-10s: %s\n", "eui64", h);
	for (unsigned int i = 0; i <= buf[25] && i < 64; i++) {
		const uint8_t *f = buf + 128 + 4 * i;
		bool used = (buf[26] & 0xf) == i;

		if (c->json)
			printf("%s\n    {\"ms\": %u, \"ds\": %u, \"rp\": %u, \"in_use\": %s}",
			       i ? "," : "", (unsigned int)le(f, 2), f[2], f[3] & 3,
			       used ? "true" : "false");
		else
			printf("lbaf %2u   : ms:%-3u lbads:%-2u rp:%u%s\n", i,
			       (unsigned int)le(f, 2), f[2], f[3] & 3, used ? " (in use)" : "");
	}
	if (c->json)
		printf("\n  ]\n}\n");
out:
	nvmeof_ctrlr_disconnect(ctrlr);
	return rc;
}

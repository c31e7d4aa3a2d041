/* SPDX-License-Identifier: MIT */
/*
 * nvmeof on iscsi:// URIs: discover lists a portal's targets (SendTargets), identify and
 * id-ctrl show what the SCSI logical unit said about itself rather than the NVMe fields
 * of the synthetic Identify data, most of which are zero.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/json_writer.h"

bool is_iscsi_uri(const char *uri)
{
	return strncmp(uri, "iscsi://", 8) == 0;
}

/* ---- discover ------------------------------------------------------------------------------ */
static void target_uri(char *out, size_t len, const struct nvmeof_iscsi_target *t)
{
	bool v6 = strchr(t->traddr, ':') != NULL;

	snprintf(out, len, "iscsi://%s%s%s:%s/%s/0", v6 ? "[" : "", t->traddr, v6 ? "]" : "",
		 t->trsvcid, t->name);
}

int cmd_discover_iscsi(struct cli *c)
{
	struct nvmeof_iscsi_target *t;
	unsigned int n;
	char uri[600];
	int rc;

	rc = nvmeof_iscsi_discover(c->uri, &c->opts, &t, &n);
	if (rc) {
		fprintf(stderr, "nvmeof: discover: %s\n", nvmeof_last_error());
		return rc == -EINVAL ? EXIT_USAGE : EXIT_TRANSPORT;
	}
	if (c->json) {
		printf("{\n  \"records\": [");
		for (unsigned int i = 0; i < n; i++) {
			target_uri(uri, sizeof(uri), &t[i]);
			printf("%s\n    {\"trtype\": \"iscsi\", \"traddr\": ", i ? "," : "");
			json_write_str(stdout, t[i].traddr);
			printf(", \"trsvcid\": ");
			json_write_str(stdout, t[i].trsvcid);
			printf(", \"tpgt\": %u, \"targetname\": ", t[i].tpgt);
			json_write_str(stdout, t[i].name);
			printf(", \"uri\": ");
			json_write_str(stdout, uri);
			printf("}");
		}
		printf("%s]\n}\n", n ? "\n  " : "");
	} else {
		printf("\nDiscovery Log Number of Records %u (iSCSI SendTargets)\n", n);
		for (unsigned int i = 0; i < n; i++) {
			target_uri(uri, sizeof(uri), &t[i]);
			printf("=====Discovery Log Entry %u======\n", i);
			printf("trtype:     iscsi\n");
			printf("traddr:     %s\n", t[i].traddr);
			printf("trsvcid:    %s\n", t[i].trsvcid);
			printf("tpgt:       %u\n", t[i].tpgt);
			printf("targetname: %s\n", t[i].name);
			printf("uri:        %s (LUN 0)\n", uri);
		}
	}
	nvmeof_iscsi_targets_free(t);
	return 0;
}

/* ---- identify ------------------------------------------------------------------------------ */
static const char *desig_type(uint8_t t)
{
	static const char *const names[] = {
		[0] = "vendor specific",
		[1] = "T10 vendor ID",
		[2] = "EUI-64",
		[3] = "NAA",
		[4] = "relative target port",
		[5] = "target port group",
		[6] = "logical unit group",
		[7] = "MD5 logical unit",
		[8] = "SCSI name string",
		[9] = "protocol specific",
		[10] = "UUID",
	};

	return t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] : "reserved";
}

static const char *desig_assoc(uint8_t a)
{
	static const char *const names[] = { "logical unit", "target port", "target device",
					     "reserved" };

	return names[a & 3];
}

/* The identifier as text: ASCII/UTF-8 as is, binary in hex. */
static void desig_value(char *out, size_t len, const struct nvmeof_scsi_designator *d)
{
	if (d->code_set == 2 || d->code_set == 3) {
		size_t n = 0;

		for (size_t i = 0; i < d->len && d->id[i] && n + 1 < len; i++)
			out[n++] = d->id[i] >= 0x20 && d->id[i] < 0x7f ? (char)d->id[i] : '?';
		while (n && out[n - 1] == ' ')
			n--;
		out[n] = '\0';
		return;
	}
	if (2 * (size_t)d->len + 1 > len) {
		snprintf(out, len, "(too long)");
		return;
	}
	hex(out, d->id, d->len);
}

static void limit(const char *name, uint32_t v, uint32_t bs)
{
	char size[32];

	if (!v) {
		printf("  %-22s not reported\n", name);
		return;
	}
	if (v == UINT32_MAX) {
		printf("  %-22s no limit\n", name);
		return;
	}
	human_size(size, sizeof(size), (uint64_t)v * bs);
	printf("  %-22s %u blocks (%s)\n", name, v, size);
}

static void scsi_human(const struct nvmeof_scsi_info *si)
{
	char size[32], v[520];

	human_size(size, sizeof(size), si->blocks * si->block_size);
	printf("SCSI logical unit %" PRIu64 " of %s\n", si->lun, si->target);
	printf("  vendor:      %s\n", si->vendor);
	printf("  product:     %s\n", si->product);
	printf("  revision:    %s\n", si->revision);
	printf("  serial:      %s\n", si->serial[0] ? si->serial : "(not reported)");
	printf("  device type: 0x%02x%s\n", si->peripheral_type,
	       si->peripheral_type == 0 ? " (direct-access block device)" : "");
	printf("  capacity:    %" PRIu64 " blocks x %u bytes (%s)\n", si->blocks, si->block_size,
	       size);
	printf("  write cache: %s, write protected: %s, thin: %s, reads zeroes after unmap: "
	       "%s\n",
	       si->write_cache ? "on" : "off", si->write_protected ? "yes" : "no",
	       si->thin ? "yes" : "no", si->read_zeroes ? "yes" : "no");
	printf("Device identifiers (VPD 83h): %u\n", si->ndesignators);
	for (unsigned int i = 0; i < si->ndesignators; i++) {
		const struct nvmeof_scsi_designator *d = &si->designators[i];

		desig_value(v, sizeof(v), d);
		printf("  %-20s (%s): %s\n", desig_type(d->type), desig_assoc(d->association), v);
	}
	if (!si->has_block_limits) {
		printf("Block limits (VPD B0h): not reported\n");
		return;
	}
	printf("Block limits (VPD B0h):\n");
	limit("max transfer:", si->max_transfer, si->block_size);
	limit("optimal transfer:", si->optimal_transfer, si->block_size);
	limit("transfer granularity:", si->optimal_granularity, si->block_size);
	limit("max compare-and-write:", si->max_compare_write, si->block_size);
	limit("max unmap:", si->max_unmap, si->block_size);
	printf("  %-22s %u\n", "unmap descriptors:", si->max_unmap_descriptors);
	limit("unmap granularity:", si->unmap_granularity, si->block_size);
	if (si->max_write_same)
		printf("  %-22s %" PRIu64 " blocks\n", "max write same:", si->max_write_same);
	else
		printf("  %-22s not reported\n", "max write same:");
}

static void jkey_str(const char *key, const char *val, bool last)
{
	printf("    \"%s\": ", key);
	json_write_str(stdout, val);
	printf("%s\n", last ? "" : ",");
}

static void scsi_json(const struct nvmeof_scsi_info *si)
{
	char v[520];

	printf("{\n  \"scsi\": {\n");
	jkey_str("target", si->target, false);
	printf("    \"lun\": %" PRIu64 ",\n", si->lun);
	jkey_str("vendor", si->vendor, false);
	jkey_str("product", si->product, false);
	jkey_str("revision", si->revision, false);
	jkey_str("serial", si->serial, false);
	printf("    \"peripheral_type\": %u,\n", si->peripheral_type);
	printf("    \"blocks\": %" PRIu64 ",\n    \"block_size\": %u,\n    \"bytes\": %" PRIu64
	       ",\n",
	       si->blocks, si->block_size, si->blocks * si->block_size);
	printf("    \"write_cache\": %s,\n    \"write_protected\": %s,\n    \"thin\": %s,\n"
	       "    \"read_zeroes\": %s,\n",
	       si->write_cache ? "true" : "false", si->write_protected ? "true" : "false",
	       si->thin ? "true" : "false", si->read_zeroes ? "true" : "false");
	printf("    \"designators\": [");
	for (unsigned int i = 0; i < si->ndesignators; i++) {
		const struct nvmeof_scsi_designator *d = &si->designators[i];

		desig_value(v, sizeof(v), d);
		printf("%s\n      {\"type\": %u, \"type_name\": ", i ? "," : "", d->type);
		json_write_str(stdout, desig_type(d->type));
		printf(", \"association\": ");
		json_write_str(stdout, desig_assoc(d->association));
		printf(", \"code_set\": %u, \"value\": ", d->code_set);
		json_write_str(stdout, v);
		printf("}");
	}
	printf("%s],\n", si->ndesignators ? "\n    " : "");
	if (si->has_block_limits)
		printf("    \"block_limits\": {\"max_transfer\": %u, \"optimal_transfer\": %u, "
		       "\"optimal_granularity\": %u, \"max_compare_write\": %u, \"max_unmap\": %u, "
		       "\"max_unmap_descriptors\": %u, \"unmap_granularity\": %u, "
		       "\"max_write_same\": %" PRIu64 "}\n",
		       si->max_transfer, si->optimal_transfer, si->optimal_granularity,
		       si->max_compare_write, si->max_unmap, si->max_unmap_descriptors,
		       si->unmap_granularity, si->max_write_same);
	else
		printf("    \"block_limits\": null\n");
	printf("  }\n}\n");
}

int print_scsi_identify(struct cli *c, struct nvmeof_ctrlr *ctrlr)
{
	struct nvmeof_scsi_info si;
	int rc = nvmeof_ctrlr_get_scsi_info(ctrlr, &si);

	if (rc)
		return fail(c, c->cmd, rc, NULL);
	if (c->json)
		scsi_json(&si);
	else
		scsi_human(&si);
	return 0;
}

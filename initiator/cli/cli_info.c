/* SPDX-License-Identifier: MIT */
/* nvmeof: discover, identify and list-ns, the commands that describe what is there. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_writer.h"

/* ---- discover ------------------------------------------------------------------------------ */
static const char *treq_str(uint8_t treq, char *buf, size_t len)
{
	static const char *const sec[] = { "not specified", "required", "not required",
					   "reserved" };

	snprintf(buf, len, "%s%s", sec[treq & 3],
		 treq & 4 ? ", sq flow control disable supported" : "");
	return buf;
}

static const char *eflags_str(uint16_t f, char *buf, size_t len)
{
	if (!f)
		return "none";
	snprintf(buf, len, "%s%s%s%s", f & 1 ? "duplicate discovery information, " : "",
		 f & 2 ? "explicit discovery connections, " : "",
		 f & 4 ? "no cdc connectivity, " : "", f & ~7 ? "reserved, " : "");
	buf[strlen(buf) - 2] = '\0';
	return buf;
}

static const char *sectype_str(uint8_t t)
{
	switch (t) {
	case 0:
		return "none";
	case 1:
		return "tls1.2";
	case 2:
		return "tls1.3";
	default:
		return "reserved";
	}
}

int cmd_discover(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_disc_entry *e;
	unsigned int n;
	uint64_t gen;
	char b1[128], b2[128];
	int rc;

	if (is_iscsi_uri(c->uri))
		return cmd_discover_iscsi(c);
	rc = connect_ctrlr(c, 0, &ctrlr);
	if (rc)
		return rc;
	rc = nvmeof_discover(ctrlr, &e, &n, &gen);
	if (rc) {
		rc = fail(c, "discover", rc, NULL);
		nvmeof_ctrlr_disconnect(ctrlr);
		return rc;
	}
	if (c->json) {
		printf("{\n  \"genctr\": %" PRIu64 ",\n  \"records\": [", gen);
		for (unsigned int i = 0; i < n; i++) {
			printf("%s\n    {\"trtype\": ", i ? "," : "");
			json_write_str(stdout, nvmeof_trtype_name(e[i].trtype));
			printf(", \"adrfam\": ");
			json_write_str(stdout, nvmeof_adrfam_name(e[i].adrfam));
			printf(", \"subtype\": ");
			json_write_str(stdout, nvmeof_subtype_name(e[i].subtype));
			printf(", \"treq\": ");
			json_write_str(stdout, treq_str(e[i].treq, b1, sizeof(b1)));
			printf(", \"portid\": %u, \"trsvcid\": ", e[i].portid);
			json_write_str(stdout, e[i].trsvcid);
			printf(", \"subnqn\": ");
			json_write_str(stdout, e[i].subnqn);
			printf(", \"traddr\": ");
			json_write_str(stdout, e[i].traddr);
			printf(", \"eflags\": ");
			json_write_str(stdout, eflags_str(e[i].eflags, b2, sizeof(b2)));
			printf(", \"sectype\": ");
			json_write_str(stdout, sectype_str(e[i].sectype));
			printf("}");
		}
		printf("%s]\n}\n", n ? "\n  " : "");
	} else {
		printf("\nDiscovery Log Number of Records %u, Generation counter %" PRIu64 "\n", n,
		       gen);
		for (unsigned int i = 0; i < n; i++) {
			printf("=====Discovery Log Entry %u======\n", i);
			printf("trtype:  %s\n", nvmeof_trtype_name(e[i].trtype));
			printf("adrfam:  %s\n", nvmeof_adrfam_name(e[i].adrfam));
			printf("subtype: %s\n", nvmeof_subtype_name(e[i].subtype));
			printf("treq:    %s\n", treq_str(e[i].treq, b1, sizeof(b1)));
			printf("portid:  %u\n", e[i].portid);
			printf("trsvcid: %s\n", e[i].trsvcid);
			printf("subnqn:  %s\n", e[i].subnqn);
			printf("traddr:  %s\n", e[i].traddr);
			printf("eflags:  %s\n", eflags_str(e[i].eflags, b2, sizeof(b2)));
			if (e[i].trtype == 3)
				printf("sectype: %s\n", sectype_str(e[i].sectype));
		}
	}
	nvmeof_disc_free(e);
	nvmeof_ctrlr_disconnect(ctrlr);
	return 0;
}

/* ---- identify / list-ns --------------------------------------------------------------------- */
static void version_str(char *buf, size_t len, uint32_t v)
{
	snprintf(buf, len, "%u.%u.%u", v >> 16, v >> 8 & 0xff, v & 0xff);
}

static const char *ctrl_type(uint8_t t)
{
	switch (t) {
	case 1:
		return "I/O controller";
	case 2:
		return "discovery controller";
	case 3:
		return "administrative controller";
	default:
		return "not reported";
	}
}

static void oncs_str(char *buf, size_t len, uint16_t oncs)
{
	static const char *const bits[] = { "compare",     "write-uncorrectable",
					    "dsm",         "write-zeroes",
					    "save-select", "reservations",
					    "timestamp",   "verify" };
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < 8; i++)
		if (oncs & (1u << i))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", bits[i]);
	if (!o)
		snprintf(buf, len, "none");
}

static void print_ns_human(const struct nvmeof_ns_info *ni)
{
	char size[32], t[64];

	human_size(size, sizeof(size), ni->nsze * ni->block_size);
	printf("Namespace %u:\n", ni->nsid);
	printf("  blocks:      %" PRIu64 " x %u bytes (%s)\n", ni->nsze, ni->block_size, size);
	printf("  capacity:    %" PRIu64 " blocks, %" PRIu64 " in use\n", ni->ncap, ni->nuse);
	if (ni->has_nguid) {
		hex(t, ni->nguid, 16);
		printf("  nguid:       %s\n", t);
	}
	if (ni->has_eui64) {
		hex(t, ni->eui64, 8);
		printf("  eui64:       %s\n", t);
	}
	if (ni->has_uuid) {
		uuid_text(t, ni->uuid);
		printf("  uuid:        %s\n", t);
	}
	printf("  shared:      %s\n", ni->nmic & 1 ? "yes" : "no");
}

static void print_ns_json(const struct nvmeof_ns_info *ni, bool first)
{
	char t[64];

	printf("%s\n    {\"nsid\": %u, \"blocks\": %" PRIu64 ", \"block_size\": %u, \"bytes\": "
	       "%" PRIu64 ", \"capacity\": %" PRIu64 ", \"utilization\": %" PRIu64,
	       first ? "" : ",", ni->nsid, ni->nsze, ni->block_size, ni->nsze * ni->block_size,
	       ni->ncap, ni->nuse);
	if (ni->has_nguid) {
		hex(t, ni->nguid, 16);
		printf(", \"nguid\": \"%s\"", t);
	}
	if (ni->has_eui64) {
		hex(t, ni->eui64, 8);
		printf(", \"eui64\": \"%s\"", t);
	}
	if (ni->has_uuid) {
		uuid_text(t, ni->uuid);
		printf(", \"uuid\": \"%s\"", t);
	}
	printf("}");
}

/* The namespaces to show: the URI's, or all active ones. */
static struct nvmeof_ns *next_ns(struct nvmeof_ctrlr *ctrlr, struct nvmeof_ns *prev, bool one)
{
	if (one)
		return prev ? NULL : nvmeof_ctrlr_get_ns(ctrlr, 0);
	return nvmeof_ctrlr_next_ns(ctrlr, prev);
}

static bool uri_names_ns(const char *uri)
{
	/* nvme+tcp://HOST/NQN/NSID: a third path segment */
	const char *p = strstr(uri, "://");
	int slashes = 0;

	for (p = p ? p + 3 : uri; *p; p++)
		if (*p == '/' && p[1])
			slashes++;
	return slashes >= 2;
}

int cmd_identify(struct cli *c)
{
	struct nvmeof_ctrlr_info ci;
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns = NULL;
	struct nvmeof_ns_info ni;
	bool one = uri_names_ns(c->uri), first = true;
	char ver[32], oncs[160];
	int rc;

	rc = connect_ctrlr(c, 0, &ctrlr);
	if (rc)
		return rc;
	if (is_iscsi_uri(c->uri)) {
		rc = print_scsi_identify(c, ctrlr);
		nvmeof_ctrlr_disconnect(ctrlr);
		return rc;
	}
	nvmeof_ctrlr_get_info(ctrlr, &ci);
	version_str(ver, sizeof(ver), ci.ver);
	oncs_str(oncs, sizeof(oncs), ci.oncs);
	if (c->json) {
		printf("{\n  \"controller\": {\n    \"uri\": ");
		json_write_str(stdout, ci.uri);
		printf(",\n    \"subnqn\": ");
		json_write_str(stdout, ci.subnqn);
		printf(",\n    \"model\": ");
		json_write_str(stdout, ci.mn);
		printf(",\n    \"serial\": ");
		json_write_str(stdout, ci.sn);
		printf(",\n    \"firmware\": ");
		json_write_str(stdout, ci.fr);
		printf(",\n    \"vid\": %u,\n    \"ssvid\": %u,\n    \"cntlid\": %u,\n", ci.vid,
		       ci.ssvid, ci.cntlid);
		printf("    \"version\": \"%s\",\n    \"cntrltype\": %u,\n", ver, ci.cntrltype);
		printf("    \"mdts_bytes\": %u,\n    \"nn\": %u,\n    \"oncs\": %u,\n",
		       ci.mdts_bytes, ci.nn, ci.oncs);
		printf("    \"vwc\": %s,\n    \"sgls\": %u,\n    \"ioccsz_bytes\": %u,\n",
		       ci.vwc ? "true" : "false", ci.sgls, ci.ioccsz_bytes);
		printf("    \"kas_ms\": %u,\n    \"kato_ms\": %u,\n    \"maxcmd\": %u,\n",
		       ci.kas_ms, ci.kato_ms, ci.maxcmd);
		printf("    \"mqes\": %u,\n    \"transport\": ", ci.mqes);
		json_write_str(stdout, ci.transport);
		printf(",\n    \"hdgst\": %s,\n    \"ddgst\": %s,\n    \"maxh2cdata\": %u,\n",
		       ci.hdgst ? "true" : "false", ci.ddgst ? "true" : "false", ci.maxh2cdata);
		if (ci.dhchap_hash[0])
			printf("    \"dhchap\": { \"hash\": \"%s\", \"dhgroup\": \"%s\", "
			       "\"bidirectional\": %s },\n",
			       ci.dhchap_hash, ci.dhchap_dhgroup,
			       ci.dhchap_bidirectional ? "true" : "false");
		else
			printf("    \"dhchap\": null,\n");
		printf("    \"hostnqn\": ");
		json_write_str(stdout, ci.hostnqn);
		printf(",\n    \"hostid\": ");
		json_write_str(stdout, ci.hostid);
		printf("\n  },\n  \"namespaces\": [");
		while ((ns = next_ns(ctrlr, ns, one))) {
			nvmeof_ns_get_info(ns, &ni);
			print_ns_json(&ni, first);
			first = false;
		}
		printf("%s]\n}\n", first ? "" : "\n  ");
	} else {
		printf("Controller %s\n", ci.uri);
		printf("  subnqn:      %s\n", ci.subnqn);
		printf("  model:       %s\n", ci.mn);
		printf("  serial:      %s\n", ci.sn);
		printf("  firmware:    %s\n", ci.fr);
		printf("  vid:         0x%04x (ssvid 0x%04x)\n", ci.vid, ci.ssvid);
		printf("  cntlid:      %u\n", ci.cntlid);
		printf("  version:     %s\n", ver);
		printf("  type:        %s\n", ctrl_type(ci.cntrltype));
		if (ci.mdts_bytes)
			printf("  mdts:        %u bytes\n", ci.mdts_bytes);
		else
			printf("  mdts:        no limit\n");
		printf("  namespaces:  %u (NN)\n", ci.nn);
		printf("  oncs:        %s\n", oncs);
		printf("  vwc:         %s\n", ci.vwc ? "present" : "not present");
		printf("  ioccsz:      %u bytes\n", ci.ioccsz_bytes);
		printf("  maxcmd:      %u, mqes %u\n", ci.maxcmd, ci.mqes);
		printf("  keep alive:  kas %u ms, kato %u ms\n", ci.kas_ms, ci.kato_ms);
		printf("  transport:   %s, header digest %s, data digest %s, maxh2cdata %u\n",
		       ci.transport, ci.hdgst ? "on" : "off", ci.ddgst ? "on" : "off",
		       ci.maxh2cdata);
		if (ci.dhchap_hash[0])
			printf("  auth:        DH-HMAC-CHAP %s %s, %s\n", ci.dhchap_hash,
			       ci.dhchap_dhgroup,
			       ci.dhchap_bidirectional ? "bidirectional" : "unidirectional");
		else
			printf("  auth:        none\n");
		printf("  hostnqn:     %s\n", ci.hostnqn);
		while ((ns = next_ns(ctrlr, ns, one))) {
			nvmeof_ns_get_info(ns, &ni);
			print_ns_human(&ni);
		}
	}
	nvmeof_ctrlr_disconnect(ctrlr);
	return 0;
}

int cmd_list_ns(struct cli *c)
{
	struct nvmeof_ctrlr *ctrlr;
	struct nvmeof_ns *ns = NULL;
	struct nvmeof_ns_info ni;
	bool first = true;
	char size[32];
	int rc;

	rc = connect_ctrlr(c, 0, &ctrlr);
	if (rc)
		return rc;
	if (c->json)
		printf("{\n  \"namespaces\": [");
	else
		printf("%-10s %-20s %-10s %s\n", "NSID", "BLOCKS", "BLOCKSIZE", "SIZE");
	while ((ns = nvmeof_ctrlr_next_ns(ctrlr, ns))) {
		nvmeof_ns_get_info(ns, &ni);
		if (c->json) {
			print_ns_json(&ni, first);
		} else {
			human_size(size, sizeof(size), ni.nsze * ni.block_size);
			printf("%-10u %-20" PRIu64 " %-10u %s\n", ni.nsid, ni.nsze, ni.block_size,
			       size);
		}
		first = false;
	}
	if (c->json)
		printf("%s]\n}\n", first ? "" : "\n  ");
	nvmeof_ctrlr_disconnect(ctrlr);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The configuration file's "iscsi" section, checked like the rest of the file before
 * anything listens: unknown keys are warnings, bad values and LUNs naming a subsystem or
 * namespace the file does not have are errors naming the key path and the value. The
 * iSCSI front end (target/iscsi/iscsi_conf.c) applies the section afterwards.
 */
#include <config.h> /* autoconf: _GNU_SOURCE */

#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ISCSI_CFG_NAME_MAX        223 /* RFC 7143 section 4.2.7.1 */
#define ISCSI_CFG_LUN_MAX         16383
#define ISCSI_CFG_CHAP_SECRET_MIN 12 /* RFC 7143 section 12.1.3: at least 96 bits */
#define ISCSI_CFG_CHAP_MAX        255
#define ISCSI_CFG_SEG_MIN         512
#define ISCSI_CFG_SEG_MAX         16777215 /* 2^24 - 1 */

static const char *const iscsi_keys[] = { "portals", "targets", "options", NULL };
static const char *const portal_keys[] = { "addr", "port", "advertise", NULL };
static const char *const target_keys[] = { "iqn", "alias", "luns", "initiators", "chap", NULL };
static const char *const lun_keys[] = { "lun", "subsystem", "nsid", NULL };
static const char *const chap_keys[] = { "user", "secret", "mutual_user", "mutual_secret", NULL };
static const char *const option_keys[] = { "first_burst_length",
					   "max_burst_length",
					   "max_recv_data_segment_length",
					   "max_outstanding_r2t",
					   "queue_depth",
					   "immediate_data",
					   "initial_r2t",
					   "header_digest",
					   "data_digest",
					   NULL };

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s[n] == '\0';
}

/* iqn.YYYY-MM.reverse.domain[:name], eui.<16 hex> or naa.<16 or 32 hex> (RFC 7143 4.2.7). */
bool cfg_iscsi_name_ok(const char *n)
{
	size_t len = strlen(n);

	if (len > ISCSI_CFG_NAME_MAX)
		return false;
	if (!strncmp(n, "iqn.", 4)) {
		for (int i = 4; i < 11; i++)
			if (i == 8 ? n[i] != '-' : !isdigit((unsigned char)n[i]))
				return false;
		if (n[11] != '.' || !n[12])
			return false;
		for (const char *p = n + 12; *p; p++)
			if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
			      strchr("-.:", *p)))
				return false;
		return true;
	}
	if (!strncmp(n, "eui.", 4))
		return len == 20 && all_hex(n + 4, 16);
	if (!strncmp(n, "naa.", 4))
		return (len == 20 && all_hex(n + 4, 16)) || (len == 36 && all_hex(n + 4, 32));
	return false;
}

static int get_name(struct pctx *c, json_object *o, const char *kp, const char *key, char *buf,
		    size_t size, int required)
{
	char sub[KP_MAX];
	int rc = cfg_get_str(c, o, kp, key, buf, size, required, false);

	if (rc <= 0)
		return rc;
	cfg_kp_join(sub, kp, key);
	if (!cfg_iscsi_name_ok(buf))
		return cfg_err(c, -EINVAL, sub,
			       "\"%s\" is not an iSCSI name (iqn.YYYY-MM.reverse.domain[:name], "
			       "eui.<16 hex> or naa.<16 or 32 hex>)",
			       buf);
	return 1;
}

static int parse_portal(struct pctx *c, json_object *p, const char *kp)
{
	char addr[256], adv[256], sub[KP_MAX];
	int64_t port;
	int rc;

	if (!json_object_is_type(p, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, p, kp, portal_keys);
	if (rc)
		return rc;
	rc = cfg_get_str(c, p, kp, "addr", addr, sizeof(addr), REQ, false);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "addr");
	rc = cfg_check_ip(c, sub, strchr(addr, ':') ? "ipv6" : "ipv4", addr);
	if (rc)
		return rc;
	/* 0: any free port (the daemon logs the one it got) */
	rc = cfg_get_int(c, p, kp, "port", 0, 65535, &port, OPT);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, p, kp, "advertise", adv, sizeof(adv), OPT, false);
	return rc < 0 ? rc : 0;
}

static int parse_lun(struct pctx *c, json_object *l, const char *kp, const char **subsys)
{
	const struct config_subsys *s;
	char nqn[NVME_NQN_FIELD], sub[KP_MAX];
	int64_t lun, nsid;
	int rc;

	if (!json_object_is_type(l, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, l, kp, lun_keys);
	if (rc)
		return rc;
	rc = cfg_get_int(c, l, kp, "lun", 0, ISCSI_CFG_LUN_MAX, &lun, REQ);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, l, kp, "subsystem", nqn, sizeof(nqn), REQ, false);
	if (rc < 0)
		return rc;
	rc = cfg_get_int(c, l, kp, "nsid", 1, 0xfffffffe, &nsid, REQ);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "subsystem");
	s = config_find_subsys(c->cfg, nqn);
	if (!s)
		return cfg_err(c, -EINVAL, sub, "unknown subsystem \"%s\" (not in \"subsystems\")",
			       nqn);
	if (*subsys && strcmp(*subsys, s->nqn))
		return cfg_err(c, -EINVAL, sub,
			       "\"%s\": all LUNs of a target must be in one subsystem (\"%s\")",
			       nqn, *subsys);
	*subsys = s->nqn;
	cfg_kp_join(sub, kp, "nsid");
	if (!config_find_ns(s, (uint32_t)nsid))
		return cfg_err(c, -EINVAL, sub, "subsystem \"%s\" has no namespace %lld", nqn,
			       (long long)nsid);
	return 0;
}

static int parse_chap(struct pctx *c, json_object *ch, const char *kp)
{
	static const char *const pairs[2][2] = { { "user", "secret" },
						 { "mutual_user", "mutual_secret" } };
	char user[ISCSI_CFG_CHAP_MAX + 1], secret[ISCSI_CFG_CHAP_MAX + 1], sub[KP_MAX];
	int rc;

	if (!json_object_is_type(ch, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, ch, kp, chap_keys);
	if (rc)
		return rc;
	for (int i = 0; i < 2; i++) {
		int have_user, have_secret;

		have_user = cfg_get_str(c, ch, kp, pairs[i][0], user, sizeof(user), i == 0, false);
		if (have_user < 0)
			return have_user;
		have_secret =
			cfg_get_str(c, ch, kp, pairs[i][1], secret, sizeof(secret), i == 0, false);
		if (have_secret < 0)
			return have_secret;
		if (have_user != have_secret) {
			cfg_kp_join(sub, kp, pairs[i][have_user ? 1 : 0]);
			return cfg_err(c, -EINVAL, sub, "missing (%s and %s go together)",
				       pairs[i][0], pairs[i][1]);
		}
		if (!have_user)
			continue;
		if (!user[0]) {
			cfg_kp_join(sub, kp, pairs[i][0]);
			return cfg_err(c, -EINVAL, sub, "empty");
		}
		cfg_kp_join(sub, kp, pairs[i][1]);
		/* the length only: a secret is never written to a log */
		if (strlen(secret) < ISCSI_CFG_CHAP_SECRET_MIN)
			return cfg_err(c, -EINVAL, sub,
				       "%zu characters, at least %d are needed (RFC 7143 12.1.3)",
				       strlen(secret), ISCSI_CFG_CHAP_SECRET_MIN);
	}
	return 0;
}

static int parse_target(struct pctx *c, json_object *t, const char *kp)
{
	json_object *arr, *ch;
	const char *subsys = NULL;
	char iqn[ISCSI_CFG_NAME_MAX + 2], alias[256], sub[KP_MAX];
	int rc;

	if (!json_object_is_type(t, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, t, kp, target_keys);
	if (rc)
		return rc;
	rc = get_name(c, t, kp, "iqn", iqn, sizeof(iqn), REQ);
	if (rc < 0)
		return rc;
	rc = cfg_get_str(c, t, kp, "alias", alias, sizeof(alias), OPT, false);
	if (rc < 0)
		return rc;
	rc = cfg_get_typed(c, t, kp, "luns", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		cfg_kp_index(sub, kp, "luns", (unsigned int)i);
		rc = parse_lun(c, json_object_array_get_idx(arr, i), sub, &subsys);
		if (rc)
			return rc;
	}
	rc = cfg_get_typed(c, t, kp, "initiators", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i);

		cfg_kp_index(sub, kp, "initiators", (unsigned int)i);
		if (!json_object_is_type(s, json_type_string))
			return cfg_err(c, -EINVAL, sub, "expected a string");
		if (!cfg_iscsi_name_ok(json_object_get_string(s)))
			return cfg_err(c, -EINVAL, sub, "\"%s\" is not an iSCSI name",
				       json_object_get_string(s));
	}
	rc = cfg_get_typed(c, t, kp, "chap", json_type_object, OPT, &ch);
	if (rc < 0)
		return rc;
	cfg_kp_join(sub, kp, "chap");
	return rc ? parse_chap(c, ch, sub) : 0;
}

static int parse_digest(struct pctx *c, json_object *o, const char *kp, const char *key)
{
	json_object *v = cfg_member(o, key);
	char sub[KP_MAX];
	const char *m;

	if (!v || json_object_is_type(v, json_type_boolean))
		return 0;
	cfg_kp_join(sub, kp, key);
	if (!json_object_is_type(v, json_type_string))
		return cfg_err(c, -EINVAL, sub, "expected \"none\", \"allowed\" or \"required\"");
	m = json_object_get_string(v);
	if (strcmp(m, "none") && strcmp(m, "allowed") && strcmp(m, "required"))
		return cfg_err(c, -EINVAL, sub,
			       "\"%s\" is not a digest setting (none, allowed or required)", m);
	return 0;
}

static int parse_options(struct pctx *c, json_object *o, const char *kp)
{
	static const struct {
		const char *key;
		int64_t min, max;
	} nums[] = {
		{ .key = "first_burst_length", .min = ISCSI_CFG_SEG_MIN, .max = ISCSI_CFG_SEG_MAX },
		{ .key = "max_burst_length", .min = ISCSI_CFG_SEG_MIN, .max = ISCSI_CFG_SEG_MAX },
		{ .key = "max_recv_data_segment_length",
		  .min = ISCSI_CFG_SEG_MIN,
		  .max = ISCSI_CFG_SEG_MAX },
		{ .key = "max_outstanding_r2t", .min = 1, .max = 65535 },
		{ .key = "queue_depth", .min = 1, .max = 4096 },
	};
	int64_t v;
	bool b;
	int rc;

	rc = cfg_check_keys(c, o, kp, option_keys);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		rc = cfg_get_int(c, o, kp, nums[i].key, nums[i].min, nums[i].max, &v, OPT);
		if (rc < 0)
			return rc;
	}
	rc = cfg_get_bool(c, o, kp, "immediate_data", &b);
	if (rc >= 0)
		rc = cfg_get_bool(c, o, kp, "initial_r2t", &b);
	if (rc < 0)
		return rc;
	rc = parse_digest(c, o, kp, "header_digest");
	return rc ? rc : parse_digest(c, o, kp, "data_digest");
}

int cfg_parse_iscsi(struct pctx *c, json_object *o)
{
	json_object *arr, *opts;
	char sub[KP_MAX];
	int rc;

	rc = cfg_check_keys(c, o, "iscsi", iscsi_keys);
	if (rc)
		return rc;
	rc = cfg_get_typed(c, o, "iscsi", "options", json_type_object, OPT, &opts);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = parse_options(c, opts, "iscsi.options");
		if (rc)
			return rc;
	}
	rc = cfg_get_typed(c, o, "iscsi", "targets", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		cfg_kp_index(sub, "iscsi", "targets", (unsigned int)i);
		rc = parse_target(c, json_object_array_get_idx(arr, i), sub);
		if (rc)
			return rc;
	}
	rc = cfg_get_typed(c, o, "iscsi", "portals", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		cfg_kp_index(sub, "iscsi", "portals", (unsigned int)i);
		rc = parse_portal(c, json_object_array_get_idx(arr, i), sub);
		if (rc)
			return rc;
	}
	return 0;
}

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
#include <strings.h>

#include "common/key_file.h"

#define ISCSI_CFG_NAME_MAX        223 /* RFC 7143 section 4.2.7.1 */
#define ISCSI_CFG_LUN_MAX         16383
#define ISCSI_CFG_CHAP_SECRET_MIN 12 /* RFC 7143 section 12.1.3: at least 96 bits */
#define ISCSI_CFG_CHAP_MAX        255
#define ISCSI_CFG_SEG_MIN         512
#define ISCSI_CFG_SEG_MAX         16777215 /* 2^24 - 1 */

static const char *const iscsi_keys[] = { "portals", "targets", "options", "discovery_chap", NULL };
static const char *const portal_keys[] = { "addr", "port", "advertise", NULL };
static const char *const target_keys[] = { "iqn", "alias", "luns", "initiators", "chap", NULL };
static const char *const lun_keys[] = { "lun", "subsystem", "nsid", NULL };
static const char *const chap_keys[] = { "user",        "secret",        "secret_file",
					 "mutual_user", "mutual_secret", "mutual_secret_file",
					 NULL };
/* CHAP_A digests by the names open-iscsi's node.session.auth.chap_algs uses */
static const char *const chap_alg_names[] = { "SHA3-256", "SHA256",  "SHA1",  "MD5",
					      "SHA3_256", "SHA-256", "SHA-1", NULL };
static const char *const option_keys[] = { "first_burst_length",
					   "max_burst_length",
					   "max_recv_data_segment_length",
					   "max_outstanding_r2t",
					   "queue_depth",
					   "immediate_data",
					   "initial_r2t",
					   "header_digest",
					   "data_digest",
					   "chap_algs",
					   "dataout_timeout",
					   "nopin_interval",
					   "nopin_timeout",
					   "max_sessions_per_initiator",
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

/*
 * A secret inline (@key) or from a file (@key "_file", mode 0600, read now so that a bad
 * file stops the load). 1 with it in @buf, 0 when neither is given, or -errno. Messages
 * give lengths and paths, never the secret.
 */
static int get_secret(struct pctx *c, json_object *ch, const char *kp, const char *key, char *buf,
		      size_t size)
{
	char fkey[64], path[CONFIG_PATH_MAX], sub[KP_MAX], kerr[256];
	int have, have_file, rc;

	snprintf(fkey, sizeof(fkey), "%s_file", key);
	have = cfg_get_str(c, ch, kp, key, buf, size, OPT, false);
	if (have < 0)
		return have;
	have_file = cfg_get_str(c, ch, kp, fkey, path, sizeof(path), OPT, false);
	if (have_file < 0)
		return have_file;
	if (have && have_file) {
		cfg_kp_join(sub, kp, fkey);
		return cfg_err(c, -EINVAL, sub, "give %s or %s, not both", key, fkey);
	}
	if (!have_file)
		return have;
	cfg_kp_join(sub, kp, fkey);
	if (path[0] != '/')
		return cfg_err(c, -EINVAL, sub, "\"%s\": expected an absolute path", path);
	rc = nvme_key_file_read(path, buf, size, kerr, sizeof(kerr));
	if (rc == -ENOSPC)
		return cfg_err(c, rc, sub, "%s: longer than %zu characters", path, size - 1);
	if (rc < 0)
		return cfg_err(c, rc, sub, "%s", kerr);
	return 1;
}

static int parse_chap(struct pctx *c, json_object *ch, const char *kp)
{
	static const char *const pairs[2][2] = { { "user", "secret" },
						 { "mutual_user", "mutual_secret" } };
	char user[ISCSI_CFG_CHAP_MAX + 1], secret[2][ISCSI_CFG_CHAP_MAX + 1], sub[KP_MAX];
	int rc = 0, have_secret[2] = { 0, 0 };

	if (!json_object_is_type(ch, json_type_object))
		return cfg_err(c, -EINVAL, kp, "expected an object");
	rc = cfg_check_keys(c, ch, kp, chap_keys);
	if (rc)
		return rc;
	memset(secret, 0, sizeof(secret));
	for (int i = 0; i < 2; i++) {
		int have_user;

		have_user = cfg_get_str(c, ch, kp, pairs[i][0], user, sizeof(user), i == 0, false);
		if (have_user < 0) {
			rc = have_user;
			goto out;
		}
		have_secret[i] = get_secret(c, ch, kp, pairs[i][1], secret[i], sizeof(secret[i]));
		if (have_secret[i] < 0) {
			rc = have_secret[i];
			goto out;
		}
		if (have_user != have_secret[i]) {
			cfg_kp_join(sub, kp, pairs[i][have_user ? 1 : 0]);
			rc = cfg_err(c, -EINVAL, sub, "missing (%s and %s or %s_file go together)",
				     pairs[i][0], pairs[i][1], pairs[i][1]);
			goto out;
		}
		if (!have_user)
			continue;
		if (!user[0]) {
			cfg_kp_join(sub, kp, pairs[i][0]);
			rc = cfg_err(c, -EINVAL, sub, "empty");
			goto out;
		}
		cfg_kp_join(sub, kp, pairs[i][1]);
		/* the length only: a secret is never written to a log */
		if (strlen(secret[i]) < ISCSI_CFG_CHAP_SECRET_MIN) {
			rc = cfg_err(c, -EINVAL, sub,
				     "%zu characters, at least %d are needed (RFC 7143 12.1.3)",
				     strlen(secret[i]), ISCSI_CFG_CHAP_SECRET_MIN);
			goto out;
		}
	}
	/* RFC 7143 12.1.3: a secret that initiators prove must not also be the target's */
	if (have_secret[0] > 0 && have_secret[1] > 0 && !strcmp(secret[0], secret[1])) {
		cfg_kp_join(sub, kp, "mutual_secret");
		rc = cfg_err(c, -EINVAL, sub,
			     "the same as secret: each direction needs its own (RFC 7143 12.1.3)");
	}
out:
	explicit_bzero(secret, sizeof(secret));
	return rc;
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

static bool chap_alg_known(const char *name)
{
	for (int i = 0; chap_alg_names[i]; i++)
		if (!strcasecmp(name, chap_alg_names[i]))
			return true;
	return false;
}

/* "chap_algs": [ "SHA3-256", "SHA256" ] or open-iscsi's text "SHA3-256,SHA256". */
static int parse_chap_algs(struct pctx *c, json_object *o, const char *kp)
{
	json_object *v = cfg_member(o, "chap_algs");
	char sub[KP_MAX], buf[128], *save = NULL;
	unsigned int n = 0;

	if (!v)
		return 0;
	cfg_kp_join(sub, kp, "chap_algs");
	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *e = json_object_array_get_idx(v, i);

			if (!json_object_is_type(e, json_type_string) ||
			    !chap_alg_known(json_object_get_string(e)))
				return cfg_err(c, -EINVAL, sub,
					       "[%zu]: %s: not a CHAP digest (SHA3-256, SHA256, "
					       "SHA1 or MD5)",
					       i, json_object_to_json_string(e));
			n++;
		}
	} else if (json_object_is_type(v, json_type_string)) {
		snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
		for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save), n++)
			if (!chap_alg_known(t))
				return cfg_err(c, -EINVAL, sub,
					       "\"%s\": not a CHAP digest (SHA3-256, SHA256, SHA1 "
					       "or MD5)",
					       t);
	} else {
		return cfg_err(c, -EINVAL, sub, "expected a list of CHAP digests");
	}
	if (!n)
		return cfg_err(c, -EINVAL, sub, "empty: no initiator could authenticate");
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
		{ .key = "dataout_timeout", .min = 0, .max = 3600 },
		{ .key = "nopin_interval", .min = 0, .max = 3600 },
		{ .key = "nopin_timeout", .min = 1, .max = 3600 },
		{ .key = "max_sessions_per_initiator", .min = 1, .max = 65535 },
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
	if (!rc)
		rc = parse_digest(c, o, kp, "data_digest");
	return rc ? rc : parse_chap_algs(c, o, kp);
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
	rc = cfg_get_typed(c, o, "iscsi", "discovery_chap", json_type_object, OPT, &opts);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = parse_chap(c, opts, "iscsi.discovery_chap");
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

/* ---- Reload check, secrets ------------------------------------------------------------------ */

static json_object *parse_or_empty(const char *json)
{
	json_object *o = json ? json_tokener_parse(json) : NULL;

	return o ? o : json_object_new_object();
}

static bool empty(json_object *v)
{
	return !v || (json_object_is_type(v, json_type_array) && !json_object_array_length(v));
}

/* Same value, an absent key and an empty list being the same. */
static bool same_member(json_object *a, json_object *b, const char *key)
{
	json_object *va = cfg_member(a, key), *vb = cfg_member(b, key);

	return (empty(va) && empty(vb)) || (va && vb && json_object_equal(va, vb));
}

static json_object *find_target(json_object *root, const char *iqn)
{
	json_object *arr = cfg_member(root, "targets");

	for (size_t i = 0;
	     arr && json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr);
	     i++) {
		json_object *t = json_object_array_get_idx(arr, i), *n = cfg_member(t, "iqn");

		if (n && json_object_is_type(n, json_type_string) &&
		    !strcasecmp(json_object_get_string(n), iqn))
			return t;
	}
	return NULL;
}

int cfg_iscsi_check_live(const char *old_json, const char *new_json, char *err, size_t errlen)
{
	json_object *o = parse_or_empty(old_json), *n = parse_or_empty(new_json), *arr;
	int rc = 0;

	if (!same_member(o, n, "portals")) {
		snprintf(err, errlen, "iscsi.portals: the portals cannot change without a restart");
		rc = -EBUSY;
	}
	arr = cfg_member(n, "targets");
	for (size_t i = 0; !rc && arr && json_object_is_type(arr, json_type_array) &&
			   i < json_object_array_length(arr);
	     i++) {
		json_object *t = json_object_array_get_idx(arr, i), *name = cfg_member(t, "iqn");
		json_object *was;
		const char *key = NULL;

		if (!name || !json_object_is_type(name, json_type_string))
			continue;
		was = find_target(o, json_object_get_string(name));
		if (!was)
			continue;
		if (!same_member(was, t, "luns"))
			key = "luns";
		else if (!same_member(was, t, "alias"))
			key = "alias";
		if (key) {
			snprintf(err, errlen,
				 "iscsi.targets[%zu].%s: %s is running with a different value; "
				 "remove the target or restart to change it",
				 i, key, json_object_get_string(name));
			rc = -EBUSY;
		}
	}
	json_object_put(o);
	json_object_put(n);
	return rc;
}

/* The chap objects of the section: each target's and discovery_chap. */
static void for_each_chap(json_object *root, void (*fn)(json_object *chap, void *arg), void *arg)
{
	json_object *arr = cfg_member(root, "targets"), *ch;

	for (size_t i = 0;
	     arr && json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr);
	     i++) {
		ch = cfg_member(json_object_array_get_idx(arr, i), "chap");
		if (ch && json_object_is_type(ch, json_type_object))
			fn(ch, arg);
	}
	ch = cfg_member(root, "discovery_chap");
	if (ch && json_object_is_type(ch, json_type_object))
		fn(ch, arg);
}

static void chap_has_inline(json_object *chap, void *arg)
{
	if (cfg_member(chap, "secret") || cfg_member(chap, "mutual_secret"))
		*(bool *)arg = true;
}

bool cfg_iscsi_has_secrets(const char *json)
{
	json_object *root = json ? json_tokener_parse(json) : NULL;
	bool has = false;

	if (!root)
		return false;
	for_each_chap(root, chap_has_inline, &has);
	json_object_put(root);
	return has;
}

static void chap_strip(json_object *chap, void *arg)
{
	json_object_object_del(chap, "secret");
	json_object_object_del(chap, "mutual_secret");
}

json_object *cfg_iscsi_save(const char *json, bool secrets)
{
	json_object *root = json ? json_tokener_parse(json) : NULL;

	/* secrets given by file stay files: only the path is in the section */
	if (root && !secrets)
		for_each_chap(root, chap_strip, NULL);
	return root;
}

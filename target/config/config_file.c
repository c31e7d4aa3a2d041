/* SPDX-License-Identifier: MIT */
/*
 * Configuration loader: nvmetcli-format JSON -> struct tgt_config.
 *
 * nvmetcli copies configfs attribute files verbatim, so most values arrive as strings
 * ("4420", "1", "16384", "-1" for "default") while a few are JSON numbers (portid, nsid,
 * grpid, enable, ana_grpid). Every getter accepts both forms where nvmetcli could write
 * either and rejects anything else with the key path in the message. json-c reports no
 * positions for semantic errors, so messages name the key path; syntax errors carry the
 * tokener's line:column.
 */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_file.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "common/log.h"
#include "core/nvmf.h"

#define CONFIG_FILE_MAX (16u << 20)
#define CONFIG_MAX_PORTS 256
#define CONFIG_MAX_SUBSYS 1024
#define CONFIG_MAX_HOSTS 4096
#define CONFIG_MAX_REFERRALS 256
#define CONFIG_MAX_ANA_GROUPS 1024 /* nvmet's NVMET_MAX_ANAGRPS */
#define CONFIG_MAX_INLINE (128u << 10)
#define KP_MAX 256

struct pctx {
	const char *name; /* file name for messages */
	char *err;
	size_t errlen;
	struct tgt_config *cfg;
};

enum { OPT = 0, REQ = 1 };

/* ---- Messages -------------------------------------------------------------------------------- */

/* Key paths are built in fixed buffers; a path too long for one ends in "..." (never seen
 * in practice: the deepest is subsystems[N].namespaces[N].device.path). */
static void kp_fix(char *out, int n)
{
	if (n >= KP_MAX)
		memcpy(out + KP_MAX - 4, "...", 4);
}

static void kp_join(char *out, const char *base, const char *key)
{
	char tmp[KP_MAX];
	int n;

	if (!base || !*base)
		n = snprintf(tmp, sizeof(tmp), "%s", key);
	else
		n = snprintf(tmp, sizeof(tmp), "%s.%s", base, key);
	kp_fix(tmp, n);
	memcpy(out, tmp, sizeof(tmp));
}

static void kp_index(char *out, const char *base, const char *key, unsigned int i)
{
	char tmp[KP_MAX];
	int n;

	kp_join(tmp, base, key);
	n = snprintf(out, KP_MAX, "%s[%u]", tmp, i);
	kp_fix(out, n);
}

__attribute__((format(printf, 4, 5))) static int perr(struct pctx *c, int rc, const char *kp,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen) {
		if (kp && *kp)
			snprintf(c->err, c->errlen, "%s: %s: %s", c->name, kp, msg);
		else
			snprintf(c->err, c->errlen, "%s: %s", c->name, msg);
	}
	return rc;
}

__attribute__((format(printf, 3, 4))) static int pwarn(struct pctx *c, const char *kp,
						       const char *fmt, ...)
{
	struct tgt_config *cfg = c->cfg;
	char msg[512], line[1024];
	char **w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s: %s", c->name, kp, msg);
	w = realloc(cfg->warnings, (cfg->nwarnings + 1) * sizeof(*w));
	if (!w)
		return perr(c, -ENOMEM, NULL, "out of memory");
	cfg->warnings = w;
	w[cfg->nwarnings] = strdup(line);
	if (!w[cfg->nwarnings])
		return perr(c, -ENOMEM, NULL, "out of memory");
	cfg->nwarnings++;
	return 0;
}

/* Warn about every key of @obj that is not in @known (NULL-terminated). */
static int check_keys(struct pctx *c, json_object *obj, const char *kp, const char *const *known)
{
	char sub[KP_MAX];

	json_object_object_foreach(obj, key, val)
	{
		const char *const *k;
		int rc;

		(void)val;
		for (k = known; *k; k++)
			if (!strcmp(*k, key))
				break;
		if (*k)
			continue;
		kp_join(sub, kp, key);
		rc = pwarn(c, sub, "unknown key, ignored");
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- Typed getters --------------------------------------------------------------------------- */

static json_object *member(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

/* @key of @obj as an object/array; 1 if present, 0 if absent, -EINVAL on a wrong type. */
static int get_typed(struct pctx *c, json_object *obj, const char *kp, const char *key,
		     enum json_type type, int required, json_object **out)
{
	json_object *v = member(obj, key);
	char sub[KP_MAX];

	kp_join(sub, kp, key);
	*out = NULL;
	if (!v || json_object_is_type(v, json_type_null)) {
		if (required)
			return perr(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (!json_object_is_type(v, type))
		return perr(c, -EINVAL, sub, "expected %s",
			    type == json_type_object ? "an object" : "an array");
	*out = v;
	return 1;
}

/*
 * A string value into @buf (NUL-terminated, < @size). With @int_ok a JSON integer is
 * accepted and converted. 1 if present, 0 if absent (@buf untouched), -errno on error.
 */
static int get_str(struct pctx *c, json_object *obj, const char *kp, const char *key, char *buf,
		   size_t size, int required, bool int_ok)
{
	json_object *v = member(obj, key);
	char sub[KP_MAX];
	const char *s;
	size_t len;

	kp_join(sub, kp, key);
	if (!v) {
		if (required)
			return perr(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (int_ok && json_object_is_type(v, json_type_int)) {
		snprintf(buf, size, "%" PRId64, json_object_get_int64(v));
		return 1;
	}
	if (!json_object_is_type(v, json_type_string))
		return perr(c, -EINVAL, sub, "expected a string");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (strlen(s) != len)
		return perr(c, -EINVAL, sub, "contains a NUL character");
	if (len >= size)
		return perr(c, -EINVAL, sub, "longer than %zu bytes", size - 1);
	memcpy(buf, s, len + 1);
	return 1;
}

/* Decimal integer text, optionally signed, surrounding blanks allowed (configfs style). */
static bool parse_dec(const char *s, int64_t *out)
{
	char *end;
	long long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s || (!isdigit((unsigned char)*s) && *s != '-' && *s != '+'))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

/* An integer as a JSON number or a decimal string, checked against [min, max]. */
static int get_int(struct pctx *c, json_object *obj, const char *kp, const char *key, int64_t min,
		   int64_t max, int64_t *out, int required)
{
	json_object *v = member(obj, key);
	char sub[KP_MAX];
	int64_t val;

	kp_join(sub, kp, key);
	if (!v) {
		if (required)
			return perr(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (json_object_is_type(v, json_type_int)) {
		val = json_object_get_int64(v); /* saturates: still out of range below */
	} else if (json_object_is_type(v, json_type_string)) {
		if (!parse_dec(json_object_get_string(v), &val))
			return perr(c, -EINVAL, sub, "expected an integer, got \"%s\"",
				    json_object_get_string(v));
	} else {
		return perr(c, -EINVAL, sub, "expected an integer");
	}
	if (val < min || val > max)
		return perr(c, -ERANGE, sub,
			    "value %" PRId64 " out of range %" PRId64 "..%" PRId64, val, min, max);
	*out = val;
	return 1;
}

/* 0/1 as a number, a string ("0", "1") or a JSON boolean. */
static int get_bool(struct pctx *c, json_object *obj, const char *kp, const char *key, bool *out)
{
	json_object *v = member(obj, key);
	char sub[KP_MAX];
	int64_t val;

	kp_join(sub, kp, key);
	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 1;
	}
	if (json_object_is_type(v, json_type_int)) {
		val = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		if (!parse_dec(json_object_get_string(v), &val))
			return perr(c, -EINVAL, sub, "expected 0 or 1, got \"%s\"",
				    json_object_get_string(v));
	} else {
		return perr(c, -EINVAL, sub, "expected 0 or 1");
	}
	if (val != 0 && val != 1)
		return perr(c, -EINVAL, sub, "expected 0 or 1, got %" PRId64, val);
	*out = val;
	return 1;
}

/* ---- Value checks ---------------------------------------------------------------------------- */

/* NQN rules: 1..223 bytes of printable text without '/'. The "nqn." prefix the spec
 * requires is only warned about: nvmet accepts any name ("testnqn") and so do we. */
static int check_nqn(struct pctx *c, const char *kp, const char *nqn, const char *what)
{
	const unsigned char *p;
	size_t len = strlen(nqn);

	if (len == 0)
		return perr(c, -EINVAL, kp, "empty %s NQN", what);
	if (len > NVME_NQN_MAX)
		return perr(c, -EINVAL, kp, "%s NQN is %zu bytes, the limit is %d", what, len,
			    NVME_NQN_MAX);
	for (p = (const unsigned char *)nqn; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '/')
			return perr(c, -EINVAL, kp, "%s NQN \"%s\" contains %s", what, nqn,
				    *p == '/' ? "'/'" : "a blank or control character");
	if (!strcmp(nqn, NVME_DISCOVERY_NQN))
		return perr(c, -EINVAL, kp, "%s is reserved for the discovery service",
			    NVME_DISCOVERY_NQN);
	if (strncmp(nqn, "nqn.", 4))
		return pwarn(c, kp, "\"%s\" is not an NVMe Qualified Name (no \"nqn.\" prefix)",
			     nqn);
	return 0;
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* @n bytes of hex digits, ignoring '-' and ':' separators (UUID or EUI-64 notation). */
static bool parse_hex_id(const char *s, uint8_t *out, size_t n)
{
	size_t got = 0;
	int hi = -1;

	for (; *s; s++) {
		int v;

		if (*s == '-' || *s == ':')
			continue;
		v = hexval((unsigned char)*s);
		if (v < 0 || got == n)
			return false;
		if (hi < 0) {
			hi = v;
		} else {
			out[got++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return got == n && hi < 0;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (*b++)
			return false;
	return true;
}

/* "K/M/G/T" powers of 1024, like bdev_parse_size(); rejects 0 and overflow. */
static bool parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return false;
	}
	if (*end && end[1])
		return false;
	if (v == 0 || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static int check_ns_path(struct pctx *c, const char *kp, const char *path, bool enabled)
{
	struct stat st;
	uint64_t size;

	if (!strncmp(path, "ram:", 4) || !strncmp(path, "null:", 5)) {
		const char *spec = strchr(path, ':') + 1;

		if (!parse_size(spec, &size))
			return perr(c, -EINVAL, kp,
				    "\"%s\": expected a size such as 64M or 1G after '%.*s'", path,
				    (int)(spec - path), path);
		if (size % 4096)
			return perr(c, -EINVAL, kp, "\"%s\": size is not a multiple of 4096",
				    path);
		return 0;
	}
	if (!strncmp(path, "rbd:", 4)) {
		/* The rest is checked when the namespace opens (target/bdev/bdev_rbd.c). */
		if (!strchr(path + 4, '/'))
			return perr(c, -EINVAL, kp,
				    "\"%s\": expected rbd:POOL/IMAGE[:id=NAME][:conf=PATH]"
				    "[:keyring=PATH]",
				    path);
		return 0;
	}
	if (path[0] != '/')
		return perr(c, -EINVAL, kp,
			    "\"%s\": expected an absolute file or device path, ram:SIZE, "
			    "null:SIZE or rbd:POOL/IMAGE",
			    path);
	if (!enabled)
		return 0; /* nvmet keeps disabled namespaces whose device is gone */
	if (stat(path, &st))
		return perr(c, -errno, kp, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return perr(c, -EINVAL, kp, "%s: not a regular file or block device", path);
	return 0;
}

static int check_ip(struct pctx *c, const char *kp, const char *adrfam, const char *addr)
{
	unsigned char buf[sizeof(struct in6_addr)];
	int af = !strcmp(adrfam, "ipv6") ? AF_INET6 : AF_INET;

	if (inet_pton(af, addr, buf) != 1)
		return perr(c, -EINVAL, kp, "\"%s\" is not an %s address", addr,
			    af == AF_INET6 ? "IPv6" : "IPv4");
	return 0;
}

/* ---- Addresses ------------------------------------------------------------------------------- */

static const char *const port_addr_keys[] = {"trtype", "adrfam", "traddr", "trsvcid",
					     "treq",   "tsas",	 NULL};
static const char *const referral_addr_keys[] = {"trtype", "adrfam", "traddr", "trsvcid",
						 "treq",   "tsas",   "portid",	NULL};

static int parse_treq(struct pctx *c, const char *kp, const char *s, uint8_t *treq)
{
	if (!*s || !strcmp(s, "not specified"))
		*treq = NVMF_TREQ_SECURE_NOT_SPECIFIED;
	else if (!strcmp(s, "not required"))
		*treq = NVMF_TREQ_SECURE_NOT_REQUIRED;
	else if (!strcmp(s, "required"))
		return perr(c, -ENOTSUP, kp,
			    "a secure channel (TLS) is not supported by nvmeof-target");
	else
		return perr(c, -EINVAL, kp,
			    "\"%s\": expected \"not specified\", \"not required\" or \"required\"",
			    s);
	return 0;
}

/*
 * An "addr" object. @listen: it is one of our ports (we must serve the transport);
 * otherwise a referral, which is only reported in the discovery log.
 */
static int parse_addr(struct pctx *c, json_object *obj, const char *kp, struct config_addr *a,
		      bool listen)
{
	char sub[KP_MAX], buf[64];
	int64_t port;
	int rc;

	rc = check_keys(c, obj, kp, listen ? port_addr_keys : referral_addr_keys);
	if (rc)
		return rc;
	rc = get_str(c, obj, kp, "trtype", a->trtype, sizeof(a->trtype), REQ, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "trtype");
	if (!strcmp(a->trtype, "loop") || !strcmp(a->trtype, "fc")) {
		return perr(c, -ENOTSUP, sub, "%s transport is not supported by nvmeof-target%s",
			    a->trtype, listen ? "" : " (referrals may name tcp or rdma ports)");
	} else if (!strcmp(a->trtype, "rdma")) {
#ifndef HAVE_RDMA
		if (listen)
			return perr(c, -ENOTSUP, sub,
				    "rdma transport is not supported by this build of "
				    "nvmeof-target (built without libibverbs/librdmacm)");
#endif
	} else if (strcmp(a->trtype, "tcp")) {
		return perr(c, -EINVAL, sub, "unknown transport \"%s\"", a->trtype);
	}

	rc = get_str(c, obj, kp, "adrfam", a->adrfam, sizeof(a->adrfam), OPT, false);
	if (rc < 0)
		return rc;
	rc = get_str(c, obj, kp, "traddr", a->traddr, sizeof(a->traddr), REQ, false);
	if (rc < 0)
		return rc;
	rc = get_str(c, obj, kp, "trsvcid", a->trsvcid, sizeof(a->trsvcid), OPT, true);
	if (rc < 0)
		return rc;
	buf[0] = '\0';
	rc = get_str(c, obj, kp, "treq", buf, sizeof(buf), OPT, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "treq");
	rc = parse_treq(c, sub, buf, &a->treq);
	if (rc)
		return rc;
	buf[0] = '\0';
	rc = get_str(c, obj, kp, "tsas", buf, sizeof(buf), OPT, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "tsas");
	if (buf[0] && strcmp(buf, "none") && strcmp(buf, "not specified"))
		return perr(c, -ENOTSUP, sub, "\"%s\": only \"none\" is supported", buf);

	kp_join(sub, kp, "adrfam");
	if (strcmp(a->adrfam, "ipv4") && strcmp(a->adrfam, "ipv6"))
		return perr(c, -EINVAL, sub, "\"%s\": expected \"ipv4\" or \"ipv6\"", a->adrfam);
	kp_join(sub, kp, "traddr");
	rc = check_ip(c, sub, a->adrfam, a->traddr);
	if (rc)
		return rc;
	kp_join(sub, kp, "trsvcid");
	if (!a->trsvcid[0])
		return perr(c, -EINVAL, sub, "missing (a TCP port number)");
	if (!parse_dec(a->trsvcid, &port) || port < 1 || port > 65535)
		return perr(c, -EINVAL, sub, "\"%s\": expected a port number 1..65535",
			    a->trsvcid);
	snprintf(a->trsvcid, sizeof(a->trsvcid), "%d", (int)port);
	return 0;
}

/* ---- Ports ----------------------------------------------------------------------------------- */

static const char *const port_keys[] = {"portid", "addr",	"param",     "subsystems",
					"referrals", "ana_groups", "advertise", NULL};
static const char *const param_keys[] = {"inline_data_size", "pi_enable", "max_queue_size",
					 NULL};
static const char *const referral_keys[] = {"name", "addr", "enable", NULL};
static const char *const ana_group_keys[] = {"grpid", "ana", NULL};
static const char *const ana_keys[] = {"state", NULL};

static int parse_referral(struct pctx *c, json_object *obj, const char *kp,
			  struct config_referral *r)
{
	json_object *addr;
	char sub[KP_MAX];
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, referral_keys);
	if (rc)
		return rc;
	rc = get_str(c, obj, kp, "name", r->name, sizeof(r->name), REQ, true);
	if (rc < 0)
		return rc;
	r->enable = true;
	rc = get_bool(c, obj, kp, "enable", &r->enable);
	if (rc < 0)
		return rc;
	rc = get_typed(c, obj, kp, "addr", json_type_object, REQ, &addr);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "addr");
	rc = parse_addr(c, addr, sub, &r->addr, false);
	if (rc)
		return rc;
	rc = get_int(c, addr, sub, "portid", 0, 65535, &v, OPT);
	if (rc < 0)
		return rc;
	r->portid = rc ? (uint16_t)v : 0;
	return 0;
}

static int parse_ana_group(struct pctx *c, json_object *obj, const char *kp,
			   struct config_ana_group *g)
{
	json_object *ana;
	char sub[KP_MAX];
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, ana_group_keys);
	if (rc)
		return rc;
	rc = get_int(c, obj, kp, "grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, REQ);
	if (rc < 0)
		return rc;
	g->grpid = (uint32_t)v;
	snprintf(g->state, sizeof(g->state), "optimized");
	rc = get_typed(c, obj, kp, "ana", json_type_object, OPT, &ana);
	if (rc <= 0)
		return rc;
	kp_join(sub, kp, "ana");
	rc = check_keys(c, ana, sub, ana_keys);
	if (rc)
		return rc;
	rc = get_str(c, ana, sub, "state", g->state, sizeof(g->state), OPT, false);
	if (rc < 0)
		return rc;
	kp_join(sub, sub, "state");
	if (strcmp(g->state, "optimized"))
		return perr(c, -ENOTSUP, sub,
			    "ANA state \"%s\" is not supported: nvmeof-target reports every path "
			    "as optimized",
			    g->state);
	return 0;
}

static int parse_port_param(struct pctx *c, json_object *param, const char *kp,
			    struct config_port *p)
{
	char sub[KP_MAX];
	bool pi = false;
	int64_t v;
	int rc;

	rc = check_keys(c, param, kp, param_keys);
	if (rc)
		return rc;
	/* configfs shows -1 for "transport default". */
	rc = get_int(c, param, kp, "inline_data_size", -1, CONFIG_MAX_INLINE, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v > 0)
		p->inline_data_size = (uint32_t)v;
	rc = get_int(c, param, kp, "max_queue_size", -1, 65536, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v > 0) {
		p->max_queue_size = (uint32_t)v;
		kp_join(sub, kp, "max_queue_size");
		rc = pwarn(c, sub, "per-port queue size is not supported, the target-wide "
				   "limit applies");
		if (rc)
			return rc;
	}
	rc = get_bool(c, param, kp, "pi_enable", &pi);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "pi_enable");
	if (pi)
		return perr(c, -ENOTSUP, sub,
			    "protection information is not supported by nvmeof-target");
	return 0;
}

static int parse_port(struct pctx *c, json_object *obj, const char *kp, struct config_port *p)
{
	json_object *addr, *param, *arr;
	char sub[KP_MAX], item[KP_MAX];
	unsigned int i, n;
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, port_keys);
	if (rc)
		return rc;
	rc = get_int(c, obj, kp, "portid", 0, 65535, &v, REQ);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "portid");
	if (v >= CONFIG_PORTID_RESERVED)
		return perr(c, -EINVAL, sub,
			    "portids %u and above are reserved for the built-in discovery "
			    "listeners",
			    CONFIG_PORTID_RESERVED);
	p->portid = (uint16_t)v;

	rc = get_typed(c, obj, kp, "addr", json_type_object, REQ, &addr);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "addr");
	rc = parse_addr(c, addr, sub, &p->addr, true);
	if (rc)
		return rc;

	rc = get_str(c, obj, kp, "advertise", p->advertise, sizeof(p->advertise), OPT, false);
	if (rc < 0)
		return rc;
	if (rc && p->advertise[0]) {
		kp_join(sub, kp, "advertise");
		rc = check_ip(c, sub, p->addr.adrfam, p->advertise);
		if (rc)
			return rc;
	}

	rc = get_typed(c, obj, kp, "param", json_type_object, OPT, &param);
	if (rc < 0)
		return rc;
	if (rc) {
		kp_join(sub, kp, "param");
		rc = parse_port_param(c, param, sub, p);
		if (rc)
			return rc;
	}

	rc = get_typed(c, obj, kp, "subsystems", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	n = arr ? (unsigned int)json_object_array_length(arr) : 0;
	kp_join(sub, kp, "subsystems");
	if (n > 64)
		return perr(c, -E2BIG, sub, "%u subsystems, at most 64 per port", n);
	p->subsystems = calloc(n ? n : 1, sizeof(*p->subsystems));
	if (!p->subsystems)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(arr, i);

		kp_index(item, kp, "subsystems", i);
		if (!json_object_is_type(s, json_type_string))
			return perr(c, -EINVAL, item, "expected a subsystem NQN string");
		if ((size_t)json_object_get_string_len(s) >= NVME_NQN_FIELD)
			return perr(c, -EINVAL, item, "NQN longer than %d bytes", NVME_NQN_MAX);
		snprintf(p->subsystems[i], NVME_NQN_FIELD, "%s", json_object_get_string(s));
		p->nsubsystems++;
	}

	rc = get_typed(c, obj, kp, "referrals", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	n = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (n > CONFIG_MAX_REFERRALS) {
		kp_join(sub, kp, "referrals");
		return perr(c, -E2BIG, sub, "%u referrals, at most %u", n, CONFIG_MAX_REFERRALS);
	}
	p->referrals = calloc(n ? n : 1, sizeof(*p->referrals));
	if (!p->referrals)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		kp_index(item, kp, "referrals", i);
		rc = parse_referral(c, json_object_array_get_idx(arr, i), item, &p->referrals[i]);
		if (rc)
			return rc;
		p->nreferrals++;
	}

	rc = get_typed(c, obj, kp, "ana_groups", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	n = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (n > CONFIG_MAX_ANA_GROUPS) {
		kp_join(sub, kp, "ana_groups");
		return perr(c, -E2BIG, sub, "%u ANA groups, at most %u", n, CONFIG_MAX_ANA_GROUPS);
	}
	p->ana_groups = calloc(n ? n : 1, sizeof(*p->ana_groups));
	if (!p->ana_groups)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		unsigned int j;

		kp_index(item, kp, "ana_groups", i);
		rc = parse_ana_group(c, json_object_array_get_idx(arr, i), item,
				     &p->ana_groups[i]);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (p->ana_groups[j].grpid == p->ana_groups[i].grpid) {
				kp_join(sub, item, "grpid");
				return perr(c, -EINVAL, sub,
					    "duplicate ANA group %u (also ana_groups[%u])",
					    p->ana_groups[i].grpid, j);
			}
		p->nana_groups++;
	}
	return 0;
}

/* ---- Subsystems ------------------------------------------------------------------------------ */

static const char *const subsys_keys[] = {"nqn", "attr", "namespaces", "allowed_hosts",
					  "passthru", NULL};
static const char *const attr_keys[] = {"allow_any_host", "serial",    "model",
					"version",	  "cntlid_min", "cntlid_max",
					"pi_enable",	  "qid_max",   "firmware",
					"ieee_oui",	  NULL};
static const char *const ns_keys[] = {"nsid", "enable", "device", "ana_grpid", "ana", "resv",
				      NULL};
static const char *const device_keys[] = {"path", "nguid", "uuid", "eui64", NULL};

static int parse_ns_id(struct pctx *c, json_object *dev, const char *kp, const char *key,
		       uint8_t *out, size_t n, bool *has)
{
	char buf[64], sub[KP_MAX];
	int rc;

	rc = get_str(c, dev, kp, key, buf, sizeof(buf), OPT, false);
	if (rc <= 0)
		return rc;
	kp_join(sub, kp, key);
	if (!buf[0])
		return 0;
	if (!parse_hex_id(buf, out, n))
		return perr(c, -EINVAL, sub, "\"%s\": expected %zu hex bytes%s", buf, n,
			    n == 16 ? " (UUID notation)" : "");
	*has = !all_zero(out, n);
	return 0;
}

static int parse_ns(struct pctx *c, json_object *obj, const char *kp, struct config_ns *ns)
{
	json_object *dev, *grp;
	char sub[KP_MAX];
	bool resv = false;
	int64_t v;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, ns_keys);
	if (rc)
		return rc;
	rc = get_int(c, obj, kp, "nsid", 1, NVMF_MAX_NAMESPACES, &v, REQ);
	if (rc < 0)
		return rc;
	ns->nsid = (uint32_t)v;
	ns->enable = true;
	rc = get_bool(c, obj, kp, "enable", &ns->enable);
	if (rc < 0)
		return rc;
	rc = get_int(c, obj, kp, "ana_grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		ns->ana_grpid = (uint32_t)v;
	/* nvmetcli's "ana" attribute group picks up the ana_grpid file as {"grpid": "1"}. */
	rc = get_typed(c, obj, kp, "ana", json_type_object, OPT, &grp);
	if (rc < 0)
		return rc;
	if (rc) {
		static const char *const grp_keys[] = {"grpid", NULL};

		kp_join(sub, kp, "ana");
		rc = check_keys(c, grp, sub, grp_keys);
		if (rc)
			return rc;
		rc = get_int(c, grp, sub, "grpid", 1, CONFIG_MAX_ANA_GROUPS, &v, OPT);
		if (rc < 0)
			return rc;
		if (rc)
			ns->ana_grpid = (uint32_t)v;
	}
	rc = get_typed(c, obj, kp, "resv", json_type_object, OPT, &grp);
	if (rc < 0)
		return rc;
	if (rc) {
		/* Every namespace supports NVMe reservations; the key is checked, not needed. */
		static const char *const resv_keys[] = {"enable", NULL};

		kp_join(sub, kp, "resv");
		rc = check_keys(c, grp, sub, resv_keys);
		if (rc)
			return rc;
		rc = get_bool(c, grp, sub, "enable", &resv);
		if (rc < 0)
			return rc;
	}

	rc = get_typed(c, obj, kp, "device", json_type_object, REQ, &dev);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "device");
	rc = check_keys(c, dev, sub, device_keys);
	if (rc)
		return rc;
	rc = get_str(c, dev, sub, "path", ns->path, sizeof(ns->path), REQ, false);
	if (rc < 0)
		return rc;
	rc = parse_ns_id(c, dev, sub, "nguid", ns->nguid, 16, &ns->has_nguid);
	if (rc)
		return rc;
	rc = parse_ns_id(c, dev, sub, "uuid", ns->uuid, 16, &ns->has_uuid);
	if (rc)
		return rc;
	rc = parse_ns_id(c, dev, sub, "eui64", ns->eui64, 8, &ns->has_eui64);
	if (rc)
		return rc;
	kp_join(sub, sub, "path");
	return check_ns_path(c, sub, ns->path, ns->enable);
}

static int parse_subsys_attr(struct pctx *c, json_object *attr, const char *kp,
			     struct config_subsys *s)
{
	char sub[KP_MAX];
	bool pi = false;
	int64_t v;
	int rc;

	rc = check_keys(c, attr, kp, attr_keys);
	if (rc)
		return rc;
	rc = get_bool(c, attr, kp, "allow_any_host", &s->allow_any_host);
	if (rc < 0)
		return rc;
	rc = get_str(c, attr, kp, "serial", s->serial, sizeof(s->serial), OPT, true);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "serial");
	if (!printable(s->serial))
		return perr(c, -EINVAL, sub, "serial must be printable ASCII");
	rc = get_str(c, attr, kp, "model", s->model, sizeof(s->model), OPT, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "model");
	if (!printable(s->model))
		return perr(c, -EINVAL, sub, "model must be printable ASCII");
	rc = get_str(c, attr, kp, "version", s->version, sizeof(s->version), OPT, false);
	if (rc < 0)
		return rc;
	if (s->version[0]) {
		unsigned int mj, mn, ter = 0;
		char tail;

		kp_join(sub, kp, "version");
		if (sscanf(s->version, "%u.%u%c", &mj, &mn, &tail) != 2 &&
		    sscanf(s->version, "%u.%u.%u%c", &mj, &mn, &ter, &tail) != 3)
			return perr(c, -EINVAL, sub, "\"%s\": expected MAJOR.MINOR[.TERTIARY]",
				    s->version);
	}
	rc = get_int(c, attr, kp, "cntlid_min", 1, 0xffef, &v, OPT);
	if (rc < 0)
		return rc;
	s->cntlid_min = rc ? (uint16_t)v : 1;
	rc = get_int(c, attr, kp, "cntlid_max", 1, 0xffef, &v, OPT);
	if (rc < 0)
		return rc;
	s->cntlid_max = rc ? (uint16_t)v : 0xffef;
	if (s->cntlid_min > s->cntlid_max) {
		kp_join(sub, kp, "cntlid_min");
		return perr(c, -EINVAL, sub, "cntlid_min %u is above cntlid_max %u",
			    s->cntlid_min, s->cntlid_max);
	}
	rc = get_int(c, attr, kp, "qid_max", 1, 65535, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		s->qid_max = (uint16_t)v;
	rc = get_bool(c, attr, kp, "pi_enable", &pi);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "pi_enable");
	if (pi)
		return perr(c, -ENOTSUP, sub,
			    "protection information is not supported by nvmeof-target");
	/* version, qid_max, firmware, ieee_oui: accepted and not used (conf/README.md). */
	return 0;
}

static int parse_subsys(struct pctx *c, json_object *obj, const char *kp, struct config_subsys *s)
{
	json_object *attr, *arr;
	char sub[KP_MAX], item[KP_MAX];
	unsigned int i, j, n;
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, subsys_keys);
	if (rc)
		return rc;
	rc = get_str(c, obj, kp, "nqn", s->nqn, sizeof(s->nqn), REQ, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "nqn");
	rc = check_nqn(c, sub, s->nqn, "subsystem");
	if (rc)
		return rc;

	s->cntlid_min = 1;
	s->cntlid_max = 0xffef;
	rc = get_typed(c, obj, kp, "attr", json_type_object, OPT, &attr);
	if (rc < 0)
		return rc;
	if (rc) {
		kp_join(sub, kp, "attr");
		rc = parse_subsys_attr(c, attr, sub, s);
		if (rc)
			return rc;
	}

	rc = get_typed(c, obj, kp, "passthru", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	if (arr && json_object_array_length(arr) > 0) {
		kp_join(sub, kp, "passthru");
		return perr(c, -ENOTSUP, sub,
			    "passthru controllers are not supported by nvmeof-target");
	}

	rc = get_typed(c, obj, kp, "namespaces", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	n = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (n > NVMF_MAX_NAMESPACES) {
		kp_join(sub, kp, "namespaces");
		return perr(c, -E2BIG, sub, "%u namespaces, at most %d", n, NVMF_MAX_NAMESPACES);
	}
	s->namespaces = calloc(n ? n : 1, sizeof(*s->namespaces));
	if (!s->namespaces)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		kp_index(item, kp, "namespaces", i);
		rc = parse_ns(c, json_object_array_get_idx(arr, i), item, &s->namespaces[i]);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (s->namespaces[j].nsid == s->namespaces[i].nsid) {
				kp_join(sub, item, "nsid");
				return perr(c, -EINVAL, sub,
					    "duplicate NSID %u (also namespaces[%u])",
					    s->namespaces[i].nsid, j);
			}
		s->nnamespaces++;
	}

	rc = get_typed(c, obj, kp, "allowed_hosts", json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	n = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (n > CONFIG_MAX_HOSTS) {
		kp_join(sub, kp, "allowed_hosts");
		return perr(c, -E2BIG, sub, "%u hosts, at most %u", n, CONFIG_MAX_HOSTS);
	}
	s->allowed_hosts = calloc(n ? n : 1, sizeof(*s->allowed_hosts));
	if (!s->allowed_hosts)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *h = json_object_array_get_idx(arr, i);

		kp_index(item, kp, "allowed_hosts", i);
		if (!json_object_is_type(h, json_type_string))
			return perr(c, -EINVAL, item, "expected a host NQN string");
		if ((size_t)json_object_get_string_len(h) >= NVME_NQN_FIELD)
			return perr(c, -EINVAL, item, "NQN longer than %d bytes", NVME_NQN_MAX);
		snprintf(s->allowed_hosts[i], NVME_NQN_FIELD, "%s", json_object_get_string(h));
		for (j = 0; j < i; j++)
			if (!strcmp(s->allowed_hosts[j], s->allowed_hosts[i]))
				return perr(c, -EINVAL, item,
					    "host \"%s\" listed twice (also allowed_hosts[%u])",
					    s->allowed_hosts[i], j);
		s->nallowed_hosts++;
	}
	if (s->allow_any_host && s->nallowed_hosts) {
		kp_join(sub, kp, "allowed_hosts");
		rc = pwarn(c, sub, "attr.allow_any_host is 1: any host may connect, the list "
				   "has no effect");
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- Hosts and the whole document ------------------------------------------------------------ */

static const char *const host_keys[] = {"nqn", "dhchap", NULL};
static const char *const top_keys[] = {"hosts", "ports", "subsystems", "iscsi", "limits", NULL};
static const char *const limit_keys[] = {"max_connections", "max_queue_depth", "in_capsule_size",
					 "max_io_size", NULL};

/* The "limits" extension (struct config_limits). */
static int parse_limits(struct pctx *c, json_object *lim)
{
	struct config_limits *l = &c->cfg->limits;
	int64_t v;
	int rc;

	rc = check_keys(c, lim, "limits", limit_keys);
	if (rc)
		return rc;
	rc = get_int(c, lim, "limits", "max_connections", 1, 1000000, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_connections = (uint32_t)v;
	rc = get_int(c, lim, "limits", "max_queue_depth", 2, 4096, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc)
		l->max_queue_depth = (uint32_t)v;
	rc = get_int(c, lim, "limits", "in_capsule_size", 0, 1 << 20, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && v % 16)
		return perr(c, -EINVAL, "limits.in_capsule_size", "expected a multiple of 16");
	if (rc) {
		l->in_capsule_size = (uint32_t)v;
		l->in_capsule_set = true;
	}
	rc = get_int(c, lim, "limits", "max_io_size", 4096, 4 << 20, &v, OPT);
	if (rc < 0)
		return rc;
	if (rc && (v & (v - 1)))
		return perr(c, -EINVAL, "limits.max_io_size", "expected a power of 2");
	if (rc)
		l->max_io_size = (uint32_t)v;
	return 0;
}

static int parse_host(struct pctx *c, json_object *obj, const char *kp, char *nqn)
{
	json_object *dh;
	char sub[KP_MAX];
	int rc;

	if (!json_object_is_type(obj, json_type_object))
		return perr(c, -EINVAL, kp, "expected an object");
	rc = check_keys(c, obj, kp, host_keys);
	if (rc)
		return rc;
	rc = get_str(c, obj, kp, "nqn", nqn, NVME_NQN_FIELD, REQ, false);
	if (rc < 0)
		return rc;
	kp_join(sub, kp, "nqn");
	rc = check_nqn(c, sub, nqn, "host");
	if (rc)
		return rc;
	/* In-band authentication: refused, since we cannot honour it. Keys are never logged. */
	rc = get_typed(c, obj, kp, "dhchap", json_type_object, OPT, &dh);
	if (rc < 0)
		return rc;
	if (rc) {
		static const char *const secrets[] = {"key", "ctrl_key"};
		unsigned int i;

		for (i = 0; i < 2; i++) {
			json_object *k = member(dh, secrets[i]);

			kp_join(sub, kp, "dhchap");
			kp_join(sub, sub, secrets[i]);
			if (k && (!json_object_is_type(k, json_type_string) ||
				  json_object_get_string_len(k) > 0))
				return perr(c, -ENOTSUP, sub,
					    "in-band authentication (DH-HMAC-CHAP) is not "
					    "supported by nvmeof-target");
		}
	}
	return 0;
}

static bool same_listen(const struct config_addr *a, const struct config_addr *b)
{
	bool wild_a, wild_b;

	if (strcmp(a->trtype, b->trtype) || strcmp(a->adrfam, b->adrfam) ||
	    strcmp(a->trsvcid, b->trsvcid))
		return false;
	wild_a = !strcmp(a->traddr, "0.0.0.0") || !strcmp(a->traddr, "::");
	wild_b = !strcmp(b->traddr, "0.0.0.0") || !strcmp(b->traddr, "::");
	return wild_a || wild_b || !strcmp(a->traddr, b->traddr);
}

/* Cross-references, once everything is parsed. */
static int validate(struct pctx *c)
{
	struct tgt_config *cfg = c->cfg;
	char kp[KP_MAX], sub[KP_MAX];
	unsigned int i, j, k;

	for (i = 0; i < cfg->nhosts; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->hosts[i], cfg->hosts[j])) {
				snprintf(kp, sizeof(kp), "hosts[%u].nqn", i);
				return perr(c, -EINVAL, kp,
					    "duplicate host \"%s\" (also hosts[%u])", cfg->hosts[i],
					    j);
			}
	for (i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *s = &cfg->subsystems[i];

		for (j = 0; j < i; j++)
			if (!strcmp(s->nqn, cfg->subsystems[j].nqn)) {
				snprintf(kp, sizeof(kp), "subsystems[%u].nqn", i);
				return perr(c, -EINVAL, kp,
					    "duplicate subsystem \"%s\" (also subsystems[%u])",
					    s->nqn, j);
			}
		for (j = 0; j < s->nallowed_hosts; j++) {
			for (k = 0; k < cfg->nhosts; k++)
				if (!strcmp(s->allowed_hosts[j], cfg->hosts[k]))
					break;
			if (k == cfg->nhosts) {
				snprintf(kp, sizeof(kp), "subsystems[%u].allowed_hosts[%u]", i, j);
				return perr(c, -EINVAL, kp,
					    "host \"%s\" is not listed in \"hosts\"",
					    s->allowed_hosts[j]);
			}
		}
	}
	for (i = 0; i < cfg->nports; i++) {
		const struct config_port *p = &cfg->ports[i];

		for (j = 0; j < i; j++) {
			if (p->portid == cfg->ports[j].portid) {
				snprintf(kp, sizeof(kp), "ports[%u].portid", i);
				return perr(c, -EINVAL, kp, "duplicate portid %u (also ports[%u])",
					    p->portid, j);
			}
			if (same_listen(&p->addr, &cfg->ports[j].addr)) {
				snprintf(kp, sizeof(kp), "ports[%u].addr", i);
				return perr(c, -EADDRINUSE, kp,
					    "%s %s:%s overlaps ports[%u] (%s:%s)", p->addr.trtype,
					    p->addr.traddr, p->addr.trsvcid, j,
					    cfg->ports[j].addr.traddr, cfg->ports[j].addr.trsvcid);
			}
		}
		for (j = 0; j < p->nsubsystems; j++) {
			snprintf(kp, sizeof(kp), "ports[%u].subsystems[%u]", i, j);
			if (!config_find_subsys(cfg, p->subsystems[j]))
				return perr(c, -EINVAL, kp, "unknown subsystem \"%s\"",
					    p->subsystems[j]);
			for (k = 0; k < j; k++)
				if (!strcmp(p->subsystems[k], p->subsystems[j]))
					return perr(c, -EINVAL, kp,
						    "subsystem \"%s\" listed twice (also "
						    "subsystems[%u])",
						    p->subsystems[j], k);
		}
		for (j = 0; j < p->nreferrals; j++)
			for (k = 0; k < j; k++)
				if (!strcmp(p->referrals[j].name, p->referrals[k].name)) {
					snprintf(sub, sizeof(sub), "ports[%u].referrals[%u].name",
						 i, j);
					return perr(c, -EINVAL, sub,
						    "duplicate referral \"%s\" (also "
						    "referrals[%u])",
						    p->referrals[j].name, k);
				}
	}
	return 0;
}

/* Parse a JSON array member @key of @root into @n items of @size bytes via @fn. */
typedef int (*item_fn)(struct pctx *c, json_object *obj, const char *kp, void *item);

static int parse_list(struct pctx *c, json_object *root, const char *key, size_t size,
		      unsigned int max, void **items, unsigned int *n, item_fn fn)
{
	json_object *arr;
	char kp[KP_MAX];
	unsigned int i, len;
	int rc;

	rc = get_typed(c, root, "", key, json_type_array, OPT, &arr);
	if (rc < 0)
		return rc;
	len = arr ? (unsigned int)json_object_array_length(arr) : 0;
	if (len > max)
		return perr(c, -E2BIG, key, "%u entries, at most %u", len, max);
	*items = calloc(len ? len : 1, size);
	if (!*items)
		return perr(c, -ENOMEM, NULL, "out of memory");
	for (i = 0; i < len; i++) {
		snprintf(kp, sizeof(kp), "%s[%u]", key, i);
		(*n)++; /* counted first so that config_free() sees a half-parsed item */
		rc = fn(c, json_object_array_get_idx(arr, i), kp, (char *)*items + i * size);
		if (rc)
			return rc;
	}
	return 0;
}

static int host_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return parse_host(c, o, kp, item);
}

static int subsys_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return parse_subsys(c, o, kp, item);
}

static int port_item(struct pctx *c, json_object *o, const char *kp, void *item)
{
	return parse_port(c, o, kp, item);
}

static int parse_root(struct pctx *c, json_object *root)
{
	struct tgt_config *cfg = c->cfg;
	json_object *iscsi, *lim;
	int rc;

	if (!json_object_is_type(root, json_type_object))
		return perr(c, -EINVAL, NULL, "expected a JSON object at the top level");
	rc = check_keys(c, root, "", top_keys);
	if (rc)
		return rc;
	/* Ports first: an unsupported transport is the first thing to report. */
	rc = parse_list(c, root, "hosts", NVME_NQN_FIELD, CONFIG_MAX_HOSTS, (void **)&cfg->hosts,
			&cfg->nhosts, host_item);
	if (rc)
		return rc;
	rc = parse_list(c, root, "ports", sizeof(struct config_port), CONFIG_MAX_PORTS,
			(void **)&cfg->ports, &cfg->nports, port_item);
	if (rc)
		return rc;
	rc = parse_list(c, root, "subsystems", sizeof(struct config_subsys), CONFIG_MAX_SUBSYS,
			(void **)&cfg->subsystems, &cfg->nsubsystems, subsys_item);
	if (rc)
		return rc;
	rc = get_typed(c, root, "", "iscsi", json_type_object, OPT, &iscsi);
	if (rc < 0)
		return rc;
	if (rc) {
		cfg->iscsi_json = strdup(json_object_to_json_string_ext(iscsi,
									JSON_C_TO_STRING_PLAIN));
		if (!cfg->iscsi_json)
			return perr(c, -ENOMEM, NULL, "out of memory");
	}
	rc = get_typed(c, root, "", "limits", json_type_object, OPT, &lim);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = parse_limits(c, lim);
		if (rc)
			return rc;
	}
	return validate(c);
}

/* ---- Entry points ---------------------------------------------------------------------------- */

static void offset_to_linecol(const char *text, size_t off, unsigned int *line, unsigned int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int parse_text(struct pctx *c, const char *text, size_t len, json_object **out)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	unsigned int line, col;
	json_object *root;
	size_t end;

	if (len > INT32_MAX)
		return perr(c, -EFBIG, NULL, "file too large");
	if (strlen(text) != len)
		return perr(c, -EINVAL, NULL, "contains a NUL byte at offset %zu", strlen(text));
	tok = json_tokener_new();
	if (!tok)
		return perr(c, -ENOMEM, NULL, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root && jerr == json_tokener_continue) {
		offset_to_linecol(text, len, &line, &col);
		return perr(c, -EINVAL, NULL, "%u:%u: JSON syntax error: unexpected end of file",
			    line, col);
	}
	if (!root && jerr != json_tokener_success) {
		/* The tokener stops on the offending character. */
		offset_to_linecol(text, end, &line, &col);
		return perr(c, -EINVAL, NULL, "%u:%u: JSON syntax error: %s", line, col,
			    json_tokener_error_desc(jerr));
	}
	if (!root)
		return perr(c, -EINVAL, NULL, "1:1: JSON syntax error: empty document");
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		json_object_put(root);
		offset_to_linecol(text, end, &line, &col);
		return perr(c, -EINVAL, NULL, "%u:%u: JSON syntax error: data after the document",
			    line, col);
	}
	*out = root;
	return 0;
}

int config_load_string(const char *text, const char *name, struct tgt_config **out, char *err,
		       size_t errlen)
{
	struct pctx c = {.name = name ? name : "config", .err = err, .errlen = errlen};
	json_object *root = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (!c.cfg)
		return perr(&c, -ENOMEM, NULL, "out of memory");
	snprintf(c.cfg->path, sizeof(c.cfg->path), "%s", name ? name : "");
	rc = parse_text(&c, text, strlen(text), &root);
	if (!rc)
		rc = parse_root(&c, root);
	json_object_put(root);
	if (rc) {
		config_free(c.cfg);
		return rc;
	}
	config_log_warnings(c.cfg);
	*out = c.cfg;
	return 0;
}

int config_load(const char *path, struct tgt_config **out, char *err, size_t errlen)
{
	struct pctx c = {.name = path, .err = err, .errlen = errlen};
	struct stat st;
	char *text;
	size_t got = 0;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return perr(&c, -errno, NULL, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return perr(&c, rc, NULL, "cannot stat: %s", strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return perr(&c, -EINVAL, NULL, "not a regular file");
	}
	if ((uint64_t)st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		return perr(&c, -EFBIG, NULL, "file larger than %u bytes", CONFIG_FILE_MAX);
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return perr(&c, -ENOMEM, NULL, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			free(text);
			close(fd);
			return perr(&c, rc, NULL, "read error: %s", strerror(-rc));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	text[got] = '\0';
	if (strlen(text) != got) {
		rc = perr(&c, -EINVAL, NULL, "contains a NUL byte at offset %zu", strlen(text));
		free(text);
		return rc;
	}
	rc = config_load_string(text, path, out, err, errlen);
	free(text);
	/* Absolute, so that a reload after chdir("/") (daemon mode) finds it again. */
	if (!rc && path[0] != '/') {
		char *abs = realpath(path, NULL);

		if (abs && strlen(abs) < sizeof((*out)->path))
			memcpy((*out)->path, abs, strlen(abs) + 1);
		free(abs);
	}
	return rc;
}

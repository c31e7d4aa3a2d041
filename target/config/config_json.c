/* SPDX-License-Identifier: MIT */
/*
 * The configuration loader's JSON reading: key paths, error messages and warnings, and
 * typed getters. nvmetcli copies configfs attribute files verbatim, so most values arrive
 * as strings ("4420", "1", "16384", "-1" for "default") while a few are JSON numbers
 * (portid, nsid, grpid, enable, ana_grpid). Every getter accepts both forms where nvmetcli
 * could write either and rejects anything else with the key path in the message.
 */
#include <config.h> /* autoconf: _GNU_SOURCE, HAVE_RDMA */

#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Messages -------------------------------------------------------------------------------- */

/* Key paths are built in fixed buffers; a path too long for one ends in "..." (never seen
 * in practice: the deepest is subsystems[N].namespaces[N].device.path). */
static void kp_fix(char *out, int n)
{
	if (n >= KP_MAX)
		memcpy(out + KP_MAX - 4, "...", 4);
}

void cfg_kp_join(char *out, const char *base, const char *key)
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

void cfg_kp_index(char *out, const char *base, const char *key, unsigned int i)
{
	char tmp[KP_MAX];
	int n;

	cfg_kp_join(tmp, base, key);
	n = snprintf(out, KP_MAX, "%s[%u]", tmp, i);
	kp_fix(out, n);
}

int cfg_err(struct pctx *c, int rc, const char *kp, const char *fmt, ...)
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

/* ---- Lines of key paths ---------------------------------------------------------------------- */
/* json-c keeps no positions, so a warning's line comes from walking the (already valid) text
 * again along the key path: "a.b[2].c" is key a, key b, element 2, key c. */
static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

static const char *skip_value(const char *p)
{
	int depth = 0;

	for (p = skip_ws(p); *p; p++) {
		if (*p == '"') {
			p = skip_string(p);
			if (!depth)
				return p;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (!depth)
				return p; /* a number or literal ends at its container's end */
			if (--depth == 0)
				return p + 1;
		} else if (!depth && (*p == ',' || isspace((unsigned char)*p))) {
			return p;
		}
	}
	return p;
}

/* The start of @kp's last element below the value at @p, or NULL. */
static const char *kp_find(const char *p, const char *kp)
{
	p = skip_ws(p);
	if (!*kp)
		return p;
	if (*kp == '[') {
		long want = strtol(kp + 1, NULL, 10);
		const char *rest = strchr(kp, ']');

		if (*p != '[' || !rest)
			return NULL;
		rest++;
		if (*rest == '.')
			rest++;
		p = skip_ws(p + 1);
		for (long i = 0; *p && *p != ']'; i++) {
			if (i == want)
				return *rest ? kp_find(p, rest) : p;
			p = skip_ws(skip_value(p));
			if (*p == ',')
				p = skip_ws(p + 1);
		}
		return NULL;
	}
	{
		size_t klen = strcspn(kp, ".[");
		const char *rest = kp + klen;

		if (*rest == '.')
			rest++;
		if (*p != '{')
			return NULL;
		p = skip_ws(p + 1);
		while (*p == '"') {
			const char *key = p + 1, *end = skip_string(p);
			const char *val = skip_ws(end);

			if (*val != ':')
				return NULL;
			if ((size_t)(end - 1 - key) == klen && !strncmp(key, kp, klen))
				return *rest ? kp_find(val + 1, rest) : p;
			p = skip_ws(skip_value(val + 1));
			if (*p == ',')
				p = skip_ws(p + 1);
		}
		return NULL;
	}
}

unsigned int cfg_kp_line(const char *text, const char *kp)
{
	const char *at = text && kp ? kp_find(text, kp) : NULL;
	unsigned int line = 1;

	if (!at)
		return 0;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

int cfg_warn(struct pctx *c, const char *kp, const char *fmt, ...)
{
	struct tgt_config *cfg = c->cfg;
	char msg[512], line[1024];
	unsigned int lno;
	char **w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lno = cfg_kp_line(c->text, kp);
	if (lno)
		snprintf(line, sizeof(line), "%s:%u: %s: %s", c->name, lno, kp, msg);
	else
		snprintf(line, sizeof(line), "%s: %s: %s", c->name, kp, msg);
	w = realloc(cfg->warnings, (cfg->nwarnings + 1) * sizeof(*w));
	if (!w)
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	cfg->warnings = w;
	w[cfg->nwarnings] = strdup(line);
	if (!w[cfg->nwarnings])
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	cfg->nwarnings++;
	return 0;
}

/* Warn about every key of @obj that is not in @known (NULL-terminated). */
int cfg_check_keys(struct pctx *c, json_object *obj, const char *kp, const char *const *known)
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
		cfg_kp_join(sub, kp, key);
		rc = cfg_warn(c, sub, "unknown key, ignored");
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- Typed getters --------------------------------------------------------------------------- */

json_object *cfg_member(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

/* @key of @obj as an object/array; 1 if present, 0 if absent, -EINVAL on a wrong type. */
int cfg_get_typed(struct pctx *c, json_object *obj, const char *kp, const char *key,
		  enum json_type type, int required, json_object **out)
{
	json_object *v = cfg_member(obj, key);
	char sub[KP_MAX];

	cfg_kp_join(sub, kp, key);
	*out = NULL;
	if (!v || json_object_is_type(v, json_type_null)) {
		if (required)
			return cfg_err(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (!json_object_is_type(v, type))
		return cfg_err(c, -EINVAL, sub, "expected %s",
			       type == json_type_object ? "an object" : "an array");
	*out = v;
	return 1;
}

int cfg_get_array(struct pctx *c, json_object *obj, const char *kp, const char *key,
		  const char *what, unsigned int max, size_t size, json_object **arr,
		  unsigned int *n, void **out)
{
	char sub[KP_MAX];
	int rc = cfg_get_typed(c, obj, kp, key, json_type_array, OPT, arr);

	*out = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	*n = *arr ? (unsigned int)json_object_array_length(*arr) : 0;
	if (*n > max) {
		cfg_kp_join(sub, kp, key);
		return cfg_err(c, -E2BIG, sub, "%u %s, at most %u", *n, what, max);
	}
	*out = calloc(*n ? *n : 1, size);
	if (!*out)
		return cfg_err(c, -ENOMEM, NULL, "out of memory");
	return 0;
}

int cfg_nqn_item(struct pctx *c, json_object *v, const char *item, const char *what,
		 char out[NVME_NQN_FIELD])
{
	if (!json_object_is_type(v, json_type_string))
		return cfg_err(c, -EINVAL, item, "expected a %s NQN string", what);
	if ((size_t)json_object_get_string_len(v) >= NVME_NQN_FIELD)
		return cfg_err(c, -EINVAL, item, "NQN longer than %d bytes", NVME_NQN_MAX);
	snprintf(out, NVME_NQN_FIELD, "%s", json_object_get_string(v));
	return 0;
}

/*
 * A string value into @buf (NUL-terminated, < @size). With @int_ok a JSON integer is
 * accepted and converted. 1 if present, 0 if absent (@buf untouched), -errno on error.
 */
int cfg_get_str(struct pctx *c, json_object *obj, const char *kp, const char *key, char *buf,
		size_t size, int required, bool int_ok)
{
	json_object *v = cfg_member(obj, key);
	char sub[KP_MAX];
	const char *s;
	size_t len;

	cfg_kp_join(sub, kp, key);
	if (!v) {
		if (required)
			return cfg_err(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (int_ok && json_object_is_type(v, json_type_int)) {
		snprintf(buf, size, "%" PRId64, json_object_get_int64(v));
		return 1;
	}
	if (!json_object_is_type(v, json_type_string))
		return cfg_err(c, -EINVAL, sub, "expected a string");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (strlen(s) != len)
		return cfg_err(c, -EINVAL, sub, "contains a NUL character");
	if (len >= size)
		return cfg_err(c, -EINVAL, sub, "longer than %zu bytes", size - 1);
	memcpy(buf, s, len + 1);
	return 1;
}

/* Decimal integer text, optionally signed, surrounding blanks allowed (configfs style). */
bool cfg_parse_dec(const char *s, int64_t *out)
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
int cfg_get_int(struct pctx *c, json_object *obj, const char *kp, const char *key, int64_t min,
		int64_t max, int64_t *out, int required)
{
	json_object *v = cfg_member(obj, key);
	char sub[KP_MAX];
	int64_t val;

	cfg_kp_join(sub, kp, key);
	if (!v) {
		if (required)
			return cfg_err(c, -EINVAL, sub, "missing");
		return 0;
	}
	if (json_object_is_type(v, json_type_int)) {
		val = json_object_get_int64(v); /* saturates: still out of range below */
	} else if (json_object_is_type(v, json_type_string)) {
		if (!cfg_parse_dec(json_object_get_string(v), &val))
			return cfg_err(c, -EINVAL, sub, "expected an integer, got \"%s\"",
				       json_object_get_string(v));
	} else {
		return cfg_err(c, -EINVAL, sub, "expected an integer");
	}
	if (val < min || val > max)
		return cfg_err(c, -ERANGE, sub,
			       "value %" PRId64 " out of range %" PRId64 "..%" PRId64, val, min,
			       max);
	*out = val;
	return 1;
}

/* 0/1 as a number, a string ("0", "1") or a JSON boolean. */
int cfg_get_bool(struct pctx *c, json_object *obj, const char *kp, const char *key, bool *out)
{
	json_object *v = cfg_member(obj, key);
	char sub[KP_MAX];
	int64_t val;

	cfg_kp_join(sub, kp, key);
	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 1;
	}
	if (json_object_is_type(v, json_type_int)) {
		val = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		if (!cfg_parse_dec(json_object_get_string(v), &val))
			return cfg_err(c, -EINVAL, sub, "expected 0 or 1, got \"%s\"",
				       json_object_get_string(v));
	} else {
		return cfg_err(c, -EINVAL, sub, "expected 0 or 1");
	}
	if (val != 0 && val != 1)
		return cfg_err(c, -EINVAL, sub, "expected 0 or 1, got %" PRId64, val);
	*out = val;
	return 1;
}

/* SPDX-License-Identifier: MIT */
#include "uri.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "nvme_spec.h"

static int uri_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int uri_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

struct scheme {
	const char *prefix;
	enum uri_transport transport;
	bool nvme;
	bool tls;
};

static const struct scheme listen_schemes[] = {
	{ "tcp://", URI_TRANSPORT_TCP, true, false },
	{ "rdma://", URI_TRANSPORT_RDMA, true, false },
	{ "iscsi://", URI_TRANSPORT_ISCSI, false, false },
	{ "tls://", URI_TRANSPORT_TCP, true, true },
};

static const struct scheme target_schemes[] = {
	{ "nvme+tcp://", URI_TRANSPORT_TCP, true, false },
	{ "nvme+rdma://", URI_TRANSPORT_RDMA, true, false },
	{ "iscsi://", URI_TRANSPORT_ISCSI, false, false },
};

static const struct scheme *find_scheme(const struct scheme *tab, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(s, tab[i].prefix, strlen(tab[i].prefix)) == 0)
			return &tab[i];
	return NULL;
}

const char *uri_transport_name(enum uri_transport t)
{
	switch (t) {
	case URI_TRANSPORT_TCP:
		return "tcp";
	case URI_TRANSPORT_RDMA:
		return "rdma";
	case URI_TRANSPORT_ISCSI:
		return "iscsi";
	}
	return "?";
}

static bool host_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '_';
}

/* Decimal without sign or spaces, at most @max. */
static int parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (max - (uint64_t)(s[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/*
 * Parse "HOST[:PORT]" or "[V6]:PORT" spanning @len bytes at @s. @port_set tells whether a
 * port was present. @numeric requires an IP literal (listen addresses).
 */
static int parse_hostport(const char *s, size_t len, bool numeric, char *host, bool *ipv6,
			  uint16_t *port, bool *port_set, char *err, size_t errlen)
{
	const char *h, *rest;
	size_t hlen, rlen;
	uint64_t v;

	*port_set = false;
	*ipv6 = false;
	if (len == 0)
		return uri_fail(err, errlen, "missing host address");
	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);
		struct in6_addr a6;
		char tmp[INET6_ADDRSTRLEN + 1];

		if (!close)
			return uri_fail(err, errlen, "unterminated '[' in IPv6 address");
		h = s + 1;
		hlen = (size_t)(close - h);
		if (hlen == 0 || hlen >= sizeof(tmp))
			return uri_fail(err, errlen, "invalid IPv6 address '%.*s'", (int)hlen, h);
		memcpy(tmp, h, hlen);
		tmp[hlen] = '\0';
		if (inet_pton(AF_INET6, tmp, &a6) != 1)
			return uri_fail(err, errlen, "invalid IPv6 address '%s'", tmp);
		*ipv6 = true;
		rest = close + 1;
	} else {
		const char *colon = memchr(s, ':', len);

		h = s;
		hlen = colon ? (size_t)(colon - s) : len;
		if (colon && memchr(colon + 1, ':', len - hlen - 1))
			return uri_fail(err, errlen, "IPv6 address must be in brackets: '%.*s'",
					(int)len, s);
		if (hlen == 0)
			return uri_fail(err, errlen, "missing host address");
		for (size_t i = 0; i < hlen; i++)
			if (!host_char_ok(h[i]))
				return uri_fail(err, errlen, "invalid character '%c' in host '%.*s'",
						h[i], (int)hlen, h);
		if (numeric) {
			struct in_addr a4;
			char tmp[INET_ADDRSTRLEN + 1];

			if (hlen >= sizeof(tmp))
				return uri_fail(err, errlen, "invalid IPv4 address '%.*s'",
						(int)hlen, h);
			memcpy(tmp, h, hlen);
			tmp[hlen] = '\0';
			if (inet_pton(AF_INET, tmp, &a4) != 1)
				return uri_fail(err, errlen,
						"'%s' is not an IPv4 or bracketed IPv6 address", tmp);
		}
		rest = h + hlen;
	}
	if (hlen >= URI_HOST_MAX)
		return uri_fail(err, errlen, "host name too long");
	memcpy(host, h, hlen);
	host[hlen] = '\0';

	rlen = len - (size_t)(rest - s);
	if (rlen == 0)
		return 0;
	if (rest[0] != ':')
		return uri_fail(err, errlen, "unexpected '%.*s' after host", (int)rlen, rest);
	if (rlen == 1)
		return uri_fail(err, errlen, "empty port after ':'");
	if (parse_uint(rest + 1, rlen - 1, 65535, &v) != 0)
		return uri_fail(err, errlen, "invalid port '%.*s' (expected 0-65535)",
				(int)(rlen - 1), rest + 1);
	*port = (uint16_t)v;
	*port_set = true;
	return 0;
}

int uri_parse_listen(const char *s, struct uri_listen *out, char *err, size_t errlen)
{
	const struct scheme *sc;
	const char *auth;
	size_t len;
	bool port_set;

	if (!s || !*s)
		return uri_fail(err, errlen, "empty listen address");
	sc = find_scheme(listen_schemes, sizeof(listen_schemes) / sizeof(listen_schemes[0]), s);
	if (!sc)
		return uri_fail(err, errlen,
				"unknown listen URI '%s' (expected tcp://, tls://, rdma:// or "
				"iscsi://)",
				s);
	memset(out, 0, sizeof(*out));
	out->transport = sc->transport;
	out->tls = sc->tls;
	auth = s + strlen(sc->prefix);
	len = strlen(auth);
	if (len && auth[len - 1] == '/')
		len--;
	if (memchr(auth, '/', len))
		return uri_fail(err, errlen, "listen URI '%s' must not have a path", s);
	if (memchr(auth, '@', len))
		return uri_fail(err, errlen, "listen URI '%s' must not have credentials", s);
	if (parse_hostport(auth, len, true, out->addr, &out->ipv6, &out->port, &port_set, err,
			   errlen))
		return -EINVAL;
	if (!port_set)
		out->port = sc->nvme ? URI_PORT_NVME : URI_PORT_ISCSI;
	return 0;
}

/* Percent-decode @len bytes into @out (@outlen bytes with the NUL). */
static int pct_decode(const char *s, size_t len, char *out, size_t outlen, const char *what,
		      char *err, size_t errlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '%') {
			if (i + 2 >= len)
				return uri_fail(err, errlen, "truncated percent escape in %s", what);
			if (hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0)
				return uri_fail(err, errlen, "bad percent escape '%.3s' in %s",
						s + i, what);
			c = (char)(hex_digit(s[i + 1]) << 4 | hex_digit(s[i + 2]));
			if (c == '\0')
				return uri_fail(err, errlen, "%%00 in %s", what);
			i += 2;
		} else if ((unsigned char)c <= ' ' || c == 0x7f) {
			return uri_fail(err, errlen, "control or space character in %s", what);
		}
		if (o + 1 >= outlen)
			return uri_fail(err, errlen, "%s too long (at most %zu bytes)", what,
					outlen - 1);
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static int parse_userinfo(const char *s, size_t len, struct uri_target *out, char *err,
			  size_t errlen)
{
	const char *pct = memchr(s, '%', len);
	size_t ulen, slen;

	if (!pct)
		return uri_fail(err, errlen, "credentials must be USER%%SECRET@");
	ulen = (size_t)(pct - s);
	slen = len - ulen - 1;
	if (ulen == 0)
		return uri_fail(err, errlen, "empty CHAP user name before '%%'");
	if (slen == 0)
		return uri_fail(err, errlen, "empty CHAP secret after '%%'");
	if (ulen >= sizeof(out->user) || slen >= sizeof(out->secret))
		return uri_fail(err, errlen, "CHAP user or secret too long");
	memcpy(out->user, s, ulen);
	out->user[ulen] = '\0';
	memcpy(out->secret, pct + 1, slen);
	out->secret[slen] = '\0';
	return 0;
}

static int parse_nvme_path(const char *path, struct uri_target *out, bool port_set, char *err,
			   size_t errlen)
{
	const char *nqn, *slash;
	size_t nlen;
	uint64_t v;

	/* path is "" or starts with '/' */
	nqn = *path ? path + 1 : path;
	slash = strchr(nqn, '/');
	nlen = slash ? (size_t)(slash - nqn) : strlen(nqn);

	if (nlen == 0) {
		if (slash && slash[1])
			return uri_fail(err, errlen, "NSID given without a subsystem NQN");
		strcpy(out->name, NVME_DISCOVERY_NQN);
	} else {
		if (pct_decode(nqn, nlen, out->name, NVME_NQN_MAX + 1, "subsystem NQN", err,
			       errlen))
			return -EINVAL;
		if (strncmp(out->name, "nqn.", 4) != 0)
			return uri_fail(err, errlen, "subsystem NQN '%s' does not start with 'nqn.'",
					out->name);
	}
	out->discovery = strcmp(out->name, NVME_DISCOVERY_NQN) == 0;

	if (slash && slash[1]) {
		const char *ns = slash + 1;

		if (strchr(ns, '/'))
			return uri_fail(err, errlen, "unexpected '%s' after the NSID",
					strchr(ns, '/'));
		if (parse_uint(ns, strlen(ns), 0xfffffffeu, &v) != 0 || v == 0)
			return uri_fail(err, errlen, "invalid NSID '%s' (expected 1-4294967294)",
					ns);
		if (out->discovery)
			return uri_fail(err, errlen, "the discovery controller has no namespaces");
		out->nsid = (uint32_t)v;
	}
	if (!port_set)
		out->port = out->discovery ? URI_PORT_NVME_DISCOVERY : URI_PORT_NVME;
	return 0;
}

static int parse_iscsi_path(const char *path, struct uri_target *out, bool port_set, char *err,
			    size_t errlen)
{
	const char *iqn = *path ? path + 1 : path;
	const char *slash = strchr(iqn, '/');
	size_t ilen = slash ? (size_t)(slash - iqn) : strlen(iqn);
	uint64_t v;

	if (ilen == 0)
		return uri_fail(err, errlen, "missing target IQN (iscsi://HOST[:PORT]/IQN/LUN)");
	if (pct_decode(iqn, ilen, out->name, NVME_NQN_MAX + 1, "target IQN", err, errlen))
		return -EINVAL;
	if (strncmp(out->name, "iqn.", 4) != 0 && strncmp(out->name, "eui.", 4) != 0 &&
	    strncmp(out->name, "naa.", 4) != 0)
		return uri_fail(err, errlen, "target name '%s' must start with iqn., eui. or naa.",
				out->name);
	if (!slash || !slash[1])
		return uri_fail(err, errlen, "missing LUN (iscsi://HOST[:PORT]/IQN/LUN)");
	if (strchr(slash + 1, '/'))
		return uri_fail(err, errlen, "unexpected '%s' after the LUN",
				strchr(slash + 1, '/'));
	if (parse_uint(slash + 1, strlen(slash + 1), 16383, &v) != 0)
		return uri_fail(err, errlen, "invalid LUN '%s' (expected 0-16383)", slash + 1);
	out->lun = v;
	if (!port_set)
		out->port = URI_PORT_ISCSI;
	return 0;
}

int uri_parse_target(const char *s, struct uri_target *out, char *err, size_t errlen)
{
	const struct scheme *sc;
	const char *auth, *path, *at;
	size_t alen;
	bool port_set;

	if (!s || !*s)
		return uri_fail(err, errlen, "empty target URI");
	sc = find_scheme(target_schemes, sizeof(target_schemes) / sizeof(target_schemes[0]), s);
	if (!sc)
		return uri_fail(err, errlen,
				"unknown target URI '%s' (expected nvme+tcp://, nvme+rdma:// or "
				"iscsi://)",
				s);
	memset(out, 0, sizeof(*out));
	out->transport = sc->transport;
	auth = s + strlen(sc->prefix);
	path = strchr(auth, '/');
	if (!path)
		path = auth + strlen(auth);
	alen = (size_t)(path - auth);

	at = NULL;
	for (const char *p = auth; p < path; p++)
		if (*p == '@')
			at = p;
	if (at) {
		if (sc->nvme)
			return uri_fail(err, errlen, "NVMe target URI '%s' must not have credentials",
					s);
		if (parse_userinfo(auth, (size_t)(at - auth), out, err, errlen))
			return -EINVAL;
		alen -= (size_t)(at + 1 - auth);
		auth = at + 1;
	}
	if (parse_hostport(auth, alen, false, out->host, &out->ipv6, &out->port, &port_set, err,
			   errlen))
		return -EINVAL;
	if (port_set && out->port == 0)
		return uri_fail(err, errlen, "port 0 is not a valid target port");
	if (sc->nvme)
		return parse_nvme_path(path, out, port_set, err, errlen);
	return parse_iscsi_path(path, out, port_set, err, errlen);
}

int uri_format_listen(char *buf, size_t len, const struct uri_listen *u)
{
	const char *scheme = u->tls ? "tls" : uri_transport_name(u->transport);

	if (u->ipv6)
		return snprintf(buf, len, "%s://[%s]:%u", scheme, u->addr, u->port);
	return snprintf(buf, len, "%s://%s:%u", scheme, u->addr, u->port);
}

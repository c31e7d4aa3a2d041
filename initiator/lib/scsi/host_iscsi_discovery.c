/* SPDX-License-Identifier: MIT */
/*
 * iSCSI discovery (RFC 7143 sections 4.3 and Appendix C): a discovery session to the
 * portal, one Text Request SendTargets=All (its answer collected over continuation
 * PDUs), then Logout. Blocking and bounded by one deadline, like the login it reuses.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_iscsi.h"

#define DISC_TARGETS_MAX 4096
#define DISC_ITT         1u

struct disc {
	int fd;
	uint64_t deadline;
	struct iscsi_session s;
	const struct uri_target *u;
};

static int xfer(struct disc *d, void *buf, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(d->fd, (uint8_t *)buf + done, len - done, MSG_NOSIGNAL)
				: recv(d->fd, (uint8_t *)buf + done, len - done, 0);
		int rc;

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return set_error(-ECONNRESET, "iSCSI discovery: %s closed the connection",
					 d->u->host);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return set_error(-errno, "iSCSI discovery: %s", strerror(errno));
		rc = sock_wait_fd(d->fd, out ? POLLOUT : POLLIN, d->deadline);
		if (rc)
			return set_error(rc, "iSCSI discovery: no answer from %s", d->u->host);
	}
	return 0;
}

/* Send a Text Request (@ttt: ISCSI_TAG_RESERVED for a new one, else a continuation). */
static int send_text(struct disc *d, uint32_t ttt, const char *text, size_t len)
{
	_Alignas(8) uint8_t pdu[ISCSI_BHS_LEN + 64];
	struct iscsi_text_req *r = (struct iscsi_text_req *)pdu;

	if (len > sizeof(pdu) - ISCSI_BHS_LEN - 4)
		return -E2BIG;
	iscsi_bhs_init(pdu, ISCSI_OP_TEXT_REQ | ISCSI_FLAG_IMMEDIATE, ISCSI_FLAG_FINAL);
	iscsi_bhs_set_dlen(pdu, (uint32_t)len);
	put_be32(&r->itt, DISC_ITT);
	put_be32(&r->ttt, ttt);
	put_be32(&r->cmdsn, d->s.cmdsn);
	put_be32(&r->exp_statsn, d->s.exp_statsn);
	memcpy(pdu + ISCSI_BHS_LEN, text, len);
	memset(pdu + ISCSI_BHS_LEN + len, 0, ISCSI_PAD(len) - len);
	return xfer(d, pdu, ISCSI_BHS_LEN + ISCSI_PAD(len), true);
}

/* The next PDU's header and data (into @data, room for @cap, padding dropped). */
static int recv_pdu(struct disc *d, uint8_t *bhs, uint8_t *data, size_t cap, uint32_t *dlen)
{
	uint8_t pad[4];
	int rc = xfer(d, bhs, ISCSI_BHS_LEN, false);

	if (rc)
		return rc;
	*dlen = iscsi_bhs_dlen(bhs);
	if (iscsi_bhs_ahs_len(bhs))
		return set_error(-EPROTO, "iSCSI discovery: a PDU with an AHS");
	if (*dlen > cap)
		return set_error(-EPROTO, "iSCSI discovery: %u bytes of text, at most %zu accepted",
				 *dlen, cap);
	rc = xfer(d, data, *dlen, false);
	if (!rc && ISCSI_PAD(*dlen) != *dlen)
		rc = xfer(d, pad, ISCSI_PAD(*dlen) - *dlen, false);
	if (!rc && iscsi_bhs_opcode(bhs) != ISCSI_OP_NOP_IN)
		d->s.exp_statsn = get_be32(bhs + 24) + 1;
	return rc;
}

/* SendTargets=All: the whole answer into @text (*@len bytes). */
static int send_targets(struct disc *d, char *text, size_t cap, size_t *len)
{
	static const char q[] = "SendTargets=All";
	_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t ttt = ISCSI_TAG_RESERVED, dlen;
	int rc;

	*len = 0;
	rc = send_text(d, ttt, q, sizeof(q));
	for (int pdus = 0; rc == 0; pdus++) {
		if (pdus > 1024)
			return set_error(-EPROTO, "iSCSI discovery: the answer does not end");
		rc = recv_pdu(d, bhs, (uint8_t *)text + *len, cap - *len, &dlen);
		if (rc)
			return rc;
		if (iscsi_bhs_opcode(bhs) == ISCSI_OP_NOP_IN ||
		    iscsi_bhs_opcode(bhs) == ISCSI_OP_ASYNC_MSG)
			continue; /* a ping of the target's: no answer needed in a discovery */
		if (iscsi_bhs_opcode(bhs) == ISCSI_OP_REJECT)
			return set_error(-EPROTO,
					 "iSCSI discovery: %s rejected the Text Request "
					 "(reason 0x%02x)",
					 d->u->host, bhs[2]);
		if (iscsi_bhs_opcode(bhs) != ISCSI_OP_TEXT_RSP || get_be32(bhs + 16) != DISC_ITT)
			return set_error(-EPROTO, "iSCSI discovery: unexpected PDU opcode 0x%02x",
					 iscsi_bhs_opcode(bhs));
		*len += dlen;
		if (bhs[1] & ISCSI_FLAG_FINAL)
			return 0;
		/* C set: ask for the rest with the target's transfer tag */
		ttt = get_be32(bhs + 20);
		rc = send_text(d, ttt, "", 0);
	}
	return rc;
}

static void logout(struct disc *d)
{
	_Alignas(8) uint8_t pdu[ISCSI_BHS_LEN], data[512];
	struct iscsi_logout_req *r = (struct iscsi_logout_req *)pdu;
	uint32_t dlen;

	iscsi_bhs_init(pdu, ISCSI_OP_LOGOUT_REQ | ISCSI_FLAG_IMMEDIATE,
		       ISCSI_FLAG_FINAL | ISCSI_LOGOUT_CLOSE_SESSION);
	put_be32(&r->itt, DISC_ITT + 1);
	put_be32(&r->cmdsn, d->s.cmdsn);
	put_be32(&r->exp_statsn, d->s.exp_statsn);
	if (xfer(d, pdu, sizeof(pdu), true))
		return;
	/* The answer is waited for so that the target ends the session, not a reset. */
	for (int i = 0; i < 8; i++)
		if (recv_pdu(d, pdu, data, sizeof(data), &dlen) ||
		    iscsi_bhs_opcode(pdu) == ISCSI_OP_LOGOUT_RSP)
			break;
	clear_error();
}

/* "host:port,tpgt", "[v6]:port,tpgt" or "host" into @t; the portal's port by default. */
static int parse_address(const char *a, const char *dflt_port, struct nvmeof_iscsi_target *t)
{
	const char *comma = strrchr(a, ','), *end, *colon;
	size_t hl;

	/* the entry came with the portal's address: replace it, not overwrite its head */
	memset(t->traddr, 0, sizeof(t->traddr));
	memset(t->trsvcid, 0, sizeof(t->trsvcid));
	end = comma ? comma : a + strlen(a);
	if (comma) {
		uint32_t v;

		if (iscsi_text_parse_u32(comma + 1, &v) || v > 0xffff)
			return -EINVAL;
		t->tpgt = (uint16_t)v;
	}
	if (*a == '[') {
		const char *rb = memchr(a, ']', (size_t)(end - a));

		if (!rb)
			return -EINVAL;
		hl = (size_t)(rb - a - 1);
		memcpy(t->traddr, a + 1, hl < sizeof(t->traddr) ? hl : sizeof(t->traddr) - 1);
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(a, ':', (size_t)(end - a));
		hl = (size_t)((colon ? colon : end) - a);
		memcpy(t->traddr, a, hl < sizeof(t->traddr) ? hl : sizeof(t->traddr) - 1);
	}
	if (colon) {
		size_t pl = (size_t)(end - colon - 1);

		if (!pl || pl >= sizeof(t->trsvcid))
			return -EINVAL;
		memcpy(t->trsvcid, colon + 1, pl);
	} else {
		snprintf(t->trsvcid, sizeof(t->trsvcid), "%s", dflt_port);
	}
	return t->traddr[0] ? 0 : -EINVAL;
}

/* TargetName / TargetAddress pairs into entries, one per address. */
int host_iscsi_parse_targets(const struct uri_target *u, char *text, size_t len,
			     struct nvmeof_iscsi_target **out, unsigned int *count)
{
	struct iscsi_kv *kv = calloc(2 * DISC_TARGETS_MAX, sizeof(*kv));
	struct nvmeof_iscsi_target *t = NULL;
	unsigned int n = 0, cap = 0;
	bool named_only = false; /* the last TargetName has no address yet */
	char port[8];
	int nkv;

	if (!kv)
		return set_error(-ENOMEM, "out of memory");
	snprintf(port, sizeof(port), "%u", u->port);
	nkv = len ? iscsi_text_parse(text, len, kv, 2 * DISC_TARGETS_MAX) : 0;
	if (nkv < 0) {
		free(kv);
		return set_error(-EPROTO, "iSCSI discovery: malformed SendTargets answer");
	}
	for (int i = 0; i < nkv; i++) {
		bool name = !strcmp(kv[i].key, "TargetName");

		if (!name && strcmp(kv[i].key, "TargetAddress"))
			continue; /* TargetAlias and the like */
		if (!name && n == 0)
			continue; /* an address before any name */
		if (name || !named_only) {
			if (n == cap) {
				struct nvmeof_iscsi_target *g;

				cap = cap ? 2 * cap : 16;
				g = realloc(t, cap * sizeof(*t));
				if (!g) {
					free(t);
					free(kv);
					return set_error(-ENOMEM, "out of memory");
				}
				t = g;
			}
			memset(&t[n], 0, sizeof(t[n]));
			snprintf(t[n].name, sizeof(t[n].name), "%s",
				 name ? kv[i].val : t[n - 1].name);
			snprintf(t[n].traddr, sizeof(t[n].traddr), "%s", u->host);
			snprintf(t[n].trsvcid, sizeof(t[n].trsvcid), "%s", port);
			n++;
		}
		named_only = name;
		if (!name && parse_address(kv[i].val, port, &t[n - 1])) {
			/* the message quotes the value: say it before the pairs are freed */
			int rc = set_error(-EPROTO, "iSCSI discovery: bad TargetAddress '%.64s'",
					   kv[i].val);

			free(t);
			free(kv);
			return rc;
		}
	}
	free(kv);
	*out = t;
	*count = n;
	return 0;
}

int nvmeof_iscsi_discover(const char *uri, const struct nvmeof_opts *opts,
			  struct nvmeof_iscsi_target **targets, unsigned int *count)
{
	struct nvmeof_opts def;
	struct iscsi_login_cfg cfg = { 0 };
	struct uri_target u;
	struct disc d = { .fd = -1, .u = &u };
	char buf[URI_HOST_MAX + 320], uerr[256], portal[URI_HOST_MAX + 16];
	char nqn[NVME_NQN_FIELD], iname[ISCSI_NAME_MAX + 1], *text;
	uint8_t hostid[16];
	size_t len, n;
	int rc;

	clear_error();
	if (!uri || !targets || !count)
		return set_error(-EINVAL, "no URI");
	if (!opts) {
		nvmeof_opts_init(&def);
		opts = &def;
	}
	/* The portal URI has no target: parse it as one with a placeholder. */
	n = strlen(uri);
	while (n && uri[n - 1] == '/')
		n--;
	if (strncmp(uri, "iscsi://", 8) || n > URI_HOST_MAX + 300 || memchr(uri + 8, '/', n - 8))
		return set_error(-EINVAL, "'%s' is not an iSCSI portal (iscsi://HOST[:PORT])", uri);
	snprintf(buf, sizeof(buf), "%.*s/iqn.2026-11.io.nvmeof:discovery/0", (int)n, uri);
	if (uri_parse_target(buf, &u, uerr, sizeof(uerr)))
		return set_error(-EINVAL, "%s", uerr);
	rc = host_identity(opts->hostnqn, opts->hostid, "/etc/nvme", NULL, nqn, hostid);
	if (rc)
		return rc;
	iscsi_initiator_name(nqn, iname, sizeof(iname));
	snprintf(portal, sizeof(portal), "%s%s%s:%u", u.ipv6 ? "[" : "", u.host, u.ipv6 ? "]" : "",
		 u.port);

	d.deadline = now_ms() + opts->connect_timeout_ms;
	d.fd = sock_dial(&u, (int)opts->connect_timeout_ms, d.deadline);
	if (d.fd < 0)
		return d.fd;
	cfg.initiator_name = iname;
	cfg.target_name = portal;
	cfg.discovery = true;
	cfg.user = u.user;
	cfg.secret = u.secret;
	if (getrandom(cfg.isid, 4, 0) != 4)
		memset(cfg.isid, 0x5a, 4);
	cfg.isid[0] = 0x80; /* random ISID type */
	cfg.cmdsn = 1;
	text = malloc(ISCSI_TEXT_MAX + 1);
	if (!text) {
		close(d.fd);
		return set_error(-ENOMEM, "out of memory");
	}
	rc = iscsi_login(d.fd, &cfg, (int)opts->connect_timeout_ms, &d.s);
	if (rc == 0)
		rc = send_targets(&d, text, ISCSI_TEXT_MAX, &len);
	if (rc == 0)
		rc = host_iscsi_parse_targets(&u, text, len, targets, count);
	if (d.s.tsih)
		logout(&d);
	free(text);
	close(d.fd);
	if (rc == 0)
		nlog_info("iSCSI discovery on %s: %u target address%s", portal, *count,
			  *count == 1 ? "" : "es");
	return rc;
}

void nvmeof_iscsi_targets_free(struct nvmeof_iscsi_target *targets)
{
	free(targets);
}

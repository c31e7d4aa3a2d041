/* SPDX-License-Identifier: MIT */
/* A scriptable iSCSI target for the initiator's unit tests (see iscsi_fake_target.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/endian.h"
#include "iscsi_fake_target.h"
#include "common/iscsi_pdu.h"
#include "common/scsi_spec.h"

#define FT_MAX_CONNS 32
#define FT_MAX_PENDING 256
#define FT_TSIH 0x1234
#define FT_MTL_BLOCKS 2048

struct pending {
	bool used;
	uint32_t itt;
	uint8_t cdb[16];
	uint32_t edtl;
	uint8_t *buf;
	uint32_t got;
	uint32_t unsol_end;
	bool unsol_done;
	uint32_t r2t_end;	/* end of the outstanding R2T, 0: none */
	uint32_t ttt;
	uint32_t r2tsn;
};

struct ft_conn {
	struct fake_target *ft;
	int fd;
	pthread_t thread;
	bool io;
	bool hdgst, ddgst;
	bool immediate, initial_r2t;
	uint32_t init_mrdsl, first_burst, max_burst;
	uint32_t statsn, exp_cmdsn, max_cmdsn;
	uint8_t isid[6];
	unsigned int media_cmds;
	bool ua_done, fault_done;
	uint32_t ttt_next;
	struct pending pend[FT_MAX_PENDING];
};

struct fake_target {
	struct ft_config cfg;
	int lfd;
	uint16_t port;
	pthread_t accept_thread;
	bool accepting;
	pthread_mutex_t lock;
	struct ft_stats st;
	uint8_t *disk;
	struct ft_conn *conns[FT_MAX_CONNS];
	unsigned int nconns;
	int stop_pipe[2];
};

static void st_error(struct ft_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void st_error(struct ft_conn *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->ft->lock);
	c->ft->st.protocol_errors++;
	va_start(ap, fmt);
	vsnprintf(c->ft->st.last_error, sizeof(c->ft->st.last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&c->ft->lock);
}

#define STAT_INC(c, field)                                                                 \
	do {                                                                               \
		pthread_mutex_lock(&(c)->ft->lock);                                        \
		(c)->ft->st.field++;                                                       \
		pthread_mutex_unlock(&(c)->ft->lock);                                      \
	} while (0)

#define STAT_ADD(c, field, n)                                                              \
	do {                                                                               \
		pthread_mutex_lock(&(c)->ft->lock);                                        \
		(c)->ft->st.field += (n);                                                  \
		pthread_mutex_unlock(&(c)->ft->lock);                                      \
	} while (0)

/* ---- Socket I/O ----------------------------------------------------------------------------- */
static int rd(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = recv(fd, (uint8_t *)buf + done, len - done, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static int wr(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const uint8_t *)buf + done, len - done, MSG_NOSIGNAL);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/* One PDU: header checked, data (padded, digest checked) into *data (malloc'd). */
static int read_pdu(struct ft_conn *c, uint8_t *bhs, uint8_t **data, uint32_t *dlen)
{
	uint8_t dg[4];
	uint32_t n, ahs;

	*data = NULL;
	if (rd(c->fd, bhs, ISCSI_BHS_LEN))
		return -1;
	ahs = iscsi_bhs_ahs_len(bhs);
	if (ahs) {
		st_error(c, "AHS from the initiator");
		return -1;
	}
	if (c->hdgst) {
		if (rd(c->fd, dg, 4))
			return -1;
		if (iscsi_get_digest(dg) != iscsi_header_digest(bhs, ISCSI_BHS_LEN)) {
			st_error(c, "header digest mismatch from the initiator");
			return -1;
		}
	}
	n = iscsi_bhs_dlen(bhs);
	*dlen = n;
	if (n > (16u << 20)) {
		st_error(c, "%u-byte segment from the initiator", n);
		return -1;
	}
	*data = calloc(1, ISCSI_PAD(n) + 1);
	if (!*data || rd(c->fd, *data, ISCSI_PAD(n)))
		return -1;
	if (c->ddgst && n) {
		struct iovec v = { *data, n };

		if (rd(c->fd, dg, 4))
			return -1;
		if (iscsi_get_digest(dg) != iscsi_data_digest(&v, 1, n)) {
			st_error(c, "data digest mismatch from the initiator");
			return -1;
		}
	}
	return 0;
}

static int send_pdu(struct ft_conn *c, uint8_t *bhs, const void *data, uint32_t dlen,
		    bool bad_hdgst, bool bad_ddgst)
{
	size_t total = ISCSI_BHS_LEN + 4 + ISCSI_PAD(dlen) + 4, o = 0;
	uint8_t *buf = calloc(1, total);
	int rc;

	if (!buf)
		return -1;
	iscsi_bhs_set_dlen(bhs, dlen);
	memcpy(buf, bhs, ISCSI_BHS_LEN);
	o = ISCSI_BHS_LEN;
	if (c->hdgst) {
		iscsi_put_digest(buf + o, iscsi_header_digest(bhs, ISCSI_BHS_LEN) ^ bad_hdgst);
		o += 4;
	}
	if (dlen) {
		memcpy(buf + o, data, dlen);
		o += ISCSI_PAD(dlen);
		if (c->ddgst) {
			struct iovec v = { (void *)data, dlen };

			iscsi_put_digest(buf + o, iscsi_data_digest(&v, 1, dlen) ^ bad_ddgst);
			o += 4;
		}
	}
	rc = wr(c->fd, buf, o);
	free(buf);
	return rc;
}

static void put_sns(struct ft_conn *c, uint8_t *bhs, bool status)
{
	put_be32(bhs + 24, status ? c->statsn++ : c->statsn);
	put_be32(bhs + 28, c->exp_cmdsn);
	put_be32(bhs + 32, c->max_cmdsn);
}

/* ---- CHAP ----------------------------------------------------------------------------------- */
int ft_chap_digest(int alg, uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
		   uint8_t *out)
{
	const EVP_MD *md = alg == 5 ? EVP_md5() : alg == 7 ? EVP_sha256() : NULL;
	EVP_MD_CTX *ctx;
	unsigned int n = 0;

	if (!md)
		return -1;
	ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, md, NULL);
	EVP_DigestUpdate(ctx, &id, 1);
	EVP_DigestUpdate(ctx, secret, strlen(secret));
	EVP_DigestUpdate(ctx, chal, clen);
	EVP_DigestFinal_ex(ctx, out, &n);
	EVP_MD_CTX_free(ctx);
	return (int)n;
}

/* ---- Login ---------------------------------------------------------------------------------- */
struct login_rsp {
	uint8_t flags;
	uint16_t status;
	bool final;
	char text[8192];
	size_t len;
};

static void add(struct login_rsp *r, const char *k, const char *v)
{
	iscsi_text_add(r->text, sizeof(r->text), &r->len, k, v);
}

static int send_login_rsp(struct ft_conn *c, const uint8_t *req, struct login_rsp *r)
{
	const struct ft_config *cfg = &c->ft->cfg;
	_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];
	struct iscsi_login_rsp *h = (struct iscsi_login_rsp *)bhs;
	const struct iscsi_login_req *q = (const void *)req;
	enum ft_login_fault f = cfg->login_fault;

	if (f == FT_L_CSG_NEXT && (r->flags & ISCSI_LOGIN_TRANSIT))
		r->flags = (uint8_t)((r->flags & ~ISCSI_LOGIN_CSG_MASK) |
				     (r->flags & ISCSI_LOGIN_NSG_MASK) << ISCSI_LOGIN_CSG_SHIFT);
	if (f == FT_L_CSG_WRONG)
		r->flags = (uint8_t)(ISCSI_STAGE_FULL_FEATURE << ISCSI_LOGIN_CSG_SHIFT);
	iscsi_bhs_init(bhs, f == FT_L_BAD_OPCODE ? ISCSI_OP_NOP_IN : ISCSI_OP_LOGIN_RSP, r->flags);
	if (f == FT_L_REJECT) {
		bhs[0] = ISCSI_OP_REJECT;
		bhs[2] = ISCSI_REJECT_PROTOCOL_ERROR;
	}
	h->version_max = 0;
	h->version_active = f == FT_L_VERSION ? 5 : 0;
	memcpy(h->isid, q->isid, 6);
	if (f == FT_L_ISID)
		h->isid[5] ^= 0xff;
	put_be16(&h->tsih, r->final && f != FT_L_NO_TSIH ? FT_TSIH : 0);
	h->itt = q->itt;
	if (f == FT_L_ITT)
		put_be32(&h->itt, get_be32(&q->itt) + 1);
	put_sns(c, bhs, true);
	h->status_class = (uint8_t)(r->status >> 8);
	h->status_detail = (uint8_t)r->status;
	if (f == FT_L_HUGE_DLEN) {
		iscsi_bhs_set_dlen(bhs, 0xffffff);
		return wr(c->fd, bhs, ISCSI_BHS_LEN);
	}
	if (f == FT_L_TRUNCATED) {
		iscsi_bhs_set_dlen(bhs, 100);
		wr(c->fd, bhs, ISCSI_BHS_LEN);
		wr(c->fd, "TargetAli", 10);
		return -1;
	}
	if (f == FT_L_BAD_TEXT) {
		r->len = 0;
		memcpy(r->text, "NoEqualsSign", 13);
		r->len = 13;
	}
	if (f == FT_L_UNTERMINATED && r->len)
		r->len--;
	return send_pdu(c, bhs, r->text, (uint32_t)r->len, false, false);
}

static bool list_has(const char *list, const char *item)
{
	size_t il = strlen(item);

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == il && !strncmp(p, item, n))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

static int ft_login(struct ft_conn *c)
{
	struct fake_target *ft = c->ft;
	const struct ft_config *cfg = &ft->cfg;
	enum ft_login_fault f = cfg->login_fault;
	struct iscsi_params sess, local;
	int chap_state = 0, rounds = 0;
	uint8_t chap_id = 7, chal[16];
	int chap_alg = 0;
	bool offered = false, continued = false;

	iscsi_params_default(&sess);
	iscsi_params_default(&local);
	local.header_digest = ISCSI_DIGEST_NONE | (cfg->allow_digests ? ISCSI_DIGEST_CRC32C : 0);
	local.data_digest = local.header_digest;
	local.initial_r2t = cfg->initial_r2t;
	local.immediate_data = !cfg->no_immediate_data;
	local.max_burst_length = cfg->max_burst;
	local.first_burst_length = cfg->first_burst;
	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)(i * 37 + 11);

	for (;;) {
		_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN], *data;
		struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
		const struct iscsi_login_req *q = (const void *)bhs;
		struct login_rsp r = { 0 };
		uint32_t dlen;
		uint8_t csg, nsg;
		bool t;
		int n;

		if (read_pdu(c, bhs, &data, &dlen)) {
			free(data);
			return -1;
		}
		if (++rounds > 30 || iscsi_bhs_opcode(bhs) != ISCSI_OP_LOGIN_REQ) {
			st_error(c, "opcode 0x%02x during login", iscsi_bhs_opcode(bhs));
			free(data);
			return -1;
		}
		if (f == FT_L_CLOSE) {
			free(data);
			return -1;
		}
		if (f == FT_L_SILENT) {
			uint8_t b;

			free(data);
			rd(c->fd, &b, 1); /* until the initiator gives up */
			return -1;
		}
		memcpy(c->isid, q->isid, 6);
		c->io = get_be16(&q->isid[4]) != 0;
		c->exp_cmdsn = get_be32(&q->cmdsn);
		c->max_cmdsn = c->exp_cmdsn + cfg->cmd_window - 1;
		t = q->flags & ISCSI_LOGIN_TRANSIT;
		csg = (q->flags & ISCSI_LOGIN_CSG_MASK) >> ISCSI_LOGIN_CSG_SHIFT;
		nsg = q->flags & ISCSI_LOGIN_NSG_MASK;
		n = iscsi_text_parse((char *)data, dlen, kv, ISCSI_TEXT_MAX_PAIRS);
		if (n < 0) {
			st_error(c, "malformed login text from the initiator");
			free(data);
			return -1;
		}
		r.flags = (uint8_t)(csg << ISCSI_LOGIN_CSG_SHIFT);
		if (f == FT_L_STATUS) {
			r.status = cfg->status;
			send_login_rsp(c, bhs, &r);
			free(data);
			return -1;
		}
		if (csg == ISCSI_STAGE_SECURITY) {
			const char *auth = NULL, *ca = NULL, *cn = NULL, *cr = NULL;

			for (int i = 0; i < n; i++) {
				if (!strcmp(kv[i].key, "InitiatorName")) {
					pthread_mutex_lock(&ft->lock);
					snprintf(ft->st.initiator_name,
						 sizeof(ft->st.initiator_name), "%s", kv[i].val);
					pthread_mutex_unlock(&ft->lock);
				} else if (!strcmp(kv[i].key, "TargetName") &&
					   strcmp(kv[i].val, FT_IQN)) {
					r.status = ISCSI_LOGIN_NOT_FOUND;
				} else if (!strcmp(kv[i].key, "AuthMethod")) {
					auth = kv[i].val;
				} else if (!strcmp(kv[i].key, "CHAP_A")) {
					ca = kv[i].val;
				} else if (!strcmp(kv[i].key, "CHAP_N")) {
					cn = kv[i].val;
				} else if (!strcmp(kv[i].key, "CHAP_R")) {
					cr = kv[i].val;
				}
			}
			if (rounds == 1)
				add(&r, "TargetPortalGroupTag", "1");
			if (r.status) {
				send_login_rsp(c, bhs, &r);
				free(data);
				return -1;
			}
			if (auth) {
				bool want = cfg->chap;

				if (!list_has(auth, want ? "CHAP" : "None")) {
					add(&r, "AuthMethod", "Reject");
					r.status = ISCSI_LOGIN_AUTH_FAILED;
				} else {
					add(&r, "AuthMethod", want ? "CHAP" : "None");
				}
				chap_state = want ? 1 : 3;
			} else if (ca && chap_state == 1) {
				pthread_mutex_lock(&ft->lock);
				snprintf(ft->st.chap_a_offer, sizeof(ft->st.chap_a_offer), "%s",
					 ca);
				pthread_mutex_unlock(&ft->lock);
				chap_alg = cfg->chap_alg ? cfg->chap_alg : atoi(ca);
				if (f == FT_L_CHAP_NO_CHALLENGE) {
					add(&r, "CHAP_A", "5");
				} else {
					char num[8], hex[40];

					snprintf(num, sizeof(num), "%d",
						 f == FT_L_CHAP_ALG ? 99 : chap_alg);
					add(&r, "CHAP_A", num);
					snprintf(num, sizeof(num), "%u", chap_id);
					add(&r, "CHAP_I", num);
					iscsi_text_encode_hex(chal, sizeof(chal), hex);
					add(&r, "CHAP_C", hex);
				}
				chap_state = 2;
			} else if (cn && cr && chap_state == 2) {
				uint8_t want[32], got[64];
				int wl = ft_chap_digest(chap_alg, chap_id, cfg->chap_secret, chal,
							sizeof(chal), want);
				int gl = iscsi_text_decode_binary(cr, got, sizeof(got));

				if (strcmp(cn, cfg->chap_user) || wl != gl || memcmp(want, got, wl))
					r.status = ISCSI_LOGIN_AUTH_FAILED;
				chap_state = 3;
			}
			if (r.status) {
				send_login_rsp(c, bhs, &r);
				free(data);
				return -1;
			}
			if (t && chap_state == 3) {
				uint8_t next =
					f == FT_L_SKIP_STAGE ? ISCSI_STAGE_FULL_FEATURE : nsg;

				r.flags |= ISCSI_LOGIN_TRANSIT | next;
				if (next == ISCSI_STAGE_FULL_FEATURE)
					r.final = true;
			}
		} else if (csg == ISCSI_STAGE_OPERATIONAL) {
			char ops[2048] = "";
			size_t ol = 0;

			for (int i = 0; i < n; i++) {
				char resp[64];
				int rc;

				if (ol < sizeof(ops) - 1)
					ol += (size_t)snprintf(ops + ol, sizeof(ops) - ol, "%s=%s;",
							       kv[i].key, kv[i].val);
				if (offered) { /* answers to what we offered */
					pthread_mutex_lock(&ft->lock);
					snprintf(ft->st.answers + strlen(ft->st.answers),
						 sizeof(ft->st.answers) - strlen(ft->st.answers),
						 "%s=%s;", kv[i].key, kv[i].val);
					pthread_mutex_unlock(&ft->lock);
					continue;
				}
				if (!strcmp(kv[i].key, "MaxRecvDataSegmentLength")) {
					c->init_mrdsl = (uint32_t)strtoul(kv[i].val, NULL, 10);
					continue;
				}
				rc = iscsi_param_negotiate(&sess, &local, false, kv[i].key,
							   kv[i].val, resp, sizeof(resp));
				if (rc == ISCSI_NEG_ANSWER) {
					if (f == FT_L_FORCE_DIGEST && !strcmp(kv[i].key,
									      "HeaderDigest"))
						snprintf(resp, sizeof(resp), "CRC32C");
					if (f == FT_L_BAD_NUMBER && !strcmp(kv[i].key,
									    "MaxBurstLength"))
						snprintf(resp, sizeof(resp), "lots");
					if (f == FT_L_BURST_TOO_BIG &&
					    !strcmp(kv[i].key, "MaxBurstLength"))
						snprintf(resp, sizeof(resp), "%u", 64u << 20);
					if (f == FT_L_NO_ORDER &&
					    !strcmp(kv[i].key, "DataPDUInOrder"))
						snprintf(resp, sizeof(resp), "No");
					add(&r, kv[i].key, resp);
				}
			}
			if (!offered) {
				char num[16];

				pthread_mutex_lock(&ft->lock);
				snprintf(ft->st.op_keys, sizeof(ft->st.op_keys), "%s", ops);
				pthread_mutex_unlock(&ft->lock);
				snprintf(num, sizeof(num), "%u",
					 f == FT_L_MRDSL_ZERO ? 0 : cfg->max_recv_dsl);
				add(&r, "MaxRecvDataSegmentLength", num);
				if (f == FT_L_OFFER_KEYS) {
					add(&r, "X-org.example.Feature", "Yes");
					add(&r, "IFMarker", "Yes");
					offered = true;
					send_login_rsp(c, bhs, &r); /* T=0: answers are due */
					free(data);
					continue;
				}
			}
			if (f == FT_L_CONTINUE && !continued) {
				/* First half with C, the rest after the initiator's empty request.
				 */
				struct login_rsp r2 = r;
				size_t half = 0;

				while (half < r.len / 2)
					half += strlen(r.text + half) + 1;
				r.len = half;
				r.flags |= ISCSI_LOGIN_CONTINUE;
				send_login_rsp(c, bhs, &r);
				free(data);
				if (read_pdu(c, bhs, &data, &dlen) || dlen) {
					st_error(c, "no empty request after C");
					free(data);
					return -1;
				}
				memmove(r2.text, r2.text + half, r2.len - half);
				r2.len -= half;
				r = r2;
				continued = true;
			}
			if (t && f != FT_L_NEVER_TRANSIT) {
				r.flags |= ISCSI_LOGIN_TRANSIT | nsg;
				r.final = nsg == ISCSI_STAGE_FULL_FEATURE;
			}
			if (f == FT_L_BOTH_TC)
				r.flags |= ISCSI_LOGIN_CONTINUE | ISCSI_LOGIN_TRANSIT;
		}
		if (send_login_rsp(c, bhs, &r)) {
			free(data);
			return -1;
		}
		free(data);
		/* Faults in the first answer, or in the round they belong to. */
		if (f == FT_L_REJECT || f == FT_L_BAD_OPCODE || f == FT_L_HUGE_DLEN ||
		    f == FT_L_CSG_WRONG ||
		    f == FT_L_BAD_TEXT || f == FT_L_UNTERMINATED || f == FT_L_ITT ||
		    f == FT_L_ISID || f == FT_L_VERSION ||
		    (f == FT_L_BOTH_TC && csg == ISCSI_STAGE_OPERATIONAL) ||
		    (f == FT_L_SKIP_STAGE && (r.flags & ISCSI_LOGIN_TRANSIT)) ||
		    ((f == FT_L_CHAP_ALG || f == FT_L_CHAP_NO_CHALLENGE) && chap_state == 2)) {
			uint8_t b;

			rd(c->fd, &b, 1); /* the initiator gives up and closes */
			return -1;
		}
		if (r.final && (r.flags & ISCSI_LOGIN_TRANSIT)) {
			iscsi_params_finish(&sess);
			c->hdgst = sess.header_digest;
			c->ddgst = sess.data_digest;
			c->immediate = sess.immediate_data;
			c->initial_r2t = sess.initial_r2t;
			c->first_burst = sess.first_burst_length;
			c->max_burst = sess.max_burst_length;
			if (!c->init_mrdsl)
				c->init_mrdsl = 8192;
			STAT_INC(c, logins);
			return f == FT_L_NO_TSIH ? -1 : 0;
		}
	}
}

/* ---- SCSI ----------------------------------------------------------------------------------- */
struct result {
	uint8_t status;
	uint8_t sense[32];
	uint32_t sense_len;
	uint8_t *data;		/* Data-In */
	uint32_t data_len;
};

static void check_condition(struct ft_conn *c, struct result *res, uint8_t key, uint16_t asc)
{
	res->status = SCSI_STATUS_CHECK_CONDITION;
	memset(res->sense, 0, sizeof(res->sense));
	if (c->ft->cfg.descriptor_sense) {
		res->sense[0] = 0x72;
		res->sense[1] = key;
		res->sense[2] = (uint8_t)(asc >> 8);
		res->sense[3] = (uint8_t)asc;
		res->sense_len = 8;
	} else {
		res->sense[0] = SCSI_SENSE_FIXED_CURRENT;
		res->sense[2] = key;
		res->sense[7] = 10;
		res->sense[12] = (uint8_t)(asc >> 8);
		res->sense[13] = (uint8_t)asc;
		res->sense_len = SCSI_SENSE_FIXED_LEN;
	}
}

static bool is_media(uint8_t op)
{
	return op == SCSI_OP_READ16 || op == SCSI_OP_WRITE16 || op == SCSI_OP_COMPARE_AND_WRITE ||
	       op == SCSI_OP_WRITE_SAME16 || op == SCSI_OP_UNMAP || op == SCSI_OP_SYNC_CACHE10 ||
	       op == SCSI_OP_VERIFY16;
}

static void data_in(struct result *res, const void *src, uint32_t len, uint32_t alloc)
{
	res->data_len = len < alloc ? len : alloc;
	res->data = malloc(res->data_len ? res->data_len : 1);
	memcpy(res->data, src, res->data_len);
}

static void inquiry(struct ft_conn *c, const uint8_t *cdb, struct result *res)
{
	const struct ft_config *cfg = &c->ft->cfg;
	uint32_t alloc = get_be16(cdb + 3);
	uint8_t b[256];

	memset(b, 0, sizeof(b));
	if (!(cdb[1] & 1)) {
		b[0] = SCSI_PERIPH_DISK;
		b[2] = SCSI_VERSION_SPC4;
		b[3] = SCSI_INQ_RESPONSE_FORMAT;
		b[4] = 91;
		b[7] = SCSI_INQ_CMDQUE;
		memcpy(b + 8, "FAKE    ", 8);
		memcpy(b + 16, "ISCSI-DISK      ", 16);
		memcpy(b + 32, "1.0 ", 4);
		data_in(res, b, 96, alloc);
		return;
	}
	b[1] = cdb[2];
	switch (cdb[2]) {
	case SCSI_VPD_SUPPORTED_PAGES:
		b[3] = 5;
		b[4] = 0x00, b[5] = 0x80, b[6] = 0x83, b[7] = 0xb0, b[8] = 0xb2;
		break;
	case SCSI_VPD_UNIT_SERIAL:
		b[3] = 8;
		memcpy(b + 4, "FT0001  ", 8);
		break;
	case SCSI_VPD_DEVICE_ID:
		b[3] = 20;
		b[4] = SCSI_CODESET_BINARY;
		b[5] = SCSI_ASSOC_LU | SCSI_DESIG_NAA;
		b[7] = 16;
		for (int i = 0; i < 16; i++)
			b[8 + i] = (uint8_t)(0x60 + i);
		break;
	case SCSI_VPD_BLOCK_LIMITS:
		b[3] = 0x3c;
		b[5] = cfg->no_caw ? 0 : (uint8_t)cfg->caw_max;
		put_be32(b + 8, FT_MTL_BLOCKS);
		put_be32(b + 20, 1u << 20);
		put_be32(b + 24, 4);
		put_be64(b + 36, 1024);
		break;
	case SCSI_VPD_LOGICAL_BLOCK_PROVISIONING:
		b[3] = 4;
		b[5] = SCSI_LBP_LBPU | SCSI_LBP_LBPWS | SCSI_LBP_LBPRZ;
		break;
	default:
		check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_FIELD_IN_CDB);
		return;
	}
	data_in(res, b, 4u + get_be16(b + 2), alloc);
}

static void report_opcodes(struct ft_conn *c, const uint8_t *cdb, struct result *res)
{
	static const uint8_t ops[] = { SCSI_OP_READ16, SCSI_OP_WRITE16, SCSI_OP_COMPARE_AND_WRITE,
				       SCSI_OP_WRITE_SAME16, SCSI_OP_UNMAP, SCSI_OP_SYNC_CACHE10,
				       SCSI_OP_VERIFY16, SCSI_OP_INQUIRY };
	uint8_t b[4 + 8 * sizeof(ops)];

	if (c->ft->cfg.no_rsoc) {
		check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
		return;
	}
	memset(b, 0, sizeof(b));
	put_be32(b, 8 * sizeof(ops));
	for (size_t i = 0; i < sizeof(ops); i++) {
		b[4 + 8 * i] = ops[i];
		put_be16(b + 4 + 8 * i + 6, ops[i] >= 0x80 ? 16 : 10);
	}
	data_in(res, b, sizeof(b), get_be32(cdb + 6));
}

static bool lba_ok(const struct ft_config *cfg, uint64_t lba, uint64_t n)
{
	return lba <= cfg->nblocks && n <= cfg->nblocks - lba;
}

/* Run a command whose data-out (if any) is complete in @out. */
static void execute(struct ft_conn *c, const uint8_t *cdb, const uint8_t *out, uint32_t out_len,
		    uint32_t edtl, struct result *res)
{
	struct fake_target *ft = c->ft;
	const struct ft_config *cfg = &ft->cfg;
	uint32_t bs = cfg->block_size;
	uint64_t lba = get_be64(cdb + 2);
	uint32_t n = get_be32(cdb + 10);
	uint8_t b[64];

	memset(res, 0, sizeof(*res));
	if (is_media(cdb[0]) && cfg->ua_first && !c->ua_done) {
		c->ua_done = true;
		check_condition(c, res, SCSI_SK_UNIT_ATTENTION, SCSI_ASC_POWER_ON_RESET);
		return;
	}
	switch (cdb[0]) {
	case SCSI_OP_TEST_UNIT_READY:
		return;
	case SCSI_OP_INQUIRY:
		inquiry(c, cdb, res);
		return;
	case SCSI_OP_SERVICE_ACTION_IN16:
		memset(b, 0, 32);
		put_be64(b, cfg->nblocks - 1);
		put_be32(b + 8, bs);
		b[14] = SCSI_RC16_LBPME | SCSI_RC16_LBPRZ;
		data_in(res, b, 32, get_be32(cdb + 10));
		return;
	case SCSI_OP_MODE_SENSE10:
		memset(b, 0, 28);
		put_be16(b, 26);
		b[8] = SCSI_MODE_PAGE_CACHING;
		b[9] = 0x12;
		b[10] = SCSI_MODE_CACHING_WCE;
		data_in(res, b, 28, get_be16(cdb + 7));
		return;
	case SCSI_OP_MAINTENANCE_IN:
		report_opcodes(c, cdb, res);
		return;
	case SCSI_OP_READ16:
		if (!lba_ok(cfg, lba, n)) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LBA_OUT_OF_RANGE);
			return;
		}
		pthread_mutex_lock(&ft->lock);
		data_in(res, ft->disk + lba * bs, n * bs, edtl);
		pthread_mutex_unlock(&ft->lock);
		return;
	case SCSI_OP_WRITE16:
		if (!lba_ok(cfg, lba, n)) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LBA_OUT_OF_RANGE);
			return;
		}
		if (out_len != n * bs) {
			st_error(c, "WRITE(16) of %u blocks with %u bytes", n, out_len);
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
					SCSI_ASC_INVALID_FIELD_IN_CDB);
			return;
		}
		pthread_mutex_lock(&ft->lock);
		memcpy(ft->disk + lba * bs, out, out_len);
		pthread_mutex_unlock(&ft->lock);
		return;
	case SCSI_OP_COMPARE_AND_WRITE:
		n = cdb[13];
		STAT_INC(c, caws);
		if (!lba_ok(cfg, lba, n) || n > cfg->caw_max || out_len != 2 * n * bs) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
					SCSI_ASC_INVALID_FIELD_IN_CDB);
			return;
		}
		pthread_mutex_lock(&ft->lock);
		if (memcmp(ft->disk + lba * bs, out, n * bs)) {
			pthread_mutex_unlock(&ft->lock);
			STAT_INC(c, miscompares);
			check_condition(c, res, SCSI_SK_MISCOMPARE,
					SCSI_ASC_MISCOMPARE_DURING_VERIFY);
			return;
		}
		memcpy(ft->disk + lba * bs, out + n * bs, n * bs);
		pthread_mutex_unlock(&ft->lock);
		return;
	case SCSI_OP_WRITE_SAME16:
		STAT_INC(c, write_sames);
		if (cdb[1] & 0x08)
			STAT_INC(c, ws_unmap);
		if (!lba_ok(cfg, lba, n) || out_len != bs || n > 1024) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
					SCSI_ASC_INVALID_FIELD_IN_CDB);
			return;
		}
		pthread_mutex_lock(&ft->lock);
		for (uint32_t i = 0; i < n; i++)
			memcpy(ft->disk + (lba + i) * bs, out, bs);
		pthread_mutex_unlock(&ft->lock);
		return;
	case SCSI_OP_UNMAP: {
		uint32_t plen = get_be16(cdb + 7), dl;

		if (out_len != plen || plen < 8 || (dl = get_be16(out + 2)) + 8 > plen ||
		    get_be16(out) != dl + 6 || dl % 16 || dl / 16 > 4) {
			st_error(c, "malformed UNMAP parameter list");
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
					SCSI_ASC_INVALID_FIELD_IN_PARAM_LIST);
			return;
		}
		for (uint32_t p = 8; p < 8 + dl; p += 16) {
			uint64_t l = get_be64(out + p);
			uint32_t cnt = get_be32(out + p + 8);

			if (!lba_ok(cfg, l, cnt)) {
				check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
						SCSI_ASC_LBA_OUT_OF_RANGE);
				return;
			}
			pthread_mutex_lock(&ft->lock);
			memset(ft->disk + l * bs, 0, (size_t)cnt * bs);
			ft->st.unmaps++;
			pthread_mutex_unlock(&ft->lock);
		}
		return;
	}
	case SCSI_OP_SYNC_CACHE10:
		STAT_INC(c, syncs);
		return;
	case SCSI_OP_VERIFY16:
		if (!lba_ok(cfg, lba, n)) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_LBA_OUT_OF_RANGE);
			return;
		}
		if (((cdb[1] >> 1) & 3) == 0) /* BYTCHK 00b: the medium only */
			return;
		/* BYTCHK 01b: compare the data-out with the medium, write nothing */
		STAT_INC(c, byte_verifies);
		if (((cdb[1] >> 1) & 3) != 1 || out_len != n * bs) {
			check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST,
					SCSI_ASC_INVALID_FIELD_IN_CDB);
			return;
		}
		pthread_mutex_lock(&ft->lock);
		if (memcmp(ft->disk + lba * bs, out, n * bs)) {
			pthread_mutex_unlock(&ft->lock);
			STAT_INC(c, miscompares);
			check_condition(c, res, SCSI_SK_MISCOMPARE,
					SCSI_ASC_MISCOMPARE_DURING_VERIFY);
			return;
		}
		pthread_mutex_unlock(&ft->lock);
		return;
	default:
		check_condition(c, res, SCSI_SK_ILLEGAL_REQUEST, SCSI_ASC_INVALID_OPCODE);
	}
}

/* ---- Full feature phase --------------------------------------------------------------------- */
static bool fault_now(struct ft_conn *c, const uint8_t *cdb)
{
	const struct ft_config *cfg = &c->ft->cfg;

	if (!c->io || cfg->ffp_fault == FT_F_NONE || c->fault_done || !is_media(cdb[0]))
		return false;
	if (c->media_cmds++ < cfg->fault_after)
		return false;
	c->fault_done = true;
	return true;
}

static int send_status(struct ft_conn *c, uint32_t itt, const struct result *res, uint32_t edtl,
		       bool read, bool fault)
{
	const struct ft_config *cfg = &c->ft->cfg;
	enum ft_ffp_fault f = fault ? cfg->ffp_fault : FT_F_NONE;
	_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN], seg[64];
	struct iscsi_scsi_rsp *r = (struct iscsi_scsi_rsp *)bhs;
	uint32_t seglen = 0;

	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL);
	if (f == FT_F_BAD_OPCODE)
		bhs[0] = 0x3a;
	put_be32(&r->itt, f == FT_F_UNKNOWN_ITT ? itt ^ 0x5a5a0000u : itt);
	r->status = res->status;
	put_sns(c, bhs, true);
	put_be32(&r->exp_datasn, 0);
	if (read && res->status == SCSI_STATUS_GOOD && res->data_len < edtl) {
		r->flags |= ISCSI_RSP_UNDERFLOW;
		put_be32(&r->residual, edtl - res->data_len);
	}
	if (res->sense_len) {
		put_be16(seg, (uint16_t)(f == FT_F_SENSE_LENGTH ? 200 : res->sense_len));
		memcpy(seg + 2, res->sense, res->sense_len);
		seglen = 2 + res->sense_len;
	}
	return send_pdu(c, bhs, seg, seglen, f == FT_F_BAD_HDGST, false);
}

static int send_data_in(struct ft_conn *c, uint32_t itt, const struct result *res,
			uint32_t edtl, bool fault)
{
	const struct ft_config *cfg = &c->ft->cfg;
	enum ft_ffp_fault f = fault ? cfg->ffp_fault : FT_F_NONE;
	uint32_t seg = cfg->data_in_seg && cfg->data_in_seg < c->init_mrdsl ? cfg->data_in_seg
									   : c->init_mrdsl;
	uint32_t len = res->data_len, off = 0, datasn = 0;
	bool collapse = cfg->phase_collapse && res->status == SCSI_STATUS_GOOD;

	if (f == FT_F_BIG_SEGMENT)
		seg = c->init_mrdsl + 512;
	if (f == FT_F_DATAIN_OVERRUN)
		len = edtl + 512;
	while (off < len) {
		_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];
		struct iscsi_data_in *d = (struct iscsi_data_in *)bhs;
		uint32_t n = len - off < seg ? len - off : seg;
		bool last = off + n == len;
		uint8_t *tmp = NULL;
		const uint8_t *src = res->data + off;
		int rc;

		if (f == FT_F_DATAIN_OVERRUN || f == FT_F_BIG_SEGMENT) {
			tmp = calloc(1, n);
			src = tmp;
		}
		iscsi_bhs_init(bhs, ISCSI_OP_DATA_IN, last ? ISCSI_FLAG_FINAL : 0);
		put_be32(&d->itt, itt);
		put_be32(&d->ttt, ISCSI_TAG_RESERVED);
		put_be32(&d->datasn, datasn++);
		put_be32(&d->buffer_offset, off + (f == FT_F_DATAIN_OFFSET && off ? 512 : 0));
		if (last && collapse) {
			d->flags |= ISCSI_DATA_STATUS;
			d->status = SCSI_STATUS_GOOD;
			if (res->data_len < edtl) {
				d->flags |= ISCSI_DATA_UNDERFLOW;
				put_be32(&d->residual, edtl - res->data_len);
			}
		}
		put_sns(c, bhs, last && collapse);
		rc = send_pdu(c, bhs, src, n, false, f == FT_F_BAD_DDGST);
		free(tmp);
		if (rc)
			return -1;
		off += n;
	}
	if (collapse && len)
		return 0;
	return send_status(c, itt, res, edtl, true, fault);
}

static int send_r2t(struct ft_conn *c, struct pending *p, bool fault)
{
	const struct ft_config *cfg = &c->ft->cfg;
	_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];
	struct iscsi_r2t *r = (struct iscsi_r2t *)bhs;
	uint32_t len = p->edtl - p->got, lim = cfg->r2t_len ? cfg->r2t_len : c->max_burst;

	if (len > lim)
		len = lim;
	if (len > c->max_burst)
		len = c->max_burst;
	iscsi_bhs_init(bhs, ISCSI_OP_R2T, ISCSI_FLAG_FINAL);
	put_be32(&r->itt, p->itt);
	p->ttt = ++c->ttt_next;
	put_be32(&r->ttt, p->ttt);
	put_sns(c, bhs, false);
	put_be32(&r->r2tsn, p->r2tsn++);
	put_be32(&r->buffer_offset, p->got);
	put_be32(&r->desired_len, fault && cfg->ffp_fault == FT_F_R2T_RANGE ? p->edtl : len);
	p->r2t_end = p->got + len;
	STAT_INC(c, r2ts);
	return send_pdu(c, bhs, NULL, 0, false, false);
}

static int finish_cmd(struct ft_conn *c, uint32_t itt, const uint8_t *cdb, const uint8_t *out,
		      uint32_t out_len, uint32_t edtl, bool read)
{
	const struct ft_config *cfg = &c->ft->cfg;
	bool fault = fault_now(c, cdb);
	struct result res;
	int rc;

	if (cfg->nop_ping) {
		_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];
		struct iscsi_nop_in *n = (struct iscsi_nop_in *)bhs;

		iscsi_bhs_init(bhs, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
		put_be32(&n->itt, ISCSI_TAG_RESERVED);
		put_be32(&n->ttt, 0x7000 + c->ttt_next++);
		put_sns(c, bhs, false);
		if (send_pdu(c, bhs, NULL, 0, false, false))
			return -1;
	}
	if (fault) {
		_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN];

		switch (cfg->ffp_fault) {
		case FT_F_CLOSE:
			return -1;
		case FT_F_REJECT: {
			uint8_t hdr[ISCSI_BHS_LEN] = { ISCSI_OP_SCSI_CMD };

			put_be32(hdr + 16, itt);
			iscsi_bhs_init(bhs, ISCSI_OP_REJECT, ISCSI_FLAG_FINAL);
			bhs[2] = ISCSI_REJECT_INVALID_PDU_FIELD;
			put_be32(bhs + 16, ISCSI_TAG_RESERVED);
			put_sns(c, bhs, true);
			return send_pdu(c, bhs, hdr, sizeof(hdr), false, false) ? -1 : 1;
		}
		case FT_F_ASYNC_LOGOUT:
			iscsi_bhs_init(bhs, ISCSI_OP_ASYNC_MSG, ISCSI_FLAG_FINAL);
			put_be32(bhs + 16, ISCSI_TAG_RESERVED);
			put_sns(c, bhs, true);
			bhs[36] = ISCSI_ASYNC_LOGOUT_REQUEST;
			return send_pdu(c, bhs, NULL, 0, false, false) ? -1 : 1;
		default:
			break;
		}
	}
	execute(c, cdb, out, out_len, edtl, &res);
	STAT_INC(c, commands);
	if (read && res.status == SCSI_STATUS_GOOD && res.data_len)
		rc = send_data_in(c, itt, &res, edtl, fault);
	else
		rc = send_status(c, itt, &res, edtl, read, fault);
	free(res.data);
	return rc;
}

static struct pending *pending_get(struct ft_conn *c, uint32_t itt, bool create)
{
	struct pending *free_p = NULL;

	for (int i = 0; i < FT_MAX_PENDING; i++) {
		if (c->pend[i].used && c->pend[i].itt == itt)
			return &c->pend[i];
		if (!c->pend[i].used && !free_p)
			free_p = &c->pend[i];
	}
	if (!create || !free_p)
		return NULL;
	memset(free_p, 0, sizeof(*free_p));
	free_p->used = true;
	free_p->itt = itt;
	return free_p;
}

/* All data of @p so far is in: ask for more or run it. */
static int write_progress(struct ft_conn *c, struct pending *p)
{
	int rc;

	if (p->got < p->unsol_end && !p->unsol_done)
		return 0; /* unsolicited Data-Out still to come */
	if (p->got < p->edtl) {
		if (p->r2t_end && p->got < p->r2t_end)
			return 0;
		return send_r2t(c, p, fault_now(c, p->cdb));
	}
	rc = finish_cmd(c, p->itt, p->cdb, p->buf, p->got, p->edtl, false);
	free(p->buf);
	p->used = false;
	return rc < 0 ? -1 : 0;
}

static int scsi_cmd(struct ft_conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	const struct iscsi_scsi_cmd *h = (const void *)bhs;
	uint32_t itt = get_be32(&h->itt), edtl = get_be32(&h->edtl), cmdsn = get_be32(&h->cmdsn);
	bool w = h->flags & ISCSI_SCSI_CMD_WRITE, r = h->flags & ISCSI_SCSI_CMD_READ;
	struct pending *p;

	if (iscsi_bhs_immediate(bhs)) {
		st_error(c, "immediate SCSI command");
	} else {
		if (cmdsn != c->exp_cmdsn) {
			st_error(c, "CmdSN %u, expected %u", cmdsn, c->exp_cmdsn);
			STAT_INC(c, cmdsn_errors);
		}
		if (iscsi_sn_gt(cmdsn, c->max_cmdsn))
			STAT_INC(c, window_violations);
		c->exp_cmdsn = cmdsn + 1;
		c->max_cmdsn = c->exp_cmdsn + c->ft->cfg.cmd_window - 1;
	}
	if (!w) {
		if (dlen) {
			st_error(c, "data with a non-write command");
			return -1;
		}
		return finish_cmd(c, itt, h->cdb, NULL, 0, edtl, r) < 0 ? -1 : 0;
	}
	if (dlen > edtl || (dlen && !c->immediate) || dlen > c->first_burst ||
	    dlen > c->ft->cfg.max_recv_dsl) {
		st_error(c, "%u bytes of immediate data (EDTL %u, FirstBurst %u)", dlen, edtl,
			 c->first_burst);
		return -1;
	}
	p = pending_get(c, itt, true);
	if (!p)
		return -1;
	memcpy(p->cdb, h->cdb, 16);
	p->edtl = edtl;
	p->buf = malloc(edtl ? edtl : 1);
	memcpy(p->buf, data, dlen);
	p->got = dlen;
	STAT_ADD(c, immediate_bytes, dlen);
	p->unsol_end = c->initial_r2t ? dlen : (edtl < c->first_burst ? edtl : c->first_burst);
	p->unsol_done = (h->flags & ISCSI_FLAG_FINAL) || p->got == p->unsol_end;
	if ((h->flags & ISCSI_FLAG_FINAL) && p->got < p->unsol_end && !c->initial_r2t)
		p->unsol_end = p->got; /* F: no unsolicited Data-Out follows */
	return write_progress(c, p);
}

static int data_out(struct ft_conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	const struct iscsi_data_out *d = (const void *)bhs;
	uint32_t itt = get_be32(&d->itt), ttt = get_be32(&d->ttt);
	uint32_t off = get_be32(&d->buffer_offset);
	struct pending *p = pending_get(c, itt, false);

	STAT_INC(c, data_outs);
	if (!p) {
		st_error(c, "Data-Out for unknown ITT 0x%08x", itt);
		return -1;
	}
	if (dlen > c->ft->cfg.max_recv_dsl) {
		st_error(c, "%u-byte Data-Out beyond MaxRecvDataSegmentLength %u", dlen,
			 c->ft->cfg.max_recv_dsl);
		return -1;
	}
	if (off != p->got || dlen > p->edtl - p->got) {
		st_error(c, "Data-Out at %u (+%u), expected %u of %u", off, dlen, p->got, p->edtl);
		return -1;
	}
	if (ttt == ISCSI_TAG_RESERVED) {
		if (p->unsol_done || off + dlen > p->unsol_end) {
			st_error(c, "unsolicited Data-Out beyond FirstBurstLength");
			return -1;
		}
		STAT_ADD(c, unsolicited_bytes, dlen);
	} else if (ttt != p->ttt || off + dlen > p->r2t_end) {
		st_error(c, "Data-Out TTT 0x%x [%u,+%u) outside the R2T", ttt, off, dlen);
		return -1;
	}
	memcpy(p->buf + off, data, dlen);
	p->got += dlen;
	if (d->flags & ISCSI_FLAG_FINAL) {
		if (ttt == ISCSI_TAG_RESERVED) {
			if (p->got != p->unsol_end) {
				st_error(c, "unsolicited sequence ends at %u, not %u", p->got,
					 p->unsol_end);
				return -1;
			}
			p->unsol_done = true;
		} else if (p->got != p->r2t_end) {
			st_error(c, "R2T sequence ends at %u, not %u", p->got, p->r2t_end);
			return -1;
		}
		return write_progress(c, p);
	}
	return 0;
}

static void ft_ffp(struct ft_conn *c)
{
	for (;;) {
		_Alignas(8) uint8_t bhs[ISCSI_BHS_LEN], *data;
		uint32_t dlen;
		int rc = 0;

		if (read_pdu(c, bhs, &data, &dlen)) {
			free(data);
			return;
		}
		switch (iscsi_bhs_opcode(bhs)) {
		case ISCSI_OP_NOP_OUT: {
			const struct iscsi_nop_out *n = (const void *)bhs;

			if (get_be32(&n->ttt) != ISCSI_TAG_RESERVED) {
				if (get_be32(&n->itt) != ISCSI_TAG_RESERVED)
					st_error(c, "NOP-Out answer with an ITT");
				STAT_INC(c, nop_pings_answered);
			} else {
				_Alignas(8) uint8_t r[ISCSI_BHS_LEN];

				STAT_INC(c, nop_outs);
				iscsi_bhs_init(r, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
				memcpy(r + 16, bhs + 16, 4);
				put_be32(r + 20, ISCSI_TAG_RESERVED);
				put_sns(c, r, true);
				rc = send_pdu(c, r, data, dlen, false, false);
			}
			break;
		}
		case ISCSI_OP_SCSI_CMD:
			rc = scsi_cmd(c, bhs, data, dlen);
			break;
		case ISCSI_OP_DATA_OUT:
			rc = data_out(c, bhs, data, dlen);
			break;
		case ISCSI_OP_LOGOUT_REQ: {
			_Alignas(8) uint8_t r[ISCSI_BHS_LEN];

			STAT_INC(c, logouts);
			iscsi_bhs_init(r, ISCSI_OP_LOGOUT_RSP, ISCSI_FLAG_FINAL);
			memcpy(r + 16, bhs + 16, 4);
			put_sns(c, r, true);
			send_pdu(c, r, NULL, 0, false, false);
			free(data);
			return;
		}
		default:
			st_error(c, "opcode 0x%02x in full feature phase", iscsi_bhs_opcode(bhs));
			rc = -1;
		}
		free(data);
		if (rc < 0)
			return;
	}
}

static void *conn_main(void *arg)
{
	struct ft_conn *c = arg;

	c->statsn = 0x100;
	if (ft_login(c) == 0)
		ft_ffp(c);
	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	c->fd = -1;
	for (int i = 0; i < FT_MAX_PENDING; i++)
		if (c->pend[i].used)
			free(c->pend[i].buf);
	return NULL;
}

/* ---- Setup ---------------------------------------------------------------------------------- */
static struct fake_target *ft_new(const struct ft_config *cfg)
{
	struct fake_target *ft = calloc(1, sizeof(*ft));

	ft->cfg = *cfg;
	if (!ft->cfg.max_recv_dsl)
		ft->cfg.max_recv_dsl = 8192;
	if (!ft->cfg.max_burst)
		ft->cfg.max_burst = 262144;
	if (!ft->cfg.first_burst)
		ft->cfg.first_burst = 65536;
	if (!ft->cfg.nblocks)
		ft->cfg.nblocks = 16384;
	if (!ft->cfg.block_size)
		ft->cfg.block_size = 512;
	if (!ft->cfg.cmd_window)
		ft->cfg.cmd_window = 64;
	if (!ft->cfg.caw_max)
		ft->cfg.caw_max = 16;
	ft->disk = calloc(ft->cfg.nblocks, ft->cfg.block_size);
	ft->lfd = -1;
	pthread_mutex_init(&ft->lock, NULL);
	return ft;
}

static int add_conn(struct fake_target *ft, int fd)
{
	struct ft_conn *c;

	if (ft->nconns == FT_MAX_CONNS) {
		close(fd);
		return -1;
	}
	c = calloc(1, sizeof(*c));
	c->ft = ft;
	c->fd = fd;
	ft->conns[ft->nconns++] = c;
	return pthread_create(&c->thread, NULL, conn_main, c);
}

static void *accept_main(void *arg)
{
	struct fake_target *ft = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = ft->lfd, .events = POLLIN },
				       { .fd = ft->stop_pipe[0], .events = POLLIN } };
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept(ft->lfd, NULL, NULL);
		if (fd >= 0)
			add_conn(ft, fd);
	}
	return NULL;
}

struct fake_target *ft_start(const struct ft_config *cfg)
{
	struct fake_target *ft = ft_new(cfg);
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ft->lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ft->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ft->lfd < 0 || bind(ft->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ft->lfd, 16) || getsockname(ft->lfd, (struct sockaddr *)&a, &al) ||
	    pipe(ft->stop_pipe)) {
		ft_free(ft);
		return NULL;
	}
	ft->port = ntohs(a.sin_port);
	ft->accepting = true;
	pthread_create(&ft->accept_thread, NULL, accept_main, ft);
	return ft;
}

uint16_t ft_port(const struct fake_target *ft)
{
	return ft->port;
}

struct fake_target *ft_serve_fd(const struct ft_config *cfg, int fd)
{
	struct fake_target *ft = ft_new(cfg);

	add_conn(ft, fd);
	return ft;
}

void ft_join(struct fake_target *ft)
{
	for (unsigned int i = 0; i < ft->nconns; i++) {
		if (ft->conns[i]->thread) {
			pthread_join(ft->conns[i]->thread, NULL);
			ft->conns[i]->thread = 0;
		}
	}
}

void ft_stop(struct fake_target *ft)
{
	if (ft->accepting) {
		if (write(ft->stop_pipe[1], "x", 1) != 1)
			perror("write");
		pthread_join(ft->accept_thread, NULL);
		ft->accepting = false;
	}
	ft_join(ft);
}

const struct ft_stats *ft_stats(const struct fake_target *ft)
{
	return &ft->st;
}

uint8_t *ft_disk(struct fake_target *ft)
{
	return ft->disk;
}

void ft_free(struct fake_target *ft)
{
	if (!ft)
		return;
	ft_stop(ft);
	for (unsigned int i = 0; i < ft->nconns; i++)
		free(ft->conns[i]);
	if (ft->lfd >= 0)
		close(ft->lfd);
	if (ft->port) {
		close(ft->stop_pipe[0]);
		close(ft->stop_pipe[1]);
	}
	free(ft->disk);
	pthread_mutex_destroy(&ft->lock);
	free(ft);
}

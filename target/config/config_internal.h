/* SPDX-License-Identifier: MIT */
/*
 * Inside the configuration loader (config_*.c): the parse context, limits on what a file
 * may hold, and the helpers every section parser uses. Messages name the key path of the
 * offending value ("subsystems[0].namespaces[1].device.path"); every helper returns 0 or
 * -errno (the getters 1 when the key is present) after writing the message.
 */
#ifndef NVMEOF_TARGET_CONFIG_INTERNAL_H
#define NVMEOF_TARGET_CONFIG_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config_file.h"

#define CONFIG_FILE_MAX       (16u << 20)
#define CONFIG_MAX_PORTS      256
#define CONFIG_MAX_SUBSYS     1024
#define CONFIG_MAX_HOSTS      4096
#define CONFIG_MAX_REFERRALS  256
#define CONFIG_MAX_ANA_GROUPS 1024 /* nvmet's NVMET_MAX_ANAGRPS */
#define CONFIG_MAX_INLINE     (128u << 10)
#define KP_MAX                256

struct pctx {
	const char *name; /* file name for messages */
	const char *text; /* the document, for the line of a warning; NULL: none */
	char *err;
	size_t errlen;
	struct tgt_config *cfg;
};

enum { OPT = 0, REQ = 1 };

/* Key paths, messages and warnings, typed getters (config_json.c) */
int cfg_check_keys(struct pctx *c, json_object *obj, const char *kp, const char *const *known);
int cfg_get_bool(struct pctx *c, json_object *obj, const char *kp, const char *key, bool *out);
int cfg_get_int(struct pctx *c, json_object *obj, const char *kp, const char *key, int64_t min,
		int64_t max, int64_t *out, int required);
int cfg_get_str(struct pctx *c, json_object *obj, const char *kp, const char *key, char *buf,
		size_t size, int required, bool int_ok);
int cfg_get_typed(struct pctx *c, json_object *obj, const char *kp, const char *key,
		  enum json_type type, int required, json_object **out);
/* The optional array @key of @obj: *@arr (NULL when absent), its length *@n (refused with
 * "N @what, at most @max" above @max) and *@out, a zeroed array of *@n elements of @size
 * (at least one). 0 or a negative errno, reported. */
int cfg_get_array(struct pctx *c, json_object *obj, const char *kp, const char *key,
		  const char *what, unsigned int max, size_t size, json_object **arr,
		  unsigned int *n, void **out);
/* An NQN list's element @v (at key path @item; @what: "subsystem", "host") into @out. */
int cfg_nqn_item(struct pctx *c, json_object *v, const char *item, const char *what,
		 char out[NVME_NQN_FIELD]);
void cfg_kp_index(char *out, const char *base, const char *key, unsigned int i);
void cfg_kp_join(char *out, const char *base, const char *key);
json_object *cfg_member(json_object *obj, const char *key);
bool cfg_parse_dec(const char *s, int64_t *out);
/* Write "file: key path: message" to the caller's error buffer; returns @rc. */
int cfg_err(struct pctx *c, int rc, const char *kp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Record a warning in cfg->warnings (logged once the load succeeds), "file:LINE: key path:
 * message" when the key is found in the text; 0 or -ENOMEM. */
int cfg_warn(struct pctx *c, const char *kp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Value checks: names, identifiers, paths, addresses (config_values.c) */
bool cfg_all_zero(const uint8_t *b, size_t n);
int cfg_check_ip(struct pctx *c, const char *kp, const char *adrfam, const char *addr);
int cfg_check_nqn(struct pctx *c, const char *kp, const char *nqn, const char *what);
int cfg_check_ns_path(struct pctx *c, const char *kp, const char *path, bool enabled);
bool cfg_parse_hex_id(const char *s, uint8_t *out, size_t n);
bool cfg_printable(const char *s);

/* Sections (config_ports.c, config_subsys.c) */
/* config_ana.c: ANA group states of @cfg on the running ports (@old: what runs now). */
int config_ana_check(struct nvmf_tgt *tgt, const struct tgt_config *old,
		     const struct tgt_config *cfg, char *err, size_t errlen);
void config_ana_apply(struct nvmf_tgt *tgt, const struct tgt_config *old,
		      const struct tgt_config *cfg);
int cfg_parse_port(struct pctx *c, json_object *obj, const char *kp, struct config_port *p);
int cfg_parse_subsys(struct pctx *c, json_object *obj, const char *kp, struct config_subsys *s);
/* The "iscsi" extension (config_iscsi.c), after "subsystems": its LUNs are checked
 * against them. */
int cfg_parse_iscsi(struct pctx *c, json_object *obj);
/* config_tls.c: a host's "psk" / "psk_file"; a port's "tsas"; the PSKs onto the target. */
int cfg_parse_host_psk(struct pctx *c, json_object *obj, const char *kp, const char *nqn);
int cfg_parse_tsas(struct pctx *c, const char *kp, const char *trtype, const char *s,
		   uint8_t *sectype);
int config_apply_psks(struct nvmf_tgt *tgt, const struct tgt_config *old,
		      const struct tgt_config *cfg, char *err, size_t errlen);
bool cfg_iscsi_name_ok(const char *name);
/* Reload: the parts of the section that cannot change live (portals, a running target's
 * LUNs and alias); 0, or -EBUSY with the key path in @err. NULL: no section. */
int cfg_iscsi_check_live(const char *old_json, const char *new_json, char *err, size_t errlen);
/* Does the section hold a CHAP secret inline (secret, mutual_secret)? */
bool cfg_iscsi_has_secrets(const char *json);
/* The section for saving: inline secrets left out unless @secrets (NULL on bad JSON). */
json_object *cfg_iscsi_save(const char *json, bool secrets);
/* The line (from 1) where @kp's key or element starts in @text; 0 when not found. */
unsigned int cfg_kp_line(const char *text, const char *kp);

#endif

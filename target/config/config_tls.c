/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP TLS in the configuration: a port's "tsas" ("tls1.3" beside "treq"), a host's
 * TLS PSK as "psk" (the interchange text nvme gen-tls-key writes) or "psk_file" (a file
 * of mode 0600 holding it, common/key_file.c); config_apply.c puts the PSKs on the
 * target. Messages name the file, the key path and what is wrong, never
 * the key.
 */
#include <config.h> /* autoconf: _GNU_SOURCE */

#include "config_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/key_file.h"
#include "common/tls_psk.h"
#include "core/nvmf.h" /* NVMF_TCP_SECTYPE_* */

int cfg_parse_tsas(struct pctx *c, const char *kp, const char *trtype, const char *s,
		   uint8_t *sectype)
{
	*sectype = NVMF_TCP_SECTYPE_NONE;
	if (!s[0] || !strcmp(s, "none") || !strcmp(s, "not specified"))
		return 0;
	if (!strcmp(s, "tls1.3")) {
		if (strcmp(trtype, "tcp"))
			return cfg_err(c, -EINVAL, kp, "\"tls1.3\" is for tcp ports, not %s",
				       trtype);
		*sectype = NVMF_TCP_SECTYPE_TLS13;
		return 0;
	}
	if (!strcmp(s, "tls1.2"))
		return cfg_err(c, -ENOTSUP, kp, "\"tls1.2\": NVMe/TCP TLS is TLS 1.3 only here");
	return cfg_err(c, -EINVAL, kp, "\"%s\": expected \"none\" or \"tls1.3\"", s);
}

/* @path as written, relative to the directory of the configuration file. */
static void resolve(const struct pctx *c, const char *path, char *out, size_t len)
{
	char dir[CONFIG_PATH_MAX];

	if (path[0] == '/' || c->cfg->path[0] != '/') {
		snprintf(out, len, "%s", path);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", c->cfg->path);
	snprintf(out, len, "%s/%s", dirname(dir), path);
}

int cfg_parse_host_psk(struct pctx *c, json_object *obj, const char *kp, const char *nqn)
{
	struct config_host_psk hp = { 0 }, *v;
	struct nvme_tls_key key = { 0 };
	char sub[KP_MAX], perr[200], full[CONFIG_PATH_MAX + 8];
	int rc, has_psk, has_file;

	has_psk = cfg_get_str(c, obj, kp, "psk", hp.psk, sizeof(hp.psk), OPT, false);
	if (has_psk < 0)
		goto fail;
	has_file =
		cfg_get_str(c, obj, kp, "psk_file", hp.psk_file, sizeof(hp.psk_file), OPT, false);
	if (has_file < 0) {
		has_psk = has_file;
		goto fail;
	}
	if (!has_psk && !has_file)
		return 0;
	if (has_psk && has_file) {
		cfg_kp_join(sub, kp, "psk_file");
		has_psk = cfg_err(c, -EINVAL, sub, "give \"psk\" or \"psk_file\", not both");
		goto fail;
	}
	if (has_file) {
		cfg_kp_join(sub, kp, "psk_file");
		resolve(c, hp.psk_file, full, sizeof(full));
		rc = nvme_key_file_read(full, hp.psk, sizeof(hp.psk), perr, sizeof(perr));
		if (rc < 0) {
			has_psk = cfg_err(c, rc, sub, "%s", perr);
			goto fail;
		}
	} else {
		cfg_kp_join(sub, kp, "psk");
	}
	rc = nvme_tls_key_parse(hp.psk, &key, perr, sizeof(perr));
	nvme_tls_key_clear(&key);
	if (rc) {
		has_psk = cfg_err(c, rc, sub,
				  "not a TLS PSK in interchange format "
				  "(NVMeTLSkey-1:HH:...:): %s",
				  perr);
		goto fail;
	}
	v = realloc(c->cfg->host_psks, (c->cfg->nhost_psks + 1) * sizeof(*v));
	if (!v) {
		has_psk = cfg_err(c, -ENOMEM, NULL, "out of memory");
		goto fail;
	}
	c->cfg->host_psks = v;
	snprintf(hp.nqn, sizeof(hp.nqn), "%s", nqn);
	v[c->cfg->nhost_psks++] = hp;
	explicit_bzero(&hp, sizeof(hp));
	return 0;
fail:
	explicit_bzero(&hp, sizeof(hp));
	return has_psk;
}

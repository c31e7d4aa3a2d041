/* SPDX-License-Identifier: MIT */
/*
 * Per-host DH-HMAC-CHAP settings: parsed once from the configuration's text forms (the
 * names Linux nvmet's configfs attributes take), then shared read-only by reference
 * between the target's host table and the queues authenticating with them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dhchap_crypto.h"
#include "auth_internal.h"
#include "common/dhchap_key.h"

struct dhchap_host_conf {
	unsigned int refs; /* atomic */
	struct nvme_dhchap_key key;
	struct nvme_dhchap_key ctrl_key; /* .secret NULL: none */
	uint8_t hash_id;                 /* 0: the first the host offers */
	int dhgid;                       /* -1: the first the host offers */
};

uint8_t dhchap_hash_from_name(const char *name)
{
	static const uint8_t ids[] = { NVME_AUTH_HASH_SHA256, NVME_AUTH_HASH_SHA384,
				       NVME_AUTH_HASH_SHA512 };
	char buf[32];

	for (size_t i = 0; name && i < sizeof(ids); i++) {
		snprintf(buf, sizeof(buf), "hmac(%s)", nvme_auth_hash_name(ids[i]));
		if (!strcmp(name, buf))
			return ids[i];
	}
	return 0;
}

int dhchap_dhgroup_from_name(const char *name)
{
	for (int id = NVME_AUTH_DHGROUP_NULL; name && id <= NVME_AUTH_DHGROUP_FFDHE8192; id++)
		if (!strcmp(name, nvme_auth_dhgroup_name((uint8_t)id)))
			return id;
	return -1;
}

const char *dhchap_failure_name(uint8_t explanation)
{
	static const char *const names[] = {
		[NVME_AUTH_FAIL_FAILED] = "authentication failed",
		[NVME_AUTH_FAIL_PROTOCOL_UNUSABLE] = "authentication protocol not usable",
		[NVME_AUTH_FAIL_CONCAT_MISMATCH] = "secure channel concatenation mismatch",
		[NVME_AUTH_FAIL_HASH_UNUSABLE] = "hash function not usable",
		[NVME_AUTH_FAIL_DHGROUP_UNUSABLE] = "DH group not usable",
		[NVME_AUTH_FAIL_INCORRECT_PAYLOAD] = "incorrect payload",
		[NVME_AUTH_FAIL_INCORRECT_MESSAGE] = "incorrect protocol message",
	};

	if (explanation < sizeof(names) / sizeof(names[0]) && names[explanation])
		return names[explanation];
	return "unknown reason";
}

static void conf_free(struct dhchap_host_conf *c)
{
	nvme_dhchap_key_clear(&c->key);
	nvme_dhchap_key_clear(&c->ctrl_key);
	free(c);
}

int dhchap_host_conf_create(const char *key, const char *ctrl_key, const char *hash,
			    const char *dhgroup, struct dhchap_host_conf **out, char *err,
			    size_t errlen)
{
	struct dhchap_host_conf *c;
	char why[160] = "";
	int rc;

	if (err && errlen)
		err[0] = '\0';
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	c->dhgid = -1;
	if (hash && hash[0] && !(c->hash_id = dhchap_hash_from_name(hash))) {
		snprintf(err, errlen,
			 "hash \"%.32s\": expected hmac(sha256), hmac(sha384) or hmac(sha512)",
			 hash);
		rc = -EINVAL;
		goto fail;
	}
	if (dhgroup && dhgroup[0] && (c->dhgid = dhchap_dhgroup_from_name(dhgroup)) < 0) {
		snprintf(err, errlen,
			 "dhgroup \"%.32s\": expected null, ffdhe2048, ffdhe3072, ffdhe4096, "
			 "ffdhe6144 or ffdhe8192",
			 dhgroup);
		rc = -EINVAL;
		goto fail;
	}
	if (!key || !key[0]) {
		snprintf(err, errlen, "key: missing (a controller key needs a host key)");
		rc = -EINVAL;
		goto fail;
	}
	rc = nvme_dhchap_key_parse(key, &c->key, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "key: %s", why);
		goto fail;
	}
	if (ctrl_key && ctrl_key[0]) {
		rc = nvme_dhchap_key_parse(ctrl_key, &c->ctrl_key, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "ctrl_key: %s", why);
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	conf_free(c);
	return rc;
}

void dhchap_host_conf_get(struct dhchap_host_conf *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

void dhchap_host_conf_put(struct dhchap_host_conf *c)
{
	if (c && !__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		conf_free(c);
}

static bool key_equal(const struct nvme_dhchap_key *a, const struct nvme_dhchap_key *b)
{
	if (!a->secret || !b->secret)
		return !a->secret && !b->secret;
	return a->hash == b->hash && nvme_secret_equal(a->secret, b->secret);
}

bool dhchap_host_conf_equal(const struct dhchap_host_conf *a, const struct dhchap_host_conf *b)
{
	if (!a || !b)
		return a == b;
	return a->hash_id == b->hash_id && a->dhgid == b->dhgid && key_equal(&a->key, &b->key) &&
	       key_equal(&a->ctrl_key, &b->ctrl_key);
}

bool dhchap_host_conf_has_ctrl_key(const struct dhchap_host_conf *c)
{
	return c && c->ctrl_key.secret;
}

/* For dhchap_ctrl.c. */
const struct nvme_dhchap_key *dhchap_conf_key(const struct dhchap_host_conf *c, bool ctrl)
{
	return ctrl ? &c->ctrl_key : &c->key;
}

uint8_t dhchap_conf_hash(const struct dhchap_host_conf *c)
{
	return c->hash_id;
}

int dhchap_conf_dhgroup(const struct dhchap_host_conf *c)
{
	return c->dhgid;
}

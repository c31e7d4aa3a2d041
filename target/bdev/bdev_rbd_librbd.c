/* SPDX-License-Identifier: MIT */
/*
 * The RBD backend's library table (bdev_rbd_internal.h) on librbd/librados.
 *
 * The cluster is found as the Ceph tools find it: the client id from the spec's id=, else
 * from CEPH_ARGS (--id, --user, -n/--name client.ID), which librados fixes when the handle
 * is created, so CEPH_ARGS is read before rados_create(); the configuration from conf=,
 * else CEPH_CONF, else /etc/ceph/ceph.conf; then the rest of CEPH_ARGS; then keyring=.
 * rbd_cache is set to false on the handle, and an image or pool setting that turns the
 * cache back on (conf_rbd_cache metadata, which librbd lets override the handle) is
 * refused: a write librbd completed is on the OSDs, not in this process.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "bdev_rbd_internal.h"

struct lib_image {
	rados_ioctx_t ioctx;
	rbd_image_t img;
};

/* The client id in CEPH_ARGS, as ceph_argparse reads it; NULL if none (malloc'd). */
static char *id_from_ceph_args(void)
{
	const char *env = getenv("CEPH_ARGS");
	char *copy, *tok, *save = NULL, *id = NULL;
	int want = 0; /* 1: the next token is an id, 2: a name */

	if (!env || !(copy = strdup(env)))
		return NULL;
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		const char *v = NULL;

		if (want) {
			v = tok;
		} else if (!strcmp(tok, "--id") || !strcmp(tok, "--user") || !strcmp(tok, "-i")) {
			want = 1;
			continue;
		} else if (!strcmp(tok, "-n") || !strcmp(tok, "--name")) {
			want = 2;
			continue;
		} else if (!strncmp(tok, "--id=", 5) || !strncmp(tok, "--user=", 7)) {
			v = strchr(tok, '=') + 1;
		} else if (!strncmp(tok, "--name=", 7)) {
			v = tok + 7;
			want = 2;
		}
		if (v && want == 2)
			v = strncmp(v, "client.", 7) ? NULL : v + 7;
		if (v) {
			free(id);
			id = strdup(v);
		}
		want = 0;
	}
	free(copy);
	return id;
}

int bdev_rbd_lib_connect(const struct rbd_spec *spec, const char *const *opts, void **out,
			 char *err, size_t errlen)
{
	char *id = spec->id[0] ? strdup(spec->id) : id_from_ceph_args();
	char who[160];
	rados_t c;
	int r;

	snprintf(who, sizeof(who), "client.%s", id ? id : "admin");
	r = rados_create(&c, id);
	free(id);
	if (r < 0) {
		snprintf(err, errlen, "rados_create(%s): %s", who, strerror(-r));
		return r;
	}
	r = rados_conf_read_file(c, spec->conf[0] ? spec->conf : NULL);
	if (r < 0) {
		if (spec->conf[0])
			snprintf(err, errlen, "cannot read conf=%s: %s", spec->conf, strerror(-r));
		else
			snprintf(err, errlen,
				 "no Ceph configuration (CEPH_CONF, "
				 "/etc/ceph/ceph.conf): %s",
				 strerror(-r));
		goto fail;
	}
	r = rados_conf_parse_env(c, NULL);
	if (r < 0) {
		snprintf(err, errlen, "CEPH_ARGS: %s", strerror(-r));
		goto fail;
	}
	if (spec->keyring[0] && (r = rados_conf_set(c, "keyring", spec->keyring)) < 0) {
		snprintf(err, errlen, "keyring=%s: %s", spec->keyring, strerror(-r));
		goto fail;
	}
	if ((r = rados_conf_set(c, "rbd_cache", "false")) < 0 ||
	    (r = rados_conf_set(c, "client_mount_timeout", "30")) < 0) {
		snprintf(err, errlen, "rados_conf_set: %s", strerror(-r));
		goto fail;
	}
	for (; opts && opts[0]; opts += 2)
		if ((r = rados_conf_set(c, opts[0], opts[1])) < 0) {
			snprintf(err, errlen, "rados_conf_set %s: %s", opts[0], strerror(-r));
			goto fail;
		}
	r = rados_connect(c);
	if (r < 0) {
		snprintf(err, errlen, "cannot connect to the cluster as %s: %s", who, strerror(-r));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	rados_shutdown(c);
	return r;
}

static int lib_connect(const struct rbd_spec *spec, void **out, char *err, size_t errlen)
{
	return bdev_rbd_lib_connect(spec, NULL, out, err, errlen);
}

static void lib_shutdown(void *cluster)
{
	rados_shutdown(cluster);
}

/* An rbd_cache override in image or pool metadata: 1 if it enables the cache. */
static int cache_forced(const char *val)
{
	return strcmp(val, "false") && strcmp(val, "0");
}

static int lib_open(void *cluster, const struct rbd_spec *spec, void **out, char *err,
		    size_t errlen)
{
	struct lib_image *im = calloc(1, sizeof(*im));
	char val[64];
	size_t vlen;
	int r;

	if (!im)
		return -ENOMEM;
	r = rados_ioctx_create(cluster, spec->pool, &im->ioctx);
	if (r < 0) {
		snprintf(err, errlen, "pool %s: %s", spec->pool, strerror(-r));
		free(im);
		return r;
	}
	rados_ioctx_set_namespace(im->ioctx, spec->nspace[0] ? spec->nspace : NULL);
	r = rbd_open(im->ioctx, spec->image, &im->img, NULL);
	if (r < 0) {
		snprintf(err, errlen, "image %s in pool %s%s%s: %s", spec->image, spec->pool,
			 spec->nspace[0] ? "/" : "", spec->nspace, strerror(-r));
		rados_ioctx_destroy(im->ioctx);
		free(im);
		return r;
	}
	vlen = sizeof(val);
	if (rbd_metadata_get(im->img, "conf_rbd_cache", val, &vlen) == 0 && cache_forced(val)) {
		snprintf(err, errlen,
			 "the image's rbd_cache=%s setting would put librbd's "
			 "writeback cache in front of it (rbd config image remove %s/%s "
			 "rbd_cache)",
			 val, spec->pool, spec->image);
		r = -EINVAL;
	}
	vlen = sizeof(val);
	if (!r && rbd_pool_metadata_get(im->ioctx, "conf_rbd_cache", val, &vlen) == 0 &&
	    cache_forced(val)) {
		snprintf(err, errlen,
			 "pool %s's rbd_cache=%s setting would put librbd's "
			 "writeback cache in front of the image (rbd config pool remove %s "
			 "rbd_cache)",
			 spec->pool, val, spec->pool);
		r = -EINVAL;
	}
	if (r) {
		rbd_close(im->img);
		rados_ioctx_destroy(im->ioctx);
		free(im);
		return r;
	}
	*out = im;
	return 0;
}

static void lib_close(void *image)
{
	struct lib_image *im = image;

	rbd_close(im->img);
	rados_ioctx_destroy(im->ioctx);
	free(im);
}

static int lib_get_size(void *image, uint64_t *size)
{
	return rbd_get_size(((struct lib_image *)image)->img, size);
}

static int lib_get_id(void *image, char *buf, size_t len)
{
	return rbd_get_id(((struct lib_image *)image)->img, buf, len);
}

static int64_t lib_pool_id(void *image)
{
	return rados_ioctx_get_id(((struct lib_image *)image)->ioctx);
}

static int lib_fsid(void *cluster, char *buf, size_t len)
{
	int r = rados_cluster_fsid(cluster, buf, len);

	return r < 0 ? r : 0;
}

static int lib_layout(void *image, uint64_t *obj_size, uint64_t *stripe_count)
{
	struct lib_image *im = image;
	rbd_image_info_t info;
	int r = rbd_stat(im->img, &info, sizeof(info));

	if (r < 0)
		return r;
	*obj_size = info.obj_size;
	r = rbd_get_stripe_count(im->img, stripe_count);
	if (r < 0)
		*stripe_count = 1; /* format 1 images have no striping */
	return 0;
}

/* Runs on a librbd thread. */
static void lib_complete(rbd_completion_t c, void *arg)
{
	ssize_t r = rbd_aio_get_return_value(c);

	rbd_aio_release(c);
	bdev_rbd_aio_done(arg, (int64_t)r);
}

static int new_completion(void *arg, rbd_completion_t *c)
{
	return rbd_aio_create_completion(arg, lib_complete, c);
}

/* Release @c when the call refused the request (it will not complete). */
static int submitted(rbd_completion_t c, ssize_t r)
{
	if (r < 0) {
		rbd_aio_release(c);
		return (int)r;
	}
	return 0;
}

static int lib_aio_readv(void *image, const struct iovec *iov, int iovcnt, uint64_t off, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r
		     : submitted(c, rbd_aio_readv(((struct lib_image *)image)->img, iov, iovcnt,
						  off, c));
}

static int lib_aio_writev(void *image, const struct iovec *iov, int iovcnt, uint64_t off, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r
		     : submitted(c, rbd_aio_writev(((struct lib_image *)image)->img, iov, iovcnt,
						   off, c));
}

static int lib_aio_flush(void *image, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r : submitted(c, rbd_aio_flush(((struct lib_image *)image)->img, c));
}

static int lib_aio_discard(void *image, uint64_t off, uint64_t len, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r
		     : submitted(c, rbd_aio_discard(((struct lib_image *)image)->img, off, len, c));
}

static int lib_aio_write_zeroes(void *image, uint64_t off, uint64_t len, bool thick, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r
		     : submitted(c, rbd_aio_write_zeroes(
					    ((struct lib_image *)image)->img, off, len, c,
					    thick ? RBD_WRITE_ZEROES_FLAG_THICK_PROVISION : 0, 0));
}

static int lib_aio_compare_and_write(void *image, uint64_t off, size_t len, const void *cmp,
				     const void *buf, uint64_t *mismatch_off, void *arg)
{
	rbd_completion_t c;
	int r = new_completion(arg, &c);

	return r < 0 ? r
		     : submitted(c, rbd_aio_compare_and_write(((struct lib_image *)image)->img, off,
							      len, cmp, buf, c, mismatch_off, 0));
}

static int lib_watch(void *image, void (*cb)(void *), void *cb_arg, uint64_t *handle)
{
	return rbd_update_watch(((struct lib_image *)image)->img, handle, cb, cb_arg);
}

static int lib_unwatch(void *image, uint64_t handle)
{
	return rbd_update_unwatch(((struct lib_image *)image)->img, handle);
}

static const struct rbd_api librbd_api = {
	.connect = lib_connect,
	.shutdown = lib_shutdown,
	.open = lib_open,
	.close = lib_close,
	.get_size = lib_get_size,
	.get_id = lib_get_id,
	.pool_id = lib_pool_id,
	.fsid = lib_fsid,
	.layout = lib_layout,
	.aio_readv = lib_aio_readv,
	.aio_writev = lib_aio_writev,
	.aio_flush = lib_aio_flush,
	.aio_discard = lib_aio_discard,
	.aio_write_zeroes = lib_aio_write_zeroes,
	.aio_compare_and_write = lib_aio_compare_and_write,
	.watch = lib_watch,
	.unwatch = lib_unwatch,
};

const struct rbd_api *const bdev_rbd_librbd_api = &librbd_api;

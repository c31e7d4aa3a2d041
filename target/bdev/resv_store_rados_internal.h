/* SPDX-License-Identifier: MIT */
/*
 * The reservation store of RBD namespaces (resv_store_rados.c) and its seam to librados:
 * the small table of calls it makes, so that the store can be tested against a fake.
 * resv_store_rados_lib.c implements the table with librados (built when configure finds
 * librbd/librados).
 *
 * The state of one image lives in the RADOS object "nvmeof_resv.IMAGE_ID" in the image's
 * pool (and RADOS namespace), beside the image's own rbd_header/rbd_data objects, so
 * every gateway exporting the image reads and writes the same object.
 */
#ifndef NVMEOF_TARGET_RESV_STORE_RADOS_INTERNAL_H
#define NVMEOF_TARGET_RESV_STORE_RADOS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bdev_rbd_internal.h"
#include "core/resv_store.h"

#define RESV_OBJ_PREFIX "nvmeof_resv."
#define RESV_OBJ_MAX    4096 /* bytes: the encoded state is at most 40 + 24 * 128 */

/*
 * Completion of an aio_* call: @rc is the byte count (read) or 0, or -errno; @ver the
 * object's version after the operation (0 when unknown). Runs on a library thread, or on
 * the calling thread before the call returns.
 */
typedef void (*resv_rados_cb)(void *arg, int rc, uint64_t ver);

/*
 * Handles are opaque. connect ... unwatch may block: the store calls them only when it is
 * opened or closed and on its own thread, never on a reactor. aio_* return 0 and call
 * @cb exactly once later, or return -errno and never call it. notify_ack never blocks.
 */
struct resv_rados_api {
	/* A cluster handle of its own whose operations give up after @op_timeout_s
	 * (rados_osd_op_timeout), found as the rbd namespace's. */
	int (*connect)(const struct rbd_spec *spec, unsigned int op_timeout_s, void **cluster,
		       char *err, size_t errlen);
	void (*shutdown)(void *cluster);
	int (*ioctx)(void *cluster, const char *pool, const char *nspace, void **io);
	void (*ioctx_destroy)(void *io);
	/* Create @oid empty unless it exists (0 either way). */
	int (*create)(void *io, const char *oid);
	/* Read the whole of @oid (at most @cap bytes): the length, or -errno; *@ver. */
	int (*read)(void *io, const char *oid, void *buf, size_t cap, uint64_t *ver);
	int (*aio_read)(void *io, const char *oid, void *buf, size_t cap, resv_rados_cb cb,
			void *arg);
	/* Replace @oid's data with @buf if the object's version is still @ver; otherwise
	 * fail with -ERANGE (newer) or -EOVERFLOW (older), writing nothing. */
	int (*aio_write)(void *io, const char *oid, const void *buf, size_t len, uint64_t ver,
			 resv_rados_cb cb, void *arg);
	/* Notify the watchers of @oid; completes when all acknowledged or after
	 * @timeout_ms (-ETIMEDOUT). */
	int (*aio_notify)(void *io, const char *oid, unsigned int timeout_ms, resv_rados_cb cb,
			  void *arg);
	/* rados_watch2: @notify(@arg, notify_id, cookie) for each notification, @error(@arg,
	 * -errno) when the watch is lost; both on library threads. */
	int (*watch)(void *io, const char *oid,
		     void (*notify)(void *arg, uint64_t notify_id, uint64_t cookie),
		     void (*error)(void *arg, uint64_t cookie, int err), void *arg,
		     uint64_t *cookie);
	/* Milliseconds since the watch was last confirmed, or -errno when it is lost. */
	int (*watch_check)(void *io, uint64_t cookie);
	int (*unwatch)(void *io, uint64_t cookie);
	void (*notify_ack)(void *io, const char *oid, uint64_t notify_id, uint64_t cookie);
};

/* librados's table, or NULL when built without it. */
extern const struct resv_rados_api *const resv_rados_lib_api;

/* Tests: the table used by stores opened from now on (NULL: librados's again), and the
 * seconds between the store thread's checks of its watch (default 5). */
void resv_store_rados_set_api(const struct resv_rados_api *api);
void resv_store_rados_set_check_interval(unsigned int seconds);

/*
 * Open the store of image @image_id served through @spec: connect, create the object if
 * it is missing, watch it and read it (blocking: namespace creation). @label names the
 * namespace in logs. 0 or -errno with a message in @err.
 */
int resv_store_rados_open(const struct rbd_spec *spec, const char *image_id, const char *label,
			  struct nvmf_resv_store **out, char *err, size_t errlen);

/* The object's encoding (exposed for the tests): the byte count written to @buf
 * (RESV_OBJ_MAX), and 0, -ENOENT (empty object) or -EINVAL (not a valid state). */
size_t resv_rados_encode(const struct nvmf_resv_image *img, uint8_t *buf);
int resv_rados_decode(const uint8_t *buf, size_t len, struct nvmf_resv_image *img);

#endif

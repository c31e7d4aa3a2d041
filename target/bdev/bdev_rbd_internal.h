/* SPDX-License-Identifier: MIT */
/*
 * The RBD backend's seam to librbd: the namespace spec parser and the small table of
 * library calls bdev_rbd.c makes, so the request mapping can be tested against a fake.
 * bdev_rbd_librbd.c implements the table with librbd/librados (built when configure finds
 * them); without it "rbd:" namespaces fail to open with a message saying so.
 */
#ifndef NVMEOF_TARGET_BDEV_RBD_INTERNAL_H
#define NVMEOF_TARGET_BDEV_RBD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define RBD_CAW_SECTOR 512u /* librbd's compare-and-write takes one such sector */

/* "POOL[/NAMESPACE]/IMAGE[:id=NAME][:conf=PATH][:keyring=PATH]" (after "rbd:"). */
struct rbd_spec {
	char pool[128];
	char nspace[128]; /* RADOS namespace, "" for the default one */
	char image[256];
	char id[128];       /* cephx user without "client."; "" = CEPH_ARGS, else admin */
	char conf[1024];    /* "" = CEPH_CONF, else /etc/ceph/ceph.conf */
	char keyring[1024]; /* "" = whatever the configuration names */
};

/* Parse @arg (qemu's form; '\' escapes ':', '/', '@' and '\'). 0 or -EINVAL with a
 * message naming the bad part in @err. */
int bdev_rbd_parse_spec(const char *arg, struct rbd_spec *out, char *err, size_t errlen);

/*
 * The library calls. Handles are opaque. Blocking calls (connect ... unwatch) run only at
 * namespace creation/removal and on the backend's own watcher thread, never on a reactor.
 * Each aio_* call returns 0 and later calls bdev_rbd_aio_done(@arg, result) exactly once,
 * from any thread (possibly before the call returns), or returns -errno and never calls
 * it. result: the byte count for a read, 0 for the others, or -errno; a compare-and-write
 * that found a difference gives -EILSEQ with *@mismatch_off set to the image offset of the
 * first differing byte before the call.
 */
struct rbd_api {
	int (*connect)(const struct rbd_spec *spec, void **cluster, char *err, size_t errlen);
	void (*shutdown)(void *cluster);
	int (*open)(void *cluster, const struct rbd_spec *spec, void **image, char *err,
		    size_t errlen);
	void (*close)(void *image);
	int (*get_size)(void *image, uint64_t *size);
	/* The image's id (rbd_get_id), its pool's id and the cluster's fsid. */
	int (*get_id)(void *image, char *buf, size_t len);
	int64_t (*pool_id)(void *image);
	int (*fsid)(void *cluster, char *buf, size_t len);
	/* Object size and stripe count: the unit a discard can deallocate. */
	int (*layout)(void *image, uint64_t *obj_size, uint64_t *stripe_count);
	int (*aio_readv)(void *image, const struct iovec *iov, int iovcnt, uint64_t off, void *arg);
	int (*aio_writev)(void *image, const struct iovec *iov, int iovcnt, uint64_t off,
			  void *arg);
	int (*aio_flush)(void *image, void *arg);
	int (*aio_discard)(void *image, uint64_t off, uint64_t len, void *arg);
	/* @thick: keep the range allocated (RBD_WRITE_ZEROES_FLAG_THICK_PROVISION). */
	int (*aio_write_zeroes)(void *image, uint64_t off, uint64_t len, bool thick, void *arg);
	int (*aio_compare_and_write)(void *image, uint64_t off, size_t len, const void *cmp,
				     const void *buf, uint64_t *mismatch_off, void *arg);
	/* rbd_update_watch: @cb(@cb_arg) runs on a library thread when the header changes. */
	int (*watch)(void *image, void (*cb)(void *cb_arg), void *cb_arg, uint64_t *handle);
	int (*unwatch)(void *image, uint64_t handle);
};

/* Completion entry point for the table's aio_* calls (see above). */
void bdev_rbd_aio_done(void *arg, int64_t result);

/* With librbd: connect as the table's connect() does, with the librados options @opts
 * (name, value, ..., NULL) set before connecting. */
int bdev_rbd_lib_connect(const struct rbd_spec *spec, const char *const *opts, void **cluster,
			 char *err, size_t errlen);

/* librbd's table, or NULL when built without it. */
extern const struct rbd_api *const bdev_rbd_librbd_api;

/* Tests: the table used by namespaces opened from now on (NULL: librbd's again). */
void bdev_rbd_set_api(const struct rbd_api *api);

/* Tests: seconds between size polls (besides the update watch); default 5. */
void bdev_rbd_set_poll_interval(unsigned int seconds);

/* CAW bounce slots per reactor; requests beyond them wait (FIFO). */
#define RBD_CAW_SLOTS 64

#endif

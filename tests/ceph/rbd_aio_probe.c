/*
 * rbd_aio_probe - librbd's asynchronous C API as the RBD backend will use it.
 *
 *   rbd_aio_probe [-c CONF] [--id ID] [-n BLOCKS] check POOL/IMAGE
 *       connect, open, get_size/get_id, an eventfd set with rbd_set_image_notification,
 *       BLOCKS (default 16384) 4 KiB random writes then reads at QD32 completed through the
 *       eventfd and verified, compare_and_write (match, mismatch), write_zeroes, discard,
 *       flush. One line per check: "ok NAME: detail" or "not ok NAME: why".
 *   rbd_aio_probe hold POOL/IMAGE
 *       take the image's exclusive lock with one write, print "holding", sleep (at most
 *       120 s): the process to SIGKILL when measuring a lock takeover.
 *   rbd_aio_probe write1 POOL/IMAGE
 *       open and write one 4 KiB block, printing how long each took.
 *
 * The client id and configuration are found as the Ceph tools find them: --id or
 * CEPH_ARGS (--id, --user, -n/--name client.ID) give the id, which librados fixes when
 * the handle is created, so CEPH_ARGS is parsed before rados_create; then -c or
 * CEPH_CONF, then the rest of CEPH_ARGS (rados_conf_parse_env).
 * Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#define BS            4096
#define QD            32
#define MiB           (1024 * 1024ULL)
#define OP_TIMEOUT_MS 30000

static rados_t cluster;
static rados_ioctx_t ioctx;
static rbd_image_t image;
static int efd = -1;
static int failures;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void ok(const char *name, const char *detail)
{
	printf("ok %s: %s\n", name, detail);
	fflush(stdout);
}

static void not_ok(const char *name, const char *why, long r)
{
	printf("not ok %s: %s (%ld: %s)\n", name, why, r, r < 0 ? strerror((int)-r) : "-");
	fflush(stdout);
	failures++;
}

/* The client id from CEPH_ARGS, as ceph_argparse reads it: --id ID, --id=ID, --user ID,
 * -n client.ID, --name client.ID. */
static char *id_from_ceph_args(void)
{
	const char *env = getenv("CEPH_ARGS");
	char *copy, *tok, *save = NULL, *id = NULL;
	int want = 0; /* 1: next token is an id, 2: next token is a name */

	if (env == NULL)
		return NULL;
	copy = strdup(env);
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
		if (v != NULL) {
			if (want == 2 && strncmp(v, "client.", 7) == 0)
				v += 7;
			else if (want == 2)
				v = NULL; /* not a client name */
			if (v != NULL) {
				free(id);
				id = strdup(v);
			}
		}
		want = 0;
	}
	free(copy);
	return id;
}

static int connect_cluster(const char *conf, const char *id_arg)
{
	char *id = id_arg ? strdup(id_arg) : id_from_ceph_args();
	char detail[256];
	int r;

	r = rados_create(&cluster, id); /* NULL: client.admin */
	if (r < 0) {
		not_ok("connect", "rados_create", r);
		free(id);
		return r;
	}
	r = rados_conf_read_file(cluster, conf); /* NULL: CEPH_CONF, then the usual places */
	if (r == 0)
		r = rados_conf_parse_env(cluster, NULL);
	if (r == 0)
		r = rados_conf_set(cluster, "client_mount_timeout", "30");
	if (r == 0)
		r = rados_conf_set(cluster, "rados_osd_op_timeout", "60");
	if (r == 0)
		r = rados_connect(cluster);
	snprintf(detail, sizeof(detail), "client.%s", id ? id : "admin");
	free(id);
	if (r < 0) {
		not_ok("connect", detail, r);
		return r;
	}
	ok("connect", detail);
	return 0;
}

static int open_image(const char *spec)
{
	char pool[128], *name;
	int r;

	snprintf(pool, sizeof(pool), "%s", spec);
	name = strchr(pool, '/');
	if (name == NULL) {
		fprintf(stderr, "rbd_aio_probe: %s: expected POOL/IMAGE\n", spec);
		return -EINVAL;
	}
	*name++ = '\0';
	r = rados_ioctx_create(cluster, pool, &ioctx);
	if (r == 0)
		r = rbd_open(ioctx, name, &image, NULL);
	if (r < 0)
		not_ok("open", spec, r);
	return r;
}

/* --- completions through the eventfd ------------------------------------------------- */

/* wait_eventfd(ms): true when the eventfd was signalled within ms (and reset it) */
static int wait_eventfd(int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return read(efd, &v, sizeof(v)) == sizeof(v);
}

/* drain(handle): every completion the image has queued for the eventfd, passed to handle
 * with its return value; returns how many */
static int drain(void (*handle)(void *arg, ssize_t r))
{
	rbd_completion_t comps[QD];
	int n, i, total = 0;

	while ((n = rbd_poll_io_events(image, comps, QD)) > 0) {
		for (i = 0; i < n; i++) {
			ssize_t r;

			/* queued for the eventfd just before it is marked complete */
			rbd_aio_wait_for_complete(comps[i]);
			r = rbd_aio_get_return_value(comps[i]);
			if (handle)
				handle(rbd_aio_get_arg(comps[i]), r);
			rbd_aio_release(comps[i]);
		}
		total += n;
	}
	return total;
}

/* --- QD32 random 4 KiB writes and reads --------------------------------------------- */

struct slot {
	char *buf;
	uint64_t block;
	int busy;
};

static struct slot slots[QD];
static int qd_errors, qd_done, verify_errors;
static int reading;

static void fill(char *buf, uint64_t block, unsigned seed)
{
	uint64_t *w = (uint64_t *)buf;
	size_t i;

	for (i = 0; i < BS / 8; i++)
		w[i] = (block << 32) ^ (i * 0x9E3779B97F4A7C15ULL) ^ seed;
}

static void qd_handle(void *arg, ssize_t r)
{
	struct slot *s = arg;
	char expect[BS];

	if (r < 0 || (reading && r != BS)) {
		if (qd_errors++ == 0)
			fprintf(stderr, "block %llu: %s returned %zd\n",
				(unsigned long long)s->block, reading ? "read" : "write", r);
	} else if (reading) {
		fill(expect, s->block, 1);
		if (memcmp(expect, s->buf, BS) != 0)
			verify_errors++;
	}
	s->busy = 0;
	qd_done++;
}

/* run_qd(order, n, read): n 4 KiB I/Os at QD32 in the given block order; returns IOPS */
static double run_qd(const uint64_t *order, int n, int read_pass)
{
	int next = 0, i, r;
	double t0 = now(), deadline = t0 + 120;

	reading = read_pass;
	qd_done = 0;
	while (qd_done < n && now() < deadline) {
		for (i = 0; i < QD && next < n; i++) {
			rbd_completion_t c;

			if (slots[i].busy)
				continue;
			slots[i].block = order[next++];
			slots[i].busy = 1;
			rbd_aio_create_completion(&slots[i], NULL,
						  &c); /* no callback: eventfd only */
			if (read_pass) {
				r = rbd_aio_read(image, slots[i].block * BS, BS, slots[i].buf, c);
			} else {
				fill(slots[i].buf, slots[i].block, 1);
				r = rbd_aio_write(image, slots[i].block * BS, BS, slots[i].buf, c);
			}
			if (r < 0) {
				rbd_aio_release(c);
				slots[i].busy = 0;
				qd_errors++;
				qd_done++;
			}
		}
		if (wait_eventfd(OP_TIMEOUT_MS))
			drain(qd_handle);
		else
			break; /* nothing completed in 30 s */
	}
	if (qd_done < n)
		return -1;
	return n / (now() - t0);
}

static void check_qd32(uint64_t blocks)
{
	uint64_t *order = calloc(blocks, sizeof(*order)), i;
	char detail[160];
	double iops;
	int k;

	for (k = 0; k < QD; k++)
		slots[k].buf = aligned_alloc(BS, BS);
	for (i = 0; i < blocks; i++)
		order[i] = i;
	srandom(42);
	for (i = blocks - 1; i > 0; i--) { /* each block once, in random order */
		uint64_t j = random() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	/* first into unallocated objects, then over the same blocks */
	for (k = 0; k < 2; k++) {
		const char *name = k ? "aio_write overwrite" : "aio_write new objects";

		iops = run_qd(order, (int)blocks, 0);
		snprintf(detail, sizeof(detail), "%llu x 4K random at QD32: %.0f IOPS (eventfd)",
			 (unsigned long long)blocks, iops);
		if (iops > 0 && qd_errors == 0)
			ok(name, detail);
		else
			not_ok(name, iops < 0 ? "stalled: no completion in 30 s" : "errors", -EIO);
	}

	qd_errors = 0;
	iops = run_qd(order, (int)blocks, 1);
	snprintf(detail, sizeof(detail),
		 "%llu x 4K random at QD32: %.0f IOPS (eventfd), data verified",
		 (unsigned long long)blocks, iops);
	if (iops > 0 && qd_errors == 0 && verify_errors == 0)
		ok("aio_read", detail);
	else if (verify_errors)
		not_ok("aio_read", "blocks read back differ from what was written", verify_errors);
	else
		not_ok("aio_read", iops < 0 ? "stalled: no completion in 30 s" : "errors", -EIO);
	free(order);
	for (k = 0; k < QD; k++)
		free(slots[k].buf);
}

/* --- one operation at a time: which completion paths fire ---------------------------- */

static atomic_int cb_fired;
static int strays; /* completions from the eventfd that were not the one awaited */

static void on_complete(rbd_completion_t c, void *arg)
{
	atomic_store(&cb_fired, 1);
}

enum op { OP_WRITE, OP_READ, OP_CAW, OP_ZEROES, OP_DISCARD, OP_FLUSH };

/* one_op: issue an operation, with or without a completion callback, and wait for it
 * on the eventfd; *path says whether the eventfd delivered it, the callback fired, or
 * only rbd_aio_is_complete saw it done. */
static ssize_t one_op(enum op op, uint64_t off, size_t len, char *buf, const char *cmp,
		      uint64_t *mismatch, int use_cb, const char **path)
{
	rbd_completion_t c, polled[QD];
	ssize_t r;
	double deadline, done_at = 0;
	int n, via_efd = 0, i;

	atomic_store(&cb_fired, 0);
	rbd_aio_create_completion(NULL, use_cb ? on_complete : NULL, &c);
	switch (op) {
	case OP_WRITE:
		r = rbd_aio_write(image, off, len, buf, c);
		break;
	case OP_READ:
		r = rbd_aio_read(image, off, len, buf, c);
		break;
	case OP_CAW:
		r = rbd_aio_compare_and_write(image, off, len, cmp, buf, c, mismatch, 0);
		break;
	case OP_ZEROES:
		r = rbd_aio_write_zeroes(image, off, len, c, 0, 0);
		break;
	case OP_DISCARD:
		r = rbd_aio_discard(image, off, len, c);
		break;
	default:
		r = rbd_aio_flush(image, c);
		break;
	}
	if (r < 0) {
		rbd_aio_release(c);
		*path = "refused at submission";
		return r;
	}
	deadline = now() + OP_TIMEOUT_MS / 1000.0;
	while (!via_efd && now() < deadline) {
		wait_eventfd(10);
		while ((n = rbd_poll_io_events(image, polled, QD)) > 0)
			for (i = 0; i < n; i++) {
				via_efd |= polled[i] == c;
				strays += polled[i] != c;
			}
		if (!done_at && (use_cb ? atomic_load(&cb_fired) : rbd_aio_is_complete(c)))
			done_at = now();
		if (done_at && now() > done_at + 1)
			break; /* done for 1 s and still not queued for the eventfd */
	}
	if (!via_efd && !done_at) {
		*path = "no completion in 30 s";
		return -ETIMEDOUT; /* c is leaked on purpose: librbd may still complete it */
	}
	rbd_aio_wait_for_complete(c);
	r = rbd_aio_get_return_value(c);
	if (use_cb)
		*path = !atomic_load(&cb_fired) ? "eventfd, callback NOT called"
			: via_efd               ? "callback and eventfd"
						: "callback only, not the eventfd";
	else
		*path = via_efd ? "eventfd"
				: "NOT through the eventfd, seen by rbd_aio_is_complete";
	rbd_aio_release(c);
	return r;
}

static void check_op(const char *name, ssize_t r, ssize_t want, const char *path, int ok_cond)
{
	char detail[200];

	snprintf(detail, sizeof(detail), "returned %zd (%s)", r, path);
	if (r == want && ok_cond)
		ok(name, detail);
	else
		not_ok(name, detail, r);
}

static int all_zero(const char *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

/* prep: a write that sets up a check; a failed one fails the probe, or a later read of
 * zeros would prove nothing */
static void prep(uint64_t off, size_t len, char *buf)
{
	const char *path;
	ssize_t r = one_op(OP_WRITE, off, len, buf, NULL, NULL, 0, &path);

	if (r != 0)
		not_ok("aio_write (set-up)", path, r);
}

static void check_single_ops(uint64_t base)
{
	size_t big = 4 * MiB; /* one whole object (order 22) */
	char *buf = aligned_alloc(BS, big), *back = aligned_alloc(BS, big);
	char cmp[BS], detail[200], name[64];
	const char *path, *rpath;
	int cb;
	uint64_t mismatch = UINT64_MAX;
	ssize_t r;

	/* compare_and_write on one 512-byte sector, matching then not; without a completion
	 * callback (eventfd only), then with one */
	for (cb = 0; cb < 2; cb++) {
		memset(buf, 0xA5, 512);
		r = one_op(OP_WRITE, base, 512, buf, NULL, NULL, cb, &path);
		snprintf(name, sizeof(name), "aio_write 512%s", cb ? " with callback" : "");
		check_op(name, r, 0, path, 1);
		memcpy(cmp, buf, 512);
		memset(buf, 0x5A, 512);
		r = one_op(OP_CAW, base, 512, buf, cmp, &mismatch, cb, &path);
		one_op(OP_READ, base, 512, back, NULL, NULL, 0, &rpath);
		snprintf(name, sizeof(name), "aio_compare_and_write match%s",
			 cb ? " with callback" : "");
		check_op(name, r, 0, path, memcmp(back, buf, 512) == 0);
		memcpy(cmp, back, 512);
		cmp[100] ^= 1; /* cmp now differs from the 0x5A sector at byte 100 */
		memset(buf, 0x11, 512);
		mismatch = UINT64_MAX;
		r = one_op(OP_CAW, base, 512, buf, cmp, &mismatch, cb, &path);
		one_op(OP_READ, base, 512, back, NULL, NULL, 0, &rpath);
		snprintf(detail, sizeof(detail),
			 "returned %zd%s, mismatch offset %llu = image offset %s, "
			 "sector %s (%s)",
			 r, r == -EILSEQ ? " (-EILSEQ)" : "", (unsigned long long)mismatch,
			 mismatch == base + 100 ? "+ 100" : "?",
			 back[0] == 0x5A ? "unchanged" : "CHANGED", path);
		snprintf(name, sizeof(name), "aio_compare_and_write mismatch%s",
			 cb ? " with callback" : "");
		if (r == -EILSEQ && mismatch == base + 100 && back[0] == 0x5A)
			ok(name, detail);
		else
			not_ok(name, detail, r);
	}
	memset(buf, 0x22, BS);
	memcpy(cmp, back, 512);
	memcpy(cmp + 512, back, 512);
	r = one_op(OP_CAW, base, BS, buf, cmp, &mismatch, 0, &path);
	printf("# aio_compare_and_write of 4 KiB: %zd (%s)\n", r,
	       r < 0 ? strerror((int)-r) : "done");

	/* write_zeroes over 64 KiB of data */
	memset(buf, 0x33, big);
	prep(base + 64 * 1024, 64 * 1024, buf);
	r = one_op(OP_ZEROES, base + 64 * 1024, 64 * 1024, NULL, NULL, NULL, 0, &path);
	memset(back, 0xFF, 64 * 1024);
	one_op(OP_READ, base + 64 * 1024, 64 * 1024, back, NULL, NULL, 0, &path);
	check_op("aio_write_zeroes 64K", r, 0, path, all_zero(back, 64 * 1024));

	/* discard a whole object, then 4 KiB of another */
	prep(base + big, big, buf);
	r = one_op(OP_DISCARD, base + big, big, NULL, NULL, NULL, 0, &path);
	memset(back, 0xFF, big);
	one_op(OP_READ, base + big, big, back, NULL, NULL, 0, &path);
	check_op("aio_discard 4M object", r, 0, path, all_zero(back, big));
	prep(base + 2 * big, BS * 4, buf);
	r = one_op(OP_DISCARD, base + 2 * big + BS, BS, NULL, NULL, NULL, 0, &path);
	one_op(OP_READ, base + 2 * big + BS, BS, back, NULL, NULL, 0, &path);
	printf("# aio_discard of 4 KiB inside an object: %zd, reads back %s\n", r,
	       all_zero(back, BS) ? "zeros" : "the old data (a partial discard is skipped)");

	r = one_op(OP_FLUSH, 0, 0, NULL, NULL, NULL, 0, &path);
	check_op("aio_flush", r, 0, path, 1);
	r = one_op(OP_READ, base + 64 * 1024, BS, back, NULL, NULL, 0, &path);
	check_op("aio_read 4K", r, BS, path, 1);
	free(buf);
	free(back);
}

static int first_done;

static void first_handle(void *arg, ssize_t r)
{
	first_done = r < 0 ? (int)r : 1;
}

/* first_write: one 4 KiB write at offset 0 through the eventfd; its time in ms */
static double first_write(void)
{
	char *buf = aligned_alloc(BS, BS);
	rbd_completion_t c;
	double t0 = now();
	ssize_t r;

	memset(buf, 0x77, BS);
	rbd_aio_create_completion(NULL, NULL, &c);
	r = rbd_aio_write(image, 0, BS, buf, c);
	first_done = 0;
	if (r == 0) {
		while (!first_done && now() < t0 + 60)
			if (wait_eventfd(1000))
				drain(first_handle);
		r = first_done == 1 ? 0 : first_done ? first_done : -ETIMEDOUT;
	}
	free(buf);
	return r == 0 ? (now() - t0) * 1000 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: rbd_aio_probe [-c CONF] [--id ID] [-n BLOCKS] check|hold|write1 "
			"POOL/IMAGE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *id = NULL, *cmd, *spec;
	uint64_t blocks = 16384, size = 0;
	char detail[160], idbuf[64];
	double t0 = now(), ms;
	int i, r;

	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--conf"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "--id"))
			id = argv[i + 1];
		else if (!strcmp(argv[i], "-n"))
			blocks = strtoull(argv[i + 1], NULL, 0);
		else
			usage();
	}
	if (argc - i != 2 || blocks == 0)
		usage();
	cmd = argv[i];
	spec = argv[i + 1];
	if (strcmp(cmd, "check") && strcmp(cmd, "hold") && strcmp(cmd, "write1"))
		usage();
	alarm(strcmp(cmd, "hold") ? 300 : 150); /* never outlive a test */

	if (connect_cluster(conf, id) < 0 || open_image(spec) < 0)
		return 1;
	snprintf(detail, sizeof(detail), "%s in %.0f ms", spec, (now() - t0) * 1000);
	ok("open", detail);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r = efd < 0 ? -errno : rbd_set_image_notification(image, efd, EVENT_TYPE_EVENTFD);
	if (r < 0) {
		not_ok("set_image_notification", "eventfd", r);
		return 1;
	}
	ok("set_image_notification", "eventfd");

	if (!strcmp(cmd, "write1") || !strcmp(cmd, "hold")) {
		ms = first_write();
		snprintf(detail, sizeof(detail), "4K at offset 0 in %.0f ms", ms);
		if (ms < 0)
			not_ok("first write", "no completion in 60 s", -ETIMEDOUT);
		else
			ok("first write", detail);
		if (!strcmp(cmd, "hold") && ms >= 0) {
			printf("holding\n");
			fflush(stdout);
			sleep(120);
		}
	} else {
		r = rbd_get_size(image, &size);
		snprintf(detail, sizeof(detail), "%llu bytes", (unsigned long long)size);
		if (r == 0 && size >= blocks * BS + 32 * MiB)
			ok("get_size", detail);
		else
			not_ok("get_size", r ? "failed" : "image too small for the checks", r);
		r = rbd_get_id(image, idbuf, sizeof(idbuf));
		if (r == 0 && idbuf[0])
			ok("get_id", idbuf);
		else
			not_ok("get_id", "failed", r);
		if (failures == 0) {
			ms = first_write();
			snprintf(detail, sizeof(detail), "%.0f ms (takes the exclusive lock)", ms);
			if (ms < 0)
				not_ok("first write", "no completion in 60 s", -ETIMEDOUT);
			else
				ok("first write", detail);
			check_qd32(blocks);
			check_single_ops(blocks * BS + 16 * MiB);
		}
	}
	rbd_close(image);
	rados_ioctx_destroy(ioctx);
	rados_shutdown(cluster);
	close(efd);
	if (strays)
		not_ok("eventfd", "completions delivered that were not awaited", strays);
	printf("# %s: %d failed, %.1f s\n", cmd, failures, now() - t0);
	return failures ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The control socket itself: a UNIX stream socket on the main thread's loop, one JSON-RPC
 * request per line in, one reply per line out (control_handle() in control.c), peers
 * allowed by their credentials (root, the daemon's user, or --control-group members).
 *
 * What a client can make the daemon hold is bounded: at most max_conns connections
 * (--max-control-connections), each with at most CONTROL_MAX_LINE bytes of requests read
 * and one reply: a connection is not read while a reply to it waits to be sent, so a client
 * that pipelines requests and never reads is held back by its own socket buffers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "control.h"

/* ---- The socket --------------------------------------------------------------------------- */

struct control_conn {
	struct control_server *cs;
	int fd;
	ev_io rio, wio;
	char *in;
	size_t inlen, incap;
	char *out;
	size_t outlen, outoff;
	struct control_conn *next;
};

struct control_server {
	struct ev_loop *loop;
	struct control_ctx *ctx;
	int fd;
	ev_io lio;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	gid_t gid;
	struct control_conn *conns;
	unsigned int nconns;    /* in conns */
	unsigned int max_conns; /* more are closed at accept */
};

static void conn_close(struct control_conn *c)
{
	struct control_server *cs = c->cs;
	struct control_conn **pp;

	ev_io_stop(cs->loop, &c->rio);
	ev_io_stop(cs->loop, &c->wio);
	close(c->fd);
	for (pp = &cs->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			cs->nconns--;
			break;
		}
	if (c->in)
		explicit_bzero(c->in, c->incap);
	if (c->out)
		explicit_bzero(c->out, c->outlen);
	free(c->in);
	free(c->out);
	free(c);
}

/* Write what is queued; false when the connection was closed. */
static bool conn_flush(struct control_conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_start(c->cs->loop, &c->wio);
			return true;
		}
		if (n <= 0) {
			conn_close(c);
			return false;
		}
		c->outoff += (size_t)n;
	}
	c->outlen = c->outoff = 0;
	ev_io_stop(c->cs->loop, &c->wio);
	return true;
}

static int conn_queue(struct control_conn *c, const char *s)
{
	size_t n = strlen(s);
	char *b = realloc(c->out, c->outlen + n + 1);

	if (!b)
		return -ENOMEM;
	memcpy(b + c->outlen, s, n);
	b[c->outlen + n] = '\n';
	c->out = b;
	c->outlen += n + 1;
	return 0;
}

/*
 * Answer the whole request lines buffered, one at a time: the next is taken only once the
 * reply to the previous one went out whole, and the socket is read only when no reply
 * waits. false when the connection was closed.
 */
static bool conn_serve(struct control_conn *c)
{
	size_t start = 0;

	while (c->outlen == 0) {
		char *nl = memchr(c->in + start, '\n', c->inlen - start), *reply = NULL;
		size_t len;

		if (!nl)
			break;
		len = (size_t)(nl - (c->in + start));
		if (len && c->in[start + len - 1] == '\r')
			len--;
		if (len && control_handle(c->cs->ctx, c->in + start, len, &reply) == 0 && reply &&
		    conn_queue(c, reply)) {
			free(reply);
			conn_close(c);
			return false;
		}
		free(reply);
		start = (size_t)(nl - c->in) + 1;
		if (c->outlen && !conn_flush(c))
			return false;
	}
	if (start) {
		explicit_bzero(c->in, start);
		memmove(c->in, c->in + start, c->inlen - start);
		c->inlen -= start;
	}
	if (c->outlen)
		ev_io_stop(c->cs->loop, &c->rio); /* resumed by conn_write_cb once sent */
	else
		ev_io_start(c->cs->loop, &c->rio);
	return true;
}

static void conn_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control_conn *c = w->data;

	if (conn_flush(c) && c->outlen == 0)
		conn_serve(c);
}

static void conn_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control_conn *c = w->data;
	ssize_t n;

	if (c->incap - c->inlen < 4096) {
		size_t cap = c->incap ? c->incap * 2 : 8192;
		char *b;

		if (cap > CONTROL_MAX_LINE + 4096 || !(b = realloc(c->in, cap))) {
			char msg[64], *r;

			log_peer("control: closed a client: a request longer than %u bytes",
				 CONTROL_MAX_LINE);
			snprintf(msg, sizeof(msg), "request longer than %u bytes",
				 CONTROL_MAX_LINE);
			r = control_error_reply(RPC_INVALID_REQUEST, msg);
			if (r && conn_queue(c, r) == 0)
				(void)!send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
			free(r);
			conn_close(c);
			return;
		}
		c->in = b;
		c->incap = cap;
	}
	n = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->inlen += (size_t)n;
	conn_serve(c);
}

static bool peer_allowed(const struct control_server *cs, int fd, struct ucred *uc)
{
	socklen_t len = sizeof(*uc);
	gid_t groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len))
		return false;
	if (uc->uid == 0 || uc->uid == geteuid())
		return true;
	if (cs->gid == (gid_t)-1)
		return false;
	if (uc->gid == cs->gid)
		return true;
#ifdef SO_PEERGROUPS
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
		for (size_t i = 0; i < len / sizeof(gid_t); i++)
			if (groups[i] == cs->gid)
				return true;
#endif
	return false;
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control_server *cs = w->data;
	struct control_conn *c;
	struct ucred uc;
	int fd = accept4(cs->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (!peer_allowed(cs, fd, &uc)) {
		log_peer("control: refused a client (uid %u, gid %u): not root or in the control "
			 "group",
			 (unsigned int)uc.uid, (unsigned int)uc.gid);
		close(fd);
		return;
	}
	if (cs->nconns >= cs->max_conns) {
		cs->ctx->refused_clients++;
		log_peer("control: refused a client: %u connections open "
			 "(--max-control-connections)",
			 cs->nconns);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->cs = cs;
	c->fd = fd;
	ev_io_init(&c->rio, conn_read_cb, fd, EV_READ);
	ev_io_init(&c->wio, conn_write_cb, fd, EV_WRITE);
	c->rio.data = c->wio.data = c;
	ev_io_start(loop, &c->rio);
	c->next = cs->conns;
	cs->conns = c;
	cs->nconns++;
}

/* Whether a daemon answers on @path. */
static bool socket_alive(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool alive;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	alive = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return alive;
}

struct control_server *control_server_start(struct ev_loop *loop, struct control_ctx *ctx,
					    const char *path, gid_t gid, unsigned int max_conns,
					    char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control_server *cs;
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat st;
	mode_t old;
	int rc;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--control-socket: path too long (at most %zu bytes)",
			 sizeof(sa.sun_path) - 1);
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0750) == 0) {
			if (gid != (gid_t)-1 && chown(dir, (uid_t)-1, gid))
				log_warn("control socket: cannot give %s to group %u: %s", dir,
					 (unsigned int)gid, strerror(errno));
		} else if (errno != EEXIST) {
			rc = errno;
			snprintf(err, errlen, "--control-socket %s: cannot create %s: %s", path,
				 dir, strerror(rc));
			errno = rc;
			return NULL;
		}
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--control-socket %s: exists and is not a socket",
				 path);
			errno = EEXIST;
			return NULL;
		}
		if (socket_alive(path)) {
			snprintf(err, errlen, "--control-socket %s: another daemon answers there",
				 path);
			errno = EADDRINUSE;
			return NULL;
		}
		unlink(path);
	}
	cs = calloc(1, sizeof(*cs));
	if (!cs) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	cs->loop = loop;
	cs->ctx = ctx;
	cs->gid = gid;
	cs->max_conns = max_conns ? max_conns : CONTROL_DEFAULT_MAX_CONNS;
	snprintf(cs->path, sizeof(cs->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	cs->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	old = umask(0117); /* the socket is born 0660: no window with wider access */
	rc = cs->fd < 0 || bind(cs->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!rc && gid != (gid_t)-1 && chown(path, (uid_t)-1, gid))
		rc = -errno;
	if (!rc && chmod(path, 0660))
		rc = -errno;
	if (!rc && listen(cs->fd, 16))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "--control-socket %s: %s", path, strerror(-rc));
		if (cs->fd >= 0) {
			close(cs->fd);
			unlink(path);
		}
		free(cs);
		errno = -rc;
		return NULL;
	}
	ev_io_init(&cs->lio, accept_cb, cs->fd, EV_READ);
	cs->lio.data = cs;
	ev_io_start(loop, &cs->lio);
	log_notice("control socket on %s", path);
	return cs;
}

void control_server_stop(struct control_server *cs)
{
	if (!cs)
		return;
	while (cs->conns)
		conn_close(cs->conns);
	ev_io_stop(cs->loop, &cs->lio);
	close(cs->fd);
	unlink(cs->path);
	free(cs);
}

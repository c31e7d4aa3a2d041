/* SPDX-License-Identifier: MIT */
/*
 * The control socket: JSON-RPC 2.0 over a UNIX stream socket, one request per line and one
 * response line per request (SPDK's rpc.py framing), served on the main thread's libev
 * loop. Only root, the daemon's own user, or members of --control-group may connect
 * (SO_PEERCRED / SO_PEERGROUPS); the socket is mode 0660 in a directory of mode 0750.
 *
 * Live changes never touch the target directly: a method copies the running model (the
 * config file's, or an empty one), edits the copy, and moves the target to it with
 * config_reload() -- the path SIGHUP takes, so namespace changes send the same
 * Namespace Attribute Changed events and a change is all-or-nothing. The running model is
 * then what `save_config` writes, and it is marked dirty until saved to the -c file.
 *
 * Methods (params by name): see control_methods in control.c and nvmeof-ctl(8).
 */
#ifndef NVMEOF_TARGET_CONTROL_H
#define NVMEOF_TARGET_CONTROL_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nvmf_tgt;
struct tgt_config;

#define CONTROL_DEFAULT_SOCKET    "/run/nvmeof/nvmeof-target.sock"
#define CONTROL_MAX_LINE          (1u << 20) /* a longer request is an error and ends the connection */
#define CONTROL_DEFAULT_MAX_CONNS 16u        /* --max-control-connections */

/* JSON-RPC 2.0 error codes; failures of an operation use -errno as the code. */
#define RPC_PARSE_ERROR      -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602
#define RPC_INTERNAL_ERROR   -32603

/* What the methods act on. */
struct control_ctx {
	struct nvmf_tgt *tgt;     /* NULL in parse/dispatch tests: methods stop at params */
	struct tgt_config **cfg;  /* the running model (never NULL once serving) */
	const char *config_path;  /* -c FILE, or NULL */
	bool dirty;               /* live changes not yet saved to config_path */
	unsigned int changes;     /* live changes since start */
	uint64_t refused_clients; /* connections closed at accept: max_conns were open */
};

struct control_server;

/*
 * Listen on @path: create its directory (0750) if missing, replace a stale socket (one
 * nobody answers on), bind, chmod 0660 and give it group @gid (-1: leave it). At most
 * @max_conns clients at once (0: CONTROL_DEFAULT_MAX_CONNS); more are closed at accept.
 * NULL with errno and a message in @err (EADDRINUSE when another daemon answers there).
 */
struct control_server *control_server_start(struct ev_loop *loop, struct control_ctx *ctx,
					    const char *path, gid_t gid, unsigned int max_conns,
					    char *err, size_t errlen);
/* Close the socket, every connection, and unlink the path. NULL is fine. */
void control_server_stop(struct control_server *cs);

/*
 * Handle one request line (without the newline): parse, dispatch, and set *@reply to a
 * malloc'd response (no newline), or NULL for a notification (a request without "id").
 * Returns 0, or -ENOMEM.
 */
int control_handle(struct control_ctx *ctx, const char *line, size_t len, char **reply);

/* A JSON-RPC error reply with no id (for a request that could not even be read);
 * malloc'd, NULL without memory. */
char *control_error_reply(int code, const char *msg);

#endif

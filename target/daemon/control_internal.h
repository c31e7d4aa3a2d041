/* SPDX-License-Identifier: MIT */
/*
 * What the control methods' files share (control.c, control_model.c, control_access.c,
 * control_sessions.c, control_ana.c, control_qos.c): the JSON-RPC error, parameter readers,
 * editing a copy of the running model, and the methods that live outside control.c.
 * Private to target/daemon.
 */
#ifndef NVMEOF_CONTROL_INTERNAL_H
#define NVMEOF_CONTROL_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config_file.h"
#include "control.h"

struct rpc_err {
	int code;
	char msg[768];
};

/* Fill @e with @code and the message; returns -1. */
__attribute__((format(printf, 3, 4))) int rpc_fail(struct rpc_err *e, int code, const char *fmt,
						   ...);
/* A string parameter: 1 when present, 0 when absent and optional, -1 on error. */
int p_str(json_object *params, const char *name, bool required, char *out, size_t size,
	  struct rpc_err *e);
/* An unsigned parameter within [@min, @max]: 1, 0 (absent, optional) or -1. */
int p_uint(json_object *params, const char *name, bool required, uint64_t min, uint64_t max,
	   uint64_t *out, struct rpc_err *e);
/* A copy of the running model to edit (NULL and @e on failure). */
struct tgt_config *model_begin(struct control_ctx *ctx, struct rpc_err *e);
/* Move the target to @next (consumed): on success it becomes the running model. */
int model_commit(struct control_ctx *ctx, struct tgt_config *next, const char *what,
		 struct rpc_err *e);
/* The subsystem @nqn of @cfg, or NULL and @e. */
struct config_subsys *need_subsys(struct tgt_config *cfg, const char *nqn, struct rpc_err *e);
/* Index of subsystem @nqn in @cfg, or -1. */
int subsys_index(const struct tgt_config *cfg, const char *nqn);
/* NQN lists of the model (hosts, allowed hosts, a port's subsystems). */
bool host_in_list(char (*list)[NVME_NQN_FIELD], unsigned int n, const char *nqn);
int push_nqn(char (**list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn);
bool drop_nqn(char (*list)[NVME_NQN_FIELD], unsigned int *n, const char *nqn);
/* Remove ports that no longer name a subsystem. */
void drop_empty_ports(struct tgt_config *cfg);
/* Remove host @nqn from the model's host list when no subsystem allows it any more. */
void drop_unused_host(struct tgt_config *cfg, const char *nqn);

/* Methods: 0 with *@result, or -1 with @e. */
int m_add_host(struct control_ctx *ctx, json_object *params, json_object **result,
	       struct rpc_err *e);
int m_remove_host(struct control_ctx *ctx, json_object *params, json_object **result,
		  struct rpc_err *e);
int m_add_listener(struct control_ctx *ctx, json_object *params, json_object **result,
		   struct rpc_err *e);
int m_remove_listener(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e);
int m_get_controllers(struct control_ctx *ctx, json_object *params, json_object **result,
		      struct rpc_err *e);
int m_disconnect_controller(struct control_ctx *ctx, json_object *params, json_object **result,
			    struct rpc_err *e);
int m_get_sessions(struct control_ctx *ctx, json_object *params, json_object **result,
		   struct rpc_err *e);
int m_disconnect_session(struct control_ctx *ctx, json_object *params, json_object **result,
			 struct rpc_err *e);
int m_set_ana_state(struct control_ctx *ctx, json_object *params, json_object **result,
		    struct rpc_err *e);
int m_get_ana_states(struct control_ctx *ctx, json_object *params, json_object **result,
		     struct rpc_err *e);
int m_set_qos(struct control_ctx *ctx, json_object *params, json_object **result,
	      struct rpc_err *e);
int m_clear_qos(struct control_ctx *ctx, json_object *params, json_object **result,
		struct rpc_err *e);
int m_get_qos(struct control_ctx *ctx, json_object *params, json_object **result,
	      struct rpc_err *e);

#endif

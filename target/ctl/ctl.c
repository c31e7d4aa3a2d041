/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-ctl: change a running nvmeof-target through its control socket. Each command is
 * one JSON-RPC 2.0 request (one line) and one response line; see nvmeof-ctl(8).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define PROG           "nvmeof-ctl"
#define DEFAULT_SOCKET "/run/nvmeof/nvmeof-target.sock"
#define MAX_REPLY      (64u << 20)

enum { EXIT_RPC = 1, EXIT_USAGE = 2, EXIT_CONNECT = 3 };

struct ctl {
	const char *socket;
	bool json;
	int fd;
};

static void usage(FILE *f)
{
	fputs("Usage: " PROG " [-s PATH] [-o normal|json] OBJECT VERB [ARGS...]\n"
	      "Change a running nvmeof-target through its control socket.\n"
	      "\n"
	      "  subsystem list [NQN]\n"
	      "  subsystem add NQN [--allow-any-host] [--serial SN] [--model MN]\n"
	      "  subsystem remove NQN\n"
	      "  namespace add NQN ram:SIZE|null:SIZE|PATH [--nsid N]\n"
	      "  namespace remove NQN NSID\n"
	      "  namespace resize NQN NSID SIZE\n"
	      "  host add NQN HOSTNQN [--dhchap-key KEY|-] [--dhchap-ctrl-key KEY|-]\n"
	      "  host remove NQN HOSTNQN         (also ends that host's live controllers)\n"
	      "  listener add NQN tcp://ADDR:PORT|tls://ADDR:PORT|rdma://ADDR:PORT\n"
	      "  listener remove NQN URI\n"
	      "  controller list [NQN]\n"
	      "  controller disconnect CNTLID [--nqn NQN]\n"
	      "  session list [TARGET-IQN]     iSCSI sessions: initiator, ISID/TSIH, address,\n"
	      "                    target, connections, counters\n"
	      "  session disconnect TSIH\n"
	      "  ana set NQN PORTID GRPID STATE  STATE: optimized, non-optimized,\n"
	      "                    inaccessible, persistent-loss, change (per port, as nvmet)\n"
	      "  ana list [NQN]\n"
	      "  qos set NQN NSID [--host HOSTNQN] LIMIT...   LIMIT: --rw-ios N, --r-ios N,\n"
	      "                    --w-ios N (per second), --rw-mbytes N, --r-mbytes N,\n"
	      "                    --w-mbytes N (MiB/s); 0 lifts one; others stay as they are\n"
	      "  qos get NQN NSID  the namespace's limits and each limited host's\n"
	      "  qos clear NQN NSID [--host HOSTNQN]\n"
	      "  log-level [err|warn|notice|info|debug]\n"
	      "  save [FILE]       FILE: written here (mode 0600 when it holds keys);\n"
	      "                    no FILE: the daemon rewrites its own -c file\n"
	      "  status\n"
	      "  rpc METHOD [JSON-PARAMS]\n"
	      "\n"
	      "  -s, --socket PATH   control socket (default " DEFAULT_SOCKET ")\n"
	      "  -o, --output FMT    normal (default) or json\n"
	      "  -V, --version       print the version\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "Exit status: 0 done, 1 the target refused (message on stderr), 2 usage,\n"
	      "3 cannot reach the socket.\n",
	      f);
}

static int ctl_connect(struct ctl *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(c->socket) >= sizeof(sa.sun_path)) {
		fprintf(stderr, PROG ": %s: path too long\n", c->socket);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->socket);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, PROG ": %s: %s\n", c->socket, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Send {method, params} and return the "result" (caller puts), or NULL with the error
 * printed and *@rc set. */
static json_object *call(struct ctl *c, const char *method, json_object *params, int *rc)
{
	json_object *req = json_object_new_object(), *resp, *v;
	const char *txt;
	char *buf = NULL, *nl = NULL;
	size_t len = 0, cap = 0;

	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(req, "params", params);
	json_object_object_add(req, "id", json_object_new_int(1));
	txt = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	for (size_t off = 0, n = strlen(txt); off <= n;) {
		ssize_t w = off < n ? send(c->fd, txt + off, n - off, MSG_NOSIGNAL)
				    : send(c->fd, "\n", 1, MSG_NOSIGNAL);

		if (w <= 0) {
			fprintf(stderr, PROG ": %s: %s\n", c->socket, strerror(errno));
			json_object_put(req);
			*rc = EXIT_CONNECT;
			return NULL;
		}
		off += off < n ? (size_t)w : 1;
		if (off == n + 1)
			break;
	}
	json_object_put(req);
	while (!nl) {
		ssize_t r;

		if (cap - len < 65536) {
			char *b = cap + 65536 > MAX_REPLY ? NULL : realloc(buf, cap + 65536);

			if (!b) {
				fprintf(stderr, PROG ": reply too long\n");
				free(buf);
				*rc = EXIT_RPC;
				return NULL;
			}
			buf = b;
			cap += 65536;
		}
		r = recv(c->fd, buf + len, cap - len - 1, 0);
		if (r <= 0) {
			fprintf(stderr, PROG ": %s: connection closed without a reply%s%s\n",
				c->socket, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
			free(buf);
			*rc = EXIT_CONNECT;
			return NULL;
		}
		len += (size_t)r;
		buf[len] = '\0';
		nl = strchr(buf, '\n');
	}
	*nl = '\0';
	resp = json_tokener_parse(buf);
	explicit_bzero(buf, cap);
	free(buf);
	if (!resp) {
		fprintf(stderr, PROG ": the target sent something that is not JSON\n");
		*rc = EXIT_RPC;
		return NULL;
	}
	if (json_object_object_get_ex(resp, "error", &v)) {
		json_object *code, *msg;

		json_object_object_get_ex(v, "code", &code);
		json_object_object_get_ex(v, "message", &msg);
		if (c->json)
			printf("%s\n",
			       json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PRETTY));
		fprintf(stderr, PROG ": %s: %s (%d)\n", method,
			msg ? json_object_get_string(msg) : "error",
			code ? json_object_get_int(code) : 0);
		json_object_put(resp);
		*rc = EXIT_RPC;
		return NULL;
	}
	v = NULL;
	json_object_object_get_ex(resp, "result", &v);
	v = json_object_get(v);
	json_object_put(resp);
	*rc = 0;
	return v;
}

static const char *jget(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

static int64_t jint(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static void print_size(uint64_t b)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int i = 0;
	double v = (double)b;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	printf("%.*f %s", v == (double)(uint64_t)v ? 0 : 1, v, u[i]);
}

/* "rw_ios_per_sec 2000, ..." for the limits that are set, "none" when none is. */
static void print_limits(json_object *l)
{
	bool any = false;

	json_object_object_foreach(l, k, v)
	{
		if (json_object_is_type(v, json_type_int) && json_object_get_int64(v)) {
			printf("%s%s %lld", any ? ", " : "", k,
			       (long long)json_object_get_int64(v));
			any = true;
		}
	}
	printf("%s\n", any ? "" : "none");
}

static void print_sessions(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i), *st = NULL;

		json_object_object_get_ex(s, "stats", &st);
		printf("TSIH %lld  %s  ISID %s  from %s  to %s (portal %s:%s)\n",
		       (long long)jint(s, "tsih"), jget(s, "initiator"), jget(s, "isid"),
		       jget(s, "peer"), jget(s, "target"), jget(s, "portal_addr"),
		       jget(s, "portal_port"));
		printf("  %lld connection(s), digests %s/%s, reads %lld (%lld bytes), writes %lld "
		       "(%lld bytes), other %lld\n",
		       (long long)jint(s, "connections"),
		       json_object_get_boolean(json_object_object_get(s, "header_digest")) ? "heade"
											     "r"
											   : "-",
		       json_object_get_boolean(json_object_object_get(s, "data_digest")) ? "data"
											 : "-",
		       (long long)jint(st, "read_cmds"), (long long)jint(st, "read_bytes"),
		       (long long)jint(st, "write_cmds"), (long long)jint(st, "write_bytes"),
		       (long long)jint(st, "other_cmds"));
	}
	if (!json_object_array_length(arr))
		printf("no iSCSI sessions\n");
}

static void print_qos(json_object *r)
{
	json_object *l, *hosts;

	printf("%s namespace %lld: ", jget(r, "nqn"), (long long)jint(r, "nsid"));
	if (json_object_object_get_ex(r, "limits", &l))
		print_limits(l);
	if (json_object_object_get_ex(r, "hosts", &hosts))
		for (size_t i = 0; i < json_object_array_length(hosts); i++) {
			json_object *h = json_object_array_get_idx(hosts, i);

			printf("  host %s: ", jget(h, "host"));
			json_object_object_del(h, "host");
			print_limits(h);
		}
}

static void print_subsystems(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i), *l, *v;

		printf("%s (%s)%s\n", jget(s, "nqn"), jget(s, "subtype"),
		       json_object_object_get_ex(s, "allow_any_host", &v) &&
				       json_object_get_boolean(v) &&
				       strcmp(jget(s, "subtype"), "Discovery")
			       ? ", any host"
			       : "");
		if (json_object_object_get_ex(s, "listen_addresses", &l))
			for (size_t j = 0; j < json_object_array_length(l); j++) {
				json_object *a = json_object_array_get_idx(l, j);
				bool v6 = !strcmp(jget(a, "adrfam"), "ipv6");

				printf("  listener %s://%s%s%s:%s (port %lld)\n", jget(a, "trtype"),
				       v6 ? "[" : "", jget(a, "traddr"), v6 ? "]" : "",
				       jget(a, "trsvcid"), (long long)jint(a, "portid"));
			}
		if (json_object_object_get_ex(s, "hosts", &l))
			for (size_t j = 0; j < json_object_array_length(l); j++)
				printf("  host %s\n",
				       json_object_get_string(json_object_array_get_idx(l, j)));
		if (json_object_object_get_ex(s, "namespaces", &l))
			for (size_t j = 0; j < json_object_array_length(l); j++) {
				json_object *n = json_object_array_get_idx(l, j);

				printf("  namespace %lld: %s, ", (long long)jint(n, "nsid"),
				       jget(n, "path"));
				print_size((uint64_t)jint(n, "size"));
				printf(" (%lld blocks of %lld)\n", (long long)jint(n, "num_blocks"),
				       (long long)jint(n, "block_size"));
			}
	}
}

static void print_controllers(json_object *arr)
{
	if (json_object_array_length(arr) == 0) {
		printf("no controllers\n");
		return;
	}
	printf("%-6s %-40s %-22s %-6s %s\n", "CNTLID", "SUBSYSTEM", "PEER", "QUEUES", "HOST");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i), *st;

		printf("%-6lld %-40s %-22s %-6lld %s\n", (long long)jint(c, "cntlid"),
		       jget(c, "nqn"), jget(c, "peer")[0] ? jget(c, "peer") : jget(c, "trtype"),
		       (long long)jint(c, "io_queues"), jget(c, "hostnqn"));
		if (json_object_object_get_ex(c, "stats", &st))
			printf("       reads %lld (%lld bytes), writes %lld (%lld bytes), other "
			       "%lld\n",
			       (long long)jint(st, "read_cmds"), (long long)jint(st, "read_bytes"),
			       (long long)jint(st, "write_cmds"),
			       (long long)jint(st, "write_bytes"),
			       (long long)jint(st, "other_cmds"));
	}
}

static void print_ana(json_object *arr)
{
	printf("%-6s %-8s %-6s %-16s %-8s %s\n", "PORTID", "TRSVCID", "GRPID", "STATE", "REFUSED",
	       "SUBSYSTEMS");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *g = json_object_array_get_idx(arr, i), *nqns;

		printf("%-6lld %-8s %-6lld %-16s %-8lld", (long long)jint(g, "portid"),
		       jget(g, "trsvcid"), (long long)jint(g, "grpid"), jget(g, "ana_state"),
		       (long long)jint(g, "refused"));
		if (json_object_object_get_ex(g, "nqns", &nqns))
			for (size_t j = 0; j < json_object_array_length(nqns); j++)
				printf(" %s",
				       json_object_get_string(json_object_array_get_idx(nqns, j)));
		printf("\n");
	}
}

/* Write @text to @path through a temporary file: 0600 when it holds secrets, else 0644. */
static int write_file(const char *path, const char *text, bool secret)
{
	char tmp[PATH_MAX];
	size_t len = strlen(text), off = 0;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp); /* 0600 */
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (!rc && !secret && fchmod(fd, 0644))
		rc = -errno;
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* A secret argument: "-" reads one line from stdin (keeps it out of ps). */
static const char *secret_arg(const char *a, char *buf, size_t len)
{
	if (strcmp(a, "-"))
		return a;
	if (!fgets(buf, (int)len, stdin))
		return NULL;
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

static bool is_uint(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Options after the positional arguments of a verb: --name VALUE or --flag. */
static const char *opt_val(int *argc, char **argv, const char *name, bool flag, bool *bad)
{
	for (int i = 0; i < *argc; i++)
		if (!strcmp(argv[i], name)) {
			const char *v = flag ? "1" : i + 1 < *argc ? argv[i + 1] : NULL;
			int n = flag ? 1 : 2;

			if (!v) {
				fprintf(stderr, PROG ": %s needs a value\n", name);
				*bad = true;
				return NULL;
			}
			memmove(&argv[i], &argv[i + n], (size_t)(*argc - i - n) * sizeof(*argv));
			*argc -= n;
			return v;
		}
	return NULL;
}

static void add_str(json_object *p, const char *k, const char *v)
{
	if (v)
		json_object_object_add(p, k, json_object_new_string(v));
}

/* The arguments of one command as its option hook sees them, and scratch room for the
 * secrets it reads (wiped after the call). */
struct cmd_args {
	const char *obj, *verb;
	int argc;
	char **argv;
	char kbuf[512], cbuf[512];
};

/*
 * One command: OBJECT VERB [ARG...] becomes JSON-RPC @method with the positional
 * arguments under @keys (the first @required of them must be given). @opts, when set,
 * takes the verb's options out of the arguments first and adds them (-1: usage error,
 * said). @uint_what[i] names what positional argument i is when it must be a number.
 * @print shows the reply (NULL: nothing but the exit status; -o json prints it all).
 */
struct ctl_cmd {
	const char *obj, *verb, *method;
	const char *keys[4];
	int required;
	const char *uint_what[4];
	int (*opts)(struct cmd_args *a, json_object *p);
	void (*print)(json_object *r);
};

static int subsystem_add_opts(struct cmd_args *a, json_object *p)
{
	bool bad = false;
	const char *any = opt_val(&a->argc, a->argv, "--allow-any-host", true, &bad);
	const char *sn = opt_val(&a->argc, a->argv, "--serial", false, &bad);
	const char *mn = opt_val(&a->argc, a->argv, "--model", false, &bad);

	add_str(p, "serial_number", sn);
	add_str(p, "model_number", mn);
	if (any)
		json_object_object_add(p, "allow_any_host", json_object_new_boolean(true));
	return bad ? -1 : 0;
}

static int namespace_add_opts(struct cmd_args *a, json_object *p)
{
	bool bad = false;

	add_str(p, "nsid", opt_val(&a->argc, a->argv, "--nsid", false, &bad));
	return bad ? -1 : 0;
}

static int host_add_opts(struct cmd_args *a, json_object *p)
{
	bool bad = false;
	const char *k = opt_val(&a->argc, a->argv, "--dhchap-key", false, &bad);
	const char *ck = opt_val(&a->argc, a->argv, "--dhchap-ctrl-key", false, &bad);

	if (bad || (k && !(k = secret_arg(k, a->kbuf, sizeof(a->kbuf)))) ||
	    (ck && !(ck = secret_arg(ck, a->cbuf, sizeof(a->cbuf)))))
		return -1;
	add_str(p, "dhchap_key", k);
	add_str(p, "dhchap_ctrlr_key", ck);
	return 0;
}

static int controller_disconnect_opts(struct cmd_args *a, json_object *p)
{
	bool bad = false;

	add_str(p, "nqn", opt_val(&a->argc, a->argv, "--nqn", false, &bad));
	return bad ? -1 : 0;
}

static int qos_opts(struct cmd_args *a, json_object *p)
{
	static const char *const lim[][2] = {
		{ "--rw-ios", "rw_ios_per_sec" },     { "--r-ios", "r_ios_per_sec" },
		{ "--w-ios", "w_ios_per_sec" },       { "--rw-mbytes", "rw_mbytes_per_sec" },
		{ "--r-mbytes", "r_mbytes_per_sec" }, { "--w-mbytes", "w_mbytes_per_sec" },
	};
	bool bad = false, given = false, set = !strcmp(a->verb, "set");

	if (strcmp(a->verb, "get"))
		add_str(p, "host", opt_val(&a->argc, a->argv, "--host", false, &bad));
	for (unsigned int i = 0; set && i < sizeof(lim) / sizeof(lim[0]); i++) {
		const char *v = opt_val(&a->argc, a->argv, lim[i][0], false, &bad);

		if (v && !is_uint(v)) {
			fprintf(stderr, PROG ": qos set: %s '%s' is not a number\n", lim[i][0], v);
			bad = true;
		}
		add_str(p, lim[i][1], v);
		given |= v != NULL;
	}
	if (set && !bad && !given) {
		fprintf(stderr, PROG ": qos set: give a limit (--rw-ios N, ...)\n");
		bad = true;
	}
	return bad ? -1 : 0;
}

static void print_nsid(json_object *r)
{
	printf("namespace %lld\n", (long long)json_object_get_int64(r));
}

static void print_portid(json_object *r)
{
	printf("port %lld\n", (long long)jint(r, "portid"));
}

static void print_disconnected(json_object *r)
{
	printf("%lld controller(s) disconnected\n", (long long)jint(r, "disconnected_controllers"));
}

static const struct ctl_cmd ctl_cmds[] = {
	{ .obj = "subsystem",
	  .verb = "list",
	  .method = "nvmf_get_subsystems",
	  .keys = { "nqn" },
	  .required = 0,
	  .print = print_subsystems },
	{ .obj = "subsystem",
	  .verb = "add",
	  .method = "nvmf_create_subsystem",
	  .keys = { "nqn" },
	  .required = 1,
	  .opts = subsystem_add_opts },
	{ .obj = "subsystem",
	  .verb = "remove",
	  .method = "nvmf_delete_subsystem",
	  .keys = { "nqn" },
	  .required = 1 },
	{ .obj = "namespace",
	  .verb = "add",
	  .method = "nvmf_subsystem_add_ns",
	  .keys = { "nqn", "path" },
	  .required = 2,
	  .opts = namespace_add_opts,
	  .print = print_nsid },
	{ .obj = "namespace",
	  .verb = "remove",
	  .method = "nvmf_subsystem_remove_ns",
	  .keys = { "nqn", "nsid" },
	  .required = 2 },
	{ .obj = "namespace",
	  .verb = "resize",
	  .method = "nvmf_subsystem_resize_ns",
	  .keys = { "nqn", "nsid", "size" },
	  .required = 3 },
	{ .obj = "host",
	  .verb = "add",
	  .method = "nvmf_subsystem_add_host",
	  .keys = { "nqn", "host" },
	  .required = 2,
	  .opts = host_add_opts },
	{ .obj = "host",
	  .verb = "remove",
	  .method = "nvmf_subsystem_remove_host",
	  .keys = { "nqn", "host" },
	  .required = 2,
	  .print = print_disconnected },
	{ .obj = "listener",
	  .verb = "add",
	  .method = "nvmf_subsystem_add_listener",
	  .keys = { "nqn", "uri" },
	  .required = 2,
	  .print = print_portid },
	{ .obj = "listener",
	  .verb = "remove",
	  .method = "nvmf_subsystem_remove_listener",
	  .keys = { "nqn", "uri" },
	  .required = 2 },
	{ .obj = "controller",
	  .verb = "list",
	  .method = "nvmf_get_controllers",
	  .keys = { "nqn" },
	  .required = 0,
	  .print = print_controllers },
	{ .obj = "controller",
	  .verb = "disconnect",
	  .method = "nvmf_disconnect_controller",
	  .keys = { "cntlid" },
	  .required = 1,
	  .uint_what = { "controller ID" },
	  .opts = controller_disconnect_opts },
	{ .obj = "session",
	  .verb = "list",
	  .method = "iscsi_get_sessions",
	  .keys = { "target" },
	  .required = 0,
	  .print = print_sessions },
	{ .obj = "session",
	  .verb = "disconnect",
	  .method = "iscsi_disconnect_session",
	  .keys = { "tsih" },
	  .required = 1,
	  .uint_what = { "TSIH" } },
	{ .obj = "ana",
	  .verb = "set",
	  .method = "nvmf_subsystem_set_ana_state",
	  .keys = { "nqn", "portid", "grpid", "ana_state" },
	  .required = 4 },
	{ .obj = "ana",
	  .verb = "list",
	  .method = "nvmf_get_ana_states",
	  .keys = { "nqn" },
	  .required = 0,
	  .print = print_ana },
	{ .obj = "qos",
	  .verb = "set",
	  .method = "nvmf_namespace_set_qos",
	  .keys = { "nqn", "nsid" },
	  .required = 2,
	  .opts = qos_opts },
	{ .obj = "qos",
	  .verb = "get",
	  .method = "nvmf_namespace_get_qos",
	  .keys = { "nqn", "nsid" },
	  .required = 2,
	  .opts = qos_opts,
	  .print = print_qos },
	{ .obj = "qos",
	  .verb = "clear",
	  .method = "nvmf_namespace_clear_qos",
	  .keys = { "nqn", "nsid" },
	  .required = 2,
	  .opts = qos_opts },
};

static const struct ctl_cmd *cmd_find(const char *obj, const char *verb)
{
	for (size_t i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (!strcmp(ctl_cmds[i].obj, obj) && !strcmp(ctl_cmds[i].verb, verb))
			return &ctl_cmds[i];
	return NULL;
}

/* The parameters of @cmd from @a into @p: 0, or -1 after saying what is wrong. */
static int cmd_params(const struct ctl_cmd *cmd, struct cmd_args *a, json_object *p)
{
	int nkeys = 0;

	while (nkeys < 4 && cmd->keys[nkeys])
		nkeys++;
	if (cmd->opts && cmd->opts(a, p))
		return -1;
	if (a->argc < cmd->required || a->argc > nkeys) {
		if (cmd->required == nkeys)
			fprintf(stderr, PROG ": %s %s: expected %d argument%s (see --help)\n",
				a->obj, a->verb, nkeys, nkeys == 1 ? "" : "s");
		else
			fprintf(stderr, PROG ": %s %s: expected %d to %d arguments (see --help)\n",
				a->obj, a->verb, cmd->required, nkeys);
		return -1;
	}
	for (int i = 0; i < a->argc; i++) {
		if (cmd->uint_what[i] && !is_uint(a->argv[i])) {
			fprintf(stderr, PROG ": %s %s: '%s' is not a %s\n", a->obj, a->verb,
				a->argv[i], cmd->uint_what[i]);
			return -1;
		}
		add_str(p, cmd->keys[i], a->argv[i]);
	}
	return 0;
}

static int run(struct ctl *c, const char *obj, const char *verb, int argc, char **argv)
{
	struct cmd_args a = { .obj = obj, .verb = verb, .argc = argc, .argv = argv };
	const struct ctl_cmd *cmd = NULL;
	json_object *p, *r;
	const char *method;
	int rc;

	if (!strcmp(obj, "rpc")) {
		/* rpc METHOD [PARAMS-JSON]: any method, the reply printed as JSON */
		p = NULL;
		if (argc > 1 || (argc == 1 && !(p = json_tokener_parse(argv[0])))) {
			fprintf(stderr, PROG ": rpc %s: expected one JSON object of parameters\n",
				verb);
			return EXIT_USAGE;
		}
		method = verb;
	} else {
		cmd = cmd_find(obj, verb);
		if (!cmd) {
			fprintf(stderr, PROG ": unknown command '%s %s' (see --help)\n", obj, verb);
			return EXIT_USAGE;
		}
		p = json_object_new_object();
		rc = cmd_params(cmd, &a, p) ? EXIT_USAGE : 0;
		if (rc) {
			json_object_put(p);
			explicit_bzero(a.kbuf, sizeof(a.kbuf));
			explicit_bzero(a.cbuf, sizeof(a.cbuf));
			return rc;
		}
		method = cmd->method;
	}
	if (ctl_connect(c)) {
		json_object_put(p);
		return EXIT_CONNECT;
	}
	r = call(c, method, p, &rc);
	explicit_bzero(a.kbuf, sizeof(a.kbuf));
	explicit_bzero(a.cbuf, sizeof(a.cbuf));
	if (rc)
		return rc;
	if (c->json || !cmd)
		printf("%s\n",
		       json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (cmd->print)
		cmd->print(r);
	json_object_put(r);
	return 0;
}

/* Commands without a verb: log-level, save, status. */
static int run_simple(struct ctl *c, const char *cmd, int argc, char **argv)
{
	json_object *p = json_object_new_object(), *r, *cfg, *sec;
	const char *method;
	char abs[PATH_MAX];
	int rc;

	if (!strcmp(cmd, "log-level") && argc <= 1) {
		method = argc ? "log_set_level" : "log_get_level";
		add_str(p, "level", argc ? argv[0] : NULL);
	} else if (!strcmp(cmd, "status") && argc == 0) {
		method = "target_get_status";
	} else if (!strcmp(cmd, "save") && argc <= 1) {
		method = "save_config";
		if (argc == 1) /* into a file of mode 0600 when it holds keys */
			json_object_object_add(p, "secrets", json_object_new_boolean(true));
	} else {
		fprintf(stderr, PROG ": %s: unexpected arguments (see --help)\n", cmd);
		json_object_put(p);
		return EXIT_USAGE;
	}
	if (ctl_connect(c)) {
		json_object_put(p);
		return EXIT_CONNECT;
	}
	if (!strcmp(cmd, "save") && argc == 0) {
		json_object *st = call(c, "target_get_status", NULL, &rc), *f;

		if (rc)
			return rc;
		if (!json_object_object_get_ex(st, "config_file", &f) || !f) {
			fprintf(stderr, PROG ": save: the target runs without -c FILE; name a "
					     "file\n");
			json_object_put(st);
			json_object_put(p);
			return EXIT_USAGE;
		}
		add_str(p, "file", json_object_get_string(f));
		json_object_put(st);
	}
	r = call(c, method, p, &rc);
	if (rc)
		return rc;
	if (!strcmp(cmd, "save") && argc == 1) {
		const char *text;
		bool secret;

		if (!json_object_object_get_ex(r, "config", &cfg)) {
			fprintf(stderr, PROG ": save: no configuration in the reply\n");
			json_object_put(r);
			return EXIT_RPC;
		}
		secret = json_object_object_get_ex(r, "secrets", &sec) &&
			 json_object_get_boolean(sec);
		text = json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_SPACED |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
		{
			char *withnl = malloc(strlen(text) + 2);

			rc = withnl ? 0 : -ENOMEM;
			if (withnl) {
				sprintf(withnl, "%s\n", text);
				rc = write_file(argv[0], withnl, secret);
				explicit_bzero(withnl, strlen(withnl));
				free(withnl);
			}
		}
		if (rc) {
			fprintf(stderr, PROG ": save %s: %s\n", argv[0], strerror(-rc));
			json_object_put(r);
			return EXIT_RPC;
		}
		if (!c->json)
			printf("saved to %s%s\n", realpath(argv[0], abs) ? abs : argv[0],
			       secret ? " (mode 0600: it holds keys or CHAP secrets)" : "");
		json_object_put(r);
		return 0;
	}
	if (c->json || !strcmp(method, "target_get_status"))
		printf("%s\n",
		       json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (!strcmp(method, "log_get_level"))
		printf("%s\n", json_object_get_string(r));
	else if (!strcmp(method, "save_config"))
		printf("saved to %s\n", jget(r, "file"));
	json_object_put(r);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .socket = DEFAULT_SOCKET, .fd = -1 };
	int ch, rc;

	/* "+": stop at the first command word, so verb options (--nsid) reach run(). */
	while ((ch = getopt_long(argc, argv, "+s:o:Vh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			c.socket = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "normal")) {
				fprintf(stderr, PROG ": -o: expected normal or json, got '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			c.json = !strcmp(optarg, "json");
			break;
		case 'V':
			printf(PROG " %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "log-level") || !strcmp(argv[0], "save") || !strcmp(argv[0], "status"))
		rc = run_simple(&c, argv[0], argc - 1, argv + 1);
	else if (argc < 2) {
		fprintf(stderr, PROG ": %s: missing verb (see --help)\n", argv[0]);
		rc = EXIT_USAGE;
	} else {
		rc = run(&c, argv[0], argv[1], argc - 2, argv + 2);
	}
	if (c.fd >= 0)
		close(c.fd);
	return rc;
}

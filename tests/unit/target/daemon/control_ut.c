/* SPDX-License-Identifier: MIT */
/*
 * control_handle(): JSON-RPC 2.0 parsing and dispatch, table-driven. With no target
 * (ctx.tgt NULL) every method validates its parameters and stops there, so each case
 * checks exactly the framing, method lookup and parameter errors, and that error messages
 * name the parameter and its value. Then the socket itself: a client of the same user is
 * served, several requests on one connection are answered in order; a client that sends
 * without reading is no longer read (its sends block) and still gets every reply in
 * order once it reads; clients beyond the cap are closed at accept.
 */
#include <config.h>

#include <CUnit/Basic.h>
#include <ev.h>
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "config/config_file.h"
#include "control.h"
#include "ut.h"

static struct tgt_config *g_cfg;
static struct control_ctx g_ctx = { .cfg = &g_cfg };

/* Run @req; return the reply parsed (NULL for no reply). */
static json_object *ask(const char *req)
{
	char *reply = NULL;
	json_object *o;

	CU_ASSERT_EQUAL(control_handle(&g_ctx, req, strlen(req), &reply), 0);
	if (!reply)
		return NULL;
	o = json_tokener_parse(reply);
	CU_ASSERT_PTR_NOT_NULL(o);
	CU_ASSERT_PTR_NULL(strchr(reply, '\n')); /* one line */
	free(reply);
	return o;
}

static int err_code(json_object *r, const char **msg)
{
	json_object *e, *c, *m;

	*msg = "";
	if (!r || !json_object_object_get_ex(r, "error", &e))
		return 0;
	json_object_object_get_ex(e, "code", &c);
	if (json_object_object_get_ex(e, "message", &m))
		*msg = json_object_get_string(m);
	return json_object_get_int(c);
}

static const struct {
	const char *req;
	int code;        /* 0: a result */
	const char *msg; /* substring of the error message */
} cases[] = {
	/* Framing */
	{ "{", RPC_PARSE_ERROR, "parse error" },
	{ "not json", RPC_PARSE_ERROR, "parse error" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":1} x", RPC_PARSE_ERROR,
	  "text after" },
	{ "[1,2]", RPC_INVALID_REQUEST, "expected a JSON object" },
	{ "{\"method\":\"rpc_get_methods\",\"id\":1}", RPC_INVALID_REQUEST, "jsonrpc" },
	{ "{\"jsonrpc\":\"1.0\",\"method\":\"rpc_get_methods\",\"id\":1}", RPC_INVALID_REQUEST,
	  "jsonrpc" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_INVALID_REQUEST, "method" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":7,\"id\":1}", RPC_INVALID_REQUEST, "method" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":[1]}", RPC_INVALID_REQUEST,
	  "id" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"params\":[1],\"id\":1}",
	  RPC_INVALID_PARAMS, "named" },
	/* Methods */
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"no_such_method\",\"id\":1}", RPC_METHOD_NOT_FOUND,
	  "no_such_method" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":\"a\"}", 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"log_get_level\",\"id\":2}", 0, NULL },
	/* Parameters: named in the message, with the value */
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_create_subsystem\",\"id\":1}", RPC_INVALID_PARAMS,
	  "missing parameter \"nqn\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_create_subsystem\",\"params\":{\"nqn\":5},\"id\":"
	  "1}",
	  RPC_INVALID_PARAMS, "\"nqn\": 5 is not a string" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_create_subsystem\",\"params\":{\"nqn\":\"nqn."
	  "2014-08.org.nvmexpress.discovery\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "discovery" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_create_subsystem\",\"params\":{\"nqn\":\"n\","
	  "\"allow_any_host\":\"yes\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"allow_any_host\": \"yes\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"n\"},"
	  "\"id\":1}",
	  RPC_INVALID_PARAMS, "missing parameter \"path\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"n\","
	  "\"path\":\"disk.img\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"path\": \"disk.img\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"n\","
	  "\"path\":\"ram:1M\",\"nsid\":0},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"nsid\": 0 is out of range 1..1024" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"n\","
	  "\"path\":\"ram:1M\",\"nsid\":\"2x\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"nsid\": \"2x\" is not an integer" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"n\","
	  "\"path\":\"ram:1M\",\"nsid\":\"7\"},\"id\":1}",
	  0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_resize_ns\",\"params\":{\"nqn\":\"n\","
	  "\"nsid\":1,\"size\":\"big\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"size\": \"big\" is not a size" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"bdev_resize\",\"params\":{\"nqn\":\"n\",\"nsid\":1},"
	  "\"id\":1}",
	  RPC_INVALID_PARAMS, "missing parameter \"size\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_host\",\"params\":{\"nqn\":\"n\","
	  "\"host\":\"h\",\"dhchap_key\":\"secret\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"dhchap_key\": not a DHHC-1 secret" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_host\",\"params\":{\"nqn\":\"n\","
	  "\"host\":\"h\",\"dhchap_ctrlr_key\":\"DHHC-1:00:x:\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "needs \"dhchap_key\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_listener\",\"params\":{\"nqn\":"
	  "\"n\",\"uri\":\"ftp://x\"},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"uri\": \"ftp://x\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_subsystem_add_listener\",\"params\":{\"nqn\":"
	  "\"n\",\"uri\":\"iscsi://127.0.0.1:3260\"},\"id\":1}",
	  -EOPNOTSUPP, "iSCSI" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_disconnect_controller\",\"params\":{\"cntlid\":"
	  "65535},\"id\":1}",
	  RPC_INVALID_PARAMS, "\"cntlid\": 65535 is out of range" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"log_set_level\",\"params\":{\"level\":\"loud\"},"
	  "\"id\":1}",
	  RPC_INVALID_PARAMS, "\"level\": \"loud\"" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"save_config\",\"params\":{\"file\":\"rel.json\"},"
	  "\"id\":1}",
	  RPC_INVALID_PARAMS, "\"file\": \"rel.json\": expected an absolute path" },
};

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *r = ask(cases[i].req), *v;
		const char *msg;
		int code = err_code(r, &msg);

		if (code != cases[i].code || (cases[i].msg && !strstr(msg, cases[i].msg))) {
			fprintf(stderr, "\ncase %zu: %s\n  got %d \"%s\"\n", i, cases[i].req, code,
				msg);
			CU_FAIL("unexpected reply");
		}
		CU_ASSERT(r && json_object_object_get_ex(r, "jsonrpc", &v) &&
			  !strcmp(json_object_get_string(v), "2.0"));
		if (!code)
			CU_ASSERT(json_object_object_get_ex(r, "result", &v));
		json_object_put(r);
	}
}

static void test_ids_and_notifications(void)
{
	json_object *r, *v;

	r = ask("{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":42}");
	CU_ASSERT(json_object_object_get_ex(r, "id", &v) && json_object_get_int(v) == 42);
	CU_ASSERT(json_object_object_get_ex(r, "result", &v) && json_object_array_length(v) >= 15);
	json_object_put(r);
	r = ask("{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":\"x/y\"}");
	CU_ASSERT(json_object_object_get_ex(r, "id", &v) &&
		  !strcmp(json_object_get_string(v), "x/y"));
	json_object_put(r);
	/* A notification (no id) gets no reply, even when it fails... */
	CU_ASSERT_PTR_NULL(ask("{\"jsonrpc\":\"2.0\",\"method\":\"log_get_level\"}"));
	CU_ASSERT_PTR_NULL(ask("{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}"));
	/* ...but a broken request cannot be known to be one: it is answered, id null. */
	r = ask("{\"jsonrpc\":\"2.0\"");
	CU_ASSERT(json_object_object_get_ex(r, "id", &v) && v == NULL);
	json_object_put(r);
}

/* ---- The socket, on a loop of its own thread ------------------------------------------ */

static struct ev_loop *g_loop;
static ev_async g_stop;
static char g_dir[48], g_sock[100];

static void stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

static void *loop_thread(void *arg)
{
	ev_run(g_loop, 0);
	return NULL;
}

static void test_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control_server *cs;
	const char *two = "{\"jsonrpc\":\"2.0\",\"method\":\"log_get_level\",\"id\":1}\n"
			  "\n{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":2}\r\n";
	char err[256], buf[4096] = "", *second;
	size_t got = 0;
	struct stat st;
	pthread_t th;
	int fd;

	snprintf(g_dir, sizeof(g_dir), "/tmp/control_ut.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(g_dir));
	snprintf(g_sock, sizeof(g_sock), "%s/run/ctl.sock", g_dir);
	g_loop = ev_loop_new(EVFLAG_AUTO);
	ev_async_init(&g_stop, stop_cb);
	ev_async_start(g_loop, &g_stop);
	cs = control_server_start(g_loop, &g_ctx, g_sock, (gid_t)-1, 0, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	CU_ASSERT_EQUAL(stat(g_sock, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0660);
	snprintf(buf, sizeof(buf), "%s/run", g_dir);
	CU_ASSERT_EQUAL(stat(buf, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0750);
	/* A second server on a live socket is refused. */
	CU_ASSERT_PTR_NULL(
		control_server_start(g_loop, &g_ctx, g_sock, (gid_t)-1, 0, err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "another daemon"));
	pthread_create(&th, NULL, loop_thread, NULL);

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
	CU_ASSERT_EQUAL_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CU_ASSERT_EQUAL(send(fd, two, strlen(two), 0), (ssize_t)strlen(two));
	memset(buf, 0, sizeof(buf));
	while (got < sizeof(buf) - 1) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		char *nl = memchr(buf, '\n', got + (n > 0 ? (size_t)n : 0));

		if (n <= 0)
			break;
		got += (size_t)n;
		if (nl && strchr(nl + 1, '\n'))
			break;
	}
	close(fd);
	second = strchr(buf, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(second);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"id\":1"));
	CU_ASSERT(strstr(buf, "\"result\"") && strstr(buf, "\"result\"") < second);
	CU_ASSERT_PTR_NOT_NULL(strstr(second, "-32601"));
	CU_ASSERT_PTR_NOT_NULL(strstr(second, "\"id\":2"));

	ev_async_send(g_loop, &g_stop);
	pthread_join(th, NULL);
	control_server_stop(cs);
	CU_ASSERT_NOT_EQUAL(access(g_sock, F_OK), 0); /* unlinked */
	ev_loop_destroy(g_loop);
	snprintf(buf, sizeof(buf), "%s/run", g_dir);
	rmdir(buf);
	rmdir(g_dir);
}

/* A server at g_sock on its own loop thread, at most @max_conns clients. */
static struct control_server *serve(unsigned int max_conns, pthread_t *th)
{
	struct control_server *cs;
	char err[256];

	snprintf(g_dir, sizeof(g_dir), "/tmp/control_ut.XXXXXX");
	if (!mkdtemp(g_dir))
		return NULL;
	snprintf(g_sock, sizeof(g_sock), "%s/run/ctl.sock", g_dir);
	g_loop = ev_loop_new(EVFLAG_AUTO);
	ev_async_init(&g_stop, stop_cb);
	ev_async_start(g_loop, &g_stop);
	cs = control_server_start(g_loop, &g_ctx, g_sock, (gid_t)-1, max_conns, err, sizeof(err));
	if (cs)
		pthread_create(th, NULL, loop_thread, NULL);
	return cs;
}

static void unserve(struct control_server *cs, pthread_t th)
{
	char buf[100];

	ev_async_send(g_loop, &g_stop);
	pthread_join(th, NULL);
	control_server_stop(cs);
	ev_loop_destroy(g_loop);
	snprintf(buf, sizeof(buf), "%s/run", g_dir);
	rmdir(buf);
	rmdir(g_dir);
}

static int dial(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Requests sent and never read: once the socket buffers are full the server stops reading,
 * so the client's sends stop being taken (well before 16 MiB, where the old server would
 * have queued ~10x that in replies). Reading then gets every reply, in order.
 */
static void test_backpressure(void)
{
	char line[96], *buf = malloc(1 << 16);
	size_t sent = 0, off = 0, len, got = 0;
	unsigned int n = 0, replies = 0, next = 1;
	struct control_server *cs;
	pthread_t th;
	int fd;

	cs = serve(0, &th);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	fd = dial();
	CU_ASSERT_FATAL(fd >= 0);
	len = (size_t)snprintf(line, sizeof(line),
			       "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":%u}\n",
			       ++n);
	while (sent < (16u << 20)) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t w;

		if (poll(&p, 1, 300) == 0)
			break; /* the server stopped taking requests */
		w = send(fd, line + off, len - off, MSG_DONTWAIT);
		if (w < 0 && errno == EAGAIN)
			continue;
		CU_ASSERT_FATAL(w > 0);
		sent += (size_t)w;
		off += (size_t)w;
		if (off == len) {
			off = 0;
			len = (size_t)snprintf(line, sizeof(line),
					       "{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_"
					       "methods\",\"id\":%u}\n",
					       ++n);
		}
	}
	CU_ASSERT(sent < (16u << 20));
	if (off) { /* finish the line under way */
		CU_ASSERT_EQUAL(send(fd, line + off, len - off, 0), (ssize_t)(len - off));
	} else {
		n--; /* the next line was never begun */
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t r = recv(fd, buf + got, (1 << 16) - 1 - got, 0);
		char *p, *nl;

		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			char want[32];

			snprintf(want, sizeof(want), "\"id\":%u}", next++);
			CU_ASSERT_PTR_NOT_NULL(strstr(p, want));
			replies++;
		}
		got -= (size_t)(p - buf);
		memmove(buf, p, got);
	}
	CU_ASSERT_EQUAL(replies, n);
	close(fd);
	free(buf);
	unserve(cs, th);
}

/* With the cap reached, one more client is closed at once; a freed slot serves again. */
static void test_conn_cap(void)
{
	const char *req = "{\"jsonrpc\":\"2.0\",\"method\":\"log_get_level\",\"id\":7}\n";
	struct control_server *cs;
	uint64_t refused = g_ctx.refused_clients;
	char buf[512];
	pthread_t th;
	int a, b, c, d;

	cs = serve(2, &th);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	a = dial();
	b = dial();
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	/* a and b are served: accepted before the third dials */
	CU_ASSERT_EQUAL(send(a, req, strlen(req), 0), (ssize_t)strlen(req));
	CU_ASSERT(recv(a, buf, sizeof(buf), 0) > 0);
	CU_ASSERT_EQUAL(send(b, req, strlen(req), 0), (ssize_t)strlen(req));
	CU_ASSERT(recv(b, buf, sizeof(buf), 0) > 0);
	c = dial();
	CU_ASSERT_FATAL(c >= 0);
	(void)!send(c, req, strlen(req), MSG_NOSIGNAL);
	CU_ASSERT(recv(c, buf, sizeof(buf), 0) <= 0); /* closed without a reply */
	close(c);
	CU_ASSERT_EQUAL(g_ctx.refused_clients, refused + 1);
	close(a);
	usleep(100000); /* the server sees a go */
	d = dial();
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(send(d, req, strlen(req), 0), (ssize_t)strlen(req));
	CU_ASSERT(recv(d, buf, sizeof(buf), 0) > 0);
	close(d);
	close(b);
	unserve(cs, th);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "requests, methods and parameters", test_cases },
		{ "ids and notifications", test_ids_and_notifications },
		{ "the socket", test_socket },
		{ "a client that does not read is not read", test_backpressure },
		{ "clients beyond the cap are closed", test_conn_cap },
		CU_TEST_INFO_NULL,
	};
	int rc;

	log_set_level(LOG_LVL_ERR);
	g_cfg = config_new_empty("test");
	rc = ut_run("control", NULL, NULL, tests);
	config_free(g_cfg);
	return rc;
}

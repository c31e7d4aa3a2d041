/* SPDX-License-Identifier: MIT */
/*
 * nvmeof-bench: what the target says about itself (nvmeof-target --stats-socket), and the
 * tcp-ceiling reference run for a workload's PDU shapes.
 */
#include "config.h"

#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TSTATS_TIMEOUT_MS 3000
#define TSTATS_LINE_MAX 65536
#define JSON_MAX_DEPTH 32
#define NVME_TCP_CMD_PDU 72  /* CapsuleCmd header */
#define NVME_TCP_DATA_HDR 24 /* C2HData / H2CData header */
#define NVME_TCP_RSP_PDU 24  /* CapsuleResp, R2T */

/* ---- a small JSON walker ------------------------------------------------------------------- */
static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* @p at the opening quote; returns the character after the closing one, or NULL. */
static const char *skip_string(const char *p)
{
	for (p++; *p; p++) {
		if (*p == '\\') {
			if (!p[1])
				return NULL;
			p++;
		} else if (*p == '"') {
			return p + 1;
		}
	}
	return NULL;
}

static const char *skip_value(const char *p, int depth)
{
	p = skip_ws(p);
	if (depth > JSON_MAX_DEPTH)
		return NULL;
	if (*p == '"')
		return skip_string(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = skip_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (*p != '"' || !(p = skip_string(p)))
					return NULL;
				p = skip_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = skip_value(p, depth + 1);
			if (!p)
				return NULL;
			p = skip_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
			p = skip_ws(p);
		}
	}
	/* number, true, false, null */
	if (!*p || strchr(",}]", *p))
		return NULL;
	while (*p && !strchr(",}] \t\r\n", *p))
		p++;
	return p;
}

/* The value of member @key (@klen bytes) of the object at @p, or NULL. */
static const char *find_member(const char *p, const char *key, size_t klen)
{
	p = skip_ws(p);
	if (*p != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p == '"') {
		const char *k = p + 1, *end = skip_string(p);

		if (!end)
			return NULL;
		p = skip_ws(end);
		if (*p++ != ':')
			return NULL;
		p = skip_ws(p);
		if ((size_t)(end - 1 - k) == klen && memcmp(k, key, klen) == 0)
			return p;
		p = skip_value(p, 1);
		if (!p)
			return NULL;
		p = skip_ws(p);
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

static const char *find_index(const char *p, unsigned long idx)
{
	p = skip_ws(p);
	if (*p != '[')
		return NULL;
	p = skip_ws(p + 1);
	if (*p == ']')
		return NULL;
	for (unsigned long i = 0;; i++) {
		if (i == idx)
			return p;
		p = skip_value(p, 1);
		if (!p)
			return NULL;
		p = skip_ws(p);
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
}

int bench_json_number(const char *json, const char *path, double *out)
{
	const char *p = json, *seg = path;
	char *end;

	while (p && *seg) {
		size_t len = strcspn(seg, ".");
		char *iend;
		unsigned long idx = strtoul(seg, &iend, 10);

		if (len && iend == seg + len && skip_ws(p)[0] == '[')
			p = find_index(p, idx);
		else
			p = find_member(p, seg, len);
		seg += len;
		if (*seg == '.')
			seg++;
	}
	if (!p)
		return -ENOENT;
	p = skip_ws(p);
	if (*p != '-' && (*p < '0' || *p > '9'))
		return -EINVAL;
	*out = strtod(p, &end);
	if (end == p)
		return -EINVAL;
	return 0;
}

int bench_tstats_parse(const char *json, struct bench_tstats *st)
{
	static const struct {
		const char *path;
		size_t off;
	} fields[] = {
		{ "time_ns", offsetof(struct bench_tstats, time_ns) },
		{ "reactor_total.cpu_ns", offsetof(struct bench_tstats, cpu_ns) },
		{ "process_cpu_ns", offsetof(struct bench_tstats, proc_cpu_ns) },
		{ "reactor_total.xlate_ns", offsetof(struct bench_tstats, xlate_ns) },
		{ "reactor_total.xlate_calls", offsetof(struct bench_tstats, xlate_calls) },
		{ "xlate_probe_ns", offsetof(struct bench_tstats, probe_ns) },
		{ "paths.nvme.cmds", offsetof(struct bench_tstats, cmds[BENCH_NATIVE]) },
		{ "paths.scsi.cmds", offsetof(struct bench_tstats, cmds[BENCH_SCSI]) },
	};
	double nr;

	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (bench_json_number(json, fields[i].path, (double *)((char *)st + fields[i].off)))
			return -EPROTO;
	if (bench_json_number(json, "nreactors", &nr) || nr < 0)
		return -EPROTO;
	st->nreactors = (unsigned int)nr;
	for (unsigned int i = 0; i < st->nreactors && i < BENCH_MAX_REACTORS; i++) {
		char path[48];

		snprintf(path, sizeof(path), "reactors.%u.cpu_ns", i);
		if (bench_json_number(json, path, &st->r_cpu_ns[i]))
			return -EPROTO;
		snprintf(path, sizeof(path), "reactors.%u.xlate_calls", i);
		if (bench_json_number(json, path, &st->r_ios[BENCH_SCSI][i]))
			return -EPROTO;
		/* a target from before the per-reactor I/O count: 0 */
		snprintf(path, sizeof(path), "reactors.%u.fabric_io_cmds", i);
		if (bench_json_number(json, path, &st->r_ios[BENCH_NATIVE][i]))
			st->r_ios[BENCH_NATIVE][i] = 0;
	}
	return 0;
}

int bench_pid_cpu_ns(int pid, double *ns)
{
	char path[64];
	struct dirent *de;
	double sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p2[96];
		unsigned long long run;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p2, sizeof(p2), "/proc/%d/task/%.20s/schedstat", pid, de->d_name);
		f = fopen(p2, "r");
		if (!f)
			continue; /* the thread has just gone */
		if (fscanf(f, "%llu", &run) == 1)
			sum += (double)run;
		fclose(f);
	}
	closedir(d);
	*ns = sum;
	return 0;
}

int bench_tstats_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		snprintf(err, errlen, "target statistics socket %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

int bench_tstats_query(int fd, struct bench_tstats *st, char *err, size_t errlen)
{
	static const char req[] = "stats\n";
	char *line;
	size_t len = 0;
	int rc = 0;

	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		snprintf(err, errlen, "target statistics: send: %s", strerror(errno));
		return -EIO;
	}
	line = malloc(TSTATS_LINE_MAX);
	if (!line)
		return -ENOMEM;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pfd, 1, TSTATS_TIMEOUT_MS) <= 0) {
			snprintf(err, errlen, "target statistics: no answer in %d ms",
				 TSTATS_TIMEOUT_MS);
			rc = -ETIMEDOUT;
			break;
		}
		n = recv(fd, line + len, TSTATS_LINE_MAX - 1 - len, 0);
		if (n <= 0) {
			snprintf(err, errlen, "target statistics: connection closed");
			rc = -ECONNRESET;
			break;
		}
		len += (size_t)n;
		line[len] = '\0';
		if (memchr(line, '\n', len))
			break;
		if (len == TSTATS_LINE_MAX - 1) {
			snprintf(err, errlen, "target statistics: line too long");
			rc = -EPROTO;
			break;
		}
	}
	if (rc == 0 && bench_tstats_parse(line, st) != 0) {
		snprintf(err, errlen, "target statistics: unexpected answer");
		rc = -EPROTO;
	}
	free(line);
	return rc;
}

/* ---- tcp-ceiling -------------------------------------------------------------------------- */
void bench_ceiling_shape(const struct bench_workload *w, uint32_t in_capsule, uint32_t *req,
			 uint32_t *resp, uint32_t *resp2)
{
	bool rd = w->rw == BENCH_RANDREAD || w->rw == BENCH_SEQREAD;

	if (rd) {
		/* CapsuleCmd in; C2HData with the data, then the CapsuleResp. */
		*req = NVME_TCP_CMD_PDU;
		*resp = NVME_TCP_DATA_HDR + w->bs;
		*resp2 = NVME_TCP_RSP_PDU;
	} else if (w->bs <= in_capsule) {
		/* CapsuleCmd with in-capsule data in; CapsuleResp out. */
		*req = NVME_TCP_CMD_PDU + w->bs;
		*resp = NVME_TCP_RSP_PDU;
		*resp2 = 0;
	} else {
		/* CapsuleCmd, then H2CData after an R2T: the same bytes in one round trip
		 * (the ceiling is then an upper bound). */
		*req = NVME_TCP_CMD_PDU + NVME_TCP_DATA_HDR + w->bs;
		*resp = NVME_TCP_RSP_PDU;
		*resp2 = NVME_TCP_RSP_PDU;
	}
}

/* Run @argv, its stdout into @out (NUL-terminated). 0 or -errno. */
static int run_capture(char *const argv[], char *out, size_t outlen, int *status)
{
	int pfd[2];
	size_t len = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + len, outlen - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == outlen - 1)
			break;
	}
	out[len] = '\0';
	close(pfd[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int bench_ceiling_run(const struct bench_opts *o, const struct bench_workload *w,
		      uint32_t in_capsule, double *iops, double *srv_cpu_us, char *err,
		      size_t errlen)
{
	char a_t[16], a_q[16], a_c[16], a_req[24], a_resp[24], a_resp2[24], a_pin[48];
	char out[4096];
	char *argv[16];
	uint32_t req, resp, resp2;
	unsigned int n = 0;
	int status = 0, rc;
	int secs = (int)ceil(o->time_s);

	bench_ceiling_shape(w, in_capsule, &req, &resp, &resp2);
	if (o->hdgst) {
		req += 4;
		resp += 4;
		resp2 += resp2 ? 4 : 0;
	}
	snprintf(a_t, sizeof(a_t), "%d", secs < 1 ? 1 : secs);
	snprintf(a_q, sizeof(a_q), "%u", w->qd);
	snprintf(a_c, sizeof(a_c), "%u", bench_qpairs(o)); /* a connection per queue pair */
	snprintf(a_req, sizeof(a_req), "--req=%u", req);
	snprintf(a_resp, sizeof(a_resp), "--resp=%u", resp);
	snprintf(a_resp2, sizeof(a_resp2), "--resp2=%u", resp2);
	argv[n++] = (char *)o->ceiling;
	argv[n++] = "--json";
	argv[n++] = "-t";
	argv[n++] = a_t;
	argv[n++] = "-q";
	argv[n++] = a_q;
	argv[n++] = "-c";
	argv[n++] = a_c;
	argv[n++] = a_req;
	argv[n++] = a_resp;
	argv[n++] = a_resp2;
	if (o->target_cpu >= 0 && o->client_cpu >= 0) {
		snprintf(a_pin, sizeof(a_pin), "--pin=%d,%d", o->target_cpu, o->client_cpu);
		argv[n++] = a_pin;
	}
	argv[n] = NULL;
	rc = run_capture(argv, out, sizeof(out), &status);
	if (rc < 0) {
		snprintf(err, errlen, "cannot run %s: %s", o->ceiling, strerror(-rc));
		return rc;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s failed (exit status %d)", o->ceiling,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	if (bench_json_number(out, "iops", iops) != 0 ||
	    bench_json_number(out, "server_cpu_us_per_req", srv_cpu_us) != 0) {
		snprintf(err, errlen, "%s: unexpected output", o->ceiling);
		return -EPROTO;
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include <config.h> /* autoconf: _GNU_SOURCE */

#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

/* Process-wide by nature: one pidfile and one start-up pipe per process. */
static struct {
	char pidfile[4096];
	pid_t pidfile_owner;
	bool atexit_done;
	int ready_fd; /* write end of the start-up pipe in the daemon, -1 otherwise */
} g_svc = {.ready_fd = -1};

static void seterr(char *err, size_t errlen, const char *what, int e)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, strerror(e));
}

/* ---- Daemon mode ----------------------------------------------------------------------------- */

/*
 * The waiting parent: a status byte ('0' ready, '1' failed) followed by an optional
 * message. End of file without a byte means the daemon died first.
 */
static void wait_for_daemon(int fd)
{
	char buf[1024];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(buf) - 1) {
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (got >= 1 && buf[0] == '0')
		_exit(0);
	if (got > 1)
		fprintf(stderr, "nvmeof-target: %s\n", buf + 1);
	else
		fprintf(stderr, "nvmeof-target: exited during start-up (see the system log)\n");
	_exit(1);
}

int service_daemonize(char *err, size_t errlen)
{
	int pfd[2], null_fd;
	pid_t pid;

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0) {
		int e = errno;

		seterr(err, errlen, "/dev/null", e);
		return -e;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		int e = errno;

		close(null_fd);
		seterr(err, errlen, "pipe", e);
		return -e;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		close(null_fd);
		seterr(err, errlen, "fork", e);
		return -e;
	}
	if (pid > 0) {
		close(pfd[1]);
		close(null_fd);
		wait_for_daemon(pfd[0]); /* does not return */
	}

	/* First child: new session, then fork again so we can never reacquire a tty. */
	close(pfd[0]);
	if (setsid() < 0)
		_exit(1);
	signal(SIGHUP, SIG_IGN); /* the session leader's exit sends SIGHUP to the group */
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0);
	signal(SIGHUP, SIG_DFL);

	if (chdir("/"))
		_exit(1);
	umask(022);
	dup2(null_fd, STDIN_FILENO);
	dup2(null_fd, STDOUT_FILENO);
	dup2(null_fd, STDERR_FILENO);
	if (null_fd > STDERR_FILENO)
		close(null_fd);
	g_svc.ready_fd = pfd[1];
	return 0;
}

static void release_parent(char status, const char *msg)
{
	size_t len = msg ? strlen(msg) : 0;
	char buf[1024];
	ssize_t n;

	if (g_svc.ready_fd < 0)
		return;
	buf[0] = status;
	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	if (len)
		memcpy(buf + 1, msg, len);
	do {
		n = write(g_svc.ready_fd, buf, len + 1);
	} while (n < 0 && errno == EINTR);
	close(g_svc.ready_fd);
	g_svc.ready_fd = -1;
}

/* ---- Pidfile --------------------------------------------------------------------------------- */

static void remove_pidfile_at_exit(void)
{
	service_remove_pidfile();
}

void service_remove_pidfile(void)
{
	if (g_svc.pidfile[0] && g_svc.pidfile_owner == getpid()) {
		unlink(g_svc.pidfile);
		g_svc.pidfile[0] = '\0';
	}
}

/* PID in an existing pidfile; 0 if unreadable or junk. */
static pid_t read_pidfile(const char *path)
{
	char buf[32];
	ssize_t n;
	long v;
	char *end;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtol(buf, &end, 10);
	if (end == buf || v <= 0 || v > 0x3fffffff || (*end && *end != '\n'))
		return 0;
	return (pid_t)v;
}

int service_write_pidfile(const char *path, char *err, size_t errlen)
{
	char buf[32];
	int fd, len, attempt;
	ssize_t n;

	if (strlen(path) >= sizeof(g_svc.pidfile)) {
		seterr(err, errlen, path, ENAMETOOLONG);
		return -ENAMETOOLONG;
	}
	for (attempt = 0;; attempt++) {
		pid_t other;

		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd >= 0)
			break;
		if (errno != EEXIST || attempt > 0) {
			int e = errno;

			seterr(err, errlen, path, e);
			return -e;
		}
		other = read_pidfile(path);
		if (other > 0 && other != getpid() && (kill(other, 0) == 0 || errno == EPERM)) {
			if (err && errlen)
				snprintf(err, errlen, "%s: already running as PID %d", path,
					 (int)other);
			return -EEXIST;
		}
		/* Stale (process gone, or empty/garbage from a crash while writing). */
		log_notice("removing stale pidfile %s%s", path, other > 0 ? "" : " (unreadable)");
		if (unlink(path) && errno != ENOENT) {
			int e = errno;

			if (err && errlen)
				snprintf(err, errlen, "%s: cannot remove stale pidfile: %s", path,
					 strerror(e));
			return -e;
		}
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	do {
		n = write(fd, buf, (size_t)len);
	} while (n < 0 && errno == EINTR);
	if (n != len || close(fd)) {
		int e = n < 0 ? errno : EIO;

		unlink(path);
		seterr(err, errlen, path, e);
		return -e;
	}
	snprintf(g_svc.pidfile, sizeof(g_svc.pidfile), "%s", path);
	g_svc.pidfile_owner = getpid();
	if (!g_svc.atexit_done) {
		atexit(remove_pidfile_at_exit);
		g_svc.atexit_done = true;
	}
	return 0;
}

/* ---- Service manager notifications ----------------------------------------------------------- */

int service_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t salen;
	size_t plen;
	ssize_t n;
	int fd, rc = 0;

	if (!path || !*path)
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do {
		n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = -errno;
		log_warn("cannot notify the service manager (%s): %s", path, strerror(errno));
	}
	close(fd);
	return rc;
}

void service_ready(void)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", (int)getpid());
	service_notify(msg);
	release_parent('0', NULL);
}

void service_failed(const char *msg)
{
	char st[512];

	snprintf(st, sizeof(st), "STATUS=%s", msg ? msg : "start-up failed");
	service_notify(st);
	/* Gone before the starter returns, so an immediate retry does not trip over it. */
	service_remove_pidfile();
	release_parent('1', msg);
}

void service_reloading(void)
{
	unsigned long long usec;
	struct timespec ts;
	char msg[96];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	usec = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu", usec);
	service_notify(msg);
}

void service_reloaded(void)
{
	service_notify("READY=1");
}

void service_stopping(void)
{
	service_notify("STOPPING=1");
}

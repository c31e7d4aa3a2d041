/* SPDX-License-Identifier: MIT */
/*
 * Service plumbing: pidfile exclusivity and stale-file recovery, sd_notify datagrams on a
 * socket of our own (path and abstract), and daemon mode: the starting process exits 0
 * once the daemon is ready, or 1 with the daemon's reason when start-up fails.
 */
#include <config.h> /* autoconf: _GNU_SOURCE */

#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/service.h"
#include "ut.h"

static char g_dir[256];
static char g_err[512];

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", g_dir, name);
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static char *read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ---- Pidfile --------------------------------------------------------------------------------- */

static void test_pidfile_fresh_and_removed(void)
{
	char path[300], text[64], want[64];

	path_in(path, sizeof(path), "fresh.pid");
	CU_ASSERT_EQUAL_FATAL(service_write_pidfile(path, g_err, sizeof(g_err)), 0);
	snprintf(want, sizeof(want), "%d\n", (int)getpid());
	CU_ASSERT_STRING_EQUAL(read_text(path, text, sizeof(text)), want);
	/* Second daemon (here: the same check with a living PID) is refused. */
	service_remove_pidfile();
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

static void test_pidfile_running_refused(void)
{
	char path[300], text[64], content[32];
	pid_t child;
	int status;

	child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	path_in(path, sizeof(path), "running.pid");
	snprintf(content, sizeof(content), "%d\n", (int)child);
	CU_ASSERT_EQUAL_FATAL(write_text(path, content), 0);
	CU_ASSERT_EQUAL(service_write_pidfile(path, g_err, sizeof(g_err)), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, "already running as PID"));
	/* Left alone. */
	CU_ASSERT_STRING_EQUAL(read_text(path, text, sizeof(text)), content);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);

	/* Now the process is gone: the file is stale and gets replaced. */
	CU_ASSERT_EQUAL(service_write_pidfile(path, g_err, sizeof(g_err)), 0);
	snprintf(content, sizeof(content), "%d\n", (int)getpid());
	CU_ASSERT_STRING_EQUAL(read_text(path, text, sizeof(text)), content);
	service_remove_pidfile();
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

static void test_pidfile_garbage_and_errors(void)
{
	char path[300];

	path_in(path, sizeof(path), "garbage.pid");
	CU_ASSERT_EQUAL_FATAL(write_text(path, "not a pid\n"), 0);
	CU_ASSERT_EQUAL(service_write_pidfile(path, g_err, sizeof(g_err)), 0);
	service_remove_pidfile();

	CU_ASSERT_EQUAL(service_write_pidfile("/nonexistent-dir/x.pid", g_err, sizeof(g_err)),
			-ENOENT);
	CU_ASSERT_STRING_EQUAL(g_err, "/nonexistent-dir/x.pid: No such file or directory");
}

/* A forked child must not remove the parent's pidfile when it exits. */
static void test_pidfile_child_exit_keeps_it(void)
{
	char path[300];
	pid_t child;
	int status;

	path_in(path, sizeof(path), "owner.pid");
	CU_ASSERT_EQUAL_FATAL(service_write_pidfile(path, g_err, sizeof(g_err)), 0);
	child = fork();
	if (child == 0)
		exit(0); /* runs atexit handlers */
	waitpid(child, &status, 0);
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	service_remove_pidfile();
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

/* ---- Notify ---------------------------------------------------------------------------------- */

static int notify_socket(bool abstract, char *env, size_t envlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (abstract) {
		snprintf(env, envlen, "@nvmeof-service-ut-%d", (int)getpid());
		memcpy(sa.sun_path, env, strlen(env));
		sa.sun_path[0] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(env));
	} else {
		path_in(env, envlen, "notify.sock");
		if (strlen(env) >= sizeof(sa.sun_path)) {
			close(fd);
			return -1;
		}
		memcpy(sa.sun_path, env, strlen(env) + 1);
		len = sizeof(sa);
	}
	if (bind(fd, (struct sockaddr *)&sa, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void recv_msg(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
}

static void test_notify(void)
{
	static const bool kinds[] = {false, true};
	size_t i;

	for (i = 0; i < 2; i++) {
		char env[300], msg[256], want[64];
		int fd = notify_socket(kinds[i], env, sizeof(env));

		CU_ASSERT_FATAL(fd >= 0);
		setenv("NOTIFY_SOCKET", env, 1);
		service_ready();
		recv_msg(fd, msg, sizeof(msg));
		snprintf(want, sizeof(want), "READY=1\nMAINPID=%d", (int)getpid());
		CU_ASSERT_STRING_EQUAL(msg, want);
		service_reloading();
		recv_msg(fd, msg, sizeof(msg));
		CU_ASSERT_EQUAL(strncmp(msg, "RELOADING=1\nMONOTONIC_USEC=", 27), 0);
		CU_ASSERT(strtoull(msg + 27, NULL, 10) > 0);
		service_reloaded();
		recv_msg(fd, msg, sizeof(msg));
		CU_ASSERT_STRING_EQUAL(msg, "READY=1");
		service_stopping();
		recv_msg(fd, msg, sizeof(msg));
		CU_ASSERT_STRING_EQUAL(msg, "STOPPING=1");
		close(fd);
		if (!kinds[i]) {
			path_in(env, sizeof(env), "notify.sock");
			unlink(env);
		}
	}
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CU_ASSERT_EQUAL(service_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
	CU_ASSERT_EQUAL(service_notify("READY=1"), 0);
}

/* ---- Daemon mode ----------------------------------------------------------------------------- */

/*
 * In a child (which becomes the waiting "starter"): daemonize, record what the daemon
 * sees, then report @outcome. Returns the starter's exit status and its stderr.
 */
static int run_daemon(int outcome, char *stderr_buf, size_t len, char *report, size_t rlen)
{
	char rpath[300], tmp[320];
	int errpipe[2], status = -1;
	pid_t starter;
	ssize_t n;

	path_in(rpath, sizeof(rpath), "daemon.report");
	unlink(rpath);
	if (pipe(errpipe))
		return -1;
	starter = fork();
	if (starter == 0) {
		close(errpipe[0]);
		dup2(errpipe[1], STDERR_FILENO);
		if (service_daemonize(NULL, 0))
			_exit(3);
		/* The daemon: no controlling terminal, cwd "/", stdio on /dev/null. */
		{
			char cwd[64] = "";
			struct stat st0, stnull;
			FILE *f;

			if (!getcwd(cwd, sizeof(cwd)))
				cwd[0] = '\0';
			fstat(STDERR_FILENO, &st0);
			stat("/dev/null", &stnull);
			snprintf(tmp, sizeof(tmp), "%s.tmp", rpath);
			f = fopen(tmp, "w");
			if (f) {
				fprintf(f, "sid=%d cwd=%s stderr_null=%d",
					getsid(0) == getpid(), cwd,
					st0.st_rdev == stnull.st_rdev && S_ISCHR(st0.st_mode));
				fclose(f);
				rename(tmp, rpath);
			}
		}
		path_in(tmp, sizeof(tmp), "daemon.pid");
		if (service_write_pidfile(tmp, NULL, 0))
			_exit(4);
		if (outcome == 0)
			service_ready();
		else if (outcome == 1)
			service_failed("cannot listen on 127.0.0.1:4420: Address already in use");
		_exit(0); /* outcome 2: dies without a word */
	}
	close(errpipe[1]);
	waitpid(starter, &status, 0);
	n = read(errpipe[0], stderr_buf, len - 1);
	stderr_buf[n > 0 ? n : 0] = '\0';
	close(errpipe[0]);
	/* The daemon may still be writing its report: wait for it (bounded). */
	for (n = 0; n < 200 && access(rpath, F_OK); n++)
		usleep(10000);
	read_text(rpath, report, rlen);
	unlink(rpath);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_daemonize(void)
{
	char err[512], report[256], pidfile[300];

	path_in(pidfile, sizeof(pidfile), "daemon.pid");
	CU_ASSERT_EQUAL(run_daemon(0, err, sizeof(err), report, sizeof(report)), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_STRING_EQUAL(report, "sid=0 cwd=/ stderr_null=1");
	CU_ASSERT_EQUAL(access(pidfile, F_OK), 0); /* the daemon _exit()ed: left behind */
	unlink(pidfile);

	/* A failed start removes the pidfile before the starter returns. */
	CU_ASSERT_EQUAL(run_daemon(1, err, sizeof(err), report, sizeof(report)), 1);
	CU_ASSERT_STRING_EQUAL(err, "nvmeof-target: cannot listen on 127.0.0.1:4420: Address "
				    "already in use\n");
	CU_ASSERT_EQUAL(access(pidfile, F_OK), -1);

	CU_ASSERT_EQUAL(run_daemon(2, err, sizeof(err), report, sizeof(report)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "exited during start-up"));
	unlink(pidfile); /* _exit() without a word: left behind */
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "pidfile written and removed", test_pidfile_fresh_and_removed },
		{ "pidfile of a running process", test_pidfile_running_refused },
		{ "pidfile garbage and errors", test_pidfile_garbage_and_errors },
		{ "pidfile survives a child's exit", test_pidfile_child_exit_keeps_it },
		{ "notify socket", test_notify },
		{ "daemonize", test_daemonize },
		CU_TEST_INFO_NULL,
	};
	int rc;

	log_set_level(LOG_LVL_ERR);
	unsetenv("NOTIFY_SOCKET"); /* never talk to a real service manager from a test */
	snprintf(g_dir, sizeof(g_dir), "%s/service_ut.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir))
		return 1;
	rc = ut_run("service", NULL, NULL, tests);
	rmdir(g_dir);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * Running as a system service: detaching from the terminal, a pidfile, and readiness
 * notifications to the service manager (the sd_notify datagram protocol, spoken directly
 * over AF_UNIX so there is no libsystemd dependency). Logging to syslog is
 * log_use_syslog() in common/log.h.
 *
 * Order in main(): parse flags, load the configuration (errors still reach the terminal),
 * service_daemonize() when asked to detach (before any thread is started: fork() keeps
 * only the calling thread), service_write_pidfile(), start reactors and apply the
 * configuration, then service_ready() -- or service_failed() with the reason, which the
 * waiting parent prints before exiting with status 1.
 */
#ifndef NVMEOF_TARGET_SERVICE_H
#define NVMEOF_TARGET_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Detach: fork, setsid, fork again, chdir("/"), umask 022, stdin/stdout/stderr to
 * /dev/null. Returns 0 in the daemon. The original process does not return: it waits
 * until the daemon calls service_ready() (exit 0) or service_failed() / exits early
 * (prints the reason, exit 1), so a "forking" service manager and a shell both see
 * whether start-up worked. -errno if a fork or /dev/null fails (nothing detached).
 */
int service_daemonize(char *err, size_t errlen);

/*
 * Create @path holding our PID, exclusively (O_EXCL). An existing pidfile whose process
 * is gone is replaced; one whose process runs gives -EEXIST ("already running as PID N").
 * The file is removed at exit (only by this process, not by forked children).
 */
int service_write_pidfile(const char *path, char *err, size_t errlen);
/* Remove the pidfile now (also done at exit). */
void service_remove_pidfile(void);

/*
 * Send @state ("READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...") to $NOTIFY_SOCKET
 * (a path, or "@name" for an abstract socket). 0 when sent or when NOTIFY_SOCKET is not
 * set, -errno on a send error.
 */
int service_notify(const char *state);
/* Start-up finished: READY=1 (with MAINPID) and release a waiting service_daemonize(). */
void service_ready(void);
/* Start-up failed: remove the pidfile and hand @msg to a waiting service_daemonize()
 * parent (it prints it). */
void service_failed(const char *msg);
/* Around a SIGHUP reload: RELOADING=1 (with MONOTONIC_USEC), then READY=1. */
void service_reloading(void);
void service_reloaded(void);
void service_stopping(void);

#endif

/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdio.h>
#include <syslog.h>
#include <time.h>

#define LOG_BURST 10

static enum log_level g_level = LOG_LVL_NOTICE;
static bool g_syslog;
static bool g_timestamps;

static const char *const level_names[] = {
	[LOG_LVL_ERR] = "error",   [LOG_LVL_WARN] = "warning", [LOG_LVL_NOTICE] = "notice",
	[LOG_LVL_INFO] = "info",   [LOG_LVL_DEBUG] = "debug",
};

static const int syslog_prio[] = {
	[LOG_LVL_ERR] = LOG_ERR,   [LOG_LVL_WARN] = LOG_WARNING, [LOG_LVL_NOTICE] = LOG_NOTICE,
	[LOG_LVL_INFO] = LOG_INFO, [LOG_LVL_DEBUG] = LOG_DEBUG,
};

void log_set_level(enum log_level lvl)
{
	g_level = lvl;
}

enum log_level log_get_level(void)
{
	return g_level;
}

void log_use_syslog(bool on, const char *ident)
{
	if (on && !g_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (!on && g_syslog)
		closelog();
	g_syslog = on;
}

void log_use_timestamps(bool on)
{
	g_timestamps = on;
}

void log_vmsg(enum log_level lvl, const char *fmt, va_list ap)
{
	char buf[1024], ts[40] = "";

	if (lvl > g_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (g_syslog) {
		syslog(syslog_prio[lvl], "%s", buf);
		return;
	}
	if (g_timestamps) {
		struct timespec now;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &now);
		localtime_r(&now.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S ", &tm);
	}
	fprintf(stderr, "%snvmeof: %s: %s\n", ts, level_names[lvl], buf);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

void log_msg_rl(struct log_ratelimit *rl, enum log_level lvl, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	/* Sites are touched from several reactors; a lost update only changes the count. */
	if (ts.tv_sec != __atomic_load_n(&rl->window, __ATOMIC_RELAXED)) {
		unsigned int dropped = __atomic_exchange_n(&rl->dropped, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&rl->window, ts.tv_sec, __ATOMIC_RELAXED);
		__atomic_store_n(&rl->count, 0, __ATOMIC_RELAXED);
		if (dropped)
			log_msg(lvl, "(%u similar messages suppressed)", dropped);
	}
	if (__atomic_fetch_add(&rl->count, 1, __ATOMIC_RELAXED) >= LOG_BURST) {
		__atomic_fetch_add(&rl->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

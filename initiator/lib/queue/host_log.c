/* SPDX-License-Identifier: MIT */
/* Library logging through the application's callback, per-thread error strings, clock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "host_internal.h"

static struct {
	nvmeof_log_fn fn;
	void *arg;
	enum nvmeof_log_level max;
} log_sink = { NULL, NULL, NVMEOF_LOG_ERR };

static __thread char last_error[512];

void nvmeof_set_log_fn(nvmeof_log_fn fn, void *arg, enum nvmeof_log_level max_level)
{
	log_sink.fn = fn;
	log_sink.arg = arg;
	log_sink.max = max_level;
}

bool nlog_enabled(enum nvmeof_log_level lvl)
{
	return log_sink.fn && lvl <= log_sink.max;
}

void nlog(enum nvmeof_log_level lvl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!nlog_enabled(lvl))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_sink.fn(lvl, buf, log_sink.arg);
}

int set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	nlog_debug("%s", last_error);
	return err;
}

void clear_error(void)
{
	last_error[0] = '\0';
}

const char *nvmeof_last_error(void)
{
	return last_error;
}

const char *nvmeof_strerror(int err)
{
	if (err > 0)
		return nvmeof_status_name((uint16_t)err);
	return strerror(-err);
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

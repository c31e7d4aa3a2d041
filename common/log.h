/* SPDX-License-Identifier: MIT */
/* Logging to stderr (or syslog) with levels; peer-triggerable errors go through the
 * rate-limited variant so a misbehaving host cannot flood the log. */
#ifndef NVMEOF_LOG_H
#define NVMEOF_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_NOTICE, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);
void log_use_syslog(bool on, const char *ident);
/* Prefix stderr lines with the local time (a log file has no journal to add it). */
void log_use_timestamps(bool on);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level lvl, const char *fmt, va_list ap);

/* At most a burst of messages per second per call site; drops are counted and reported. */
struct log_ratelimit {
	long window;
	unsigned int count;
	unsigned int dropped;
};
void log_msg_rl(struct log_ratelimit *rl, enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)                                                                     \
	do {                                                                               \
		if (log_get_level() >= LOG_LVL_DEBUG)                                      \
			log_msg(LOG_LVL_DEBUG, __VA_ARGS__);                               \
	} while (0)

/* Rate-limited warning from a call site (one static limiter per site). */
#define log_peer(...)                                                                      \
	do {                                                                               \
		static struct log_ratelimit rl__;                                          \
		log_msg_rl(&rl__, LOG_LVL_WARN, __VA_ARGS__);                              \
	} while (0)

#endif

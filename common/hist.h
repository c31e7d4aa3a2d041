/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram for counters kept per thread: values (nanoseconds) below
 * HIST_MIN_NS share bucket 0; above, each power of two is split into HIST_SUB linear
 * sub-buckets, so a bucket is at most 25% wide relative to its value. Up to about 137 s;
 * larger values land in the last bucket.
 *
 * One writer per histogram (hist_record() uses plain loads and relaxed stores); readers on
 * other threads take a copy with hist_read() and add copies up with hist_add().
 */
#ifndef NVMEOF_COMMON_HIST_H
#define NVMEOF_COMMON_HIST_H

#include <stdint.h>

#define HIST_MIN_SHIFT 10 /* 1024 ns */
#define HIST_MAX_SHIFT 37 /* last octave starts at 2^37 ns */
#define HIST_SUB_BITS  2
#define HIST_SUB       (1u << HIST_SUB_BITS)
#define HIST_NBUCKETS  (1 + (HIST_MAX_SHIFT - HIST_MIN_SHIFT + 1) * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t bucket[HIST_NBUCKETS];
};

/* Index of the bucket @v_ns falls in. */
unsigned int hist_index(uint64_t v_ns);
/* Exclusive upper bound of bucket @idx in ns: every value counted there is below it
 * (UINT64_MAX for the last bucket). */
uint64_t hist_bucket_limit(unsigned int idx);
void hist_record(struct hist *h, uint64_t v_ns);
void hist_read(const struct hist *src, struct hist *dst);
void hist_add(struct hist *dst, const struct hist *src);

#endif

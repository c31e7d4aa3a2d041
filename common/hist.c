/* SPDX-License-Identifier: MIT */
/* Log-linear histogram (hist.h). */
#include "config.h"

#include "hist.h"

unsigned int hist_index(uint64_t v)
{
	unsigned int k, sub;

	if (v < (1ull << HIST_MIN_SHIFT))
		return 0;
	k = 63u - (unsigned int)__builtin_clzll(v);
	if (k > HIST_MAX_SHIFT)
		return HIST_NBUCKETS - 1;
	sub = (unsigned int)(v >> (k - HIST_SUB_BITS)) & (HIST_SUB - 1);
	return 1 + (k - HIST_MIN_SHIFT) * HIST_SUB + sub;
}

uint64_t hist_bucket_limit(unsigned int idx)
{
	unsigned int k, sub;

	if (idx == 0)
		return 1ull << HIST_MIN_SHIFT;
	if (idx >= HIST_NBUCKETS - 1)
		return UINT64_MAX;
	k = HIST_MIN_SHIFT + (idx - 1) / HIST_SUB;
	sub = (idx - 1) % HIST_SUB;
	return (uint64_t)(HIST_SUB + sub + 1) << (k - HIST_SUB_BITS);
}

#define ADD(f, v) __atomic_store_n(&(f), (f) + (v), __ATOMIC_RELAXED)

void hist_record(struct hist *h, uint64_t v)
{
	ADD(h->bucket[hist_index(v)], 1);
	ADD(h->sum_ns, v);
	ADD(h->count, 1);
}

void hist_read(const struct hist *src, struct hist *dst)
{
	/* count last on the writer side, first here: a reader never sees more in count than
	 * in the buckets it then reads (buckets may run ahead by the commands in between). */
	dst->count = __atomic_load_n(&src->count, __ATOMIC_RELAXED);
	dst->sum_ns = __atomic_load_n(&src->sum_ns, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < HIST_NBUCKETS; i++)
		dst->bucket[i] = __atomic_load_n(&src->bucket[i], __ATOMIC_RELAXED);
}

void hist_add(struct hist *dst, const struct hist *src)
{
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	for (unsigned int i = 0; i < HIST_NBUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

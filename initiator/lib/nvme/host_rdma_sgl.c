/* SPDX-License-Identifier: MIT */
/*
 * Keyed SGL descriptors for commands whose data lies in registered memory (see
 * host_rdma_sgl.h). Pure functions, unit-tested in tests/unit/initiator/lib/.
 */
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "common/nvme_rdma_spec.h"
#include "host_rdma_sgl.h"

int host_rdma_sgl_build(const struct host_mem *m, const struct iovec *iov, int iovcnt, size_t off,
			uint32_t len, struct nvme_sgl_desc *descs, unsigned int max)
{
	uint64_t last_addr = 0;
	uint32_t last_len = 0, last_key = 0;
	unsigned int n = 0;
	size_t left = len;

	for (int i = 0; i < iovcnt && left; i++) {
		const struct host_mem_region *r;
		uintptr_t p;
		size_t piece;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		p = (uintptr_t)iov[i].iov_base + off;
		piece = iov[i].iov_len - off;
		if (piece > left)
			piece = left;
		off = 0;
		r = host_mem_find(m, p, piece);
		if (!r)
			return 0;
		left -= piece;
		while (piece) {
			uint32_t take = piece > NVME_RDMA_KEYED_LEN_MAX ? NVME_RDMA_KEYED_LEN_MAX
									: (uint32_t)piece;

			if (n && last_key == r->key && last_addr + last_len == p &&
			    (uint64_t)last_len + take <= NVME_RDMA_KEYED_LEN_MAX) {
				last_len += take;
				nvme_sgl_set_keyed(&descs[n - 1], last_addr, last_len, last_key,
						   false);
			} else {
				if (n == max)
					return -E2BIG;
				last_addr = p;
				last_len = take;
				last_key = r->key;
				nvme_sgl_set_keyed(&descs[n++], last_addr, last_len, last_key,
						   false);
			}
			p += take;
			piece -= take;
		}
	}
	if (left)
		return 0; /* the iovecs hold less than @len: let the bounce path report it */
	return (int)n;
}

void host_rdma_sgl_set(struct nvme_cmd *sqe, const struct nvme_sgl_desc *descs, unsigned int n)
{
	struct nvme_sgl_desc *sgl = &sqe->dptr.sgl1;

	if (n == 1) {
		memcpy(sgl, &descs[0], sizeof(*sgl));
		return;
	}
	memset(sgl, 0, sizeof(*sgl));
	put_le64(&sgl->addr, 0);
	put_le32(sgl->length, n * (uint32_t)sizeof(*descs));
	sgl->type = NVME_SGL_TYPE(NVME_SGL_TYPE_LAST_SEGMENT, NVME_SGL_SUBTYPE_OFFSET);
}

/* SPDX-License-Identifier: MIT */
/*
 * NVMe passthrough: the commands a namespace served from an NVMe generic character device
 * (/dev/ngXnY) sends to the drive through io_uring (IORING_OP_URING_CMD with
 * NVME_URING_CMD_IO on a ring set up with SQE128 | CQE32), and what its completions mean.
 * Pure functions (the command built from a bdev_io, the status mapped to -errno) plus the
 * open-time Identify through the NVME_IOCTL_ADMIN_CMD ioctl, which only reads.
 *
 * A host's NVM command (BDEV_OP_NVME) goes as it came, with the drive's NSID and no
 * fused/PSDT bits (the kernel builds the data pointer); the drive's status comes back
 * unchanged. The generic ops other parts of the target use (the SCSI translation, Flush to
 * every namespace) become Read, Write, Flush and Write Zeroes (DEAC for a discard).
 */
#include "config.h"

#include <errno.h>
#include <linux/nvme_ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "bdev_internal.h"
#include "common/endian.h"
#include "common/nvme_spec.h"

#define NVME_RW_FUA_BIT  (1u << 30)
#define NVME_WZ_DEAC_BIT (1u << 25)
#define NVME_MAX_NLB     65536u /* blocks one Read/Write/Write Zeroes can name */

uint64_t bdev_nvme_step_len(const struct bdev_io *io, unsigned int lba_shift)
{
	uint64_t left = io->len - io->be.done, max = (uint64_t)NVME_MAX_NLB << lba_shift;

	return left < max ? left : max;
}

int bdev_nvme_build(const struct bdev_io *io, uint32_t nsid, unsigned int lba_shift,
		    const struct iovec *iov, int iovcnt, struct nvme_uring_cmd *c, bool *vec)
{
	uint64_t off = io->offset + io->be.done, len = bdev_nvme_step_len(io, lba_shift);
	uint64_t slba = off >> lba_shift;
	uint32_t nlb0 = len ? (uint32_t)(len >> lba_shift) - 1 : 0;

	memset(c, 0, sizeof(*c));
	*vec = false;
	c->nsid = nsid;
	switch (io->op) {
	case BDEV_OP_NVME: {
		const struct nvme_cmd *h = io->nvme_cmd;

		c->opcode = h->opc;
		c->cdw2 = get_le32(&h->cdw2);
		c->cdw3 = get_le32(&h->cdw3);
		c->cdw10 = get_le32(&h->cdw10);
		c->cdw11 = get_le32(&h->cdw11);
		c->cdw12 = get_le32(&h->cdw12);
		c->cdw13 = get_le32(&h->cdw13);
		c->cdw14 = get_le32(&h->cdw14);
		c->cdw15 = get_le32(&h->cdw15);
		/* A host that turned the volatile cache off gets its writes made durable. */
		if (io->fua && h->opc == NVME_OPC_WRITE)
			c->cdw12 |= NVME_RW_FUA_BIT;
		if (!io->len)
			return 0;
		if ((h->opc & 3) == 3 || !(h->opc & 3))
			return -EINVAL; /* data both ways, or data for a command without any */
		break;
	}
	case BDEV_OP_READ:
	case BDEV_OP_WRITE:
		if (io->len != len)
			return -EINVAL; /* one command per request */
		c->opcode = io->op == BDEV_OP_READ ? NVME_OPC_READ : NVME_OPC_WRITE;
		c->cdw10 = (uint32_t)slba;
		c->cdw11 = (uint32_t)(slba >> 32);
		c->cdw12 = nlb0 | (io->fua && io->op == BDEV_OP_WRITE ? NVME_RW_FUA_BIT : 0);
		break;
	case BDEV_OP_FLUSH:
		c->opcode = NVME_OPC_FLUSH;
		return 0;
	case BDEV_OP_WRITE_ZEROES:
	case BDEV_OP_DISCARD:
		c->opcode = NVME_OPC_WRITE_ZEROES;
		c->cdw10 = (uint32_t)slba;
		c->cdw11 = (uint32_t)(slba >> 32);
		c->cdw12 = nlb0 | (io->op == BDEV_OP_DISCARD ? NVME_WZ_DEAC_BIT : 0) |
			   (io->fua ? NVME_RW_FUA_BIT : 0);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
	if (iovcnt == 1) {
		c->addr = (uint64_t)(uintptr_t)iov[0].iov_base;
		c->data_len = (uint32_t)io->len;
	} else {
		c->addr = (uint64_t)(uintptr_t)iov;
		c->data_len = (uint32_t)iovcnt; /* NVME_URING_CMD_IO_VEC: the vector count */
		*vec = true;
	}
	return 0;
}

int bdev_nvme_result(int res, uint16_t *nvme_status)
{
	uint16_t st;

	*nvme_status = 0;
	if (res <= 0)
		return res;
	/* The CQE status field without its phase bit: SC 7:0, SCT 10:8, CRD, More, DNR. */
	st = (uint16_t)(res << 1);
	*nvme_status = st;
	switch (NVME_STATUS_SCT(st) << 8 | NVME_STATUS_SC(st)) {
	case NVME_SCT_GENERIC << 8 | NVME_SC_LBA_OUT_OF_RANGE:
		return -ERANGE;
	case NVME_SCT_GENERIC << 8 | NVME_SC_CAPACITY_EXCEEDED:
		return -ENOSPC;
	case NVME_SCT_MEDIA << 8 | NVME_SC_COMPARE_FAILURE:
		return -EILSEQ;
	case NVME_SCT_GENERIC << 8 | NVME_SC_INVALID_OPCODE:
	case NVME_SCT_GENERIC << 8 | NVME_SC_INVALID_FIELD:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

/* Identify (CNS @cns, NSID @nsid) into @buf (4096 bytes) through the admin ioctl. */
static int nvme_identify(int fd, uint32_t nsid, uint8_t cns, void *buf)
{
	struct nvme_admin_cmd cmd;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = NVME_ADMIN_IDENTIFY;
	cmd.nsid = nsid;
	cmd.addr = (uint64_t)(uintptr_t)buf;
	cmd.data_len = 4096;
	cmd.cdw10 = cns;
	rc = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &cmd);
	if (rc < 0)
		return -errno;
	return rc ? -EIO : 0; /* a positive value is the NVMe status */
}

int bdev_nvme_id_parse(const struct nvme_id_ctrl *ctrl, const struct nvme_id_ns *ns,
		       struct bdev_nvme_id *id, uint64_t *nsze)
{
	const struct nvme_lbaf *f;
	unsigned int fmt = ns->flbas & 0xf;

	if (ns->nlbaf >= 16)
		fmt |= (unsigned int)(ns->flbas >> 5 & 3) << 4;
	if (fmt > ns->nlbaf)
		return -EINVAL;
	f = &ns->lbaf[fmt];
	if (get_le16(&f->ms) || (f->lbads != 9 && f->lbads != 12))
		return -EOPNOTSUPP; /* metadata, or a block size the target does not serve */
	*nsze = get_le64(&ns->nsze);
	if (!*nsze)
		return -ENODEV; /* an inactive namespace */
	id->lbads = f->lbads;
	id->rp = f->rp;
	id->nsfeat = ns->nsfeat;
	id->dlfeat = ns->dlfeat;
	id->nawun = get_le16(&ns->nawun);
	id->nawupf = get_le16(&ns->nawupf);
	id->nacwu = get_le16(&ns->nacwu);
	id->noiob = get_le16(&ns->noiob);
	id->npwg = get_le16(&ns->npwg);
	id->npwa = get_le16(&ns->npwa);
	id->npdg = get_le16(&ns->npdg);
	id->npda = get_le16(&ns->npda);
	id->nows = get_le16(&ns->nows);
	id->oncs = get_le16(&ctrl->oncs);
	id->vwc = ctrl->vwc & NVME_CTRL_VWC_PRESENT;
	/* MDTS is in units of the minimum page size; 4 KiB is what every drive has. */
	id->max_xfer = ctrl->mdts && ctrl->mdts < 20 ? 4096u << ctrl->mdts : 0;
	return 0;
}

int bdev_nvme_identify(int fd, struct bdev_nvme_id *id, struct bdev_ident *ident, uint64_t *nsze)
{
	struct nvme_id_ctrl *ctrl = NULL;
	struct nvme_id_ns *ns = NULL;
	int nsid, rc;

	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0)
		return nsid < 0 ? -errno : -ENODEV;
	if (posix_memalign((void **)&ctrl, 4096, 4096) ||
	    posix_memalign((void **)&ns, 4096, 4096)) {
		free(ctrl);
		return -ENOMEM;
	}
	rc = nvme_identify(fd, 0, NVME_ID_CNS_CTRL, ctrl);
	if (!rc)
		rc = nvme_identify(fd, (uint32_t)nsid, NVME_ID_CNS_NS, ns);
	if (!rc)
		rc = bdev_nvme_id_parse(ctrl, ns, id, nsze);
	if (!rc) {
		id->nsid = (uint32_t)nsid;
		memcpy(ident->nguid, ns->nguid, sizeof(ident->nguid));
		memcpy(ident->eui64, ns->eui64, sizeof(ident->eui64));
	}
	free(ctrl);
	free(ns);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * iSCSI sessions: the TCP connection to the portal, the initiator's iSCSI name and ISID
 * (one session per queue pair, told apart by the ISID qualifier), login (with a fallback
 * to CHAP MD5 for targets that misread CHAP_A=7), and the per-session resources sized by
 * queue depth: tasks, UNMAP parameter lists, the receive staging buffer, a zero block.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_iscsi.h"
#include "queue/host_transport.h"

void iscsi_initiator_name(const char *hostnqn, char *out, size_t len)
{
	size_t o = 0;

	/* "nqn.2014-08.org.nvmexpress:uuid:..." -> "iqn.2014-08.org.nvmexpress:uuid:...":
	 * the host's NVMe identity as an iSCSI name (lower case, allowed characters). */
	if (!strncmp(hostnqn, "nqn.", 4)) {
		snprintf(out, len, "iqn.");
		o = 4;
		hostnqn += 4;
	} else {
		snprintf(out, len, "iqn.2026-11.io.nvmeof:");
		o = strlen(out);
	}
	for (; *hostnqn && o + 1 < len && o < ISCSI_NAME_MAX; hostnqn++) {
		char c = *hostnqn;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		      c == ':'))
			c = '-';
		out[o++] = c;
	}
	out[o] = '\0';
}

int iscsi_qpair_connect_fd(struct nvmeof_qpair *qp, int fd, int timeout_ms)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	struct iscsi_login_cfg cfg = { 0 };
	char iname[ISCSI_NAME_MAX + 1];
	int one = 1, fl, rc;

	iq->fd = fd;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return set_error(-errno, "fcntl: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	iq->ntasks = (uint16_t)(qp->nreqs + 1);
	if (!iq->tasks)
		iq->tasks = calloc(iq->ntasks, sizeof(*iq->tasks));
	if (!iq->params)
		iq->params = calloc(iq->ntasks, SCSI_ENCAP_PARAM_LEN);
	if (!iq->rbuf)
		iq->rbuf = malloc(ISCSI_RBUF_SIZE);
	if (!iq->zero_block)
		iq->zero_block = calloc(1, ISCSI_ZERO_BLOCK_MAX);
	if (!iq->tasks || !iq->params || !iq->rbuf || !iq->zero_block)
		return set_error(-ENOMEM, "out of memory");
	for (uint16_t i = 0; i < iq->ntasks; i++) {
		struct host_iscsi_task *t = &iq->tasks[i];

		t->index = i;
		t->param = iq->params + (size_t)i * SCSI_ENCAP_PARAM_LEN;
		t->pdu.task = t;
	}
	if (!iq->lu && ctrlr->admin && ctrlr->admin != qp)
		iq->lu = iscsi_qp(ctrlr->admin)->lu;
	if (iq->lu)
		iq->zero_iov.iov_len = iq->lu->block_size;
	iq->zero_iov.iov_base = iq->zero_block;
	if (ctrlr->admin && ctrlr->admin != qp) {
		memcpy(iq->isid, iscsi_qp(ctrlr->admin)->isid, 4);
		iq->chap_md5_only = iscsi_qp(ctrlr->admin)->chap_md5_only;
	}
	put_be16(&iq->isid[4], qp->qid);

	iscsi_initiator_name(ctrlr->hostnqn, iname, sizeof(iname));
	cfg.initiator_name = iname;
	cfg.target_name = ctrlr->uri.name;
	cfg.user = ctrlr->uri.user;
	cfg.secret = ctrlr->uri.secret;
	memcpy(cfg.isid, iq->isid, sizeof(cfg.isid));
	cfg.cid = 0;
	cfg.cmdsn = 1;
	cfg.hdgst = ctrlr->opts.hdgst;
	cfg.ddgst = ctrlr->opts.ddgst;
	cfg.chap_md5_only = iq->chap_md5_only;
	rc = iscsi_login(fd, &cfg, timeout_ms, &iq->s);
	if (rc)
		return rc;
	iq->logged_in = true;
	iq->rx_state = ISCSI_RX_HDR;
	return 0;
}

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = now_ms();

	return deadline > now ? (int)(deadline - now) : 1;
}

int iscsi_qpair_connect(struct nvmeof_qpair *qp, int timeout_ms)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int fd = sock_dial(&qp->ctrlr->uri, timeout_ms, deadline), rc;

	if (fd < 0)
		return fd;
	rc = iscsi_qpair_connect_fd(qp, fd, remaining_ms(deadline));
	if ((rc == -EACCES || rc == -ECONNREFUSED) && iq->s.chap_alg == ISCSI_CHAP_SHA256) {
		/* Some targets (tgt 1.0.x) take CHAP_A=7 for SHA-1: fall back to MD5. */
		nlog_info("queue %u: CHAP with SHA-256 refused (%s); trying MD5", qp->qid,
			  nvmeof_last_error());
		close(iq->fd);
		iq->fd = -1;
		iq->chap_md5_only = true;
		fd = sock_dial(&qp->ctrlr->uri, timeout_ms, deadline);
		if (fd < 0)
			return fd;
		clear_error();
		rc = iscsi_qpair_connect_fd(qp, fd, remaining_ms(deadline));
	}
	return rc;
}

struct nvmeof_qpair *iscsi_qpair_alloc(void)
{
	struct iscsi_qpair *iq = calloc(1, sizeof(*iq));

	if (!iq)
		return NULL;
	iq->fd = -1;
	iq->qp.ops = &iscsi_transport_ops;
	iq->rx_state = ISCSI_RX_DEAD;
	TAILQ_INIT(&iq->sendq);
	TAILQ_INIT(&iq->windowq);
	if (getrandom(iq->isid, 4, 0) != 4) {
		uint32_t r = (uint32_t)now_ms() ^ (uint32_t)getpid() << 8;

		memcpy(iq->isid, &r, 4);
	}
	/* ISID type 10b (random): byte 0 = 0x80 | A (reserved 0); B, C random; D = qid. */
	iq->isid[0] = 0x80;
	return &iq->qp;
}

void iscsi_qpair_free(struct nvmeof_qpair *qp)
{
	struct iscsi_qpair *iq = iscsi_qp(qp);

	if (iq->fd >= 0)
		close(iq->fd);
	if (qp->qid == 0 && (!qp->ctrlr || qp->ctrlr->admin == qp)) {
		free(iq->lu);
		free(iq->id_ctrl);
		free(iq->id_ns);
	}
	free(iq->tasks);
	free(iq->params);
	free(iq->rbuf);
	free(iq->zero_block);
	free(iq);
}

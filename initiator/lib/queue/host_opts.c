/* SPDX-License-Identifier: MIT */
/* libnvmeof: the defaults of struct nvmeof_opts, which every connect starts from. */
#include <string.h>

#include "host_internal.h"

#define RECONNECT_DELAY_DEFAULT 2   /* seconds; Linux's 10 is long for a userspace host */
#define CTRL_LOSS_TMO_DEFAULT   600 /* seconds, as Linux */

void nvmeof_opts_init(struct nvmeof_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->io_queues = 1;
	opts->queue_depth = 128;
	opts->kato_ms = 30000;
	opts->connect_timeout_ms = 10000;
	opts->admin_timeout_ms = 10000;
	opts->io_timeout_ms = 30000;
	opts->reconnect_delay = RECONNECT_DELAY_DEFAULT;
	opts->ctrl_loss_tmo = CTRL_LOSS_TMO_DEFAULT;
	opts->fast_io_fail_tmo = -1;
	opts->tls_identity = 1;
}

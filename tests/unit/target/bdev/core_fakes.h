/* SPDX-License-Identifier: MIT */
#ifndef TESTS_UNIT_BDEV_CORE_FAKES_H
#define TESTS_UNIT_BDEV_CORE_FAKES_H

struct nvmf_ns;

/* nvmf_resv_reload() calls for @ns so far. */
unsigned int fake_reloads(struct nvmf_ns *ns);

#endif

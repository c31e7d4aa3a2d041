/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry points of the targets in tests/fuzz/. Each fuzz_*.c defines
 * LLVMFuzzerTestOneInput (and may define LLVMFuzzerInitialize); it is linked either with
 * libFuzzer (configure --enable-fuzz) or with replay_main.c, which runs every file of the
 * target's seed corpus and regression inputs once (make check).
 */
#ifndef NVMEOF_TESTS_FUZZ_H
#define NVMEOF_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Inputs larger than this are cut (keeps single runs short; libFuzzer -max_len agrees). */
#define FUZZ_MAX_INPUT (256 * 1024)

#endif

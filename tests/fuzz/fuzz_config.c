/* SPDX-License-Identifier: MIT */
/*
 * The JSON configuration loader (target/config/config_file.c): arbitrary text through
 * config_load_string(), then the lookups on whatever model it accepted. A rejected input
 * must leave a message; an accepted one must be self-consistent.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "fuzz.h"
#include "config/config_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_LVL_ERR);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tgt_config *cfg = NULL;
	char err[512] = "";
	char *text;
	int rc;

	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = config_load_string(text, "fuzz.json", &cfg, err, sizeof(err));
	free(text);
	if (rc != 0) {
		if (cfg != NULL || err[0] == '\0')
			abort(); /* a rejection names its reason and returns nothing */
		return 0;
	}
	for (unsigned int i = 0; i < cfg->nports; i++)
		if (config_find_port(cfg, cfg->ports[i].portid) == NULL)
			abort();
	for (unsigned int i = 0; i < cfg->nsubsystems; i++) {
		const struct config_subsys *s = &cfg->subsystems[i];

		if (config_find_subsys(cfg, s->nqn) == NULL)
			abort();
		for (unsigned int j = 0; j < s->nnamespaces; j++)
			if (config_find_ns(s, s->namespaces[j].nsid) == NULL)
				abort();
	}
	config_free(cfg);
	return 0;
}

/* pmi_line.c - parsing one PMI-1 wire line (see pmi_line.h). */
#include <string.h>

#include "pmi_line.h"

int bip_pmi_line_parse(char *line, struct bip_pmi_line *m)
{
	char *save = NULL;
	char *tok;

	m->n = 0;
	for (tok = strtok_r(line, " \r", &save); tok;
	     tok = strtok_r(NULL, " \r", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || m->n == BIP_PMI_MAX_TOKENS)
			return -1;
		*eq = '\0';
		m->key[m->n] = tok;
		m->val[m->n] = eq + 1;
		m->n++;
	}
	if (m->n == 0 || strcmp(m->key[0], "cmd") != 0)
		return -1;
	return 0;
}

const char *bip_pmi_line_find(const struct bip_pmi_line *m, const char *key)
{
	for (int i = 1; i < m->n; i++)
		if (strcmp(m->key[i], key) == 0)
			return m->val[i];
	return NULL;
}

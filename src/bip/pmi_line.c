/* pmi_line.c - parsing PMI-1 text: wire lines and the process mapping
 * (see pmi_line.h). */
#include <stdbool.h>
#include <stdint.h>
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

/* One "(start,count,ppn)" block of a process mapping. */
static bool map_block(const char **p, uint64_t size, uint64_t b[3])
{
	if (*(*p)++ != '(')
		return false;
	for (int i = 0; i < 3; i++) {
		const char *start = *p;
		uint64_t v = 0;

		while (**p >= '0' && **p <= '9' && *p - start < 10)
			v = v * 10 + (uint64_t)(*(*p)++ - '0');
		if (*p == start || v > size || **p != (i < 2 ? ',' : ')'))
			return false;
		(*p)++;
		b[i] = v;
	}
	return b[1] && b[2];
}

/* The host of rank r (r below the ranks the blocks cover). */
static uint64_t block_host(uint64_t blocks[][3], uint64_t r)
{
	for (int i = 0;; i++) {
		uint64_t span = blocks[i][1] * blocks[i][2];

		if (r < span)
			return blocks[i][0] + r / blocks[i][2];
		r -= span;
	}
}

int bip_pmi_map_place(const char *map, int rank, int size,
		      struct bip_pmi_place *pl)
{
	uint64_t blocks[BIP_PMI_MAP_BLOCKS][3], covered = 0, max_host = 0;
	const char *p = map;
	int n = 0;

	if (rank < 0 || rank >= size || strncmp(p, "(vector", 7) != 0)
		return -1;
	p += 7;
	while (*p == ',') {
		p++;
		if (n == BIP_PMI_MAP_BLOCKS ||
		    !map_block(&p, (uint64_t)size, blocks[n]))
			return -1;
		covered += blocks[n][1] * blocks[n][2];
		if (blocks[n][0] + blocks[n][1] > (uint64_t)size)
			return -1;
		if (blocks[n][0] + blocks[n][1] - 1 > max_host)
			max_host = blocks[n][0] + blocks[n][1] - 1;
		n++;
	}
	if (strcmp(p, ")") != 0 || !n)
		return -1;
	/* The blocks place ranks in order; a mapping shorter than the job
	 * repeats (as MPICH reads it). Hosts are the ids it names. */
	pl->host = (int)block_host(blocks, (uint64_t)rank % covered);
	pl->nhosts = (int)max_host + 1;
	pl->local = 0;
	for (int r = 0; r < size; r++)
		pl->local += block_host(blocks, (uint64_t)r % covered) ==
			     (uint64_t)pl->host;
	return 0;
}

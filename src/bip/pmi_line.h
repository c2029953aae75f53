/*
 * pmi_line.h - one line of the PMI-1 wire protocol ("cmd=NAME k=v k=v"),
 * split into key/value pairs: shared by the PMI client and bip_run's server.
 */
#ifndef BIP_PMI_LINE_H
#define BIP_PMI_LINE_H

#define BIP_PMI_MAX_TOKENS 32

struct bip_pmi_line {
	int n;
	char *key[BIP_PMI_MAX_TOKENS];
	char *val[BIP_PMI_MAX_TOKENS];
};

/* Split line in place; 0, or -1 if it is not "cmd=... k=v ...". */
int bip_pmi_line_parse(char *line, struct bip_pmi_line *m);
/* The value of key (after cmd), or NULL. */
const char *bip_pmi_line_find(const struct bip_pmi_line *m, const char *key);

#endif

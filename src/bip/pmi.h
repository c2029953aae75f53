/*
 * pmi.h - a minimal PMI-1 client (simple PMI v1.1 wire protocol), so libbip
 * bootstraps the same way under Hydra's mpiexec and under bip_run.
 *
 * Keys and values must not contain spaces, '=' or control characters: the
 * wire protocol has no quoting. Every call returns 0 or a negative BIP_E*.
 */
#ifndef BIP_PMI_H
#define BIP_PMI_H

#include <stddef.h>

struct bip_pmi;

/* Connect using PMI_FD / PMI_RANK / PMI_SIZE from the environment (as set by
 * Hydra's mpiexec or by bip_run). -BIP_EBOOT with a logged reason if they are
 * missing or malformed. Performs cmd=init (pmi_version=1 pmi_subversion=1),
 * get_maxes, get_my_kvsname. */
int bip_pmi_open(struct bip_pmi **pmi_p);

int bip_pmi_rank(const struct bip_pmi *pmi);
int bip_pmi_size(const struct bip_pmi *pmi);
const char *bip_pmi_kvsname(const struct bip_pmi *pmi);

/* cmd=put kvsname=.. key=.. value=.. -> put_result rc=0 */
int bip_pmi_put(struct bip_pmi *pmi, const char *key, const char *value);

/* cmd=get -> get_result rc=0 value=... ; -BIP_EBOOT if rc!=0 or missing;
 * -BIP_ETOOLONG if value doesn't fit */
int bip_pmi_get(struct bip_pmi *pmi, const char *key, char *buf, size_t len);
/* The same for a key that may be absent: -BIP_EAGAIN then, not logged. */
int bip_pmi_get_opt(struct bip_pmi *pmi, const char *key, char *buf,
		    size_t len);

/* cmd=barrier_in -> cmd=barrier_out */
int bip_pmi_barrier(struct bip_pmi *pmi);

/* cmd=finalize -> finalize_ack, close fd, free; NULL-safe */
void bip_pmi_close(struct bip_pmi *pmi);

#endif /* BIP_PMI_H */

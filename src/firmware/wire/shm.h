/*
 * wire/shm.h - the shm wire's own entry points, beyond its class: for the
 * tests and fuzzers that drive its segment and ring code directly.
 *
 * Each process owns one shared-memory segment holding an inbound packet ring
 * per peer (single producer, single consumer). Sending is writing into the
 * peer's ring; long data may instead be written straight into the receive
 * buffer by cross-memory attach (the DMA engine). Segments are mode 0600,
 * named from the job's secret so that no other user can predict (and take)
 * a name, and unlinked once every peer has attached.
 */
#ifndef BIP_FIRMWARE_WIRE_SHM_H
#define BIP_FIRMWARE_WIRE_SHM_H

#include "firmware.h"

struct bipfw_shm;

extern const struct bipfw_wire_class bipfw_shm_class;

int bipfw_shm_open(const struct bipfw_wire_params *p,
		   struct bipfw_shm **shm_p);
void bipfw_shm_close(struct bipfw_shm *shm);
int bipfw_shm_card(const struct bipfw_shm *shm, char *buf, size_t len);
int bipfw_shm_connect(struct bipfw_shm *shm, int peer, const char *card);

/* A card, "shm,PID,NODE,KEY", read strictly: 0 or -BIP_ECARD. */
struct bipfw_shm_card {
	int pid, node;
	uint64_t job_key;
};
int bipfw_shm_card_parse(const char *card, struct bipfw_shm_card *c);
/* What connect does once the peer's segment is mapped: copy its header,
 * check the copy against the card's pid and this job, and take the ring
 * geometry from the copy. Tests and fuzzers hand it memory of their own. */
int bipfw_shm_attach(struct bipfw_shm *shm, int peer, int pid, void *seg,
		     size_t size);
/* The source peek shows for a packet whose header names another node than
 * the ring's writer: no node has it, so the packet is dropped as
 * malformed. */
#define BIPFW_SHM_FORGED UINT16_MAX

/* Where packets from src arrive in our own segment, their ring rewound to
 * position 0 (tests and fuzzers write a ring image there). */
void *bipfw_shm_inbound(struct bipfw_shm *shm, int src, size_t *len_p);
/* Name of a node's segment in /dev/shm, without the leading '/':
 * "bip-UID-" and a keyed hash of the node under the job's secret, which the
 * name does not reveal. */
#define BIPFW_SHM_NAME_MAX 48
void bipfw_shm_name(char *buf, size_t len, uint64_t secret, uint64_t job_key,
		    int node);

/* Tests of the wakeup protocol: fn(arg, step) runs at each step of the
 * class's wait, where a test sends from another endpoint to hit exactly
 * that window. */
enum bipfw_shm_sleep_step {
	BIPFW_SHM_SLEEP_BELL_READ, /* the doorbell read, not yet asleep */
	BIPFW_SHM_SLEEP_SAID,      /* "sleeping" stored and fenced */
	BIPFW_SHM_SLEEP_LOOKED,    /* the rings found empty, not in the futex */
	BIPFW_SHM_SLEEP_STEPS
};
typedef void (*bipfw_shm_sleep_hook_t)(void *arg,
				       enum bipfw_shm_sleep_step step);
void bipfw_shm_set_sleep_hook(struct bipfw_shm *shm,
			      bipfw_shm_sleep_hook_t fn, void *arg);

/* Memory the host's processes share (shm_mem.c), behind the class's mem_*
 * operations: regions of len bytes, named to peers by a key; a peer maps
 * one through the owner's pidfd. */
int bipfw_shm_mem_alloc(size_t len, void **addr_p, uint64_t *key_p);
void bipfw_shm_mem_free(void *addr, size_t len, uint64_t key);
int bipfw_shm_mem_map(int pidfd, int peer, uint64_t key, uint64_t off,
		      size_t len, void **addr_p);
void bipfw_shm_mem_unmap(void *addr, size_t len);

#endif

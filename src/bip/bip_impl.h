/* bip_impl.h - libbip's private state, shared by its files. */
#ifndef BIP_IMPL_H
#define BIP_IMPL_H

#include <stdbool.h>
#include <sys/types.h>

#include "bip.h"
#include "firmware.h"
#include "knobs.h"

struct bip_pmi;

/* The idle policy's state (idle.c): the current wait, a run of empty
 * polls. */
struct bip_idle {
	bool crowded;              /* more nodes on the host than cores */
	uint64_t spin_ns, yield_ns;
	uint64_t watched_yield_ns; /* yield_ns after a long watched wait */
	uint64_t watched_first_ns; /* ...and after a short one */
	const uint64_t *watched;   /* bip_mem_watch's word, or NULL */
	uint64_t watch_ns;         /* when that watch began */
	bool watch_long;           /* the last watch was a long wait */
	uint64_t spin_cur;         /* this wait's spin: spin_ns at most */
	bool handed;               /* the last yield gave the core away */
	unsigned empty;            /* empty polls in a row */
	enum bip_idle_policy mode; /* what the last look chose */
	uint64_t start_ns;         /* the wait's first look at the clock */
	uint64_t left_ns;          /* when the last yield or sleep ended */
	unsigned gaps;             /* polls in a row after a long gap */
	bool spread;               /* may move to a core of its own */
	uint64_t moved_ns;         /* when it last did */
	uint64_t move_gap_ns;      /* the least time between two moves */
	uint64_t looked_ns;        /* when it last looked whether to */
	uint64_t yields, sleeps, moves;
	pid_t slice_tid;           /* the thread whose slice we set, or 0 */
	uint64_t slice_was_ns;     /* its slice before */
};

struct bip_ep {
	int node, nnodes;
	uint64_t job_key;
	int host, nhosts;
	struct bip_knobs k;
	struct bipfw *fw;
	bool *connected;
	struct bip_pmi *pmi; /* set when bootstrapped by bip_init */
	struct bip_idle idle;
	struct bip_mem *mem; /* shared memory, ours and mapped (mem.c) */
	unsigned nmem, mem_cap;
	bool draining;       /* in bip_drain's handler */
};

/* Choose the idle policy's times for a host of local_nodes nodes. */
void bip_idle_setup(bip_ep_t *ep, int local_nodes);
/* Give back what bip_idle_setup changed (the scheduler's slice). */
void bip_idle_close(bip_ep_t *ep);
/* A new wait starts: spin first. */
void bip_idle_restart(bip_ep_t *ep);
/* bip_mem_watch's word now (NULL: the watch ended), for the policy. */
void bip_idle_watch(bip_ep_t *ep, const uint64_t *word);
/* One more empty poll of the current wait: spin, yield or sleep (at most
 * sleep_us) as its length says. own_loop: the polls are ours, back to back,
 * with no gap to tell work from waiting. */
void bip_idle_empty(bip_ep_t *ep, bool may_block, bool own_loop,
		    unsigned sleep_us);

/* End every region of shared memory still allocated or mapped. */
void bip_mem_close(bip_ep_t *ep);

/* A request handle names a send slot, or a tag with this bit set. */
#define BIP_REQ_RECV 0x80000000u

/* The peer must be another node of the job, already connected. */
int bip_check_node(const bip_ep_t *ep, int node);

#endif

/*
 * bip_coll.c - small collectives of a communicator that lies within one
 * host, over flags in memory its ranks share: barrier, bcast, reduce,
 * allreduce, allgather and alltoall of up to MPIR_CVAR_CH4_BIP_NODE_COLL_MAX
 * bytes a rank.
 *
 * Over point-to-point an 8-byte allreduce of 2 ranks is two messages and
 * about 3000 instructions a rank; here each rank writes its part and a
 * sequence number into a slot of its own and reads the other ranks' slots:
 * what crosses between cores is the slot, as in Open MPI's and MPICH's
 * own shared-memory collectives.
 *
 * The memory is BIP's (bip_mem_alloc by the communicator's rank 0, mapped
 * by the others with bip_mem_map), set up at the communicator's small
 * collective after COLL_LAZY and ended with it. Each rank owns a ring of
 * SLOTS slots (two cache lines each), a sequence word and 120 bytes of
 * data each, and a data ring for more, taken in chunks in turn.
 * Collective s (1, 2, ...) uses slot s % SLOTS and, for more than 120
 * bytes, the next chunk, whose offset the slot holds. The rules:
 *
 *   arrive:  a rank's arrival at s is the store of s into its slot for s,
 *            after its data for s, if any, is there (release). It arrives
 *            only once it finished reading everything of s - 1.
 *   reuse:   a rank writes a slot or a chunk for s only once every rank
 *            arrived past the collective t that used it last (at t + 1):
 *            all are then done with t. For a slot t = s - SLOTS; chunks go
 *            round the ring, so one overwrites the oldest ones. A rank
 *            that only arrives overwrites no data, and sequence numbers
 *            only grow.
 *   read:    a rank reads another's data of s once it saw that rank's
 *            arrival at s (acquire).
 *   in place: data that others take whole from a rank and that is large
 *            (a bcast's buffer between two ranks, an alltoall's blocks, from
 *            MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN bytes) stays where the
 *            user has it: the rank's arrival at s carries its address, the
 *            others read it there with cross-memory attach (bip_read) and
 *            arrive at s + 1 once done, and the rank returns only after
 *            every such arrival (its data may change once it returned).
 *            A chunk costs two copies, the first into lines the readers
 *            hold; a read costs one. Only where every rank reaches every
 *            other's memory (agreed at set-up).
 *
 * So a bcast root or the ranks of a reduce run up to SLOTS - 1 small
 * collectives ahead of the slowest rank (fewer when their data fills the
 * ring first), as eager messages would: with more ranks than cores the
 * slowest is often not running.
 *
 * Barrier: arrive, wait for all. Bcast: the root writes and arrives; the
 * others arrive and read it; one larger than a chunk goes as such bcasts
 * of one chunk each (MPIDI_BIP_coll_pieces). Reduce: every rank writes its
 * part and arrives; the root waits for all and reduces. Allreduce: every rank
 * writes, arrives, waits for all and reduces. Every rank reduces the parts
 * in rank order, so all get the same bits (floating point). Allgather and
 * alltoall: every rank writes its block (alltoall: a block for each rank),
 * arrives, waits for all and takes its blocks; an alltoall larger than a
 * chunk goes in rounds of a slice of each block (alltoall_rounds).
 *
 * Which collectives come here must be the same on every rank: that is
 * decided from what MPI requires to match (the byte count; the op and the
 * datatype of a reduction, which must be predefined), and from the CVARs,
 * which must be the same on every rank as MPICH's algorithm CVARs must.
 *
 * The other ranks' slots are not trusted further than MPI trusts a peer:
 * the offset of a chunk is copied, then checked against the ring, before
 * it is used; nothing else read there is used as a size, an index or an
 * address. A waiting rank drives MPICH's progress (a rank that is not here
 * yet may first need ours) and so yields the core under BIP's idle policy
 * when the host is crowded, and after a long wait sleeps until an arrival
 * wakes it (may_sleep); a rank that died ends the wait with its error,
 * and a rank whose collective failed arrives marked (FAILED), so that the
 * ranks waiting for it fail too.
 */
#include "mpidimpl.h"
#include "bip_state.h"
#include "bip_coll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_BIP_NODE_COLL_MAX
      category    : CH4_BIP
      type        : int
      default     : 262144
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Barrier, bcast, reduce, allreduce, allgather and alltoall of a
        communicator within one host, up to this many bytes a rank writes
        (alltoall: all its blocks, and up to 4 times this in rounds;
        reductions: also at most 1 MiB divided by the ranks, or 64 KiB),
        go through flags and data in memory its ranks share (set up at its
        ninth such collective); larger ones by MPICH's algorithms over
        point-to-point. -1 turns them all off; at most 1048576. Must be
        the same on every rank.

    - name        : MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS
      category    : CH4_BIP
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest communicator whose small collectives go through shared
        memory (every rank reads every other's slot); 0 or 1 turns them
        off. Must be the same on every rank.

    - name        : MPIR_CVAR_CH4_BIP_NODE_BCAST_PIECES
      category    : CH4_BIP
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        A bcast larger than MPIR_CVAR_CH4_BIP_NODE_COLL_MAX in a
        communicator of more than two ranks within one host goes through
        its shared memory too, in pieces of that size that follow each
        other closely (the root runs ahead by as many as its data ring
        holds); false: by MPICH's algorithms over point-to-point. Between
        two ranks a large bcast is one single-copy read either way. Must
        be the same on every rank.

    - name        : MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN
      category    : CH4_BIP
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        From this many bytes, a bcast's data between two ranks and an
        alltoall's blocks that go through a host's shared memory stay in
        the user's buffers: the other ranks read them there in one copy
        (cross-memory attach), where the shared data ring takes two.
        Only where every rank of the communicator can read every other's
        memory. -1: BIP_MEM_READ_MIN (which bipmpi-tune measures on the
        machine; 8192 without a profile), at least 32768 where ranks share
        cores (the largest any rank of the communicator takes). 0: never.
        Must be the same on every rank.

    - name        : MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT
      category    : CH4_BIP
      type        : int
      default     : 32768
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        An allreduce of a communicator within one host of this many bytes
        or more goes through its shared memory as a reduce-scatter and an
        allgather, in pieces: each rank reduces 1/n of every piece and
        copies the others' shares out, where it would otherwise reduce
        every rank's part whole. Of any size above 2 ranks; on 2, only up
        to the size of the other reductions there
        (MPIR_CVAR_CH4_BIP_NODE_COLL_MAX), beyond which MPICH's algorithms
        over point-to-point, whose messages the receiver reads in one
        copy, measured faster. -1: never. Must be the same on every rank.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define CACHELINE 64
/* A slot is two cache lines: 120 bytes of data in place, whose second
 * line a reader can fetch at once (a chunk's address it learns only from
 * the first): 64 B allreduce of 2 ranks 0.32 -> 0.21 us with one line. */
#define SLOT MPIDI_BIP_COLL_SLOT
#define SLOT_HDR MPIDI_BIP_COLL_SLOT_HDR
#define SLOT_DATA (SLOT - SLOT_HDR)
#define SLOTS MPIDI_BIP_COLL_SLOTS
_Static_assert(SLOT == 2 * CACHELINE, "a slot is two cache lines");
/* Each rank's data ring: at least this, and room for 4 of the largest
 * (so that a chunk that wraps to the start never reaches the newest). */
#define RING_MIN (16u << 10)

MPI_Aint MPIDI_BIP_coll_max = -1;
MPI_Aint MPIDI_BIP_coll_alltoall_max = -1;
MPI_Aint MPIDI_BIP_coll_split_min = -1;
/* An alltoall goes in rounds (alltoall_rounds) up to this many times
 * coll_max bytes a rank (a round or two more: slices are whole lines),
 * above 2 ranks: it copies twice where messages copy once (read by the
 * receiver), and is worth it only while fewer waits make up for that
 * (on 2 ranks, 256 KiB blocks took the same either way). 4 and 8 ranks on 2
 * cores, medians of 3-6, us: blocks of 64 KiB on 8 ranks 240 in 2 rounds
 * against 818 by messages (Open MPI 462), of 128 KiB 850 against 990
 * (1031); 64 KiB on 16 ranks 2554 against 4837 (3142); 128 KiB on 4
 * ranks 103 against 180 (160); but 256 KiB on 8 ranks 2666 in 8 rounds
 * against 2282, and NAS FT's 8 MiB a rank no better either way. */
#define ALLTOALL_ROUNDS 4
bool MPIDI_BIP_coll_bcast_pieces;

/* One of our chunks that others may still read. */
struct coll_chunk {
	uint64_t seq;
	size_t at;
};

struct MPIDI_BIP_coll {
	char *base;     /* rank 0's memory, mapped here (or its own): every
			 * rank's slots, then every rank's data ring */
	size_t len;
	size_t rings_off;
	char *rings;
	size_t ring;    /* bytes of a data ring */
	size_t stride;  /* from a rank's ring to the next: a cache line
			 * more */
	int size, rank;
	uint64_t seq;   /* our last collective */
	uint64_t all;   /* the last one every rank is known to have reached */
	bool failed;    /* one failed here or at another rank: all fail */
	bool reads;     /* every rank reads every other's memory (agreed) */
	size_t read_min; /* and data from this size is read where it lies */
	/* Our chunks, oldest first: a circular FIFO of SLOTS. */
	size_t head;    /* where our next chunk goes */
	struct coll_chunk chunks[SLOTS];
	unsigned first, nchunks;
	/* Every rank's part of a reduction (reduce_all, allreduce_split). */
	const char *parts[];
};

void MPIDI_BIP_coll_init(void)
{
	MPIDI_BIP_coll_max = MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS < 2
				     ? -1
				     : MPIR_CVAR_CH4_BIP_NODE_COLL_MAX;
	MPIDI_BIP_coll_bcast_pieces = MPIR_CVAR_CH4_BIP_NODE_BCAST_PIECES &&
				      MPIDI_BIP_coll_max > 0;
	/* Rounds need a slice of a line for each rank at least. */
	MPIDI_BIP_coll_alltoall_max =
		MPIDI_BIP_coll_max >=
				(MPI_Aint)MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS *
					CACHELINE
			? ALLTOALL_ROUNDS * MPIDI_BIP_coll_max
			: MPIDI_BIP_coll_max;
	MPIDI_BIP_coll_split_min = MPIDI_BIP_coll_max < 0
					   ? -1
					   : MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT;
}

/* The rings start half a page past the slots (the sleepers' words lie
 * between), and each is a line longer than its data: a copy between
 * buffers at the same offset in their pages
 * (malloc gives large ones at 16 bytes in) stalls on every load in the
 * core's 4 KiB store-to-load check, and so would one between two ranks'
 * chunks (a 4 KiB allreduce of 2 ranks: 3.0 us, against 1.0). */
#define RINGS_SKEW 2048

/* The layout for data of up to max bytes (the same on every rank: from
 * the CVAR and the size). */
static void coll_shape(struct MPIDI_BIP_coll *c, size_t max)
{
	c->ring = MPL_MAX(RING_MIN, 4 * MPL_ROUND_UP_ALIGN(max, CACHELINE));
	c->stride = c->ring + CACHELINE;
	c->rings_off = (size_t)SLOTS * SLOT * (size_t)c->size + RINGS_SKEW;
	c->len = c->rings_off + c->stride * (size_t)c->size;
}

static char *slot_of(const struct MPIDI_BIP_coll *c, int rank, uint64_t s)
{
	return c->base + ((size_t)rank * SLOTS + s % SLOTS) * SLOT;
}

static uint64_t *seq_of(const struct MPIDI_BIP_coll *c, int rank, uint64_t s)
{
	return (uint64_t *)slot_of(c, rank, s);
}

/* Where rank's data of s lies, bytes long, once rank arrived at s: in its
 * slot, or at the offset its slot gives into its ring (copied, then
 * checked: the peer may still write it). NULL: a malformed offset. */
static const char *data_of(const struct MPIDI_BIP_coll *c, int rank,
			   uint64_t s, size_t bytes)
{
	const char *slot = slot_of(c, rank, s);
	uint64_t at;

	if (bytes <= SLOT_DATA)
		return slot + SLOT_HDR;
	at = __atomic_load_n((const uint64_t *)(slot + SLOT_HDR),
			     __ATOMIC_RELAXED);
	if (at > c->ring - bytes)
		return NULL;
	return c->rings + (size_t)rank * c->stride + at;
}

/* Polls between two turns of MPICH's progress. */
#define POLLS 32
/* Turns of progress before a wait may sleep: waits are mostly short, and
 * a waiter that may sleep makes the ranks it waits for look at it. */
#define TURNS_AWAKE 64

/* A rank that returned an error from one of the communicator's
 * collectives still arrives, with this bit: the others, which may wait
 * for it, fail too instead of waiting for ever, and so on. */
#define FAILED MPIDI_BIP_COLL_FAILED

/* The communicator's collectives fail from now on, this one with err
 * (kept in errflag unless it holds one already). */
static int coll_fail(struct MPIDI_BIP_coll *c, int err, MPIR_Errflag_t kind,
		     MPIR_Errflag_t *errflag)
{
	c->failed = true;
	if (*errflag == MPIR_ERR_NONE)
		*errflag = kind;
	return err;
}

/* What rank did to the communicator: failed a collective (marked), or
 * wrote a malformed chunk offset (data_of). */
static int rank_failed(struct MPIDI_BIP_coll *c, int rank, bool malformed,
		       MPIR_Errflag_t *errflag)
{
	int err = malformed ? MPIR_Err_create_code(MPI_SUCCESS,
						   MPIR_ERR_RECOVERABLE,
						   __func__, __LINE__,
						   MPI_ERR_OTHER,
						   "**bipcollbad",
						   "**bipcollbad %d", rank)
			    : MPIR_Err_create_code(MPI_SUCCESS,
						   MPIR_ERR_RECOVERABLE,
						   __func__, __LINE__,
						   MPI_ERR_OTHER, "**bipcoll",
						   "**bipcoll %d", rank);

	return coll_fail(c, err, MPIR_ERR_OTHER, errflag);
}

/* The ranks that may sleep waiting for rank, a bit each: a word per rank
 * between the slots and the rings. Waits in larger communicators only
 * yield (a bit shared by two ranks would be cleared by one while the
 * other sleeps). */
#define SLEEPERS 64

static uint64_t *sleepers_of(const struct MPIDI_BIP_coll *c, int rank)
{
	_Static_assert(SLEEPERS * sizeof(uint64_t) <= RINGS_SKEW,
		       "the sleepers' words fit before the rings");
	return (uint64_t *)(c->base + c->rings_off - RINGS_SKEW) + rank;
}

/* Rule: a wait for rank may sleep (BIP's idle policy, on its doorbell)
 * only once its bit is set in rank's word and BIP watches the word it
 * waits on; rank's arrival then wakes the ranks whose bits it sees there,
 * and only those. BIP's barrier between the arrival and the look at the
 * bits pairs with the sleeper's before its last look at the word: either
 * it sees the arrival or the arrival sees it asleep.
 * Without this, a waiter would only ever yield (a test never sleeps), and
 * with more ranks than cores, ranks waiting long in a collective took the
 * cores of those they waited for: a stream between 2 ranks of 4 on 2 cores
 * ran 2x slower than with the collective over messages. */
static void may_sleep(struct MPIDI_BIP_coll *c, int rank,
		      const uint64_t *seq, uint64_t s)
{
	__atomic_fetch_or(sleepers_of(c, rank), 1ull << c->rank,
			  __ATOMIC_SEQ_CST);
	bip_mem_watch(MPIDI_BIP_global.ep, seq, s);
}

static void awake(struct MPIDI_BIP_coll *c, int rank)
{
	bip_mem_watch(MPIDI_BIP_global.ep, NULL, 0);
	__atomic_fetch_and(sleepers_of(c, rank), ~(1ull << c->rank),
			   __ATOMIC_RELAXED);
}

static void wake_sleepers(MPIR_Comm *comm, struct MPIDI_BIP_coll *c)
{
	bip_ep_t *ep = MPIDI_BIP_global.ep;
	uint64_t bits;

	if (c->size > SLEEPERS)
		return;
	bip_mem_wake_barrier(ep);
	bits = __atomic_load_n(sleepers_of(c, c->rank), __ATOMIC_RELAXED);
	for (; bits; bits &= bits - 1) {
		int r = __builtin_ctzll(bits);

		if (r < c->size && r != c->rank)
			bip_mem_wake(ep, MPIDI_BIP_node_of(comm, r));
	}
}

/* Until rank arrived at s; *seen: the collective it is known to have
 * reached (s or later). */
static int wait_for(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, int rank,
		    uint64_t s, uint64_t *seen, MPIR_Errflag_t *errflag)
{
	const uint64_t *seq = seq_of(c, rank, s);
	unsigned polls = 0, turns = 0;
	bool sleepy = false;
	uint64_t v;
	int node, mpi_errno = MPI_SUCCESS;

	while ((v = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) < s) {
		if (++polls < POLLS)
			continue;
		polls = 0;
		/* Threads never sleep (bip_progress.c): no bit for them. */
		if (turns < TURNS_AWAKE && ++turns == TURNS_AWAKE &&
		    c->size <= SLEEPERS && !MPIR_ThreadInfo.isThreaded) {
			may_sleep(c, rank, seq, s);
			sleepy = true;
		}
		mpi_errno = sleepy ? MPIDI_Progress_test_waiting()
				   : MPID_Progress_test(NULL);
		if (mpi_errno) {
			mpi_errno = coll_fail(c, mpi_errno, MPIR_ERR_OTHER,
					      errflag);
			break;
		}
		/* Other threads may owe what rank waits for: let them in, as
		 * MPICH's own waits do. */
		if (MPIR_ThreadInfo.isThreaded)
			MPIDI_PROGRESS_YIELD();
		/* Gone, unless it arrived just before: a rank that arrived
		 * at the last collective may finalize and leave at once. */
		node = MPIDI_BIP_node_of(comm, rank);
		if (MPIDI_BIP_global.peers[node].failed &&
		    __atomic_load_n(seq, __ATOMIC_ACQUIRE) < s) {
			mpi_errno = coll_fail(c, MPIDI_BIP_proc_failed(node),
					      MPIR_ERR_PROC_FAILED, errflag);
			break;
		}
	}
	if (sleepy)
		awake(c, rank);
	/* Rule: an arrival is an event to BIP's idle policy, which sees no
	 * packet here. Else the empty polls of back-to-back collectives made
	 * one long wait: after 50 us every wait yielded, after 1 ms each
	 * slept and was woken (allreduce of 64 B-4 KiB on 2 ranks with a
	 * core each: 0.3-1.7 us spinning, 0.4-6 us so). */
	if (turns) {
		MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
		(void)bip_idle(MPIDI_BIP_global.ep, 1, 0);
		MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	}
	if (mpi_errno)
		return mpi_errno;
	*seen = v & ~FAILED;
	return v & FAILED ? rank_failed(c, rank, false, errflag) : MPI_SUCCESS;
}

/* Until every rank arrived at s. What they were seen to reach saves the
 * next waits: a bcast root or a reduce rank, which waits only to reuse a
 * slot, looks at all ranks once per so many collectives, not each time. */
static int wait_all(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, uint64_t s,
		    MPIR_Errflag_t *errflag)
{
	uint64_t seen, all = UINT64_MAX;
	int mpi_errno;

	if (c->all >= s)
		return MPI_SUCCESS;
	for (int i = 0; i < c->size; i++) {
		if (i == c->rank)
			continue;
		mpi_errno = wait_for(comm, c, i, s, &seen, errflag);
		if (mpi_errno)
			return mpi_errno;
		all = MPL_MIN(all, seen);
	}
	c->all = all;
	return MPI_SUCCESS;
}

/* Our arrival at s; with mpi_errno, s failed here. */
static int arrive(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, uint64_t s,
		  int mpi_errno)
{
	if (mpi_errno)
		c->failed = true;
	__atomic_store_n(seq_of(c, c->rank, s), s | (c->failed ? FAILED : 0),
			 __ATOMIC_RELEASE);
	wake_sleepers(comm, c);
	return mpi_errno;
}

static void chunk_pop(struct MPIDI_BIP_coll *c, uint64_t *busy)
{
	*busy = MPL_MAX(*busy, c->chunks[c->first].seq);
	c->first = (c->first + 1) % SLOTS;
	c->nchunks--;
}

/* A chunk of need bytes of our ring for s, once no rank may still read
 * what it holds. Chunks follow each other round the ring, so those it
 * overwrites are the oldest ones: from head on, or after a wrap from head
 * to the end and from the start. A chunk older than SLOTS collectives is
 * free by the slot rule (begin).
 * Rule: chunks every rank is known to be done with (all arrived past
 * them) go first, and when the start of the ring is free up to need the
 * chunk goes there rather than further on. Collectives in step (each
 * rank waits for all) then keep to the ring's first pages instead of
 * walking all of it: each new page costs a fault in every process that
 * touches it (alltoall of 64 B blocks on 2 ranks took 0.6-3.5 us during
 * the first lap of a 256 KiB ring, against 0.2 for 8 B in the slot). */
static int chunk_take(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, uint64_t s,
		      size_t need, size_t *at_p, MPIR_Errflag_t *errflag)
{
	size_t at = c->head;
	bool wrap;
	uint64_t busy = 0, done = 0;
	int mpi_errno;

	while (c->nchunks && c->chunks[c->first].seq < c->all)
		chunk_pop(c, &done);
	if (!c->nchunks || (c->chunks[c->first].at < at &&
			    c->chunks[c->first].at >= need))
		at = 0;
	wrap = at + need > c->ring;
	while (c->nchunks) {
		size_t start = c->chunks[c->first].at;

		if (wrap ? start < at && start >= need
			 : start < at || start >= at + need)
			break;
		chunk_pop(c, &busy);
	}
	if (c->nchunks == SLOTS)
		chunk_pop(c, &busy);
	if (wrap)
		at = 0;
	mpi_errno = busy ? wait_all(comm, c, busy + 1, errflag) : MPI_SUCCESS;
	if (mpi_errno)
		return mpi_errno;
	c->chunks[(c->first + c->nchunks++) % SLOTS] =
		(struct coll_chunk){ .seq = s, .at = at };
	c->head = at + need;
	*at_p = at;
	return MPI_SUCCESS;
}

/* The next collective's number s, and where our data of it goes (bytes),
 * once no rank may still read what is there: our slot for s once every
 * rank arrived at s - SLOTS + 1, past SLOT_DATA bytes a chunk of our ring,
 * whose offset the slot holds. A rank that writes nothing takes ++seq. */
static int begin(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, size_t bytes,
		 uint64_t *s_p, char **data_p, MPIR_Errflag_t *errflag)
{
	uint64_t s = ++c->seq;
	char *slot = slot_of(c, c->rank, s);
	size_t at;
	int mpi_errno;

	*s_p = s;
	/* Rule: a rank that must wait before it reuses a slot (every rank
	 * arrived at s - SLOTS + 1) waits until every rank is half a ring
	 * behind, so that the next SLOTS / 2 collectives need no wait. A bcast
	 * root that waited for one more arrival at each call ran in lockstep
	 * with its slowest reader, each polling the other: on 2 ranks both
	 * waited half the time. */
	mpi_errno = s >= SLOTS && c->all < s - SLOTS + 1
			    ? wait_all(comm, c, s - SLOTS / 2, errflag)
			    : MPI_SUCCESS;
	if (mpi_errno)
		return mpi_errno;
	if (bytes <= SLOT_DATA) {
		*data_p = slot + SLOT_HDR;
		return MPI_SUCCESS;
	}
	mpi_errno = chunk_take(comm, c, s, MPL_ROUND_UP_ALIGN(bytes, CACHELINE),
			       &at, errflag);
	if (mpi_errno)
		return mpi_errno;
	__atomic_store_n((uint64_t *)(slot + SLOT_HDR), (uint64_t)at,
			 __ATOMIC_RELAXED);
	*data_p = c->rings + (size_t)c->rank * c->stride + at;
	return MPI_SUCCESS;
}

/* --- set-up ----------------------------------------------------------- */

/* What rank 0 tells the others: its memory, and its CVARs, which every
 * rank must share (a rank that differs turns the memory off for all,
 * where it can tell). */
struct coll_card {
	uint64_t key, off; /* key 0: no shared memory */
	uint64_t len;
	int64_t max, ranks, read_min, split_min;
};

/* MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN, auto resolved here (0: never):
 * BIP's BIP_MEM_READ_MIN, which bipmpi-tune measures on the machine,
 * since machines disagree. Alltoall blocks read against blocks through
 * chunks, us: on one machine 2 ranks, a core each, 8 KiB 1.5 against
 * 2.3, 16 KiB 2.1 against 3.8; on an AMD EPYC (Zen 5) VM, medians of 5,
 * 8 KiB 3.1 against 1.4, 32 KiB 4.3 against 2.2 (bcasts 4.4 against
 * 0.6). Where ranks share cores, 32 KiB at least: 4 ranks on 2 cores 16
 * KiB 15.8 against 12.5, 32 KiB 20.9 against 22.8; 8 ranks 16 KiB 67
 * against 61, 32 KiB 101 against 135. */
#define READ_MIN_CROWDED 32768
static int read_min_here(void)
{
	size_t min;

	if (MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN >= 0)
		return MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN;
	min = bip_mem_read_min(MPIDI_BIP_global.ep);
	if (MPIDI_BIP_global.crowded)
		min = MPL_MAX(min, READ_MIN_CROWDED);
	return min > INT_MAX ? 0 : (int)MPL_MAX(min, 1);
}

/* Whether this rank reads every other rank's memory (bip_read). */
static int reads_all(MPIR_Comm *comm)
{
	for (int i = 0; i < comm->local_size; i++)
		if (i != comm->rank &&
		    bip_rma_reach(MPIDI_BIP_global.ep,
				  MPIDI_BIP_node_of(comm, i)) != 1)
			return 0;
	return 1;
}

static void coll_end(struct MPIDI_BIP_coll *c)
{
	bip_ep_t *ep = MPIDI_BIP_global.ep;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	if (ep && c->base) {
		if (c->rank == 0)
			(void)bip_mem_free(ep, c->base);
		else
			(void)bip_mem_unmap(ep, c->base);
	}
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	MPL_free(c);
}

/* Collective over comm: its memory, or comm->dev.ch4.netmod.bip.coll_off set
 * on every rank when any of them cannot have it. What decides without a
 * word is the same on every rank (kind, size, hosts); the rest is agreed.
 * MPICH's collectives report a dead rank in errflag, some with success
 * (and a result made of what never came): either way the set-up fails
 * here, and this call with it. */
static int coll_setup(MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	bip_ep_t *ep = MPIDI_BIP_global.ep;
	struct MPIDI_BIP_coll *c;
	struct coll_card card = {
		.max = MPIDI_BIP_coll_max,
		.ranks = MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS,
		.read_min = MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN,
		.split_min = MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT,
	};
	MPIR_Errflag_t agreed = MPIR_ERR_NONE;
	/* Agreed by MPI_MIN: the memory; reads; minus the read size. */
	int ok[3] = { 0, 0, 0 }, mpi_errno;

	if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM ||
	    comm->local_size < 2 || comm->node_count != 1) {
		comm->dev.ch4.netmod.bip.coll_off = true;
		return MPI_SUCCESS;
	}
	c = comm->local_size > MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS
		    ? NULL
		    : MPL_calloc(1, sizeof(*c) + sizeof(c->parts[0]) *
						    (size_t)comm->local_size,
				 MPL_MEM_COLL);
	ok[0] = c != NULL;
	if (c) {
		c->size = comm->local_size;
		c->rank = comm->rank;
		coll_shape(c, (size_t)MPIDI_BIP_coll_max);
	}
	if (comm->rank == 0 && c) {
		MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
		if (!bip_mem_alloc(ep, c->len, (void **)&c->base) &&
		    bip_mem_key(ep, c->base, c->len, &card.key, &card.off))
			card.key = 0;
		MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
		card.len = c->len;
	}
	mpi_errno = MPIR_Bcast_impl(&card, sizeof(card), MPI_BYTE, 0, comm,
				    &agreed);
	if (mpi_errno || agreed)
		goto fn_fail;
	if (comm->rank != 0 && c) {
		ok[0] = card.key && card.len == c->len &&
			card.max == MPIDI_BIP_coll_max &&
			card.ranks == MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS &&
			card.read_min == MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN &&
			card.split_min == MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT;
		MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
		if (ok[0] && bip_mem_map(ep, MPIDI_BIP_node_of(comm, 0),
					 card.key, card.off, card.len,
					 (void **)&c->base))
			ok[0] = 0;
		MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	} else if (c) {
		ok[0] = card.key != 0;
	}
	ok[2] = -read_min_here();
	ok[1] = ok[2] < 0 && reads_all(comm);
	mpi_errno = MPIR_Allreduce_impl(MPI_IN_PLACE, ok, 3, MPI_INT, MPI_MIN,
					comm, &agreed);
	if (mpi_errno || agreed || !ok[0])
		goto fn_fail;
	c->reads = ok[1];
	c->read_min = (size_t)-(int64_t)ok[2];
	c->rings = c->base + c->rings_off;
	comm->dev.ch4.netmod.bip.coll = c;
	return MPI_SUCCESS;
fn_fail:
	if (c)
		coll_end(c);
	comm->dev.ch4.netmod.bip.coll_off = true;
	if (agreed && !mpi_errno) {
		int errclass = agreed == MPIR_ERR_PROC_FAILED
				       ? MPIX_ERR_PROC_FAILED
				       : MPI_ERR_OTHER;

		mpi_errno = MPIR_Err_create_code(MPI_SUCCESS,
						 MPIR_ERR_RECOVERABLE,
						 __func__, __LINE__, errclass,
						 "**coll_fail", 0);
	}
	if (agreed && *errflag == MPIR_ERR_NONE)
		*errflag = agreed;
	return mpi_errno;
}

/* A communicator's first small collectives go by point-to-point: setting
 * its memory up costs 45-100 us (two collectives, a mapping), which a
 * communicator made for one or two calls would not earn back (dup,
 * allreduce, free on 2 ranks: 6-23 us by messages, 51-112 with the set-up
 * at once). The count is the same on every rank, as each call's choice. */
#define COLL_LAZY 8

/* comm's memory, set up now if this is its small collective after
 * COLL_LAZY; NULL when it has none (yet): the caller goes by
 * point-to-point. */
static int coll_get(MPIR_Comm *comm, struct MPIDI_BIP_coll **c_p,
		    MPIR_Errflag_t *errflag)
{
	MPIDI_BIP_comm_t *bc = &comm->dev.ch4.netmod.bip;
	int mpi_errno = MPI_SUCCESS;

	if (!bc->coll && !bc->coll_off && bc->coll_calls++ >= COLL_LAZY)
		mpi_errno = coll_setup(comm, errflag);
	*c_p = comm->dev.ch4.netmod.bip.coll;
	if (*c_p)
		MPIDI_BIP_global.cnt.node_coll++;
	return mpi_errno;
}

void MPIDI_BIP_coll_free(MPIR_Comm *comm)
{
	if (comm->dev.ch4.netmod.bip.coll)
		coll_end(comm->dev.ch4.netmod.bip.coll);
	comm->dev.ch4.netmod.bip.coll = NULL;
}

/* --- the collectives -------------------------------------------------- */

/* Bytes [off, off + bytes) of count of datatype at buf packed into to, or
 * unpacked from from: contiguous data by one bip_copy (the C library's
 * copy has a slow case at some distances between buffers, which chunks at
 * any offset meet: bip_copy.h), the rest by the datatype engine. */
static int pack(const void *buf, MPI_Aint count, MPI_Datatype datatype,
		MPI_Aint off, char *to, MPI_Aint bytes)
{
	MPIR_Datatype *dt_ptr;
	MPI_Aint size, true_lb, done;
	int contig;

	MPIDI_Datatype_get_info(count, datatype, contig, size, dt_ptr, true_lb);
	if (!contig)
		return MPIR_Typerep_pack(buf, count, datatype, off, to, bytes,
					 &done);
	bip_copy(to, (const char *)MPIR_get_contig_ptr(buf, true_lb) + off,
		 (size_t)bytes);
	return MPI_SUCCESS;
}

static int unpack(const char *from, MPI_Aint bytes, void *buf,
		  MPI_Aint count, MPI_Datatype datatype, MPI_Aint off)
{
	MPIR_Datatype *dt_ptr;
	MPI_Aint size, true_lb, done;
	int contig;

	MPIDI_Datatype_get_info(count, datatype, contig, size, dt_ptr, true_lb);
	if (!contig)
		return MPIR_Typerep_unpack(from, bytes, buf, count, datatype,
					   off, &done);
	bip_copy((char *)MPIR_get_contig_ptr(buf, true_lb) + off, from,
		 (size_t)bytes);
	return MPI_SUCCESS;
}

/* dst = a + b, n elements, for a sum of the common types, or false. The
 * same bits as MPIR_Reduce_local's b = a + b (addition commutes), one
 * pass fewer than a copy then that. Integers add as unsigned: the same
 * bits, no overflow. The loop in whole blocks of 8 is what -O2's cheap
 * vectorizer takes (it adds no tail loop itself). */
#define SUM_PAIR(mpi_type, c_type)                                      \
	case mpi_type: {                                                \
		c_type *restrict d = dst;                               \
		const c_type *restrict x = a, *restrict y = b;          \
		MPI_Aint i, whole = n & ~(MPI_Aint)7;                   \
                                                                        \
		for (i = 0; i < whole; i++)                             \
			d[i] = x[i] + y[i];                             \
		for (; i < n; i++)                                      \
			d[i] = x[i] + y[i];                             \
		return true;                                            \
	}
static bool sum_pair(void *restrict dst, const void *a, const void *b,
		     MPI_Aint n, MPI_Datatype datatype, MPI_Op op)
{
	if (op != MPI_SUM)
		return false;
	switch (datatype) {
		SUM_PAIR(MPI_DOUBLE, double)
		SUM_PAIR(MPI_DOUBLE_PRECISION, double)
		SUM_PAIR(MPI_FLOAT, float)
		SUM_PAIR(MPI_REAL, float)
		SUM_PAIR(MPI_INT, unsigned)
		SUM_PAIR(MPI_INTEGER, unsigned)
		SUM_PAIR(MPI_UNSIGNED, unsigned)
		SUM_PAIR(MPI_LONG, unsigned long)
		SUM_PAIR(MPI_UNSIGNED_LONG, unsigned long)
		SUM_PAIR(MPI_LONG_LONG, unsigned long long)
	default:
		return false;
	}
}
#undef SUM_PAIR

/* count elements at offset at of every rank's part, reduced in rank
 * order into dst. */
static int reduce_parts(const struct MPIDI_BIP_coll *c,
			const char *const *part, size_t at, void *dst,
			MPI_Aint count, MPI_Datatype datatype, MPI_Op op)
{
	MPI_Aint esize;
	int i = 2, mpi_errno = MPI_SUCCESS;

	if (!sum_pair(dst, part[0] + at, part[1] + at, count, datatype, op)) {
		MPIR_Datatype_get_size_macro(datatype, esize);
		bip_copy(dst, part[0] + at, (size_t)(count * esize));
		i = 1;
	}
	for (; i < c->size && !mpi_errno; i++)
		mpi_errno = MPIR_Reduce_local(part[i] + at, dst, count,
					      datatype, op);
	return mpi_errno;
}

/* The parts of s, reduced in rank order into buf. */
static int reduce_all(struct MPIDI_BIP_coll *c, uint64_t s, void *buf,
		      MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
		      size_t bytes, MPIR_Errflag_t *errflag)
{
	for (int i = 0; i < c->size; i++)
		if (!(c->parts[i] = data_of(c, i, s, bytes)))
			return rank_failed(c, i, true, errflag);
	return reduce_parts(c, c->parts, 0, buf, count, datatype, op);
}

/* Predefined op and type (MPI requires both to match on every rank). */
static bool reducible(MPI_Datatype datatype, MPI_Op op)
{
	return HANDLE_IS_BUILTIN(op) && HANDLE_IS_BUILTIN(datatype);
}

int MPIDI_BIP_coll_barrier(MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	struct MPIDI_BIP_coll *c;
	uint64_t s;
	int mpi_errno = coll_get(comm, &c, errflag);

	if (mpi_errno)
		return mpi_errno;
	if (!c)
		return MPIDI_BIP_pt2pt_barrier(comm, errflag);
	s = ++c->seq;
	arrive(comm, c, s, MPI_SUCCESS);
	return wait_all(comm, c, s, errflag);
}

/* Bytes [off, off + bytes) of a bcast, one collective. */
static int bcast_piece(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, void *buf,
		       MPI_Aint count, MPI_Datatype datatype, int root,
		       MPI_Aint off, MPI_Aint bytes, MPIR_Errflag_t *errflag)
{
	const char *from;
	char *to;
	uint64_t s, seen;
	int mpi_errno;

	if (comm->rank == root) {
		mpi_errno = begin(comm, c, (size_t)bytes, &s, &to, errflag);
		if (!mpi_errno)
			mpi_errno = pack(buf, count, datatype, off, to, bytes);
		return arrive(comm, c, s, mpi_errno);
	}
	s = ++c->seq;
	arrive(comm, c, s, MPI_SUCCESS);
	mpi_errno = wait_for(comm, c, root, s, &seen, errflag);
	if (mpi_errno)
		return mpi_errno;
	from = data_of(c, root, s, (size_t)bytes);
	if (!from)
		return rank_failed(c, root, true, errflag);
	return unpack(from, bytes, buf, count, datatype, off);
}

/* A bcast of bytes contiguous bytes at buf in pieces of coll_max bytes.
 * Rule: every rank walks every piece, after an error too (then it only
 * arrives, marked failed, and neither waits nor reads), so that sequence
 * numbers stay the same on every rank and none waits for a rank that
 * left. */
static int bcast_pieces(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, char *buf,
			MPI_Aint bytes, int root, int mpi_errno,
			MPIR_Errflag_t *errflag)
{
	MPI_Aint piece = MPIDI_BIP_coll_max;

	for (MPI_Aint off = 0; off < bytes; off += piece)
		if (mpi_errno)
			arrive(comm, c, ++c->seq, mpi_errno);
		else
			mpi_errno = bcast_piece(comm, c, buf, bytes, MPI_BYTE,
						root, off,
						MPL_MIN(piece, bytes - off),
						errflag);
	return mpi_errno;
}

/* --- data read where it lies (the rule "in place") ------------------- */

/* Whether data of bytes (a bcast's, an alltoall's block) is read where it
 * lies: the same on every rank. */
static bool in_place(const struct MPIDI_BIP_coll *c, size_t bytes)
{
	return c->reads && bytes >= c->read_min;
}

/* Our arrival at a new collective, *s_p, with the address of our data. */
static int publish(MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
		   const void *data, uint64_t *s_p, MPIR_Errflag_t *errflag)
{
	uint64_t addr = (uint64_t)(uintptr_t)data;
	char *to;
	int mpi_errno = begin(comm, c, sizeof(addr), s_p, &to, errflag);

	if (!mpi_errno)
		memcpy(to, &addr, sizeof(addr));
	return arrive(comm, c, *s_p, mpi_errno);
}

/* bytes at off in the data rank published at s, read into dst. Its
 * address is copied (the rank may write its slot again) and only ever
 * given to bip_read, which reads rank's memory through the kernel: an
 * address that lies fails the read, nothing else. */
static int read_from(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, int rank,
		     uint64_t s, size_t off, void *dst, size_t bytes,
		     MPIR_Errflag_t *errflag)
{
	bip_ep_t *ep = MPIDI_BIP_global.ep;
	int node = MPIDI_BIP_node_of(comm, rank), rc;
	uint64_t addr;

	memcpy(&addr, data_of(c, rank, s, sizeof(addr)), sizeof(addr));
	if (addr > UINT64_MAX - off - bytes)
		return rank_failed(c, rank, true, errflag);
	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	rc = bip_read(ep, node, dst, addr + off, bytes);
	if (rc && bip_peer_gone(ep, node) == 1)
		rc = -BIP_EPEERGONE;
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	if (rc == -BIP_EPEERGONE || (rc && MPIDI_BIP_global.peers[node].failed))
		return coll_fail(c, MPIDI_BIP_proc_failed(node),
				 MPIR_ERR_PROC_FAILED, errflag);
	/* A read refused after the set-up found reads possible (the kernel's
	 * ptrace rules changed) fails this and the communicator's next
	 * collectives, as any failure here does. */
	if (rc)
		return coll_fail(c, MPIDI_BIP_error(rc, "reading the data of "
						    "a collective"),
				 MPIR_ERR_OTHER, errflag);
	return MPI_SUCCESS;
}

/* Our arrival at the collective after s, where the others say they read
 * what we published at s; then, if we published, the wait for theirs:
 * for every rank's, marked failed or not, whatever failed here, since
 * until then it may still read our data (a dead rank reads nothing: its
 * wait ends). The first error is kept. */
static int read_done(MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
		     bool published, int mpi_errno, MPIR_Errflag_t *errflag)
{
	uint64_t s = ++c->seq, seen;

	mpi_errno = arrive(comm, c, s, mpi_errno);
	for (int i = 0; i < c->size && published; i++) {
		int err = i == c->rank ? MPI_SUCCESS
				       : wait_for(comm, c, i, s, &seen, errflag);

		if (!mpi_errno)
			mpi_errno = err;
	}
	return mpi_errno;
}

/* A bcast of bytes contiguous bytes at buf, read where it lies: the root
 * publishes buf, the others read it. Every rank walks both collectives,
 * after an error too (as in bcast_pieces). */
static int bcast_read(MPIR_Comm *comm, struct MPIDI_BIP_coll *c, char *buf,
		      MPI_Aint bytes, int root, int mpi_errno,
		      MPIR_Errflag_t *errflag)
{
	uint64_t s, seen;

	MPIDI_BIP_global.cnt.node_coll_read++;
	if (comm->rank == root) {
		if (mpi_errno)
			arrive(comm, c, ++c->seq, mpi_errno);
		else
			mpi_errno = publish(comm, c, buf, &s, errflag);
		return read_done(comm, c, !mpi_errno, mpi_errno, errflag);
	}
	s = ++c->seq;
	arrive(comm, c, s, mpi_errno);
	if (!mpi_errno)
		mpi_errno = wait_for(comm, c, root, s, &seen, errflag);
	if (!mpi_errno)
		mpi_errno = read_from(comm, c, root, s, 0, buf, (size_t)bytes,
				      errflag);
	return read_done(comm, c, false, mpi_errno, errflag);
}

/* Rule: a bcast larger than a chunk goes in pieces of coll_max bytes, one
 * collective each, so the root runs ahead of the readers by as many as its
 * data ring holds (4) and all of them copy at once: 4 ranks on 2 cores,
 * medians of 5, 256 KiB 50 us against 143 by messages (Open MPI 76), 1 MiB
 * 178 against 286 (397); 16 ranks 1 MiB 2.5 ms against 6.3 (2.7). Between
 * two ranks that read each other's memory, from
 * MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN bytes, it is read where it lies
 * instead (bcast_read; 256 KiB 10 us against 16 on one machine, 20
 * against 5 on a Zen 5 VM, whose profile then says never). Not with more: the root
 * then waits for every reader before it returns, where with chunks it
 * runs ahead (4 ranks on 2 cores: 256 KiB 55 us against 31). A piece
 * may end inside a datatype's element, which the datatype engine cannot
 * pack or unpack by halves: a rank whose datatype is not contiguous packs
 * (root) or unpacks (the others) the whole message once, through a
 * buffer of its own (a read needs one block too). */
int MPIDI_BIP_coll_bcast(void *buf, MPI_Aint count, MPI_Datatype datatype,
			 int root, MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	struct MPIDI_BIP_coll *c;
	MPIR_Datatype *dt_ptr;
	MPI_Aint bytes, true_lb;
	char *whole;
	bool reads;
	int contig, mpi_errno = coll_get(comm, &c, errflag);

	if (mpi_errno)
		return mpi_errno;
	if (!c)
		return MPIDI_BIP_pt2pt_bcast(buf, count, datatype, root, comm,
					     errflag);
	MPIDI_Datatype_get_info(count, datatype, contig, bytes, dt_ptr,
				true_lb);
	reads = c->size == 2 && in_place(c, (size_t)bytes);
	if (bytes <= MPIDI_BIP_coll_max && !reads)
		return bcast_piece(comm, c, buf, count, datatype, root, 0,
				   bytes, errflag);
	if (contig)
		return (reads ? bcast_read : bcast_pieces)(
			comm, c, (char *)MPIR_get_contig_ptr(buf, true_lb),
			bytes, root, MPI_SUCCESS, errflag);
	whole = MPIDI_BIP_buf_get((size_t)bytes);
	if (!whole)
		mpi_errno = MPIDI_BIP_NOMEM();
	else if (comm->rank == root)
		mpi_errno = pack(buf, count, datatype, 0, whole, bytes);
	mpi_errno = (reads ? bcast_read : bcast_pieces)(comm, c, whole, bytes,
							root, mpi_errno,
							errflag);
	if (!mpi_errno && comm->rank != root)
		mpi_errno = unpack(whole, bytes, buf, count, datatype, 0);
	MPIDI_BIP_buf_put(whole);
	return mpi_errno;
}

/* Our part of s, from sendbuf (or buf: MPI_IN_PLACE), arrived. */
static int contribute(MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
		      const void *sendbuf, const void *buf, size_t bytes,
		      uint64_t *s_p, MPIR_Errflag_t *errflag)
{
	char *to;
	int mpi_errno = begin(comm, c, bytes, s_p, &to, errflag);

	if (!mpi_errno)
		bip_copy(to, sendbuf == MPI_IN_PLACE ? buf : sendbuf, bytes);
	return arrive(comm, c, *s_p, mpi_errno);
}

/* --- allreduce as a reduce-scatter and an allgather ------------------ */

/* Rule: an allreduce of MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT bytes or
 * more goes in pieces, each a reduce-scatter then an allgather through the
 * chunks, one collective a piece and one more. A rank's chunk for
 * collective k holds its share of piece k - 1 (1/n of it, whole lines),
 * reduced in rank order from every rank's part, then its part of piece k
 * less its own share (only it reads that, from the user's buffer); once
 * all arrived at k, each copies every share out and reduces its share
 * of piece k into its next chunk. So what a collective's chunks hold is
 * read only until the readers' next arrival, as with any chunk (reuse), a
 * piece costs one wait, and a rank reduces only its share of every part,
 * where reduction() has every rank reduce every part whole. */
#define SPLIT_PIECE (128u << 10)

/* rank's share of a piece of n elements of esize bytes: [*lo, *hi). */
static void share_of(const struct MPIDI_BIP_coll *c, int rank, MPI_Aint n,
		     MPI_Aint esize, MPI_Aint *lo, MPI_Aint *hi)
{
	MPI_Aint per = (n + c->size - 1) / c->size;

	if (CACHELINE % esize == 0)
		per = MPL_ROUND_UP_ALIGN(per, CACHELINE / esize);
	*lo = MPL_MIN(per * rank, n);
	*hi = MPL_MIN(*lo + per, n);
}

/* Room for the largest share of a piece of n elements, before the data of
 * the next in a chunk. */
static size_t share_room(const struct MPIDI_BIP_coll *c, MPI_Aint n,
			 MPI_Aint esize)
{
	MPI_Aint lo, hi;

	share_of(c, 0, n, esize, &lo, &hi);
	return MPL_ROUND_UP_ALIGN((size_t)((hi - lo) * esize), CACHELINE);
}

/* Our part of a piece of n elements from src into our chunk at to, but
 * for our own share: only we read it, from src. */
static void put_part(const struct MPIDI_BIP_coll *c, char *to,
		     const char *src, MPI_Aint n, MPI_Aint esize)
{
	MPI_Aint lo, hi;

	share_of(c, c->rank, n, esize, &lo, &hi);
	bip_copy(to, src, (size_t)(lo * esize));
	bip_copy(to + hi * esize, src + hi * esize, (size_t)((n - hi) * esize));
}

/* Our share of the piece of n elements whose parts are part[], reduced in
 * rank order to dst. */
static int reduce_share(const struct MPIDI_BIP_coll *c,
			const char *const *part, char *dst, MPI_Aint n,
			MPI_Datatype datatype, MPI_Aint esize, MPI_Op op)
{
	MPI_Aint lo, hi;

	share_of(c, c->rank, n, esize, &lo, &hi);
	return hi == lo ? MPI_SUCCESS
			: reduce_parts(c, part, (size_t)(lo * esize), dst,
				       hi - lo, datatype, op);
}

/* Every rank walks every collective of it, after an error too (as in
 * bcast_pieces). */
static int allreduce_split(const void *sendbuf, void *recvbuf,
			   MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
			   MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
			   MPIR_Errflag_t *errflag)
{
	const char *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	const char **part = c->parts;
	MPI_Aint esize, per, off = 0, n, last_off = 0, last_n = 0, lo, hi;
	size_t room, bytes;
	const char *from;
	char *to;
	uint64_t s;
	int mpi_errno = MPI_SUCCESS;

	MPIR_Datatype_get_size_macro(datatype, esize);
	per = (MPI_Aint)MPL_MIN(SPLIT_PIECE, c->ring / 8) / esize;
	MPIDI_BIP_global.cnt.node_coll_split++;
	do {
		n = MPL_MIN(per, count - off);
		room = last_n ? share_room(c, last_n, esize) : 0;
		bytes = room + (size_t)(n * esize);
		if (mpi_errno) {
			s = ++c->seq;
		} else {
			mpi_errno = begin(comm, c, bytes, &s, &to, errflag);
			if (!mpi_errno && last_n)
				mpi_errno = reduce_share(c, part, to, last_n,
							 datatype, esize, op);
			if (!mpi_errno)
				put_part(c, to + room, src + off * esize, n,
					 esize);
		}
		mpi_errno = arrive(comm, c, s, mpi_errno);
		if (!mpi_errno)
			mpi_errno = wait_all(comm, c, s, errflag);
		for (int i = 0; i < c->size && !mpi_errno; i++) {
			from = data_of(c, i, s, bytes);
			if (!from) {
				mpi_errno = rank_failed(c, i, true, errflag);
				break;
			}
			/* Our own part: the user's (our chunk lacks our
			 * share). */
			part[i] = i == c->rank ? src + off * esize
					       : from + room;
			share_of(c, i, last_n, esize, &lo, &hi);
			bip_copy((char *)recvbuf + (last_off + lo) * esize, from,
				 (size_t)((hi - lo) * esize));
		}
		last_off = off;
		last_n = n;
		off += n;
	} while (last_n);
	return mpi_errno;
}

/* Allreduce (all), or reduce to root. */
static int reduction(const void *sendbuf, void *recvbuf, MPI_Aint count,
		     MPI_Datatype datatype, MPI_Op op, bool all, int root,
		     MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	struct MPIDI_BIP_coll *c = NULL;
	MPI_Aint bytes;
	uint64_t s;
	int mpi_errno = MPI_SUCCESS;

	if (reducible(datatype, op) && count > 0)
		mpi_errno = coll_get(comm, &c, errflag);
	if (mpi_errno)
		return mpi_errno;
	if (!c && all)
		return MPIDI_BIP_pt2pt_allreduce(sendbuf, recvbuf, count,
						 datatype, op, comm, errflag);
	if (!c)
		return MPIDI_BIP_pt2pt_reduce(sendbuf, recvbuf, count,
					      datatype, op, root, comm,
					      errflag);
	MPIR_Datatype_get_size_macro(datatype, bytes);
	bytes *= count;
	if (all && MPIDI_BIP_coll_split(comm, bytes))
		return allreduce_split(sendbuf, recvbuf, count, datatype, op,
				       comm, c, errflag);
	mpi_errno = contribute(comm, c, sendbuf, recvbuf, bytes, &s, errflag);
	if (mpi_errno || (!all && comm->rank != root))
		return mpi_errno;
	mpi_errno = wait_all(comm, c, s, errflag);
	if (!mpi_errno)
		mpi_errno = reduce_all(c, s, recvbuf, count, datatype, op,
				       bytes, errflag);
	return mpi_errno;
}

int MPIDI_BIP_coll_allreduce(const void *sendbuf, void *recvbuf,
			     MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
			     MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	return reduction(sendbuf, recvbuf, count, datatype, op, true, 0, comm,
			 errflag);
}

int MPIDI_BIP_coll_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
			  MPI_Datatype datatype, MPI_Op op, int root,
			  MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	return reduction(sendbuf, recvbuf, count, datatype, op, false, root,
			 comm, errflag);
}

/* Allgather (whole) or alltoall: each rank packs what it sends (block
 * bytes, or one block per rank), arrives, waits for all, and unpacks from
 * each rank's data the block meant for it. In place, our own data is
 * packed before anything lands in recvbuf. */
static int exchange(const void *sendbuf, MPI_Aint sendcount,
		    MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
		    MPI_Datatype recvtype, bool whole, MPIR_Comm *comm,
		    struct MPIDI_BIP_coll *c, MPIR_Errflag_t *errflag)
{
	MPI_Aint block, extent;
	size_t bytes;
	const char *from;
	char *to;
	uint64_t s;
	int mpi_errno;

	MPIR_Datatype_get_size_macro(recvtype, block);
	MPIR_Datatype_get_extent_macro(recvtype, extent);
	block *= recvcount;
	extent *= recvcount;
	bytes = (size_t)block * (whole ? 1 : (size_t)c->size);
	mpi_errno = begin(comm, c, bytes, &s, &to, errflag);
	if (!mpi_errno && sendbuf == MPI_IN_PLACE && whole)
		mpi_errno = pack((char *)recvbuf + extent * c->rank, recvcount,
				 recvtype, 0, to, block);
	else if (!mpi_errno && sendbuf == MPI_IN_PLACE)
		mpi_errno = pack(recvbuf, recvcount * c->size, recvtype, 0, to,
				 (MPI_Aint)bytes);
	else if (!mpi_errno)
		mpi_errno = pack(sendbuf, sendcount * (whole ? 1 : c->size),
				 sendtype, 0, to, (MPI_Aint)bytes);
	mpi_errno = arrive(comm, c, s, mpi_errno);
	if (!mpi_errno)
		mpi_errno = wait_all(comm, c, s, errflag);
	for (int i = 0; i < c->size && !mpi_errno; i++) {
		/* In place, our own block is where it belongs already. */
		if (i == c->rank && sendbuf == MPI_IN_PLACE)
			continue;
		from = data_of(c, i, s, bytes);
		if (!from)
			return rank_failed(c, i, true, errflag);
		mpi_errno = unpack(from + (whole ? 0 : block * c->rank), block,
				   (char *)recvbuf + extent * i, recvcount,
				   recvtype, 0);
	}
	return mpi_errno;
}

int MPIDI_BIP_coll_allgather(const void *sendbuf, MPI_Aint sendcount,
			     MPI_Datatype sendtype, void *recvbuf,
			     MPI_Aint recvcount, MPI_Datatype recvtype,
			     MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	struct MPIDI_BIP_coll *c;
	int mpi_errno = coll_get(comm, &c, errflag);

	if (mpi_errno)
		return mpi_errno;
	if (!c)
		return MPIDI_BIP_pt2pt_allgather(sendbuf, sendcount, sendtype,
						 recvbuf, recvcount, recvtype,
						 comm, errflag);
	return exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount,
			recvtype, true, comm, c, errflag);
}

/* Rule: an alltoall larger than a chunk goes in rounds, one collective
 * each: in round k every rank writes slice k of each of its blocks (the
 * chunk over the ranks, whole lines) and takes slice k of its block from
 * every rank. Every rank walks every round, after an error too (then it
 * only arrives, marked), as in bcast_pieces. send and recv hold the
 * blocks one after the other, block bytes each. */
static int alltoall_rounds(MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
			   const char *send, char *recv, size_t block,
			   int mpi_errno, MPIR_Errflag_t *errflag)
{
	size_t slice = ((size_t)MPIDI_BIP_coll_max / (size_t)c->size) &
		       ~(size_t)(CACHELINE - 1);

	MPIR_Assert(slice); /* MPIDI_BIP_coll_init */

	for (size_t off = 0; off < block; off += slice) {
		size_t len = MPL_MIN(slice, block - off);
		const char *from;
		char *to;
		uint64_t s;

		if (mpi_errno) {
			arrive(comm, c, ++c->seq, mpi_errno);
			continue;
		}
		mpi_errno = begin(comm, c, len * (size_t)c->size, &s, &to,
				  errflag);
		for (int i = 0; i < c->size && !mpi_errno; i++)
			bip_copy(to + len * (size_t)i,
				 send + block * (size_t)i + off, len);
		mpi_errno = arrive(comm, c, s, mpi_errno);
		if (!mpi_errno)
			mpi_errno = wait_all(comm, c, s, errflag);
		for (int i = 0; i < c->size && !mpi_errno; i++) {
			from = data_of(c, i, s, len * (size_t)c->size);
			if (!from)
				mpi_errno = rank_failed(c, i, true, errflag);
			else
				bip_copy(recv + block * (size_t)i + off,
					 from + len * (size_t)c->rank, len);
		}
	}
	return mpi_errno;
}

/* An alltoall read where it lies: every rank publishes its blocks, takes
 * its own, and reads its block from every other rank (each from the next
 * ranks on, so that not all read the same rank at once). send and recv
 * hold the blocks one after the other, block bytes each. */
static int alltoall_read(MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
			 const char *send, char *recv, size_t block,
			 int mpi_errno, MPIR_Errflag_t *errflag)
{
	size_t me = (size_t)c->rank;
	uint64_t s = 0;
	bool published;

	MPIDI_BIP_global.cnt.node_coll_read++;
	if (mpi_errno)
		arrive(comm, c, ++c->seq, mpi_errno);
	else
		mpi_errno = publish(comm, c, send, &s, errflag);
	published = !mpi_errno;
	if (!mpi_errno) {
		bip_copy(recv + block * me, send + block * me, block);
		mpi_errno = wait_all(comm, c, s, errflag);
	}
	for (int k = 1; k < c->size && !mpi_errno; k++) {
		int i = (c->rank + k) % c->size;

		mpi_errno = read_from(comm, c, i, s, block * me,
				      recv + block * (size_t)i, block, errflag);
	}
	return read_done(comm, c, published, mpi_errno, errflag);
}

/* Where the blocks of count of datatype at buf lie one after the other:
 * buf itself when they are contiguous, else *tmp, a buffer of bytes
 * (NULL: no memory). */
static char *blocks_of(const void *buf, MPI_Aint count, MPI_Datatype datatype,
		       size_t bytes, char **tmp)
{
	MPIR_Datatype *dt_ptr;
	MPI_Aint size, true_lb;
	int contig;

	MPIDI_Datatype_get_info(count, datatype, contig, size, dt_ptr, true_lb);
	*tmp = NULL;
	if (contig)
		return (char *)MPIR_get_contig_ptr(buf, true_lb);
	*tmp = MPIDI_BIP_buf_get(bytes);
	return *tmp;
}

/* An alltoall too large for a chunk, in rounds, or one read where it lies
 * (reads). A datatype that is not contiguous goes through a buffer of the
 * whole (a slice may end inside an element, which the datatype engine
 * cannot pack by halves; a read takes contiguous blocks), and so does the
 * data sent in place (the blocks not sent yet would be overwritten). */
static int alltoall_large(const void *sendbuf, MPI_Aint sendcount,
			  MPI_Datatype sendtype, void *recvbuf,
			  MPI_Aint recvcount, MPI_Datatype recvtype,
			  MPIR_Comm *comm, struct MPIDI_BIP_coll *c,
			  size_t block, bool reads, MPIR_Errflag_t *errflag)
{
	size_t bytes = block * (size_t)c->size;
	char *stmp = NULL, *rtmp, *send, *recv;
	int mpi_errno = MPI_SUCCESS;

	if (sendbuf == MPI_IN_PLACE) {
		send = stmp = MPIDI_BIP_buf_get(bytes);
		if (send)
			mpi_errno = pack(recvbuf, recvcount * c->size, recvtype,
					 0, send, (MPI_Aint)bytes);
	} else {
		send = blocks_of(sendbuf, sendcount * c->size, sendtype, bytes,
				 &stmp);
		if (stmp)
			mpi_errno = pack(sendbuf, sendcount * c->size, sendtype,
					 0, stmp, (MPI_Aint)bytes);
	}
	recv = blocks_of(recvbuf, recvcount * c->size, recvtype, bytes, &rtmp);
	if (!mpi_errno && (!send || !recv))
		mpi_errno = MPIDI_BIP_NOMEM();
	mpi_errno = (reads ? alltoall_read : alltoall_rounds)(
		comm, c, send, recv, block, mpi_errno, errflag);
	if (!mpi_errno && rtmp)
		mpi_errno = unpack(rtmp, (MPI_Aint)bytes, recvbuf,
				   recvcount * c->size, recvtype, 0);
	MPIDI_BIP_buf_put(stmp);
	MPIDI_BIP_buf_put(rtmp);
	return mpi_errno;
}

int MPIDI_BIP_coll_alltoall(const void *sendbuf, MPI_Aint sendcount,
			    MPI_Datatype sendtype, void *recvbuf,
			    MPI_Aint recvcount, MPI_Datatype recvtype,
			    MPIR_Comm *comm, MPIR_Errflag_t *errflag)
{
	struct MPIDI_BIP_coll *c;
	MPI_Aint block;
	bool reads;
	int mpi_errno = coll_get(comm, &c, errflag);

	if (mpi_errno)
		return mpi_errno;
	if (!c)
		return MPIDI_BIP_pt2pt_alltoall(sendbuf, sendcount, sendtype,
						recvbuf, recvcount, recvtype,
						comm, errflag);
	MPIR_Datatype_get_size_macro(recvtype, block);
	block *= recvcount;
	reads = in_place(c, (size_t)block);
	if (block * c->size <= MPIDI_BIP_coll_max && !reads)
		return exchange(sendbuf, sendcount, sendtype, recvbuf,
				recvcount, recvtype, false, comm, c, errflag);
	return alltoall_large(sendbuf, sendcount, sendtype, recvbuf, recvcount,
			      recvtype, comm, c, (size_t)block, reads,
			      errflag);
}

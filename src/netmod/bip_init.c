/*
 * bip_init.c - the bip netmod's life cycle and the non-inline entry points:
 * open the BIP endpoint with the job's key, exchange business cards through
 * MPICH's PMI helpers, connect every peer, finalize; the communicator,
 * datatype and op hooks (nothing to do yet); windows and partitioned
 * communication through MPIDIG (the window hooks are bip_rma.c's); dynamic
 * processes refused with an error.
 */
#include "mpidimpl.h"
#include "mpidu_bc.h"

#include <unistd.h>
#include "bip_state.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_BIP
      description : Variables of the CH4 bip netmod (MPI over BIP)

cvars:
    - name        : MPIR_CVAR_CH4_BIP_SHORT_LIMIT
      category    : CH4_BIP
      type        : int
      default     : 4096
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Largest message (bytes) sent by the short protocol, its data inside
        one BIP small message. Larger ones use the eager or three-way
        protocol. At most 8192 (a BIP small message less the header room).

    - name        : MPIR_CVAR_CH4_BIP_EAGER_LIMIT
      category    : CH4_BIP
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Largest message (bytes) sent eagerly: all at once, in pieces of
        one BIP small message each, complete locally as a short send is,
        when the peer's credits take every piece at once (else three-way).
        The three-way protocol's extra round trip costs more than copying
        the pieces. Only messages above the short limit and below the
        rendezvous threshold; 0: none (three-way). -1: 65536. Above
        MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT only a lone message goes
        eagerly.

    - name        : MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT
      category    : CH4_BIP
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Largest message (bytes) sent eagerly right behind another: above
        it, and up to the eager limit, a message to a rank of the host
        that can read our memory goes eagerly only if this process
        completed a receive since its last such message to that rank (a
        ping-pong, an exchange, a ring); one sent right behind another (a
        stream) takes the three-way protocol, whose receiver copies the
        data once where the pieces are copied twice. -1: what BIP
        measured on this machine (BIP_STREAM_RING_MAX, from the machine
        profile bipmpi-tune writes; 4096 without one), or the eager
        limit with more ranks on the host than cores (a three-way
        message waits for its receiver to be scheduled, twice).

    - name        : MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD
      category    : CH4_BIP
      type        : int
      default     : 262144
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Smallest message (bytes) sent by the rendezvous protocol (the
        receiver answers only once a receive matches, the data goes in
        acknowledged fragments). Smaller ones above the short limit use the
        three-way protocol (the receiver answers at once, into a temporary
        buffer if no receive matches). Synchronous sends always use
        rendezvous.

    - name        : MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE
      category    : CH4_BIP
      type        : int
      default     : 1048576
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Bytes per rendezvous fragment; the receiver acknowledges each one
        before the next is sent.

    - name        : MPIR_CVAR_CH4_BIP_SPLIT_MIN
      category    : CH4_BIP
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Smallest message (bytes) that a receiver reading its sender's data
        on the same host shares with the sender: it reads the first half
        while the sender writes the second into its buffer, two copies at
        once (not with more ranks on the host than cores). 0: never.

    - name        : MPIR_CVAR_CH4_BIP_FETCH
      category    : CH4_BIP
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        How a receiver whose rank has a core of its own fetches a three-way
        or rendezvous message it may read from its sender's memory (with
        more ranks on the host than cores, and from its own rank, it reads).
        auto - whichever of reading and asking measured cheaper lately
        read - it reads the data, in one copy
        ask  - it asks the sender for the data, through BIP's rings

    - name        : MPIR_CVAR_CH4_BIP_HOLD_US
      category    : CH4_BIP
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Microseconds a three-way message that arrives before its receive
        is held, its data left with the sender, for a receive to take it
        in one copy; then it is fetched into a temporary buffer and its
        sender finishes. -1: 20, or 1000 with more ranks on the host than
        cores; 0: fetched at once.

    - name        : MPIR_CVAR_CH4_BIP_CREDITS
      category    : CH4_BIP
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Control messages each process may have in flight to each peer (N,
        2 to 255; one is reserved for credits-only messages). 0: BIP's
        small-message queue (BIP_SMALL_QUEUE, by default 64 per rank)
        shared evenly among the ranks, at most 255. A value is lowered at
        start-up so that every rank's credits fit that queue; MPI_Init
        fails if that leaves fewer than 2.

    - name        : MPIR_CVAR_CH4_BIP_SEND_FIFO_MAX
      category    : CH4_BIP
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Most control messages waiting in the send FIFOs (for credits or a
        BIP send slot); beyond it a send fails with an error instead of
        queueing. 0: no limit.

    - name        : MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX
      category    : CH4_BIP
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Most long receives waiting in the receive FIFO for a free BIP tag;
        beyond it the message fails with an error, its receive and its
        send (an active message's: also the call that ran progress). 0: no
        limit.

    - name        : MPIR_CVAR_CH4_BIP_INIT_BARRIER
      category    : CH4_BIP
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        MPI_Init ends with a barrier of MPI_COMM_WORLD, so that the ranks
        leave it together and a program's first messages do not wait for
        the last rank to start. false: each rank leaves as soon as it is
        connected, for a program that times its own start-up or starts
        its ranks far apart on purpose (ranks that share a CPU then move
        apart at the program's first waits, BIP_SPREAD). MPI_Init fails
        if the ranks do not all have the same value.

    - name        : MPIR_CVAR_CH4_BIP_PRINT_COUNTERS
      category    : CH4_BIP
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, every rank prints at MPI_Finalize what each protocol of the
        bip netmod did (short, eager, three-way and rendezvous sends,
        fragments, credits-only messages, unexpected messages, active
        messages, the largest depths of the send, receive and unexpected
        queues) and what BIP did underneath (packets, acknowledgements,
        NACKs, retransmissions, small-queue overflows).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* A CVAR outside [lo, hi]: a clear error at MPI_Init. */
static int cvar_check(const char *name, int v, int lo, int hi)
{
	if (v >= lo && v <= hi)
		return MPI_SUCCESS;
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_OTHER, "**bipcvar",
				    "**bipcvar %s %d %d %d", name, v, lo, hi);
}

static int read_cvars(MPIDI_BIP_global_t *g)
{
	const struct {
		const char *name;
		int v, lo, hi;
	} c[] = {
		{ "MPIR_CVAR_CH4_BIP_SHORT_LIMIT", MPIR_CVAR_CH4_BIP_SHORT_LIMIT,
		  0, BIP_SMALL_MAX - MPIDI_BIP_CTL_ROOM },
		{ "MPIR_CVAR_CH4_BIP_EAGER_LIMIT",
		  MPIR_CVAR_CH4_BIP_EAGER_LIMIT, -1, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT",
		  MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT, -1, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD",
		  MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD, 0, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE",
		  MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE, 1, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_SPLIT_MIN", MPIR_CVAR_CH4_BIP_SPLIT_MIN, 0,
		  INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_HOLD_US", MPIR_CVAR_CH4_BIP_HOLD_US, -1,
		  INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_CREDITS", MPIR_CVAR_CH4_BIP_CREDITS, 0,
		  UINT8_MAX },
		{ "MPIR_CVAR_CH4_BIP_SEND_FIFO_MAX",
		  MPIR_CVAR_CH4_BIP_SEND_FIFO_MAX, 0, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX",
		  MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX, 0, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_NODE_COLL_MAX",
		  MPIR_CVAR_CH4_BIP_NODE_COLL_MAX, -1, MPIDI_BIP_NODE_COLL_LIMIT },
		{ "MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS",
		  MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS, 0, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN",
		  MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN, -1, INT_MAX },
		{ "MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT",
		  MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT, -1, INT_MAX },
	};
	int mpi_errno;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		mpi_errno = cvar_check(c[i].name, c[i].v, c[i].lo, c[i].hi);
		if (mpi_errno)
			return mpi_errno;
	}
	/* 0 is auto; else the reserved credit needs another beside it. */
	if (MPIR_CVAR_CH4_BIP_CREDITS == 1)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**bipcredits1", 0);
	g->short_limit = (size_t)MPIR_CVAR_CH4_BIP_SHORT_LIMIT;
	g->rndv_threshold = (size_t)MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD;
	g->fragment = (size_t)MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE;
	g->split_min = (size_t)MPIR_CVAR_CH4_BIP_SPLIT_MIN;
	g->accept = MPIR_CVAR_CH4_BIP_CREDITS;
	g->sfifo_limit = (unsigned)MPIR_CVAR_CH4_BIP_SEND_FIFO_MAX;
	g->rfifo_limit = (unsigned)MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX;
	MPIDI_BIP_coll_init();
	return MPI_SUCCESS;
}

/* Give back everything init took: at finalize, and on every init failure
 * (Hydra removes nothing from /dev/shm after a failed job). */
static int release(MPIDI_BIP_global_t *g)
{
	int rc = g->ep ? bip_close(g->ep) : 0;

	g->ep = NULL;
	MPL_free(g->tag_owner);
	g->tag_owner = NULL;
	MPL_free(g->peers);
	g->peers = NULL;
	MPIDI_BIP_handles_destroy(&g->sends);
	MPIDI_BIP_handles_destroy(&g->am_sends);
	MPIDI_BIP_handles_destroy(&g->splits);
	MPIDI_BIP_buf_finalize();
	MPIDI_BIP_ctlq_finalize();
	MPIDI_BIP_unexp_finalize();
	return rc;
}

int MPIDI_BIP_init_local(int *tag_bits)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	struct bip_open_params params = {
		.node = MPIR_Process.rank,
		.nnodes = MPIR_Process.size,
		.job_key = bip_job_key(MPIR_pmi_job_id()),
		/* Locality is the launcher's host map, never the hostname. */
		.host = MPIR_Process.node_map[MPIR_Process.rank],
		.nhosts = MPIR_Process.num_nodes,
	};
	struct bip_limits lim;
	int rc, mpi_errno;

	for (int r = 0; r < MPIR_Process.size; r++)
		params.local_nodes += MPIR_Process.node_map[r] == params.host;
	memset(g, 0, sizeof(*g));
	mpi_errno = read_cvars(g);
	MPIR_ERR_CHECK(mpi_errno);
	/* Settings we cannot run with are refused before anything exists
	 * that could be left behind. */
	rc = bip_env_limits(MPIR_Process.size, &lim);
	BIP_CHECK(rc, "BIP knobs");
	mpi_errno = MPIDI_BIP_credits_init(lim.small_queue);
	MPIR_ERR_CHECK(mpi_errno);
	g->ntags = (int)lim.long_tags;
	g->tag_owner = MPL_calloc((size_t)g->ntags, sizeof(*g->tag_owner),
				  MPL_MEM_BUFFER);
	MPIR_ERR_CHKANDJUMP(!g->tag_owner, mpi_errno, MPI_ERR_OTHER,
			    "**nomem");
	/* The job's secret names its segments: rank 0 draws it, PMI (the
	 * job's own key-value space) carries it to the others. */
	if (MPIR_Process.rank == 0) {
		rc = bip_secret_new(&params.secret);
		BIP_CHECK(rc, "bip_secret_new");
	}
	mpi_errno = MPIR_pmi_bcast(&params.secret, sizeof(params.secret),
				   MPIR_PMI_DOMAIN_ALL);
	MPIR_ERR_CHECK(mpi_errno);
	rc = bip_open(&params, &g->ep);
	BIP_CHECK(rc, "bip_open");
	g->crowded = bip_crowded(g->ep) == 1;
	/* Crowded ranks wait long for the receiver to run: hold longer, and
	 * send streams eagerly too, since a three-way message waits for its
	 * receiver to run (to read it, then again for its ACK) where an
	 * eager one completes at once (exchanges of 32-64 KiB on 16 ranks
	 * on 2 cores: 1.3-2 x faster eager). */
	g->hold_ns = 1000 * (uint64_t)(MPIR_CVAR_CH4_BIP_HOLD_US >= 0
					       ? MPIR_CVAR_CH4_BIP_HOLD_US
				       : g->crowded ? 1000
						    : 20);
	g->eager_limit = MPIR_CVAR_CH4_BIP_EAGER_LIMIT >= 0
				 ? (size_t)MPIR_CVAR_CH4_BIP_EAGER_LIMIT
				 : 65536;
	/* The stream limit set by hand, or crowded; else SIZE_MAX: BIP says
	 * at connect where streams had better be read, as measured on this
	 * machine (bip_stream_read_min). */
	g->eager_stream_limit =
		MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT >= 0
			? (size_t)MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT
		: g->crowded ? g->eager_limit
			     : SIZE_MAX;
	/* The netmod matches MPI tags itself: a full int travels. */
	*tag_bits = MPIR_TAG_BITS_DEFAULT;
fn_exit:
	return mpi_errno;
fn_fail:
	release(g);
	goto fn_exit;
}

/* Bytes of each eager piece to a peer whose wire carries chunk bytes per
 * packet: whole packets, so that every packet of an eager message but its
 * last is full and a network wire sends them as one segmented run; at
 * most a BIP small message. */
static size_t eager_piece(size_t chunk)
{
	if (!chunk || chunk >= BIP_SMALL_MAX)
		return BIP_SMALL_MAX;
	return BIP_SMALL_MAX / chunk * chunk;
}

/* Every rank publishes its card (what its peers must know of it, then
 * BIP's card); each reads every card, then connects every rank (itself
 * too, by BIP's self wire) and agrees with it on the pair's credits. */
int MPIDI_BIP_init_world(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	enum { LEN = MPIDI_BIP_CARD_EXTRA + BIP_CARD_MAX };
	char bcard[BIP_CARD_MAX], card[LEN] = { 0 }, *table = NULL;
	MPIDI_BIP_card_t mine = {
		.credits = (uint32_t)g->accept,
		/* Three-way: above the short limit, below the threshold. */
		.rts3_max = g->rndv_threshold > g->short_limit + 1
				    ? g->rndv_threshold - 1
				    : 0,
		.barrier = MPIR_CVAR_CH4_BIP_INIT_BARRIER,
	};
	MPIDI_BIP_card_t *theirs = NULL;
	const char **bip_cards = NULL;
	int mpi_errno = MPI_SUCCESS, rc, unused;
	int rank = MPIR_Process.rank, size = MPIR_Process.size;
	char host[256] = "";

	mine.pid = (uint32_t)getpid();
	(void)gethostname(host, sizeof(host) - 1);
	MPIDI_BIP_card_host(mine.host, host);
	rc = bip_card(g->ep, bcard, sizeof(bcard));
	if (!rc && MPIDI_BIP_card_format(card, sizeof(card), &mine, bcard))
		rc = -BIP_ETOOLONG;
	BIP_CHECK(rc, "bip_card");
	mpi_errno = MPIDU_bc_table_create(rank, size, MPIR_Process.node_map,
					  card, LEN, TRUE, 0, (void **)&table,
					  &unused);
	MPIR_ERR_CHECK(mpi_errno);
	theirs = MPL_malloc((size_t)size * sizeof(*theirs), MPL_MEM_OTHER);
	bip_cards = MPL_malloc((size_t)size * sizeof(*bip_cards),
			       MPL_MEM_OTHER);
	MPIR_ERR_CHKANDJUMP(!theirs || !bip_cards, mpi_errno, MPI_ERR_OTHER,
			    "**nomem");
	/* Every card is read before anything is connected. */
	for (int i = 0; i < size; i++) {
		char *c = table + (size_t)i * LEN;

		c[LEN - 1] = '\0';
		MPIR_ERR_CHKANDJUMP1(MPIDI_BIP_card_parse(c, &theirs[i],
							  &bip_cards[i]),
				     mpi_errno, MPI_ERR_OTHER, "**bipcard",
				     "**bipcard %d", i);
		/* A rank without the barrier would leave the others in it. */
		MPIR_ERR_CHKANDJUMP3(theirs[i].barrier != mine.barrier,
				     mpi_errno, MPI_ERR_OTHER, "**bipbarrier",
				     "**bipbarrier %d %s %s", i,
				     theirs[i].barrier ? "true" : "false",
				     mine.barrier ? "true" : "false");
	}
	for (int i = 0; i < size; i++) {
		size_t chunk = 0;

		MPIDIU_get_av(0, i).netmod.bip.node = i;
		g->peers[i].rts3_max = theirs[i].rts3_max;
		g->peers[i].pid = theirs[i].pid;
		memcpy(g->peers[i].host, theirs[i].host, sizeof(theirs[i].host));
		/* Our own rank too: BIP's self wire carries it. */
		rc = bip_connect(g->ep, i, bip_cards[i]);
		if (rc) {
			mpi_errno = MPIDI_BIP_error(rc, "bip_connect");
			goto fn_fail;
		}
		MPIDI_BIP_credits_agree(i, (int)theirs[i].credits);
		(void)bip_peer_chunk(g->ep, i, &chunk);
		g->peers[i].piece = eager_piece(chunk);
		/* Each side tested at connect that it can read the other,
		 * and both allow it when the knob is on: what we can read of
		 * it, it can read of us. */
		g->peers[i].read_min = bip_read_min(g->ep, i);
		/* Streams take three-way for its receiver's single copy:
		 * only to a rank that can read our memory, from the size
		 * at which reading beats the rings on this machine. */
		if (g->peers[i].read_min == SIZE_MAX)
			g->peers[i].stream_min = SIZE_MAX;
		else if (g->eager_stream_limit == SIZE_MAX)
			g->peers[i].stream_min =
				bip_stream_read_min(g->ep, i);
		else
			g->peers[i].stream_min =
				MPL_MAX(g->eager_stream_limit + 1,
					g->peers[i].read_min);
	}
fn_exit:
	MPL_free(theirs);
	MPL_free(bip_cards);
	if (table)
		MPIDU_bc_table_destroy();
	return mpi_errno;
fn_fail:
	release(g);
	goto fn_exit;
}

/*
 * Rule: MPI_Init returns on every rank together, with a barrier once
 * MPI_COMM_WORLD works. The launcher's last PMI answer reaches the ranks
 * one after the other, each woken from a read: they left MPI_Init 50 us
 * to 1 ms apart, and a program's first messages waited for the last rank
 * (the first 200 round trips of 8 B after MPI_Init took 1.1-3.4 x those
 * after them, median 1.45; with the barrier 0.87-1.65 x, median 1.09).
 * The barrier's wait also finds ranks that the launcher's wake-ups left
 * on one CPU, and moves them apart (BIP_SPREAD), before the program's
 * first message. A rank waits in MPI_Init instead, for no longer in all.
 * A dead rank fails it as it fails any message (check_peers).
 * MPIR_CVAR_CH4_BIP_INIT_BARRIER=false leaves it out, on every rank.
 */
int MPIDI_BIP_post_init(void)
{
	MPIR_Errflag_t errflag = MPIR_ERR_NONE;

	if (!MPIR_CVAR_CH4_BIP_INIT_BARRIER)
		return MPI_SUCCESS;

	/* Called from the world's commit post hook: point-to-point works
	 * (ch4's VCIs are not ours to wait for, and our own commit post hook
	 * does nothing), but the world's collective selection is not set up
	 * yet, so an algorithm by name. */
	return MPIR_Barrier_intra_dissemination(MPIR_Process.comm_world,
						&errflag);
}

static void print_counters(const MPIDI_BIP_global_t *g)
{
	const MPIDI_BIP_counters_t *c = &g->cnt;
	struct bip_counters b;
	char why[256] = "", n_range[32];
	uint64_t dropped = 0;
	int nmin = g->accept, nmax = 0;

	/* N of the pairs: one number when they all agree alike. */
	for (int i = 0; i < MPIR_Process.size; i++) {
		nmin = MPL_MIN(nmin, g->peers[i].ncredits);
		nmax = MPL_MAX(nmax, g->peers[i].ncredits);
	}
	if (nmin == nmax)
		snprintf(n_range, sizeof(n_range), "%d", nmin);
	else
		snprintf(n_range, sizeof(n_range), "%d..%d", nmin, nmax);

	/* Malformed control messages: how many, and why (reason: count). */
	for (int i = 1; i < MPIDI_BIP_CTL_NDROPS; i++) {
		size_t n = strlen(why);

		if (!c->dropped[i])
			continue;
		dropped += c->dropped[i];
		snprintf(why + n, sizeof(why) - n, "%s%s: %llu", n ? ", " : " (",
			 MPIDI_BIP_ctl_drop_name(i),
			 (unsigned long long)c->dropped[i]);
	}
	if (dropped)
		strncat(why, ")", sizeof(why) - strlen(why) - 1);
	bip_get_counters(g->ep, &b);
	fprintf(stderr,
		"bip netmod rank %d: short %llu, eager %llu, three-way %llu, "
		"rendezvous %llu "
		"(synchronous %llu, fragments %llu, read by us %llu "
		"(together %llu), with the sender's help %llu, parts written "
		"for a receiver %llu), "
		"credits-only %llu (N=%s), "
		"unexpected %llu (max queued %u; held %llu, "
		"fetched after the hold %llu), temporary buffers %llu "
		"(reused %llu), active messages inline %llu, "
		"announced %llu, puts and gets direct %llu (by load and store "
		"%llu), collectives in shared memory %llu (read where it lies "
		"%llu, allreduces split %llu), send FIFO max %u "
		"(lent %llu), receive FIFO max %u, "
		"dropped %llu%s, idle yields %llu, sleeps %llu, moves %llu | "
		"BIP: packets %llu sent %llu received, acks %llu, NACKs %llu "
		"sent %llu received, retransmits %llu, small-queue overflows "
		"%llu, segmented runs %llu sent %llu received, single copies "
		"%llu, small messages read in place %llu, taken straight "
		"from a ring %llu\n",
		MPIR_Process.rank,
		(unsigned long long)c->sent[MPIDI_BIP_PROTO_SHORT],
		(unsigned long long)c->sent[MPIDI_BIP_PROTO_EAGER],
		(unsigned long long)c->sent[MPIDI_BIP_PROTO_3WAY],
		(unsigned long long)c->sent[MPIDI_BIP_PROTO_RNDV],
		(unsigned long long)c->ssend,
		(unsigned long long)c->fragments,
		(unsigned long long)c->read,
		(unsigned long long)c->read_together,
		(unsigned long long)c->split,
		(unsigned long long)c->pushed,
		(unsigned long long)c->credits_only, n_range,
		(unsigned long long)c->unexpected, c->unexp_max,
		(unsigned long long)c->held,
		(unsigned long long)c->held_fetched,
		(unsigned long long)c->bufs,
		(unsigned long long)c->bufs_reused,
		(unsigned long long)c->am_short,
		(unsigned long long)c->am_3way,
		(unsigned long long)(c->rma_direct + c->rma_mapped),
		(unsigned long long)c->rma_mapped,
		(unsigned long long)c->node_coll,
		(unsigned long long)c->node_coll_read,
		(unsigned long long)c->node_coll_split, c->sfifo_max,
		(unsigned long long)c->lent, c->rfifo_max,
		(unsigned long long)dropped, why,
		(unsigned long long)b.idle_yields,
		(unsigned long long)b.idle_sleeps,
		(unsigned long long)b.idle_moves,
		(unsigned long long)b.packets_sent,
		(unsigned long long)b.packets_received,
		(unsigned long long)b.acks_sent,
		(unsigned long long)b.nacks_sent,
		(unsigned long long)b.nacks_received,
		(unsigned long long)b.retransmits,
		(unsigned long long)b.small_overflows,
		(unsigned long long)b.runs_sent,
		(unsigned long long)b.runs_received,
		(unsigned long long)b.cma_transfers,
		(unsigned long long)b.small_in_place,
		(unsigned long long)b.small_direct);
	for (int i = 0; i < MPIDI_BIP_PATHS_REGIMES; i++) {
		MPIDI_BIP_path_format(&g->paths[i], why, sizeof(why));
		if (why[0])
			fprintf(stderr,
				"bip netmod rank %d: long messages we could "
				"read, ns per KiB by size, %s:%s\n",
				MPIR_Process.rank,
				i == MPIDI_BIP_PATHS_BOTH ? "both ways"
							  : "one way",
				why);
	}
}

int MPIDI_BIP_mpi_finalize_hook(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int rc, progress = 0;

	/* Held messages no receive took are fetched now, so that their
	 * senders finish. */
	g->hold_ns = 0;
	if (g->nheld)
		(void)MPIDI_BIP_recv_held_due(&progress);
	(void)MPIDI_BIP_recv_reads_done();
	/* What is still queued must reach its peers first (a send whose
	 * request was freed may still be on its way; one whose cancel failed
	 * is the receiver's to take, MPI says, once it gets to it); so must
	 * the answers of receives whose reads were due, and the data of
	 * transfers under way to us (a freed receive's sender waits for
	 * them: leaving would fail its send with a dead peer; a receive in
	 * the receive FIFO waits for a tag a long receive holds). A peer that
	 * dies fails its transfers; one that no longer calls MPI holds us as
	 * it would hold its own waits. The wait is a blocking one: BIP's idle
	 * policy may give the core to that peer, or sleep until it sends. */
	while (g->due_head || g->sfifo_peers || g->credits_due ||
	       MPIDI_BIP_long_busy() || g->splits.used || g->detached)
		if (MPIDI_BIP_progress(0, 1) != MPI_SUCCESS)
			break;
	if (MPIR_CVAR_CH4_BIP_PRINT_COUNTERS)
		print_counters(g);
	/* Sends a peer has not acknowledged yet (it may be computing) are
	 * reported by BIP on stderr; failing MPI_Finalize for them would
	 * abort the job, that peer with it, before it takes them. */
	rc = release(g);
	if (rc && rc != -BIP_ETIMEDOUT)
		return MPIDI_BIP_error(rc, "bip_close");
	return MPI_SUCCESS;
}

int MPIDI_BIP_comm_set_hints(MPIR_Comm *comm_ptr, MPIR_Info *info)
{
	return MPI_SUCCESS;
}

/* --- dynamic processes: not supported over BIP yet ---------------------- */

static int no_dynamic(void)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_SPAWN, "**bipnodynamic",
				    0);
}

int MPIDI_BIP_get_local_upids(MPIR_Comm *comm, int **local_upid_size,
			      char **local_upids)
{
	return no_dynamic();
}

int MPIDI_BIP_upids_to_gpids(int size, int *remote_upid_size,
			     char *remote_upids, uint64_t *remote_gpids)
{
	return no_dynamic();
}

int MPIDI_BIP_dynamic_send(uint64_t remote_gpid, int tag, const void *buf,
			   int size, int timeout)
{
	return no_dynamic();
}

int MPIDI_BIP_dynamic_recv(int tag, void *buf, int size, int timeout)
{
	return no_dynamic();
}

/* --- communicators: the memory of their small collectives (bip_coll.c) -- */

int MPIDI_BIP_mpi_comm_commit_pre_hook(MPIR_Comm *comm)
{
	comm->dev.ch4.netmod.bip.coll = NULL;
	comm->dev.ch4.netmod.bip.coll_calls = 0;
	comm->dev.ch4.netmod.bip.coll_off = false;
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_comm_free_hook(MPIR_Comm *comm)
{
	MPIDI_BIP_coll_free(comm);
	return MPI_SUCCESS;
}

/* --- hooks with nothing to do -------------------------------------------- */

/* Nothing: MPI_COMM_WORLD's barrier in MPIDI_BIP_post_init runs before
 * ch4 calls this hook for the world. */
int MPIDI_BIP_mpi_comm_commit_post_hook(MPIR_Comm *comm)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_type_commit_hook(MPIR_Datatype *datatype_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_type_free_hook(MPIR_Datatype *datatype_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_op_commit_hook(MPIR_Op *op_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_op_free_hook(MPIR_Op *op_p)
{
	return MPI_SUCCESS;
}

/* --- windows, memory and partitioned communication: MPIDIG's ------------- */

int MPIDI_BIP_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
			     MPI_Datatype datatype, int rank, int tag,
			     MPIR_Comm *comm, MPIR_Info *info,
			     MPIDI_av_entry_t *av, MPIR_Request **req_p)
{
	return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, rank,
				     tag, comm, info, req_p);
}

int MPIDI_BIP_mpi_precv_init(void *buf, int partitions, MPI_Aint count,
			     MPI_Datatype datatype, int rank, int tag,
			     MPIR_Comm *comm, MPIR_Info *info,
			     MPIDI_av_entry_t *av, MPIR_Request **req_p)
{
	return MPIDIG_mpi_precv_init(buf, partitions, count, datatype, rank,
				     tag, comm, info, req_p);
}

int MPIDI_BIP_mpi_win_set_info(MPIR_Win *win, MPIR_Info *info)
{
	return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_BIP_mpi_win_get_info(MPIR_Win *win, MPIR_Info **info_p)
{
	return MPIDIG_mpi_win_get_info(win, info_p);
}

int MPIDI_BIP_mpi_win_free(MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_free(win_p);
}

int MPIDI_BIP_mpi_win_create(void *base, MPI_Aint length, int disp_unit,
			     MPIR_Info *info, MPIR_Comm *comm_ptr,
			     MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm_ptr,
				     win_p);
}

int MPIDI_BIP_mpi_win_attach(MPIR_Win *win, void *base, MPI_Aint size)
{
	return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_BIP_mpi_win_allocate_shared(MPI_Aint size, int disp_unit,
				      MPIR_Info *info, MPIR_Comm *comm_ptr,
				      void **baseptr_p, MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info, comm_ptr,
					      baseptr_p, win_p);
}

int MPIDI_BIP_mpi_win_detach(MPIR_Win *win, const void *base)
{
	return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_BIP_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info *info,
			       MPIR_Comm *comm, void *baseptr, MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_allocate(size, disp_unit, info, comm, baseptr,
				       win_p);
}

int MPIDI_BIP_mpi_win_create_dynamic(MPIR_Info *info, MPIR_Comm *comm,
				     MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_create_dynamic(info, comm, win_p);
}

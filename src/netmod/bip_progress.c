/*
 * bip_progress.c - the netmod's progress engine: take every control message
 * out of BIP's queue (freeing its slot and credit at once) and act on it,
 * send what the FIFOs hold, move long messages along, and give the core away
 * when there is nothing to do.
 */
#include "mpidimpl.h"
#include "bip_state.h"

#include <sched.h>
#include <time.h>

/* Calls further apart than this are not a wait loop: the caller works in
 * between (MPI_Test in a compute loop), and must not be slowed. MPICH's own
 * wait loops come back within 0.5 us, within 1-2 us after a sleep (cold
 * caches); an interrupt or a preemption makes a long gap now and then,
 * hence several in a row are needed. */
#define IDLE_GAP_NS 1000
#define IDLE_GAP_SLEPT_NS 10000
#define IDLE_GAPS 4

MPIDI_BIP_global_t MPIDI_BIP_global;

int MPIDI_BIP_error(int rc, const char *what)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_OTHER, "**bipfail",
				    "**bipfail %s %s", what, bip_strerror(rc));
}

static bool am_handler_valid(const MPIDI_BIP_ctl_am_t *am)
{
	return am->handler_id < MPIDIG_HANDLER_STATIC_MAX &&
	       MPIDIG_global.target_msg_cbs[am->handler_id];
}

/* Is a control message of len bytes from node well formed? Sizes,
 * handlers and credits are checked before any is used, so a corrupt or
 * mismatched peer gives an error, not a crash. Request ids in answers are
 * trusted: BIP delivers only this job's packets, sent by this build. */
static bool ctl_valid(int node, const MPIDI_BIP_ctl_t *h, size_t len)
{
	const MPIDI_BIP_ctl_am_t *am = (const void *)h;
	const MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (len < sizeof(*h) ||
	    g->peers[node].credits + h->credits > g->ncredits)
		return false;
	switch (h->type) {
	case MPIDI_BIP_CTL_CREDITS:
		return true;
	case MPIDI_BIP_CTL_SHORT:
		return len == sizeof(*h) + h->len;
	case MPIDI_BIP_CTL_RTS3:
	case MPIDI_BIP_CTL_RNDV:
		return len == sizeof(MPIDI_BIP_ctl_rts_t);
	case MPIDI_BIP_CTL_ACK:
	case MPIDI_BIP_CTL_AM_CTS:
		return len == sizeof(MPIDI_BIP_ctl_ack_t);
	case MPIDI_BIP_CTL_CANCEL:
	case MPIDI_BIP_CTL_CANCEL_REPLY:
		return len == sizeof(MPIDI_BIP_ctl_cancel_t);
	case MPIDI_BIP_CTL_AM:
		return len >= sizeof(*am) && am_handler_valid(am) &&
		       am->am_hdr_sz <= len - sizeof(*am) &&
		       am->data_sz == len - sizeof(*am) - am->am_hdr_sz;
	case MPIDI_BIP_CTL_AM_RTS:
		return len >= sizeof(*am) && am_handler_valid(am) &&
		       len - sizeof(*am) == am->am_hdr_sz;
	}
	return false;
}

/* One control message from node, from BIP's queue or the self queue. */
static int dispatch(int node, const void *msg, size_t len)
{
	const MPIDI_BIP_ctl_t *h = msg;

	if (!ctl_valid(node, h, len))
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**bipproto", "**bipproto %d",
					    node);
	MPIDI_BIP_ctl_arrived(node, h);
	switch (h->type) {
	case MPIDI_BIP_CTL_SHORT:
		return MPIDI_BIP_recv_short(node, h);
	case MPIDI_BIP_CTL_RTS3:
	case MPIDI_BIP_CTL_RNDV:
		return MPIDI_BIP_recv_rts(node, msg);
	case MPIDI_BIP_CTL_ACK:
		return MPIDI_BIP_send_ack(node, msg);
	case MPIDI_BIP_CTL_CANCEL:
		return MPIDI_BIP_recv_cancel(node, msg);
	case MPIDI_BIP_CTL_CANCEL_REPLY:
		return MPIDI_BIP_send_cancelled(node, msg);
	case MPIDI_BIP_CTL_AM:
		return MPIDI_BIP_am_arrived(node, msg);
	case MPIDI_BIP_CTL_AM_RTS:
		return MPIDI_BIP_am_rts(node, msg);
	case MPIDI_BIP_CTL_AM_CTS:
		return MPIDI_BIP_am_cts(node, msg);
	}
	return MPI_SUCCESS; /* credits only: counted on arrival */
}

/* Messages to ourselves, in the order they were sent. */
static int drain_self(int *progress)
{
	MPIDI_BIP_ctlq_t *q;
	int mpi_errno = MPI_SUCCESS;

	while (mpi_errno == MPI_SUCCESS && (q = MPIDI_BIP_self_pop())) {
		mpi_errno = dispatch(q->node, q->msg, q->len);
		MPL_free(q);
		(*progress)++;
	}
	return mpi_errno;
}

/* One turn of BIP's NIC program, then every control message out of BIP's
 * queue at once. */
static int drain_control(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	const void *data;
	struct bip_status st;
	MPIDI_BIP_ctl_t h;
	int mpi_errno = MPI_SUCCESS, len;

	/* Credits make an overflow impossible: one means a bug, say so. */
	len = bip_poll(g->ep);
	if (len == -BIP_EOVERFLOW)
		MPL_DBG_MSG(MPIDI_CH4_DBG_GENERAL, VERBOSE,
			    "bip: small-message queue overflowed");
	else
		BIP_CHECK(len, "bip_poll");
	while ((len = bip_peek_nopoll(g->ep, &data, &st)) >= 0) {
		memcpy(&h, data, MPL_MIN((size_t)len, sizeof(h)));
		mpi_errno = dispatch(st.node, data, (size_t)len);
		bip_consume(g->ep);
		(*progress)++;
		MPIR_ERR_CHECK(mpi_errno);
		mpi_errno = MPIDI_BIP_ctl_consumed(st.node, &h);
		MPIR_ERR_CHECK(mpi_errno);
	}
	if (len != -BIP_EAGAIN && len != -BIP_EPEERGONE)
		BIP_CHECK(len, "bip_peek");
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Past the spin phase, give the core away: yield, then sleep on BIP's
 * doorbell (as BIP_IDLE allows) until traffic comes or a millisecond
 * passed, so that MPICH's progress still runs now and then. Only while the
 * caller comes back at once: gaps between our idle calls (from the end of
 * one to the start of the next) mean it works in between, and its streak
 * of empty polls starts over. Not asleep with threads: the sleeper would
 * hold MPICH's lock. */
static void idle(MPIDI_BIP_global_t *g, uint64_t entered_ns)
{
	uint64_t gap = g->idle_slept ? IDLE_GAP_SLEPT_NS : IDLE_GAP_NS;

	if (g->idle > g->spin_polls + 1 && entered_ns - g->idle_left_ns > gap) {
		if (++g->idle_gaps == IDLE_GAPS) {
			g->idle = 0;
			g->idle_gaps = 0;
			return;
		}
	} else {
		g->idle_gaps = 0;
	}
	g->idle_slept = g->idle > g->yield_polls && !MPIR_ThreadInfo.isThreaded;
	if (g->idle_slept) {
		bip_sleep(g->ep, 1000);
		g->cnt.sleeps++;
	} else {
		sched_yield();
		g->cnt.yields++;
	}
	g->idle_left_ns = now_ns();
}

int MPIDI_BIP_progress(int vci, int blocking)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, progress = 0;
	/* The clock only once the spinning is over: it costs a poll's time. */
	uint64_t entered_ns = g->idle >= g->spin_polls ? now_ns() : 0;

	mpi_errno = drain_control(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = drain_self(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = MPIDI_BIP_send_fifo_drain(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = MPIDI_BIP_long_progress(&progress);
	MPIR_ERR_CHECK(mpi_errno);
	/* MPICH polls in a loop: after a while with nothing to do, give the
	 * core away. */
	if (progress)
		g->idle = 0;
	else if (++g->idle > g->spin_polls)
		idle(g, entered_ns);
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

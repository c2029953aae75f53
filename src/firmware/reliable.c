/*
 * reliable.c - the reliability state machine (go-back-N with modified
 * ACK/NACK), one function per event. It knows sequence numbers and time
 * only: no wire, no buffers, so it is unit-tested on its own. The rules and
 * invariants are stated above struct bipfw_rel_tx in nic.h.
 */
#include "nic.h"

#define BACKOFF_MAX_US 2000

void bipfw_rel_init(struct bipfw_rel_tx *tx, struct bipfw_rel_rx *rx,
		    uint64_t now, uint32_t rto_min_us, uint32_t rto_max_us)
{
	*tx = (struct bipfw_rel_tx){ .progress_at = now,
				     .rto_us = rto_max_us,
				     .rto_min_us = rto_min_us,
				     .rto_max_us = rto_max_us,
				     .cwnd = BIPFW_CWND_INIT,
				     .ssthresh = BIPFW_CWND_MAX };
	*rx = (struct bipfw_rel_rx){ 0 };
}

/* RFC 6298 with gains 1/8 and 1/4, in microseconds. */
static void rtt_sample(struct bipfw_rel_tx *tx, uint32_t r)
{
	uint32_t rto;

	if (!tx->rtt_known) {
		tx->srtt_us = r;
		tx->rttvar_us = r / 2;
		tx->rtt_known = true;
	} else {
		uint32_t dev = tx->srtt_us > r ? tx->srtt_us - r
					       : r - tx->srtt_us;

		tx->rttvar_us = (uint32_t)((3ull * tx->rttvar_us + dev) / 4);
		tx->srtt_us = (uint32_t)((7ull * tx->srtt_us + r) / 8);
	}
	rto = tx->srtt_us + (tx->rttvar_us ? 4 * tx->rttvar_us : 1);
	if (rto < tx->rto_min_us)
		rto = tx->rto_min_us;
	tx->rto_us = rto < tx->rto_max_us ? rto : tx->rto_max_us;
}

/* AIMD's additive increase. */
static void cwnd_grow(struct bipfw_rel_tx *tx, uint32_t acked)
{
	if (tx->cwnd < tx->ssthresh) {
		tx->cwnd += acked;
	} else {
		tx->cwnd_acked += acked;
		while (tx->cwnd_acked >= tx->cwnd) {
			tx->cwnd_acked -= tx->cwnd;
			tx->cwnd++;
		}
	}
	if (tx->cwnd > BIPFW_CWND_MAX)
		tx->cwnd = BIPFW_CWND_MAX;
}

/* AIMD's multiplicative decrease, once per loss episode: half of what was
 * in flight when the loss was seen. */
static void cwnd_halve(struct bipfw_rel_tx *tx)
{
	uint32_t half = (tx->next - tx->una) / 2;

	tx->ssthresh = half > BIPFW_CWND_MIN ? half : BIPFW_CWND_MIN;
	tx->cwnd = tx->ssthresh;
	tx->cwnd_acked = 0;
	tx->recover = tx->next;
}

uint32_t bipfw_rel_on_ack(struct bipfw_rel_tx *tx, uint32_t a, uint64_t now)
{
	uint32_t covered;

	/* Stale (already covered) or bogus (beyond what we sent): ignore. */
	if (!bipfw_seq_before(tx->una, a) || bipfw_seq_before(tx->next, a))
		return 0;
	covered = a - tx->una;
	tx->una = a;
	/* An ack beyond the resend point means those packets got through. */
	if (bipfw_seq_before(tx->resend, a))
		tx->resend = a;
	tx->progress_at = tx->acked_at = now;
	tx->backoff_us = 0;
	cwnd_grow(tx, covered);
	if (tx->timing && bipfw_seq_before(tx->timed_seq, a)) {
		uint64_t r = now - tx->timed_at;

		tx->timing = false;
		rtt_sample(tx, r < UINT32_MAX ? (uint32_t)r : UINT32_MAX);
	}
	return covered;
}

void bipfw_rel_on_nack(struct bipfw_rel_tx *tx, uint32_t seq, bool busy,
		       uint64_t now, unsigned first_backoff_us)
{
	/* NACK s: s and what follows were dropped; only [una, next) counts. */
	if (bipfw_seq_before(seq, tx->una) || !bipfw_seq_before(seq, tx->next))
		return;
	tx->resend = seq;
	/* A lost packet: the network or the receiver's socket is full. */
	if (!busy && !bipfw_seq_before(seq, tx->recover))
		cwnd_halve(tx);
	/* Karn: what is resent is not timed. */
	if (tx->timing && !bipfw_seq_before(tx->timed_seq, seq))
		tx->timing = false;
	if (busy) {
		/* Busy: the receiver has no buffer; wait longer each time. */
		tx->backoff_us = tx->backoff_us ? tx->backoff_us * 2
						: first_backoff_us;
		if (tx->backoff_us > BACKOFF_MAX_US)
			tx->backoff_us = BACKOFF_MAX_US;
		tx->hold_until = now + tx->backoff_us;
	}
	tx->progress_at = now;
}

bool bipfw_rel_on_timer(struct bipfw_rel_tx *tx, uint64_t now)
{
	/* Nothing in flight, or still sending: no timeout. */
	if (tx->una == tx->next || now - tx->progress_at < tx->rto_us)
		return false;
	/* Lost packet or lost ack: go back to the oldest unacked packet,
	 * and wait twice as long for this try (the path may be congested,
	 * the peer descheduled). */
	tx->resend = tx->una;
	tx->progress_at = now;
	tx->timing = false;
	cwnd_halve(tx);
	tx->cwnd = BIPFW_CWND_MIN;
	tx->rto_us = tx->rto_us < tx->rto_max_us / 2 ? tx->rto_us * 2
						      : tx->rto_max_us;
	return true;
}

uint32_t bipfw_rel_on_send_new(struct bipfw_rel_tx *tx, uint64_t now)
{
	/* The timer runs from the first packet put in flight. */
	if (tx->una == tx->next)
		tx->progress_at = tx->acked_at = now;
	if (!tx->timing) {
		tx->timing = true;
		tx->timed_seq = tx->next;
		tx->timed_at = now;
	}
	tx->resend = tx->next + 1;
	return tx->next++;
}

enum bipfw_rx_verdict bipfw_rel_on_arrival(struct bipfw_rel_rx *rx,
					   uint32_t seq)
{
	if (seq == rx->expected)
		return BIPFW_RX_ACCEPT;
	if (bipfw_seq_before(seq, rx->expected)) {
		/* Duplicate: the sender missed our ack; repeat it now. */
		rx->ack_urgent = true;
		return BIPFW_RX_DUP;
	}
	/* Gap: one NACK for expected per gap; timers cover a lost NACK. */
	if (!rx->gap_nacked) {
		rx->nack_due = true;
		rx->nack_seq = rx->expected;
		rx->nack_flags = 0;
		rx->gap_nacked = true;
	}
	return BIPFW_RX_GAP;
}

void bipfw_rel_on_delivered(struct bipfw_rel_rx *rx, uint64_t now)
{
	if (rx->unacked++ == 0)
		rx->unacked_since = now;
	rx->expected++;
	rx->gap_nacked = false;
}

void bipfw_rel_on_refused(struct bipfw_rel_rx *rx)
{
	/* No buffer: drop, NACK busy; what follows is dropped as a gap. */
	rx->nack_due = true;
	rx->nack_seq = rx->expected;
	rx->nack_flags = BIP_PKTF_BUSY;
	rx->gap_nacked = true;
}

void bipfw_rel_on_ack_sent(struct bipfw_rel_rx *rx)
{
	rx->unacked = 0;
	rx->ack_urgent = false;
}

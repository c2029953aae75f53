/*
 * test_reliable.c - unit tests of the reliability state machine alone:
 * every event on both sides, the invariants of nic.h, sequence wrap-around.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nic.h"

static int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__,       \
				__LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

static void test_send_and_ack(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	for (uint32_t i = 0; i < 5; i++)
		CHECK(bipfw_rel_on_send_new(&tx, 10) == i);
	CHECK(tx.next == 5 && tx.una == 0 && tx.resend == 5);
	CHECK(bipfw_rel_window_full(&tx, 5));
	CHECK(!bipfw_rel_window_full(&tx, 6));
	/* Cumulative ack covers 0..2. */
	CHECK(bipfw_rel_on_ack(&tx, 3, 20) == 3);
	CHECK(tx.una == 3);
	/* Stale and bogus acks change nothing. */
	CHECK(bipfw_rel_on_ack(&tx, 2, 21) == 0);
	CHECK(bipfw_rel_on_ack(&tx, 3, 21) == 0);
	CHECK(bipfw_rel_on_ack(&tx, 9, 21) == 0);
	CHECK(tx.una == 3);
	CHECK(bipfw_rel_on_ack(&tx, 5, 22) == 2);
	CHECK(tx.una == tx.next);
}

static void test_nack_rollback(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	for (int i = 0; i < 8; i++)
		bipfw_rel_on_send_new(&tx, 0);
	/* NACK 4 arrives with ack 4: resend from 4 at once (not busy). */
	bipfw_rel_on_ack(&tx, 4, 5);
	bipfw_rel_on_nack(&tx, 4, false, 5, 20);
	CHECK(tx.una == 4 && tx.resend == 4 && tx.next == 8);
	CHECK(bipfw_rel_may_send(&tx, 5));
	/* A NACK outside [una, next) is ignored. */
	bipfw_rel_on_nack(&tx, 2, false, 6, 20);
	bipfw_rel_on_nack(&tx, 8, false, 6, 20);
	CHECK(tx.resend == 4);
	/* Busy NACKs hold the sender off, doubling, reset by progress. */
	bipfw_rel_on_nack(&tx, 5, true, 100, 20);
	CHECK(tx.resend == 5 && tx.hold_until == 120);
	CHECK(!bipfw_rel_may_send(&tx, 119) && bipfw_rel_may_send(&tx, 120));
	bipfw_rel_on_nack(&tx, 5, true, 200, 20);
	CHECK(tx.hold_until == 240);
	for (int i = 0; i < 20; i++)
		bipfw_rel_on_nack(&tx, 5, true, 300, 20);
	CHECK(tx.backoff_us == 2000);
	bipfw_rel_on_ack(&tx, 6, 400);
	CHECK(tx.backoff_us == 0 && tx.resend == 6);
}

static void test_timeout(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	/* Before any round trip was measured, the timeout is the ceiling. */
	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	CHECK(!bipfw_rel_on_timer(&tx, 1000000)); /* nothing in flight */
	bipfw_rel_on_send_new(&tx, 1000);
	bipfw_rel_on_send_new(&tx, 1010);
	CHECK(!bipfw_rel_on_timer(&tx, 1050));
	CHECK(bipfw_rel_on_timer(&tx, 1100));
	CHECK(tx.resend == 0);
	/* The timer restarts from the rollback, at the ceiling still. */
	CHECK(tx.rto_us == 100);
	CHECK(!bipfw_rel_on_timer(&tx, 1150));
}

static void test_rtt(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	bipfw_rel_init(&tx, &rx, 0, 100, 100000);
	CHECK(tx.rto_us == 100000);
	/* First sample R = 1000: srtt R, rttvar R/2, rto srtt + 4 rttvar. */
	bipfw_rel_on_send_new(&tx, 0);
	bipfw_rel_on_ack(&tx, 1, 1000);
	CHECK(tx.srtt_us == 1000 && tx.rttvar_us == 500 && tx.rto_us == 3000);
	/* One packet timed at a time: the first of a burst. Second sample
	 * 2000: rttvar (3 * 500 + 1000) / 4, srtt (7 * 1000 + 2000) / 8. */
	bipfw_rel_on_send_new(&tx, 5000);
	bipfw_rel_on_send_new(&tx, 6500);
	bipfw_rel_on_ack(&tx, 2, 7000);
	CHECK(tx.srtt_us == 1125 && tx.rttvar_us == 625 && tx.rto_us == 3625);
	bipfw_rel_on_ack(&tx, 3, 7100); /* the second was not timed */
	CHECK(tx.srtt_us == 1125);
	/* Each expiry doubles the timeout, up to the ceiling... */
	bipfw_rel_on_send_new(&tx, 10000);
	CHECK(bipfw_rel_on_timer(&tx, 10000 + 3625));
	CHECK(tx.rto_us == 7250);
	for (int i = 0; i < 10; i++)
		bipfw_rel_on_timer(&tx, 20000 + 200000 * (uint64_t)i);
	CHECK(tx.rto_us == 100000);
	/* ...and the resent packet's ack is no sample (Karn). */
	bipfw_rel_on_ack(&tx, 4, 3000000);
	CHECK(tx.srtt_us == 1125 && tx.rto_us == 100000);
	/* A NACKed timed packet is resent: not timed either. */
	bipfw_rel_on_send_new(&tx, 3000000);
	bipfw_rel_on_nack(&tx, 4, false, 3000001, 20);
	bipfw_rel_on_ack(&tx, 5, 3000400);
	CHECK(tx.srtt_us == 1125);
	/* The next sample sets it again; it never goes below the floor. */
	for (int i = 0; i < 40; i++) {
		uint64_t t = 4000000 + 100 * (uint64_t)i;

		bipfw_rel_on_send_new(&tx, t);
		bipfw_rel_on_ack(&tx, tx.next, t + 1);
	}
	CHECK(tx.srtt_us < 20 && tx.rto_us == 100);
}

static void test_cwnd(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;
	uint32_t c;

	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	CHECK(tx.cwnd == BIPFW_CWND_INIT && bipfw_rel_limit(&tx, 128) == 32 &&
	      bipfw_rel_limit(&tx, 16) == 16);
	/* Slow start: one more per packet acked. */
	for (int i = 0; i < 40; i++)
		bipfw_rel_on_send_new(&tx, 0);
	bipfw_rel_on_ack(&tx, 10, 1);
	CHECK(tx.cwnd == 42);
	/* A loss: half the 30 in flight, once for the whole episode. */
	bipfw_rel_on_nack(&tx, 12, false, 2, 20);
	CHECK(tx.cwnd == 15 && tx.ssthresh == 15 && tx.recover == 40);
	bipfw_rel_on_nack(&tx, 20, false, 3, 20);
	CHECK(tx.cwnd == 15);
	/* A receiver out of buffers is not congestion. */
	bipfw_rel_on_nack(&tx, 30, true, 4, 20);
	CHECK(tx.cwnd == 15);
	/* Above ssthresh: one more per window acked. */
	bipfw_rel_on_ack(&tx, 40, 5);
	CHECK(tx.cwnd == 16 && tx.cwnd_acked == 15);
	for (int i = 0; i < 19; i++)
		bipfw_rel_on_send_new(&tx, 6);
	bipfw_rel_on_ack(&tx, 59, 7);
	CHECK(tx.cwnd == 18 && tx.cwnd_acked == 1);
	/* A loss after the episode halves again. */
	for (int i = 0; i < 10; i++)
		bipfw_rel_on_send_new(&tx, 8);
	bipfw_rel_on_nack(&tx, 60, false, 9, 20);
	CHECK(tx.cwnd == 5 && tx.recover == 69);
	/* A timeout: down to the minimum, slow start up to ssthresh. */
	c = tx.next - tx.una;
	CHECK(bipfw_rel_on_timer(&tx, 1000000));
	CHECK(tx.cwnd == BIPFW_CWND_MIN && tx.ssthresh == c / 2);
	bipfw_rel_on_ack(&tx, 62, 1000001);
	CHECK(tx.cwnd == BIPFW_CWND_MIN + 3);
}

static void test_receiver(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	CHECK(bipfw_rel_on_arrival(&rx, 0) == BIPFW_RX_ACCEPT);
	bipfw_rel_on_delivered(&rx, 10);
	CHECK(rx.expected == 1 && rx.unacked == 1);
	/* Ack policy: not yet due, due after the delay or the count. */
	CHECK(!bipfw_rel_ack_due(&rx, 20, 4, 50));
	CHECK(bipfw_rel_ack_due(&rx, 60, 4, 50));
	for (uint32_t s = 1; s < 4; s++) {
		CHECK(bipfw_rel_on_arrival(&rx, s) == BIPFW_RX_ACCEPT);
		bipfw_rel_on_delivered(&rx, 11);
	}
	CHECK(bipfw_rel_ack_due(&rx, 12, 4, 50));
	bipfw_rel_on_ack_sent(&rx);
	CHECK(!bipfw_rel_ack_due(&rx, 1000, 4, 50));
	/* A duplicate asks for the ack again. */
	CHECK(bipfw_rel_on_arrival(&rx, 2) == BIPFW_RX_DUP);
	CHECK(bipfw_rel_ack_due(&rx, 1000, 4, 50));
	bipfw_rel_on_ack_sent(&rx);
	/* A gap NACKs expected once, however many packets follow it. */
	CHECK(bipfw_rel_on_arrival(&rx, 6) == BIPFW_RX_GAP);
	CHECK(rx.nack_due && rx.nack_seq == 4 && rx.nack_flags == 0);
	rx.nack_due = false;
	CHECK(bipfw_rel_on_arrival(&rx, 7) == BIPFW_RX_GAP);
	CHECK(!rx.nack_due);
	CHECK(bipfw_rel_on_arrival(&rx, 4) == BIPFW_RX_ACCEPT);
	bipfw_rel_on_delivered(&rx, 20);
	/* No buffer: NACK busy for the refused packet. */
	CHECK(bipfw_rel_on_arrival(&rx, 5) == BIPFW_RX_ACCEPT);
	bipfw_rel_on_refused(&rx);
	CHECK(rx.nack_due && rx.nack_seq == 5 &&
	      rx.nack_flags == BIP_PKTF_BUSY && rx.expected == 5);
}

static void test_wraparound(void)
{
	struct bipfw_rel_tx tx;
	struct bipfw_rel_rx rx;

	bipfw_rel_init(&tx, &rx, 0, 10, 100);
	tx.next = tx.una = tx.resend = UINT32_MAX - 2;
	rx.expected = UINT32_MAX - 2;
	for (int i = 0; i < 6; i++) {
		uint32_t s = bipfw_rel_on_send_new(&tx, 0);

		CHECK(bipfw_rel_on_arrival(&rx, s) == BIPFW_RX_ACCEPT);
		bipfw_rel_on_delivered(&rx, 0);
	}
	CHECK(tx.next == 3 && rx.expected == 3);
	CHECK(bipfw_rel_on_ack(&tx, rx.expected, 1) == 6);
	CHECK(bipfw_seq_before(UINT32_MAX, 0) && !bipfw_seq_before(0, UINT32_MAX));
	CHECK(bipfw_rel_on_arrival(&rx, UINT32_MAX) == BIPFW_RX_DUP);
}

int main(void)
{
	test_send_and_ack();
	test_nack_rollback();
	test_timeout();
	test_rtt();
	test_cwnd();
	test_receiver();
	test_wraparound();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	else
		printf("reliability state machine: all checks passed\n");
	return failures ? 1 : 0;
}

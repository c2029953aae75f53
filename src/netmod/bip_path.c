/*
 * bip_path.c - read or be sent: the receiver's choice for a long message
 * it may read, by measured cost (bip_path.h says why it is measured).
 */
#include <stdbool.h>
#include <stdio.h>

#include "bip_path.h"

/* Below 16 KiB, then one class per power of two, 4 MiB and over. */
static unsigned class_of(uint64_t len)
{
	unsigned c = 0;

	for (uint64_t l = len >> 14; l && c < MPIDI_BIP_PATH_CLASSES - 1;
	     l >>= 1)
		c++;
	return c;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Of the samples kept (filled in order: 0 marks the end): the median of
 * three ignores one preempted run. */
static uint32_t median(const uint32_t *v)
{
	_Static_assert(MPIDI_BIP_PATH_SAMPLES == 3, "a median of three");
	if (!v[1])
		return v[0];
	if (!v[2])
		return (uint32_t)(((uint64_t)v[0] + v[1]) / 2);
	return MAX(MIN(v[0], v[1]), MIN(MAX(v[0], v[1]), v[2]));
}

/* Reading must be cheaper by a quarter to be taken: it leaves the
 * sender's lines shared with us, so the sender's next write to that
 * buffer first takes them back, a cost the read's own timing cannot see
 * (data rewritten before each send read at 130 ns/KiB against 155 for
 * asking, and its ping-pong was 13 % slower reading); the rings leave
 * the sender's cache alone. */
static enum MPIDI_BIP_path cheaper(uint32_t read, uint32_t send)
{
	return (uint64_t)read * 4 <= (uint64_t)send * 3 ? MPIDI_BIP_PATH_READ
							: MPIDI_BIP_PATH_SEND;
}

/* The lowest of the samples kept. */
static uint32_t lowest(const uint32_t *v)
{
	uint32_t m = v[0];

	for (int i = 1; i < MPIDI_BIP_PATH_SAMPLES && v[i]; i++)
		m = MIN(m, v[i]);
	return m;
}

/* Rule (hysteresis): the way that was the cheaper when the last trial
 * began keeps its place until every cost it kept says otherwise: it goes
 * by the lowest, the other way by its median. Slow samples come in runs:
 * two 1 MiB reads in a row at 2-3 x the others (both ways at once, the
 * peer busy or the process preempted) outvoted the third, and a window
 * of asks at 2.2 x a read's cost followed, then a trial of reads whose
 * cost the two slow ones outvoted again; half of the messages went asked
 * (1 MiB both ways 14-18 GB/s, 23-24 read). */
static uint32_t judged(const MPIDI_BIP_path_class_t *c,
		       enum MPIDI_BIP_path way)
{
	return c->best == way + 1 ? lowest(c->cost[way])
				  : median(c->cost[way]);
}

/* The way the class's costs make the cheaper (judged); reading while
 * either has none. */
static enum MPIDI_BIP_path best_of(const MPIDI_BIP_path_class_t *c)
{
	uint32_t read = judged(c, MPIDI_BIP_PATH_READ);
	uint32_t send = judged(c, MPIDI_BIP_PATH_SEND);

	return read && send ? cheaper(read, send) : MPIDI_BIP_PATH_READ;
}

static enum MPIDI_BIP_path other_of(enum MPIDI_BIP_path way)
{
	return way == MPIDI_BIP_PATH_READ ? MPIDI_BIP_PATH_SEND
					  : MPIDI_BIP_PATH_READ;
}

/* Whether the first cost of way's trial alone beats the other way's. */
static bool trial_wins(const MPIDI_BIP_path_class_t *c,
		       enum MPIDI_BIP_path way)
{
	uint32_t rest = judged(c, other_of(way));

	if (!rest)
		return false;
	return (way == MPIDI_BIP_PATH_READ ? cheaper(c->first, rest)
					   : cheaper(rest, c->first)) == way;
}

/* The choices between trials of other that keep their cost within the
 * budget (MPIDI_BIP_PATH_BUDGET): a trial as long as the last one, each
 * of its choices dearer by the gap of the two ways' costs. */
static uint32_t trial_budget(const MPIDI_BIP_path_class_t *c,
			     enum MPIDI_BIP_path best,
			     enum MPIDI_BIP_path other)
{
	uint64_t b = judged(c, best), o = judged(c, other);

	if (!b || o <= b)
		return 0;
	return (uint32_t)MIN((uint64_t)c->tries * (o - b) *
				     MPIDI_BIP_PATH_BUDGET / b,
			     MPIDI_BIP_PATH_PERIOD_MAX);
}

/* A trial of the other way begins: every period choices, the period
 * doubled while trials leave the cheaper way as it was, so a steady
 * choice pays less and less for the look (three choices a trial of
 * messages alone, a window's worth in a stream, when the other way does
 * not get cheaper), and the dearer the other way measured, the longer
 * (trial_budget). */
static enum MPIDI_BIP_path trial_begin(MPIDI_BIP_path_class_t *c,
				       enum MPIDI_BIP_path best)
{
	enum MPIDI_BIP_path other = other_of(best);

	if (c->period && c->best == best + 1)
		c->period = (uint16_t)MAX(
			MIN(2 * c->period, MPIDI_BIP_PATH_EXPLORE_MAX),
			trial_budget(c, best, other));
	else
		c->period = MPIDI_BIP_PATH_EXPLORE;
	c->best = (uint8_t)(best + 1);
	c->since = 0;
	c->trying = (uint8_t)(other + 1);
	c->tries = 1;
	c->heard = 0;
	c->first = 0;
	c->waited = 0;
	return other;
}

/* A trial that is due begins once neither way has anything in flight in
 * the class, or the trial's time would be shared; after
 * MPIDI_BIP_PATH_STREAM choices of waiting it begins all the same (a
 * pipeline that never drains). */
static enum MPIDI_BIP_path trial_due(MPIDI_BIP_path_class_t *c,
				     enum MPIDI_BIP_path best)
{
	if ((c->busy[MPIDI_BIP_PATH_READ].out ||
	     c->busy[MPIDI_BIP_PATH_SEND].out) &&
	    c->waited++ < MPIDI_BIP_PATH_STREAM)
		return best;
	return trial_begin(c, best);
}

enum MPIDI_BIP_path MPIDI_BIP_path_choose(MPIDI_BIP_paths_t *p, uint64_t len)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];
	enum MPIDI_BIP_path best = best_of(c);

	if (!c->cost[MPIDI_BIP_PATH_READ][0])
		return MPIDI_BIP_PATH_READ;
	/* Asking is first tried after the first period of reads: a class's
	 * first read finds the caches set up for something else (1 MiB
	 * both ways, after the one-way phase: 190-200 ns/KiB, then 60-90),
	 * and a trial of asks judged against it took a window of asks at 2
	 * x a read's cost and then another. */
	if (!c->cost[MPIDI_BIP_PATH_SEND][0] && !c->trying) {
		if (c->since < MPIDI_BIP_PATH_EXPLORE) {
			c->since++;
			return MPIDI_BIP_PATH_READ;
		}
		return trial_due(c, best);
	}
	/* A trial goes on until its way is the cheaper, stops getting
	 * cheaper (class_sample), or has had its choices. It takes every
	 * choice until its first cost is in: in a stream the next choices
	 * come before it, and the other way's would share its time (a trial
	 * of 16 asks in windows of 64 reads of 64 KiB measured 500-600
	 * ns/KiB, all asks 70-85: the peer's reads meanwhile held up its
	 * side). A stream has then had its trial; messages alone go on one at
	 * a time, each cost in before the next choice. */
	if (c->trying) {
		enum MPIDI_BIP_path way = (enum MPIDI_BIP_path)(c->trying - 1);

		if (c->trying != best + 1 &&
		    (c->heard ? c->heard >= c->tries &&
					c->tries < MPIDI_BIP_PATH_TRIAL
			      : c->tries < MPIDI_BIP_PATH_TRIAL_STREAM)) {
			c->tries++;
			return way;
		}
		c->trying = 0;
	}
	/* The period was set for the way that was the cheaper when the last
	 * trial began: if the costs have swapped since (a run of slow samples
	 * of that way), the way now left aside is looked at again within the
	 * first period, not the budget of the other. */
	if (c->since < (c->best == best + 1 ? MAX(c->period,
						  MPIDI_BIP_PATH_EXPLORE)
					    : MPIDI_BIP_PATH_EXPLORE)) {
		c->since++;
		return best;
	}
	return trial_due(c, best);
}

/* A cost of way: ns nanoseconds for len bytes of stream messages (more
 * than one: a stream), or of one. */
static void class_sample(MPIDI_BIP_path_class_t *c, enum MPIDI_BIP_path way,
			 uint64_t len, uint64_t ns, bool stream)
{
	uint64_t per_kib = len ? (ns << 10) / len : 0;
	bool trial = c->trying == way + 1;
	bool after_other = trial ? !c->heard : c->last != way + 1;

	/* Never 0 (that is "none"); a stall of seconds saturates. */
	if (per_kib < 1)
		per_kib = 1;
	if (per_kib > UINT32_MAX)
		per_kib = UINT32_MAX;
	/* A way's cost is its cost in steady use: its first message after the
	 * other way's finds the caches set up for the other (a read after
	 * asks finds the sender's lines in its own cache) and is not kept,
	 * unless the way has no cost yet or a stream shares that cost out:
	 * of a trial, its first sample. */
	c->last = (uint8_t)(way + 1);
	c->heard += trial;
	if (after_other && !stream && c->cost[way][0])
		return;
	c->cost[way][c->next[way]] = (uint32_t)per_kib;
	c->next[way] = (uint8_t)((c->next[way] + 1) % MPIDI_BIP_PATH_SAMPLES);
	/* A trial's way must stay at least a tenth below its first cost. */
	if (!trial)
		return;
	if (!c->first) {
		c->first = (uint32_t)per_kib;
		/* A first cost that alone would make its way the cheaper
		 * changed something, though the way's older costs held the
		 * choice back: the next trial comes within the first period,
		 * not the budget. */
		if (trial_wins(c, way))
			c->period = MPIDI_BIP_PATH_EXPLORE;
		/* One that did not waits the budget at once: a class's first
		 * trial (of a way with no cost yet) began with no cost to
		 * set it by, and its period, the first, would have had a
		 * second trial of a window of asks at twice a read's cost
		 * follow within 32 choices (1 MiB both ways). */
		else
			c->period = (uint16_t)MAX(
				c->period,
				trial_budget(c, other_of(way), way));
	} else if (per_kib * 10 > (uint64_t)c->first * 9)
		c->trying = 0;
}

/* Rule: each way's cost is its own. A message done at its choice while
 * messages of the other way are in flight in its class shares the
 * machine with them (a read while the sender copies what we asked for
 * into the rings: 64 KiB-1 MiB both ways, reads right after a trial of
 * asks cost 2-3 x the others, and two of them made reading look dearer
 * than asking, so that the choice swung back and forth); so does a read
 * while we copy into the rings what the peer asked of us (1 MiB both
 * ways: one side's trial of asks made the other's reads 2 x dearer, and
 * it asked too). It is not kept, unless the way has no cost yet or is on
 * trial, or MPIDI_BIP_PATH_SHARED such went unkept in a row: a peer that
 * always asks (MPIR_CVAR_CH4_BIP_FETCH=ask there) would freeze our
 * reading's cost. */
void MPIDI_BIP_path_sample(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			   uint64_t len, uint64_t ns)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];

	if (way == MPIDI_BIP_PATH_READ)
		p->reading += ns;
	if ((c->busy[other_of(way)].out ||
	     (way == MPIDI_BIP_PATH_READ && c->served)) &&
	    c->cost[way][0] && c->trying != way + 1 &&
	    ++c->unkept < MPIDI_BIP_PATH_SHARED)
		return;
	c->unkept = 0;
	class_sample(c, way, len, ns, false);
}

void MPIDI_BIP_path_start(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			  uint64_t len, uint64_t now)
{
	MPIDI_BIP_path_busy_t *b = &p->cls[class_of(len)].busy[way];

	if (!b->out++) {
		b->t0 = now;
		b->reading = p->reading;
	}
}

void MPIDI_BIP_path_done(MPIDI_BIP_paths_t *p, enum MPIDI_BIP_path way,
			 uint64_t len, int ok, uint64_t now)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];
	MPIDI_BIP_path_busy_t *b = &c->busy[way];
	/* Times out of order (a caller's clock that steps back): no time,
	 * and no sample. */
	uint64_t ns = now > b->t0 ? now - b->t0 : 0;
	uint64_t reading = p->reading - b->reading;

	if (!b->out)
		return;
	b->out--;
	if (ok) {
		b->bytes += len;
		b->came++;
	}
	if (b->out && b->came < MPIDI_BIP_PATH_STREAM)
		return;
	/* Reads done at their choice held up the asks meanwhile; a time
	 * spent mostly reading is not asking's to judge by. */
	if (way != MPIDI_BIP_PATH_SEND)
		reading = 0;
	if (b->bytes && reading < ns / 2)
		class_sample(c, way, b->bytes, ns - reading, b->came > 1);
	/* What is still in flight starts the next sample. */
	b->t0 = now;
	b->reading = p->reading;
	b->bytes = 0;
	b->came = 0;
}

/* Not before half the period: a peer that always asks (its own choice,
 * or MPIR_CVAR_CH4_BIP_FETCH=ask) doubles our trials at most. */
void MPIDI_BIP_path_invited(MPIDI_BIP_paths_t *p, uint64_t len)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];
	uint16_t period = MAX(c->period, MPIDI_BIP_PATH_EXPLORE);

	c->served++;
	if (c->cost[MPIDI_BIP_PATH_SEND][0] && !c->trying &&
	    c->since >= period / 2 && best_of(c) == MPIDI_BIP_PATH_READ)
		c->since = period;
}

void MPIDI_BIP_path_served(MPIDI_BIP_paths_t *p, uint64_t len)
{
	MPIDI_BIP_path_class_t *c = &p->cls[class_of(len)];

	if (c->served)
		c->served--;
}

uint32_t MPIDI_BIP_path_cost(const MPIDI_BIP_paths_t *p,
			     enum MPIDI_BIP_path way, uint64_t len)
{
	return median(p->cls[class_of(len)].cost[way]);
}

void MPIDI_BIP_path_format(const MPIDI_BIP_paths_t *p, char *buf,
			   size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned c = 0; c < MPIDI_BIP_PATH_CLASSES && n < len; c++) {
		uint32_t read = median(p->cls[c].cost[MPIDI_BIP_PATH_READ]);
		uint32_t send = median(p->cls[c].cost[MPIDI_BIP_PATH_SEND]);
		int w;

		if (!read && !send)
			continue;
		w = snprintf(buf + n, len - n, " %uK read %u ask %u",
			     c ? 8u << c : 8u, read, send);
		if (w < 0)
			return;
		n += (size_t)w;
	}
}

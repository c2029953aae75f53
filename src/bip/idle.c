/*
 * idle.c - the idle policy, one for every waiting loop: bip_idle_wait's and
 * a caller's own (the MPI netmod's progress engine, through bip_idle). A run
 * of empty polls that follow each other closely is a wait: spin first (the
 * answer usually comes within microseconds), then yield the core, then sleep
 * on the doorbell until a packet comes. The spin adapts: a wait whose
 * answer came right after a yield gave the core to another process
 * halves it (the answer was waiting for our core: spinning kept the peer
 * off it), a wait that ended while spinning doubles it back, up to
 * BIP_SPIN_US.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bip_impl.h"
#include "log.h"

/* Polls further apart than this are not a wait: the caller works in between
 * (MPI_Test in a compute loop) and must not be slowed. A poll loop comes
 * back within a microsecond or two, later after a sleep (cold caches); an
 * interrupt or a preemption makes a long gap now and then, hence several
 * in a row are needed. */
#define GAP_NS 2000
#define GAP_SLEPT_NS 10000
#define GAPS 4
/* The clock is slow to read: while spinning, look at it this seldom. */
#define SPIN_LOOK 32
/* A yield that took this long ran another process on our core; a spin
 * halved below SPIN_MIN_NS is none. */
#define HANDED_NS 1000
#define SPIN_MIN_NS 1000
/* BIP_SPREAD's pace (see spread): the least time between two looks, and
 * between two moves, at first and at most once moves keep failing. */
#define LOOK_GAP_NS 250000
#define MOVE_GAP_NS 2000000
#define MOVE_GAP_MAX_NS 1000000000

/* The cores the host's nodes may share: ours, and our launcher's, which
 * covers every core it may bind its nodes to. A launcher that binds each
 * node to a core of its own (mpiexec -bind-to core, Open MPI's default)
 * leaves us one core, yet the nodes do not share it; one started on fewer
 * cores than nodes (taskset on the launcher) gives its nodes no more.
 * 0: unknown. */
static int job_cpus(void)
{
	cpu_set_t cpus, launcher;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return 0;
	if (sched_getaffinity(getppid(), sizeof(launcher), &launcher) == 0)
		CPU_OR(&cpus, &cpus, &launcher);
	return CPU_COUNT(&cpus);
}

/* How long a crowded node yields before it sleeps (BIP_YIELD_US=auto);
 * and how long it yields on a watched word after a long wait on one, and
 * after a short one (WATCH_LONG_NS: the wait has become long). */
#define CROWDED_YIELD_NS 20000000
#define WATCHED_YIELD_NS 100000
#define WATCH_LONG_NS 1000000
/* The slice a crowded node asks for: the least the kernel grants. */
#define CROWDED_SLICE_US 100

/* The kernel's struct sched_attr (its first version; <linux/sched/types.h>
 * clashes with <sched.h>), which the C library does not wrap. */
struct slice_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};
#define SLICE_RESET_ON_FORK 0x01 /* SCHED_FLAG_RESET_ON_FORK */

static int set_slice(pid_t tid, struct slice_attr *a, uint64_t ns)
{
	a->size = sizeof(*a);
	a->sched_flags &= SLICE_RESET_ON_FORK;
	a->sched_runtime = ns;
	return (int)syscall(SYS_sched_setattr, tid, a, 0);
}

/* Rule: nodes that share cores ask the scheduler for short slices. Under
 * EEVDF (Linux 6.6 and later) a task's slice sets its virtual deadline: a
 * short one lets the node a message woke run sooner, and a yield puts the
 * yielder behind the others by that much only. The NAS benchmarks'
 * patterns on 16 MPI ranks on 2 cores took 0.91 x the time (medians of
 * 21 interleaved runs). A thread under another policy than SCHED_OTHER was
 * put there on purpose: it is left alone. Older kernels ignore the field.
 * The slice given back at close is the value read here, now a custom one
 * even if it was the system's default. */
static void slice_setup(bip_ep_t *ep)
{
	struct bip_idle *s = &ep->idle;
	unsigned us = ep->k.slice_us == BIP_KNOB_AUTO_COUNT
			      ? (s->crowded ? CROWDED_SLICE_US : 0)
			      : ep->k.slice_us;
	struct slice_attr a = { 0 };
	pid_t tid;
	uint64_t was;

	if (!us)
		return;
	tid = (pid_t)syscall(SYS_gettid);
	if (syscall(SYS_sched_getattr, tid, &a, sizeof(a), 0) ||
	    a.sched_policy != SCHED_OTHER)
		return;
	was = a.sched_runtime;
	if (set_slice(tid, &a, (uint64_t)us * 1000)) {
		bip_info("BIP_SLICE_US: sched_setattr: %s", strerror(errno));
		return;
	}
	s->slice_tid = tid;
	s->slice_was_ns = was;
}

void bip_idle_close(bip_ep_t *ep)
{
	struct bip_idle *s = &ep->idle;
	struct slice_attr a = { 0 };

	if (!s->slice_tid ||
	    syscall(SYS_sched_getattr, s->slice_tid, &a, sizeof(a), 0))
		return;
	(void)set_slice(s->slice_tid, &a, s->slice_was_ns);
	s->slice_tid = 0;
}

void bip_idle_setup(bip_ep_t *ep, int local_nodes)
{
	struct bip_idle *s = &ep->idle;
	int ncpus = job_cpus();

	/* Spin only when every node of the host has a core of its own: with
	 * more nodes than cores, the node a spinner waits for may need that
	 * core (yielding at once is what Open MPI does then). A misjudged
	 * core of one's own costs little: the spin adapts (wait_over). */
	s->crowded = ncpus > 0 && local_nodes > ncpus;
	s->spread = ep->k.spread == BIP_SPREAD_AUTO && !s->crowded &&
		    local_nodes > 1;
	s->move_gap_ns = MOVE_GAP_NS;
	s->spin_ns = ep->k.spin_us == BIP_KNOB_AUTO_COUNT
			     ? (s->crowded ? 0 : 50000)
			     : (uint64_t)ep->k.spin_us * 1000;
	/* Where nodes share cores, waits are long (every other node on the
	 * core may run first) and a sleeper costs its waker a system call:
	 * the NAS patterns on 16 ranks on 2 cores took 0.89-0.98 x the time
	 * yielding 20 ms instead of 1 (medians of 5, three batches; 5 ms
	 * 0.91 x, 100 ms 0.93 x), on 4 and 8 ranks 0.97 x. */
	s->yield_ns = ep->k.yield_us == BIP_KNOB_AUTO_COUNT
			      ? (s->crowded ? CROWDED_YIELD_NS : 1000000)
			      : (uint64_t)ep->k.yield_us * 1000;
	s->watched_yield_ns = ep->k.yield_us == BIP_KNOB_AUTO_COUNT &&
					      s->crowded
				      ? WATCHED_YIELD_NS
				      : s->yield_ns;
	s->watched_first_ns = ep->k.yield_us == BIP_KNOB_AUTO_COUNT &&
					      s->crowded
				      ? WATCH_LONG_NS
				      : s->yield_ns;
	s->spin_cur = s->spin_ns;
	slice_setup(ep);
}

/* Rule: a wait that ended right after its last yield ran another process
 * on our core halves the next one's spin; one that ended while spinning,
 * or after a yield that found no one else to run, doubles it (spinning
 * would have cost no one anything). Two nodes on one core (the scheduler
 * put them there, for a while) would otherwise each spin its whole spin
 * per message, 50 us, before the other could answer: 114 us a round trip
 * instead of a few. A wait that went to sleep says nothing. */
static void wait_over(struct bip_idle *s)
{
	if (s->mode == BIP_IDLE_YIELD && s->handed) {
		s->spin_cur /= 2;
		if (s->spin_cur < SPIN_MIN_NS)
			s->spin_cur = 0;
	} else if (s->mode != BIP_IDLE_BLOCK && s->spin_cur < s->spin_ns) {
		s->spin_cur = s->spin_cur * 2 < SPIN_MIN_NS ? SPIN_MIN_NS
							    : s->spin_cur * 2;
		if (s->spin_cur > s->spin_ns)
			s->spin_cur = s->spin_ns;
	}
}

void bip_idle_restart(bip_ep_t *ep)
{
	struct bip_idle *s = &ep->idle;

	if (s->empty) {
		wait_over(s);
		s->mode = BIP_IDLE_SPIN;
		s->empty = 0;
	}
}

/*
 * Rule: a wait that yields while another node of the host runs on our
 * CPU, on a host with a core for each node, moves to a CPU that no node
 * said it waits on. Each node says so as a wait begins and after a move;
 * a yielding wait looks once per LOOK_GAP_NS, as a look may ask the
 * kernel about peers. The scheduler keeps two processes that wake each
 * other every few microseconds on one CPU (cache-hot, so balancing leaves
 * them be) even with the other idle, and under EEVDF a yield need not
 * hand the CPU over: each message then waited out the other's spin and
 * yields. 2 ranks under Hydra (which binds nothing) started that way in
 * 9 to 11 runs of 16, 6-41 us a round trip instead of 0.4-1, for as long
 * as the run. The affinity mask is set back at once: where the node may
 * run stays the launcher's and the user's choice, and the scheduler may
 * move it again. At most one move per move_gap_ns: MOVE_GAP_NS, doubled
 * (up to MOVE_GAP_MAX_NS) for a move that comes within twice the gap of
 * the last one (it did not help), back to MOVE_GAP_NS for one that comes
 * later. Where other work takes the host's cores the nodes do not have a
 * core each, whatever the count says, and moving does not help: under a
 * test suite on both cores, 60 to 195 moves in 2000 round trips.
 */
static void spread(bip_ep_t *ep, uint64_t now)
{
	struct bip_idle *s = &ep->idle;
	struct bipfw_cpus others = { { 0 } };
	cpu_set_t mask, one;
	int cpu, to;

	s->looked_ns = now;
	if (sched_getaffinity(0, sizeof(mask), &mask) || CPU_COUNT(&mask) < 2)
		return;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu >= BIPFW_CPUS_MAX)
		return;
	/* Too soon to move: only say where we are, which costs nothing. */
	if (now - s->moved_ns < s->move_gap_ns) {
		(void)bipfw_host_cpus(ep->fw, cpu, NULL);
		return;
	}
	if (!bipfw_host_cpus(ep->fw, cpu, &others))
		return;
	for (to = 0; to < BIPFW_CPUS_MAX && to < CPU_SETSIZE; to++)
		if (CPU_ISSET(to, &mask) && to != cpu &&
		    !(others.bits[to / 64] & (UINT64_C(1) << (to % 64))))
			break;
	if (to == BIPFW_CPUS_MAX || to == CPU_SETSIZE)
		return;
	/* The last move held for twice the gap, or it did not help. */
	if (s->moved_ns && now - s->moved_ns < 2 * s->move_gap_ns)
		s->move_gap_ns = s->move_gap_ns * 2 > MOVE_GAP_MAX_NS
					 ? MOVE_GAP_MAX_NS
					 : s->move_gap_ns * 2;
	else
		s->move_gap_ns = MOVE_GAP_NS;
	CPU_ZERO(&one);
	CPU_SET(to, &one);
	s->moved_ns = now;
	if (sched_setaffinity(0, sizeof(one), &one)) {
		bip_dbg("BIP_SPREAD: sched_setaffinity: %s", strerror(errno));
		return;
	}
	if (sched_setaffinity(0, sizeof(mask), &mask))
		bip_warn("BIP_SPREAD: cannot restore the CPU affinity mask "
			 "(left on CPU %d): %s", to, strerror(errno));
	/* Said at once: a peer that looks next must not take it too. */
	(void)bipfw_host_cpus(ep->fw, to, NULL);
	s->moves++;
	bip_dbg("BIP_SPREAD: a node of this host ran on CPU %d too: moved "
		"to CPU %d", cpu, to);
}

static void say_cpu(bip_ep_t *ep)
{
	int cpu = sched_getcpu();

	if (cpu >= 0 && cpu < BIPFW_CPUS_MAX)
		(void)bipfw_host_cpus(ep->fw, cpu, NULL);
}

/*
 * Rule (more nodes than cores): a wait on a watched word (bip_mem_watch: a
 * shared-memory collective's, whose waker rings it) yields for
 * WATCHED_YIELD_NS only, then sleeps, if the last such wait lasted
 * WATCH_LONG_NS or more; else for WATCH_LONG_NS, by when it is a long one
 * itself. A node whose
 * collective waits are long waits while others work (2 of 4 ranks on 2
 * cores stream, the other 2 in an allreduce: 0.34-0.80 us a message, the
 * waiters yielding 12000 times each and never asleep; 0.16-0.28 so, Open
 * MPI's 0.15-0.23), and its yields take their cores. Short ones keep
 * yielding: a sleeper that a collective waits for holds up every rank
 * (every such wait after 100 us: the NAS patterns on 16 ranks 1.01-1.12
 * x the time; so, 0.95-1.02 x, and 0.94-1.00 x on 8). A long wait after
 * short ones yielded for yield_ns (20 ms) before, using 50-95 % of a core
 * (node_coll.sh): a stream between 2 of 4 ranks while the other 2 wait 4
 * ms in one collective, 8 B, medians of 14 interleaved runs 0.42 us a
 * message, 0.37 with the sleep after 1 ms (Open MPI 0.15-0.28; this
 * machine's noise: pair ratios 0.54-1.97); NAS patterns, medians of 10
 * pairs, total 0.97 / 0.98 / 0.98 x the time on 4 / 8 / 16 ranks.
 */
void bip_idle_watch(bip_ep_t *ep, const uint64_t *word)
{
	struct bip_idle *s = &ep->idle;

	if (word && !s->watched)
		s->watch_ns = bipfw_now_ns();
	else if (!word && s->watched)
		s->watch_long = bipfw_now_ns() - s->watch_ns >= WATCH_LONG_NS;
	s->watched = word;
}

/* The phase a wait has reached after waited_ns, as BIP_IDLE allows. */
static enum bip_idle_policy phase(const bip_ep_t *ep, uint64_t waited_ns,
				  bool may_block)
{
	const struct bip_idle *s = &ep->idle;
	uint64_t yield_ns;

	/* A caller that may not block polls in a loop of its own (MPI_Test,
	 * MPI_Iprobe, a flush that gives progress once): where every node
	 * has a core, giving that core away helps no node of the job and
	 * costs a system call per poll. */
	if (ep->k.idle == BIP_IDLE_SPIN || waited_ns < s->spin_cur ||
	    (!may_block && !s->crowded))
		return BIP_IDLE_SPIN;
	yield_ns = !s->watched	   ? s->yield_ns
		   : s->watch_long ? s->watched_yield_ns
				   : s->watched_first_ns;
	if (ep->k.idle == BIP_IDLE_YIELD || !may_block ||
	    waited_ns < s->spin_cur + yield_ns)
		return BIP_IDLE_YIELD;
	return BIP_IDLE_BLOCK;
}

/* A look at the clock, and what the wait has come to: out of line, so
 * that the polls in between (most of them) build no stack frame. */
static __attribute__((noinline)) void idle_look(bip_ep_t *ep, bool may_block,
						bool own_loop,
						unsigned sleep_us,
						unsigned first, unsigned every)
{
	struct bip_idle *s = &ep->idle;
	uint64_t now = bipfw_now_ns();

	if (s->empty == first) {
		/* Nothing given away yet: the next look tells a wait from a
		 * caller working between polls. */
		s->start_ns = s->left_ns = now;
		s->gaps = 0;
		s->mode = BIP_IDLE_SPIN;
		if (s->spread)
			say_cpu(ep);
		return;
	}
	if (!own_loop &&
	    now - s->left_ns >
		    every * (s->mode == BIP_IDLE_BLOCK ? GAP_SLEPT_NS : GAP_NS)) {
		/* The caller may be working between polls: give nothing
		 * away, and after a few such polls start over. */
		s->left_ns = now;
		if (++s->gaps == GAPS)
			s->empty = 0;
		return;
	}
	s->gaps = 0;
	s->mode = phase(ep, now - s->start_ns, may_block);
	if (s->spread && s->mode != BIP_IDLE_SPIN &&
	    now - s->looked_ns >= LOOK_GAP_NS) {
		spread(ep, now);
		/* A yield is timed alone (HANDED_NS). */
		now = bipfw_now_ns();
	}
	switch (s->mode) {
	case BIP_IDLE_SPIN:
		/* No pause instruction: it costs ~140 cycles on recent x86,
		 * which is latency; the poll itself is the wait. */
		s->left_ns = now;
		return;
	case BIP_IDLE_YIELD:
		sched_yield();
		s->yields++;
		s->left_ns = bipfw_now_ns();
		s->handed = s->left_ns - now >= HANDED_NS;
		return;
	case BIP_IDLE_BLOCK:
		bipfw_block(ep->fw, sleep_us);
		s->sleeps++;
		break;
	}
	s->left_ns = bipfw_now_ns();
}

/* In line in bip_idle, the netmod's every empty poll. */
static inline __attribute__((always_inline)) void
idle_empty(bip_ep_t *ep, bool may_block, bool own_loop, unsigned sleep_us)
{
	struct bip_idle *s = &ep->idle;
	unsigned first = s->spin_cur ? SPIN_LOOK : 1;
	unsigned every = s->mode == BIP_IDLE_SPIN && s->spin_cur ? SPIN_LOOK : 1;

	/* A wait is timed from its first look at the clock. Every empty poll
	 * comes here: a mask, not a division (every is 1 or SPIN_LOOK). */
	_Static_assert((SPIN_LOOK & (SPIN_LOOK - 1)) == 0, "a power of two");
	if (++s->empty < first ||
	    (s->empty > first && ((s->empty - first) & (every - 1))))
		return;
	idle_look(ep, may_block, own_loop, sleep_us, first, every);
}

void bip_idle_empty(bip_ep_t *ep, bool may_block, bool own_loop,
		    unsigned sleep_us)
{
	idle_empty(ep, may_block, own_loop, sleep_us);
}

int bip_idle(bip_ep_t *ep, int events, int may_block)
{
	if (!ep)
		return -BIP_EINVAL;
	if (events)
		bip_idle_restart(ep);
	else
		idle_empty(ep, may_block, false, 1000);
	return 0;
}

int bip_crowded(const bip_ep_t *ep)
{
	return ep ? ep->idle.crowded : -BIP_EINVAL;
}

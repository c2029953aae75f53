/*
 * test_wakeup.c - the shm wire's sleep loses no wakeup, whichever step of
 * going to sleep a packet comes at. Two endpoints of one job live in this
 * process; node 1 sleeps (the class's wait) and node 0 sends it one packet
 * from inside the wait, through the test hook, at one step at a time:
 * after the doorbell was read, after "sleeping" was said, after the rings
 * were found empty. Each wait must end at once, not at its 2 s timeout. A
 * wait with nothing sent must last its whole timeout: else this test could
 * not tell a lost wakeup from a woken sleeper. The same for a word of
 * shared memory that node 1 watches (mem_watch) and node 0 raises, then
 * wakes it (mem_wake_barrier, mem_wake), as the netmod's collectives do;
 * a watch into shared memory ends when that memory is freed.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bip_errno.h"
#include "unit.h"
#include "wire/shm.h"

#define TIMEOUT_US 2000000u
#define PROMPT_NS 500000000ull /* a woken wait ends well before this */
#define IDLE_US 50000u

static struct bipfw_shm *ends[2];
static int send_at = -1; /* the step node 0 sends at; -1: none */
static int sent;
static bool raise_word;  /* node 0 raises the word instead of sending */
static uint64_t word;    /* the one node 1 watches (one process here) */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* What the NIC program does for a small message: reserve, write, commit. */
static void send_one(void)
{
	static const char msg[] = "wake up";
	struct bip_pkt_hdr *pkt =
		bipfw_shm_class.reserve(ends[0], 1, sizeof(msg));

	CHECK(pkt != NULL, "room in node 1's ring");
	if (!pkt)
		return;
	memset(pkt, 0, sizeof(*pkt));
	pkt->src = 0;
	pkt->dst = 1;
	pkt->len = sizeof(msg);
	memcpy(pkt + 1, msg, sizeof(msg));
	bipfw_shm_class.commit(ends[0], 1, pkt, sizeof(msg));
	sent++;
}

/* What a process does after its store to a word others may wait on. */
static void raise_one(void)
{
	__atomic_store_n(&word, word + 1, __ATOMIC_RELEASE);
	bipfw_shm_class.mem_wake_barrier(ends[0]);
	bipfw_shm_class.mem_wake(ends[0], 1);
	sent++;
}

static void hook(void *arg, enum bipfw_shm_sleep_step step)
{
	(void)arg;
	if ((int)step != send_at)
		return;
	if (raise_word)
		raise_one();
	else
		send_one();
}

/* Node 1 takes what came, so that the next wait starts with empty rings. */
static int drain(void)
{
	const void *h, *payload;
	size_t avail;
	int n = 0;

	while (bipfw_shm_class.peek(ends[1], &h, &payload, &avail) == 0) {
		bipfw_shm_class.release(ends[1]);
		n++;
	}
	return n;
}

/* How long node 1's wait took, in ns. */
static uint64_t timed_wait(unsigned timeout_us)
{
	uint64_t t0 = now_ns();

	bipfw_shm_class.wait(ends[1], timeout_us);
	return now_ns() - t0;
}

/* A wait with nothing to end it lasts its whole timeout: else this test
 * could not tell a lost wakeup from a woken sleeper. */
static void sleeps_through(const char *what)
{
	uint64_t took = timed_wait(IDLE_US);

	CHECK(took >= IDLE_US * 1000ull * 8 / 10,
	      "%s: the wait sleeps its timeout (%llu ns)", what,
	      (unsigned long long)took);
}

/* Node 0 acts (a packet, or the word raised) at each step of node 1's
 * going to sleep in turn: each wait must end at once. */
static void woken_at_each_step(const char *what)
{
	for (send_at = 0; send_at < BIPFW_SHM_SLEEP_STEPS; send_at++) {
		uint64_t took;

		sent = 0;
		took = timed_wait(TIMEOUT_US);
		CHECK(sent == 1, "%s, step %d: the hook acted", what, send_at);
		CHECK(took < PROMPT_NS,
		      "%s, step %d: that ends the wait at once (took %llu ns)",
		      what, send_at, (unsigned long long)took);
		if (raise_word)
			bipfw_shm_class.mem_watch(ends[1], &word, word + 1);
		else
			CHECK(drain() == 1, "step %d: node 1 got the packet",
			      send_at);
		printf("%s, step %d: woken after %llu ns\n", what, send_at,
		       (unsigned long long)took);
	}
	send_at = -1;
}

int main(void)
{
	struct bipfw_wire_params p = {
		.nnodes = 2, .local_nodes = 2, .nhosts = 1,
		.job_key = 0x3a4e, .packet_size = 32768,
	};
	char card[128];
	uint64_t took;

	/* A hang is a failure too. */
	alarm(60);
	p.secret = 0x3a4e0000ull ^ ((uint64_t)getpid() << 16);
	for (int i = 0; i < 2; i++) {
		p.node = i;
		if (bipfw_shm_open(&p, &ends[i])) {
			printf("SKIP: no shm wire here (/dev/shm)\n");
			return 77;
		}
	}
	for (int i = 0; i < 2; i++) {
		CHECK(bipfw_shm_card(ends[i], card, sizeof(card)) == 0,
		      "card of node %d", i);
		CHECK(bipfw_shm_connect(ends[1 - i], i, card) == 0,
		      "node %d attaches node %d", 1 - i, i);
	}
	bipfw_shm_set_sleep_hook(ends[1], hook, NULL);

	sleeps_through("idle");
	woken_at_each_step("packet");

	/* Waiting on a word: idle while it stays low, woken when raised. */
	raise_word = true;
	bipfw_shm_class.mem_watch(ends[1], &word, 1);
	sleeps_through("a word that stays low");
	woken_at_each_step("word");
	/* Raised before the wait: no sleep at all. */
	bipfw_shm_class.mem_watch(ends[1], &word, word);
	took = timed_wait(TIMEOUT_US);
	CHECK(took < PROMPT_NS, "a word raised already: no sleep (%llu ns)",
	      (unsigned long long)took);
	bipfw_shm_class.mem_watch(ends[1], NULL, 0);
	sleeps_through("no watch, a word raised");
	/* A watch into shared memory ends when the memory goes: the next
	 * sleep reads nothing unmapped (else SIGSEGV). */
	{
		void *mem;
		uint64_t key;

		CHECK(bipfw_shm_class.mem_alloc(ends[1], 4096, &mem, &key) == 0,
		      "shared memory to watch");
		bipfw_shm_class.mem_watch(ends[1], (uint64_t *)mem + 1, 1);
		bipfw_shm_class.mem_free(ends[1], mem, 4096, key);
		sleeps_through("a watch into freed memory");
	}
	bipfw_shm_close(ends[0]);
	bipfw_shm_close(ends[1]);
	return unit_result("test_wakeup");
}

/*
 * test_hostile.c - hostile or buggy neighbours: a peer that scribbles over
 * shared memory, another user who takes or watches segment names, a dead
 * peer's pid given to another process. None may crash, derail or stall a
 * job.
 *   rewrite-headers: after bip_init, node 1 overwrites the header of every
 *                    BIP segment it has mapped (its own, and node 0's, which
 *                    it maps to send) with zeros and then with all-ones;
 *                    then both exchange small and long messages, checked
 *                    byte by byte.
 *   name SECRET:     print node 1's segment name for the job with this
 *                    secret and key 7, as this user, for a squatter to take.
 *   squatted SECRET: (the job's user) node 1 cannot open, and node 0 does
 *                    not attach the squatter's file: both refuse with
 *                    -BIP_EACCES.
 *   late-open:       node 0's segment name is in /dev/shm for a second
 *                    before node 1 opens (for a squatter to watch), then
 *                    the two connect and exchange a message.
 *   pid-reuse:       as pid 1 of a new pid namespace (unshare --pid --fork
 *                    --mount-proc), where ns_last_pid steers the next pid:
 *                    node 1 connects and exits without closing, a sleeper
 *                    takes its pid, and node 0's long send to node 1 must
 *                    fail with -BIP_EPEERGONE instead of waiting for ever.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"
#include "wire/shm.h"

#define HEADER_BYTES 64 /* the segment's write-once part */

static int fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s\n", what, bip_strerror(rc));
	return 1;
}

/* Overwrite the start of every mapping of a BIP segment with byte. */
static int scribble(int byte)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (!strstr(line, "/dev/shm/bip-") ||
		    sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) != 3 || off)
			continue;
		memset((void *)lo, byte, HEADER_BYTES);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static int traffic(bip_ep_t *ep, int peer)
{
	static unsigned char out[3 * 32768 + 5], in[sizeof(out)];
	struct bip_status st;
	int rc;

	for (int k = 0; k < 200; k++) {
		size_t len = (size_t)(k * 37) % BIP_SMALL_MAX;

		for (size_t i = 0; i < len; i++)
			out[i] = (unsigned char)(k + i);
		if ((rc = bip_send(ep, peer, out, len)) < 0)
			return fail("send", rc);
		if ((rc = bip_recv(ep, in, sizeof(in), &st)) < 0)
			return fail("recv", rc);
		if ((size_t)rc != len || memcmp(in, out, len) != 0) {
			fprintf(stderr, "small message %d differs\n", k);
			return 1;
		}
	}
	for (int k = 0; k < 10; k++) {
		bip_req_t r;

		for (size_t i = 0; i < sizeof(out); i++)
			out[i] = (unsigned char)(k * 3 + i);
		if ((rc = bip_ilrecv(ep, 1, in, sizeof(in), &r)) ||
		    (rc = bip_send(ep, peer, "posted", 6)) < 0 ||
		    (rc = bip_recv(ep, in, 16, &st)) < 0 ||
		    (rc = bip_lsend(ep, peer, 1, out, sizeof(out))) ||
		    (rc = bip_wait(ep, &r, &st)))
			return fail("long message", rc);
		if (st.len != sizeof(out) || memcmp(in, out, sizeof(out))) {
			fprintf(stderr, "long message %d differs\n", k);
			return 1;
		}
	}
	return 0;
}

static int squatted(uint64_t secret)
{
	struct bip_open_params p = { .node = 1, .nnodes = 2, .job_key = 7,
				     .secret = secret };
	char card[BIP_CARD_MAX], *pid;
	bip_ep_t *ep;
	int rc;

	rc = bip_open(&p, &ep);
	if (rc != -BIP_EACCES)
		return fail("node 1 opened over a squatted name", rc);
	p.node = 0;
	if ((rc = bip_open(&p, &ep)))
		return fail("node 0", rc);
	/* Node 1's card, made from ours: only the node differs. */
	bip_card(ep, card, sizeof(card));
	pid = strrchr(card, ',');
	if (!pid || pid - card < 2 || pid[-1] != '0') {
		fprintf(stderr, "unexpected card %s\n", card);
		return 1;
	}
	pid[-1] = '1';
	rc = bip_connect(ep, 1, card);
	bip_close(ep);
	if (rc != -BIP_EACCES)
		return fail("node 0 attached a squatter's file", rc);
	printf("both nodes refused the squatted name\n");
	return 0;
}

static bip_ep_t *open_node(int node, uint64_t secret)
{
	struct bip_open_params p = { .node = node, .nnodes = 2, .job_key = 7,
				     .secret = secret };
	bip_ep_t *ep;
	int rc = bip_open(&p, &ep);

	if (rc) {
		fail("bip_open", rc);
		exit(1);
	}
	return ep;
}

/* Send our card on out, connect the peer's card from in. */
static int swap_cards(bip_ep_t *ep, int peer, int out, int in)
{
	char mine[BIP_CARD_MAX], theirs[BIP_CARD_MAX] = { 0 };

	bip_card(ep, mine, sizeof(mine));
	if (write(out, mine, sizeof(mine)) != sizeof(mine) ||
	    read(in, theirs, sizeof(theirs)) != sizeof(theirs))
		return -BIP_ESYS;
	return bip_connect(ep, peer, theirs);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Node 1 opens a second after node 0: node 0's name is there to see. */
static int late_open(void)
{
	int to_b[2], to_a[2], rc, status;
	uint64_t secret;
	bip_ep_t *ep;
	char c;
	pid_t b;

	if (bip_secret_new(&secret) || pipe(to_b) || pipe(to_a))
		return 1;
	b = fork();
	if (b == 0) {
		close(to_b[1]);
		close(to_a[0]);
		sleep(1);
		ep = open_node(1, secret);
		if ((rc = swap_cards(ep, 0, to_a[1], to_b[0])) ||
		    (rc = bip_send(ep, 0, "!", 1)) < 0)
			_exit(fail("node 1", rc));
		_exit(bip_close(ep) ? 1 : 0);
	}
	/* Only node 1 writes to_a: its end of the pipe is EOF if it dies. */
	close(to_a[1]);
	close(to_b[0]);
	ep = open_node(0, secret);
	if ((rc = swap_cards(ep, 1, to_b[1], to_a[0])) ||
	    (rc = bip_recv(ep, &c, 1, NULL)) < 0)
		return fail("node 0", rc);
	bip_close(ep);
	waitpid(b, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("nodes opened a second apart connected\n");
	return 0;
}

static int pid_reuse(void)
{
	static char buf[100000];
	int to_b[2], to_a[2], rc, done = 0;
	pid_t b, c;
	uint64_t secret;
	bip_ep_t *ep;
	bip_req_t req;
	FILE *f;

	if (getpid() != 1) {
		fprintf(stderr, "run me as pid 1 of a new pid namespace\n");
		return 2;
	}
	if (bip_secret_new(&secret) || pipe(to_b) || pipe(to_a))
		return 1;
	b = fork();
	if (b == 0) {
		char ok = 1;

		close(to_b[1]);
		close(to_a[0]);
		ep = open_node(1, secret);
		if ((rc = swap_cards(ep, 0, to_a[1], to_b[0])))
			_exit(fail("node 1 connect", rc));
		if (write(to_a[1], &ok, 1) != 1)
			_exit(1);
		_exit(0); /* no bip_close: a crash, as the peers see it */
	}
	close(to_a[1]);
	close(to_b[0]);
	ep = open_node(0, secret);
	if ((rc = swap_cards(ep, 1, to_b[1], to_a[0])))
		return fail("node 0 connect", rc);
	waitpid(b, NULL, 0); /* node 1 is gone and reaped: its pid is free */

	/* The next process of this namespace takes node 1's pid. */
	f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	if (!f || fprintf(f, "%d", (int)b - 1) < 0 || fclose(f)) {
		perror("ns_last_pid");
		return 1;
	}
	c = fork();
	if (c == 0) {
		sleep(30);
		_exit(0);
	}
	if (c != b) {
		fprintf(stderr, "the sleeper got pid %d, not node 1's %d\n",
			(int)c, (int)b);
		kill(c, SIGKILL);
		return 1;
	}
	printf("node 1 (pid %d) exited; pid %d is now a sleeper\n", (int)b,
	       (int)c);

	rc = bip_ilsend(ep, 1, 0, buf, sizeof(buf), &req);
	for (double t0 = now(); !rc && !done && now() - t0 < 3;)
		rc = bip_test(ep, &req, &done, NULL);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	if (rc != -BIP_EPEERGONE) {
		fprintf(stderr, "FAILED: a send to the dead node 1 %s after "
				"3 s (its pid is reused)\n",
			rc ? bip_strerror(rc) : "is still pending");
		return 1;
	}
	bip_close(ep);
	printf("a dead peer whose pid was reused is gone\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rewrite-headers";
	uint64_t secret = argc > 2 ? strtoull(argv[2], NULL, 16) : 0;
	bip_ep_t *ep;
	int rc, me;
	char c;

	if (strcmp(mode, "name") == 0) {
		char name[BIPFW_SHM_NAME_MAX];

		bipfw_shm_name(name, sizeof(name), secret, 7, 1);
		printf("%s\n", name);
		return 0;
	}
	if (strcmp(mode, "squatted") == 0)
		return squatted(secret);
	if (strcmp(mode, "late-open") == 0)
		return late_open();
	if (strcmp(mode, "pid-reuse") == 0)
		return pid_reuse();
	if (strcmp(mode, "rewrite-headers") != 0) {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	if ((rc = bip_init(&ep)))
		return fail("bip_init", rc);
	me = bip_node(ep);
	if (me == 1) {
		int n = scribble(0);

		if (n < 2) {
			fprintf(stderr, "found %d BIP segments mapped\n", n);
			return 1;
		}
	}
	/* Node 0 reads its rings only once node 1 scribbled. */
	if ((rc = bip_send(ep, 1 - me, "x", 1)) < 0 ||
	    (rc = bip_recv(ep, &c, 1, NULL)) < 0)
		return fail("handshake", rc);
	if (traffic(ep, 1 - me))
		return 1;
	if (me == 1)
		scribble(0xff);
	if ((rc = bip_send(ep, 1 - me, "y", 1)) < 0 ||
	    (rc = bip_recv(ep, &c, 1, NULL)) < 0)
		return fail("handshake", rc);
	if (traffic(ep, 1 - me))
		return 1;
	if ((rc = bip_close(ep)))
		return fail("bip_close", rc);
	printf("node %d: scribbled segment headers changed nothing\n", me);
	return 0;
}

/*
 * test_hostif.c - two processes of one job over BIP, set up by hand
 * (bip_open, cards through pipes, bip_connect), trading messages of every
 * small size and long ones both ways, each checked byte by byte.
 *
 *   test_hostif kmod   the kernel module must be in use: bip_kmod_info
 *                      says so, and the host interface's buffers lie in
 *                      NIC memory (the process maps /dev/bip)
 *   test_hostif kcopy  the same, and long messages go by the kernel's
 *                      copy (BIP_SHM_KCOPY_MIN=4k is set here), as an
 *                      unprivileged user (root becomes nobody first)
 *   test_hostif eth    two hosts over the eth wire, unprivileged: node 1
 *                      moves into a network namespace of its own with
 *                      veth1 (veth0's peer, both allowed by bip.ko), both
 *                      become nobody (no CAP_NET_RAW), and frames must go
 *                      through /dev/bip; node 1's liveness thread must
 *                      answer while it sleeps
 *   test_hostif noeth  the same set-up with BIP_KMOD=off: the eth wire
 *                      must not open (no packet socket, no module), and
 *                      bip_info and bip_open must say so
 *   test_hostif none   it must not be: no mapping of /dev/bip, no kernel
 *                      copy
 *
 * make check runs "none" (no module on the build machine, or BIP_KMOD=off);
 * the QEMU guest runs all.
 */
#define _GNU_SOURCE /* setresuid, unshare */
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bip.h"

#define ROUNDS 300
#define QUIET_TIMEOUT_MS 1000

static int maps_device(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, " /dev/bip") != NULL;
	if (f)
		fclose(f);
	return n;
}

static int full_io(int fd, char *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? write(fd, buf + done, len - done)
				: read(fd, buf + done, len - done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void fill(unsigned char *b, size_t len, int round)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 7 + round);
}

/* Long messages of sizes around pages and the ring, from 3 bytes into a
 * buffer (unaligned at both ends), node 0 to 1 and back, checked. */
static int trade_long(bip_ep_t *ep, int node)
{
	static const size_t sizes[] = { 3000, 4096, 20000, 65536 + 13,
					300001 };
	enum { MAX = 300001 + 3 };
	unsigned char *out = malloc(MAX), *in = malloc(MAX);
	int rc = 0;

	for (size_t i = 0; !rc && out && in && i < 5; i++) {
		size_t len = sizes[i];
		struct bip_status st;

		fill(out + 3, len, (int)i);
		memset(in, 0, MAX);
		if (node == 0 && (rc = bip_lsend(ep, 1, 1, out + 3, len)))
			break;
		if ((rc = bip_lrecv(ep, 1, in + 3, len, &st)))
			break;
		if (st.len != len || memcmp(in + 3, out + 3, len) || in[2] ||
		    (len + 3 < MAX && in[len + 3])) {
			rc = fprintf(stderr, "node %d: long message of %zu "
				     "bytes arrived wrong\n", node, len);
			break;
		}
		if (node == 1 && (rc = bip_lsend(ep, 0, 1, in + 3, len)))
			break;
	}
	if (!out || !in)
		rc = fprintf(stderr, "no memory\n");
	else if (rc < 0)
		fprintf(stderr, "node %d: long messages: %s\n", node,
			bip_strerror(rc));
	free(out);
	free(in);
	return rc;
}

/* Node 1 goes quiet for 2.5 peer timeouts (BIP_PEER_TIMEOUT_MS, set short
 * in eth mode), then sends: node 0, waiting, must have taken the answers
 * of node 1's liveness thread (through its own /dev/bip file) for a sign of
 * life instead of taking it for dead. */
static int quiet_peer(bip_ep_t *ep, int node)
{
	char buf[8];
	int rc;

	if (node == 1) {
		usleep(5 * QUIET_TIMEOUT_MS * 1000 / 2);
		rc = bip_send(ep, 0, "late", 4);
	} else {
		rc = bip_recv(ep, buf, sizeof(buf), NULL);
		rc = rc == 4 && !memcmp(buf, "late", 4) ? 0 : rc < 0 ? rc : -1;
	}
	if (rc)
		fprintf(stderr, "node %d: after a quiet peer: %s\n", node,
			rc < 0 ? bip_strerror(rc) : "wrong message");
	return rc;
}

/* Node 0 sends, node 1 checks and echoes, node 0 checks the echo. */
static int trade(bip_ep_t *ep, int node)
{
	static unsigned char out[BIP_SMALL_MAX], in[BIP_SMALL_MAX];

	for (int r = 0; r < ROUNDS; r++) {
		size_t len = 1 + (size_t)r * 37 % BIP_SMALL_MAX;
		int rc;

		fill(out, len, r);
		if (node == 0 && (rc = bip_send(ep, 1, out, len)))
			return fprintf(stderr, "send: %s\n", bip_strerror(rc));
		rc = bip_recv(ep, in, sizeof(in), NULL);
		if (rc != (int)len || memcmp(in, out, len))
			return fprintf(stderr, "node %d, round %d: %d bytes, "
				       "not the %zu sent\n", node, r, rc, len);
		if (node == 1 && (rc = bip_send(ep, 0, in, len)))
			return fprintf(stderr, "echo: %s\n", bip_strerror(rc));
	}
	return 0;
}

enum mode { NONE, KMOD, KCOPY, ETH, NOETH };

/* What bip_info says of the eth wire here: that frames go through
 * /dev/bip (usable), or that it is not used. */
static int eth_info_ok(int node, int usable)
{
	struct bip_wire_desc d;

	for (unsigned i = 0; bip_wire_info(i, &d) == 0; i++) {
		if (strcmp(d.name, "eth"))
			continue;
		if (usable ? d.usable == 0 && strstr(d.state, "through /dev/bip")
			   : d.usable && strstr(d.state, "not used"))
			return 0;
		return fprintf(stderr, "node %d: bip_info says of eth: %s\n",
			       node, d.state);
	}
	return fprintf(stderr, "node %d: no eth wire\n", node);
}

static int run(int node, int rfd, int wfd, uint64_t secret, enum mode mode)
{
	struct bip_open_params p = { .node = node, .nnodes = 2,
				     .job_key = 0x686f737469660a, .secret = secret,
				     .nhosts = 1, .local_nodes = 2 };
	int want_kmod = mode != NONE && mode != NOETH;
	char mine[BIP_CARD_MAX] = "", theirs[BIP_CARD_MAX], why[512];
	struct bip_counters c;
	bip_ep_t *ep;
	int rc, in_use, mapped;

	if (mode == ETH || mode == NOETH)
		p = (struct bip_open_params){ .node = node, .nnodes = 2,
					      .job_key = p.job_key,
					      .secret = secret, .host = node,
					      .nhosts = 2, .local_nodes = 1 };
	if ((mode == ETH || mode == NOETH) && eth_info_ok(node, mode == ETH))
		return 1;
	if (mode == NOETH) {
		rc = bip_open(&p, &ep);
		if (rc != -BIP_EWIRE)
			return fprintf(stderr, "node %d: the eth wire opened "
				       "without the module (%s)\n", node,
				       bip_strerror(rc));
		printf("node %d: no eth wire without the module, as it "
		       "should be: %s\n", node, bip_strerror(rc));
		return 0;
	}
	if ((rc = bip_open(&p, &ep)) || (rc = bip_card(ep, mine, sizeof(mine))))
		return fprintf(stderr, "open: %s\n", bip_strerror(rc));
	if (full_io(wfd, mine, sizeof(mine), 1) ||
	    full_io(rfd, theirs, sizeof(theirs), 0))
		return fprintf(stderr, "node %d: no card from the peer\n", node);
	theirs[sizeof(theirs) - 1] = '\0';
	if ((rc = bip_connect(ep, node, mine)) ||
	    (rc = bip_connect(ep, node ^ 1, theirs)))
		return fprintf(stderr, "connect: %s\n", bip_strerror(rc));
	if (trade(ep, node) || trade_long(ep, node) ||
	    (mode == ETH && quiet_peer(ep, node)) || bip_get_counters(ep, &c))
		return 1;
	in_use = bip_kmod_info(ep, why, sizeof(why)) == 0;
	mapped = maps_device();
	printf("node %d: %d messages checked, and 5 long ones each way, %llu "
	       "of them by kernel copy; kernel module: %s\n", node, ROUNDS,
	       (unsigned long long)c.kernel_copies, why);
	rc = bip_close(ep);
	if (rc)
		return fprintf(stderr, "close: %s\n", bip_strerror(rc));
	if (want_kmod && (!in_use || !strstr(why, "NIC memory") || !mapped))
		return fprintf(stderr, "node %d: the module is not in use "
			       "(%d mappings of /dev/bip)\n", node, mapped);
	if (mode == KCOPY &&
	    (c.kernel_copies < 4 || !strstr(why, "kernel copy")))
		return fprintf(stderr, "node %d: long messages did not go by "
			       "the kernel's copy\n", node);
	if (mode == ETH && !strstr(why, "eth frames through it"))
		return fprintf(stderr, "node %d: the eth wire's frames did not "
			       "go through /dev/bip\n", node);
	if (!want_kmod && (in_use || mapped || c.kernel_copies))
		return fprintf(stderr, "node %d: the module is in use (%d "
			       "mappings of /dev/bip)\n", node, mapped);
	return 0;
}

/* Root becomes nobody, with no capability left (no CAP_NET_RAW). */
static int become_nobody(void)
{
	if (getuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	     setresuid(65534, 65534, 65534)))
		return perror("becoming nobody"), -1;
	return 0;
}

/* Node 1 (child) moves into a network namespace of its own, where the
 * parent (node 0) moves veth1; each end brings its interface up, then
 * becomes nobody. rfd and wfd: the pipe ends of that end. */
static int eth_setup(int node, pid_t child, int rfd, int wfd)
{
	char cmd[96], c = 'n';

	setenv("BIP_WIRE", "eth", 1);
	snprintf(cmd, sizeof(cmd), "%d", QUIET_TIMEOUT_MS);
	setenv("BIP_PEER_TIMEOUT_MS", cmd, 1);
	setenv("BIP_ETH_IFACE", node ? "veth1" : "veth0", 1);
	if (node == 1 && unshare(CLONE_NEWNET))
		return perror("unshare"), -1;
	if (node == 1 ? write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1
		      : read(rfd, &c, 1) != 1)
		return fprintf(stderr, "node %d: no word from the peer\n", node);
	if (node == 0)
		snprintf(cmd, sizeof(cmd), "ip link set veth1 netns %d && "
			 "ip link set veth0 up", (int)child);
	else
		snprintf(cmd, sizeof(cmd), "ip link set veth1 up");
	if (system(cmd))
		return fprintf(stderr, "node %d: %s failed\n", node, cmd);
	if (node == 0 && write(wfd, &c, 1) != 1)
		return -1;
	return become_nobody();
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "none", "kmod", "kcopy", "eth",
					     "noeth" };
	int to1[2], to0[2], status, rc, mode = -1;
	uint64_t secret;
	pid_t child;

	for (int m = 0; argc == 2 && m < 5; m++)
		if (!strcmp(argv[1], modes[m]))
			mode = m;
	if (mode < 0) {
		fprintf(stderr, "usage: %s kmod|kcopy|eth|noeth|none\n",
			argv[0]);
		return 2;
	}
	if (mode == KCOPY) {
		setenv("BIP_SHM_KCOPY_MIN", "4k", 1);
		if (become_nobody())
			return 1;
	}
	if ((rc = bip_secret_new(&secret)))
		return fprintf(stderr, "secret: %s\n", bip_strerror(rc)), 1;
	if (pipe(to1) || pipe(to0))
		return perror("pipe"), 1;
	fflush(stdout);
	child = fork();
	if (child < 0)
		return perror("fork"), 1;
	/* Each end keeps its own pipe ends: one that fails closes them, and
	 * the other reads the end of file instead of waiting forever. */
	close(child == 0 ? to1[1] : to1[0]);
	close(child == 0 ? to0[0] : to0[1]);
	if (child == 0) {
		rc = mode >= ETH ? eth_setup(1, 0, to1[0], to0[1]) : 0;
		if (!rc)
			rc = run(1, to1[0], to0[1], secret, mode);
		fflush(stdout);
		_exit(rc ? 1 : 0);
	}
	rc = mode >= ETH ? eth_setup(0, child, to0[0], to1[1]) : 0;
	if (!rc)
		rc = run(0, to0[0], to1[1], secret, mode);
	close(to0[0]);
	close(to1[1]);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = 1;
	return rc ? 1 : 0;
}

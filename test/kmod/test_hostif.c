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
 *   test_hostif none   it must not be: no mapping of /dev/bip, no kernel
 *                      copy
 *
 * make check runs "none" (no module on the build machine, or BIP_KMOD=off);
 * the QEMU guest runs both.
 */
#define _GNU_SOURCE /* setresuid */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bip.h"

#define ROUNDS 300

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

static int run(int node, int rfd, int wfd, uint64_t secret, int want_kmod,
	       int want_kcopy)
{
	struct bip_open_params p = { .node = node, .nnodes = 2,
				     .job_key = 0x686f737469660a, .secret = secret,
				     .nhosts = 1, .local_nodes = 2 };
	char mine[BIP_CARD_MAX] = "", theirs[BIP_CARD_MAX], why[512];
	struct bip_counters c;
	bip_ep_t *ep;
	int rc, in_use, mapped;

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
	    bip_get_counters(ep, &c))
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
	if (want_kcopy && (c.kernel_copies < 4 || !strstr(why, "kernel copy")))
		return fprintf(stderr, "node %d: long messages did not go by "
			       "the kernel's copy\n", node);
	if (!want_kmod && (in_use || mapped || c.kernel_copies))
		return fprintf(stderr, "node %d: the module is in use (%d "
			       "mappings of /dev/bip)\n", node, mapped);
	return 0;
}

int main(int argc, char **argv)
{
	int to1[2], to0[2], status, rc, want, kcopy;
	uint64_t secret;
	pid_t child;

	if (argc != 2 || (strcmp(argv[1], "kmod") && strcmp(argv[1], "kcopy") &&
			  strcmp(argv[1], "none"))) {
		fprintf(stderr, "usage: %s kmod|kcopy|none\n", argv[0]);
		return 2;
	}
	want = strcmp(argv[1], "none") != 0;
	kcopy = !strcmp(argv[1], "kcopy");
	if (kcopy)
		setenv("BIP_SHM_KCOPY_MIN", "4k", 1);
	if (kcopy && getuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	     setresuid(65534, 65534, 65534)))
		return perror("becoming nobody"), 1;
	if ((rc = bip_secret_new(&secret)))
		return fprintf(stderr, "secret: %s\n", bip_strerror(rc)), 1;
	if (pipe(to1) || pipe(to0))
		return perror("pipe"), 1;
	fflush(stdout);
	child = fork();
	if (child < 0)
		return perror("fork"), 1;
	if (child == 0) {
		rc = run(1, to1[0], to0[1], secret, want, kcopy);
		fflush(stdout);
		_exit(rc ? 1 : 0);
	}
	rc = run(0, to0[0], to1[1], secret, want, kcopy);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = 1;
	return rc ? 1 : 0;
}

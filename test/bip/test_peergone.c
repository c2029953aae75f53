/*
 * test_peergone.c - a peer that disappears must turn waits into errors, not
 * hangs, and must leave nothing in /dev/shm.
 *   die-after-init:  node 1 exits without closing after bip_init; node 0's
 *                    pending long send, blocking receive and new sends all
 *                    return -BIP_EPEERGONE.
 *   kill-after-init: node 1 is killed by SIGKILL (bip_run then ends the job).
 *   kill-before-init: node 1 is killed before it attaches anything.
 *   check-unlinked:  after bip_init no segment of the job is still named.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s\n", what, bip_strerror(rc));
	return 1;
}

/* Count /dev/shm names of this job: "bip-UID-KEY-*", KEY from our card. */
static int job_segments(bip_ep_t *ep)
{
	char card[BIP_CARD_MAX], prefix[64];
	const char *key;
	struct dirent *e;
	DIR *d;
	int n = 0;

	bip_card(ep, card, sizeof(card));
	key = strrchr(card, ',') + 1;
	snprintf(prefix, sizeof(prefix), "bip-%u-%s-", (unsigned)getuid(), key);
	d = opendir("/dev/shm");
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "die-after-init";
	static char buf[100000];
	bip_ep_t *ep;
	bip_req_t req;
	int rc;

	if (strcmp(mode, "kill-before-init") == 0 &&
	    atoi(getenv("PMI_RANK") ? getenv("PMI_RANK") : "0") == 1)
		raise(SIGKILL);
	if ((rc = bip_init(&ep)))
		return fail("bip_init", rc);
	if (strcmp(mode, "check-unlinked") == 0) {
		int n = job_segments(ep);

		bip_close(ep);
		if (n) {
			fprintf(stderr, "%d segment(s) still named after init\n",
				n);
			return 1;
		}
		return 0;
	}
	if (bip_node(ep) == 1) {
		if (strcmp(mode, "die-after-init") == 0)
			_exit(0); /* no bip_close: looks like a crash */
		raise(SIGKILL);
	}
	if (strcmp(mode, "die-after-init") != 0) {
		pause(); /* bip_run ends us */
		return 0;
	}
	/* Node 1 never posts this receive and then vanishes. */
	rc = bip_ilsend(ep, 1, 0, buf, sizeof(buf), &req);
	if (rc)
		return fail("ilsend", rc);
	rc = bip_wait(ep, &req, NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("pending long send should fail", rc);
	rc = bip_recv(ep, buf, sizeof(buf), NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("blocking receive should fail", rc);
	rc = bip_send(ep, 1, buf, 10);
	if (rc != -BIP_EPEERGONE)
		return fail("send to a gone peer should fail", rc);
	rc = bip_lrecv(ep, 1, buf, 10, NULL);
	if (rc != -BIP_EPEERGONE)
		return fail("long receive with no peer left should fail", rc);
	bip_close(ep);
	printf("peer gone: every wait returned BIP_EPEERGONE\n");
	return 0;
}

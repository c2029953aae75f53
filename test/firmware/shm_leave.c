/*
 * shm_leave.c - for shm_cleanup.sh: open the shm wire as node 0 of two on
 * this host, print the segment's name, and then, as a process killed before
 * its peer attached, keep the name: "exit" ends at once without closing;
 * "hold" stays alive until killed.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wire/shm.h"

int main(int argc, char **argv)
{
	struct bipfw_wire_params p = {
		.node = 0, .nnodes = 2, .host = 0, .nhosts = 1,
		.local_nodes = 2, .job_key = (uint64_t)getpid(),
		.secret = 0x5eed0000ull ^ (uint64_t)getpid(),
		.packet_size = 32768,
	};
	struct bipfw_shm *shm;
	char name[BIPFW_SHM_NAME_MAX];

	if (argc != 2 || (strcmp(argv[1], "exit") && strcmp(argv[1], "hold"))) {
		fprintf(stderr, "usage: shm_leave exit|hold\n");
		return 2;
	}
	if (bipfw_shm_open(&p, &shm))
		return 1;
	bipfw_shm_name(name, sizeof(name), p.secret, p.job_key, 0);
	printf("%s\n", name);
	fflush(stdout);
	if (strcmp(argv[1], "hold") == 0)
		pause();
	_exit(0);
}

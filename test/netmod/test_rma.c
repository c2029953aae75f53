/*
 * test_rma.c - MPI_Put and MPI_Get through every window flavour and every
 * synchronization (fence, lock, lock_all with flushes and request-based
 * calls, post-start-complete-wait), contiguous and not, with targets of
 * different displacement units, every byte checked.
 *
 * Usage: test_rma direct|am [WINDOW...]. direct: puts and gets on this
 * host must be copied by the origin alone, so the test also checks that the
 * target takes no part (one put and get to a rank that sleeps outside MPI
 * return before it wakes) and that an access outside the target's window
 * fails with MPI_ERR_RMA_RANGE instead of reaching the target's other
 * memory. am: they go by active messages (another host, or cross-memory
 * attach off); only the data is checked. WINDOW: which windows, of create,
 * allocate, shared, dynamic, alloc_mem (MPI_Win_create over MPI_Alloc_mem's
 * memory); default: all, and with direct also puts and gets of each window
 * to its own rank. Each rank then prints how many puts and gets it issued
 * to other ranks and completed ("rank R: N accesses"), for the counters
 * to be compared with.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define BIG (1 << 20)
#define WIN_BYTES (2 * BIG + 4096)
/* MPI_Win_create over memory from MPI_Alloc_mem: a flavour of this test's. */
#define FLAVOR_ALLOC_MEM (-1)

static int rank, size;
static long accesses; /* puts and gets issued to other ranks, completed */

/* A byte of the data that rank `from` puts at position i for `round`. */
static unsigned char pattern(int from, int round, size_t i)
{
	return (unsigned char)(from * 31 + round * 7 + i * 13 + (i >> 9));
}

static void fill(unsigned char *buf, int from, int round, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(from, round, i);
}

static void check_bytes(const unsigned char *buf, int from, int round,
			size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(buf[i] == pattern(from, round, i),
		      "%s: byte %zu of %zu from rank %d is %u, not %u", what, i,
		      len, from, buf[i], pattern(from, round, i));
}

static const char *flavor_name(int flavor)
{
	switch (flavor) {
	case MPI_WIN_FLAVOR_CREATE: return "create";
	case MPI_WIN_FLAVOR_ALLOCATE: return "allocate";
	case MPI_WIN_FLAVOR_SHARED: return "allocate_shared";
	case FLAVOR_ALLOC_MEM: return "alloc_mem";
	default: return "dynamic";
	}
}

/* A window of WIN_BYTES on every rank, its displacement unit 1 on even
 * ranks and 8 on odd ones (a put names the target's unit). *mem is the
 * local memory; a dynamic window has it attached, *disp0 its address. */
static MPI_Win make_window(int flavor, unsigned char **mem, MPI_Aint *disp0,
			   void **to_free)
{
	int unit = rank % 2 ? 8 : 1;
	MPI_Win win;

	*to_free = NULL;
	*disp0 = 0;
	switch (flavor) {
	case MPI_WIN_FLAVOR_CREATE:
		*mem = *to_free = malloc(WIN_BYTES);
		CHECK(*mem, "malloc");
		MPI_Win_create(*mem, WIN_BYTES, unit, MPI_INFO_NULL,
			       MPI_COMM_WORLD, &win);
		break;
	case MPI_WIN_FLAVOR_ALLOCATE:
		MPI_Win_allocate(WIN_BYTES, unit, MPI_INFO_NULL,
				 MPI_COMM_WORLD, mem, &win);
		break;
	case MPI_WIN_FLAVOR_SHARED:
		MPI_Win_allocate_shared(WIN_BYTES, unit, MPI_INFO_NULL,
					MPI_COMM_WORLD, mem, &win);
		break;
	case FLAVOR_ALLOC_MEM:
		MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, mem);
		MPI_Win_create(*mem, WIN_BYTES, unit, MPI_INFO_NULL,
			       MPI_COMM_WORLD, &win);
		break;
	default:
		*mem = *to_free = malloc(WIN_BYTES);
		CHECK(*mem, "malloc");
		MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		MPI_Win_attach(win, *mem, WIN_BYTES);
		MPI_Get_address(*mem, disp0);
		break;
	}
	return win;
}

/* The target displacement of byte offset off in rank t's window. */
static MPI_Aint disp_of(int flavor, const MPI_Aint *disp0s, int t,
			MPI_Aint off)
{
	if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
		return disp0s[t] + off;
	return t % 2 ? off / 8 : off;
}

/* One round: each rank puts len bytes to its right neighbour's window at
 * off, then reads back from its left neighbour what that one received
 * from its own left, under the given synchronization. */
static void round_trip(MPI_Win win, int flavor, const MPI_Aint *disp0s,
		       unsigned char *mem, int sync, int round, size_t len,
		       size_t off)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int left2 = (rank + size - 2) % size;
	unsigned char *src = malloc(len), *dst = malloc(len);
	MPI_Request req[2];
	MPI_Group world, peers;
	int ranks[2] = { left, right };
	char what[96];

	CHECK(src && dst, "malloc");
	fill(src, rank, round, len);
	memset(dst, 0xee, len);
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, size > 2 ? 2 : 1, ranks + (size > 2 ? 0 : 1),
		       &peers);
	snprintf(what, sizeof(what), "%s, sync %d, %zu B at %zu",
		 flavor_name(flavor), sync, len, off);

	/* The put. */
	switch (sync) {
	case 0: /* fence */
		MPI_Win_fence(0, win);
		MPI_Put(src, (int)len, MPI_BYTE, right,
			disp_of(flavor, disp0s, right, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		break;
	case 1: /* exclusive lock */
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
		MPI_Put(src, (int)len, MPI_BYTE, right,
			disp_of(flavor, disp0s, right, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_unlock(right, win);
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case 2: /* lock_all, request-based, flush */
		MPI_Win_lock_all(0, win);
		MPI_Rput(src, (int)len, MPI_BYTE, right,
			 disp_of(flavor, disp0s, right, off), (int)len,
			 MPI_BYTE, win, &req[0]);
		MPI_Wait(&req[0], MPI_STATUS_IGNORE);
		MPI_Win_flush(right, win);
		MPI_Win_unlock_all(win);
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	default: /* post-start-complete-wait */
		MPI_Win_post(peers, 0, win);
		MPI_Win_start(peers, 0, win);
		MPI_Put(src, (int)len, MPI_BYTE, right,
			disp_of(flavor, disp0s, right, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_complete(win);
		MPI_Win_wait(win);
		break;
	}
	/* What our left neighbour put is in our window (the unified memory
	 * model: visible once the epoch is over). */
	check_bytes(mem + off, left, round, len, what);
	MPI_Barrier(MPI_COMM_WORLD);

	/* The get, of what our left neighbour holds from its own left. */
	switch (sync) {
	case 0:
		MPI_Win_fence(0, win);
		MPI_Get(dst, (int)len, MPI_BYTE, left,
			disp_of(flavor, disp0s, left, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		break;
	case 1:
		MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
		MPI_Get(dst, (int)len, MPI_BYTE, left,
			disp_of(flavor, disp0s, left, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_unlock(left, win);
		break;
	case 2:
		MPI_Win_lock_all(0, win);
		MPI_Rget(dst, (int)len, MPI_BYTE, left,
			 disp_of(flavor, disp0s, left, off), (int)len,
			 MPI_BYTE, win, &req[1]);
		MPI_Wait(&req[1], MPI_STATUS_IGNORE);
		MPI_Win_unlock_all(win);
		break;
	default:
		MPI_Win_post(peers, 0, win);
		MPI_Win_start(peers, 0, win);
		MPI_Get(dst, (int)len, MPI_BYTE, left,
			disp_of(flavor, disp0s, left, off), (int)len,
			MPI_BYTE, win);
		MPI_Win_complete(win);
		MPI_Win_wait(win);
		break;
	}
	check_bytes(dst, left2, round, len, what);
	accesses += 2;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Group_free(&peers);
	MPI_Group_free(&world);
	free(src);
	free(dst);
}

/* Non-contiguous on both sides: every other 8-byte block of 64 KiB, and a
 * contiguous type whose data starts 16 bytes past its address (true lower
 * bound). */
static void typed(MPI_Win win, int flavor, const MPI_Aint *disp0s,
		  unsigned char *mem)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int nblk = 8192;
	size_t span = (size_t)nblk * 16;
	unsigned char *src = malloc(span);
	MPI_Datatype vec, shifted;
	int blen = 64, disp = 16;

	CHECK(src, "malloc");
	MPI_Type_vector(nblk, 8, 16, MPI_BYTE, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_create_indexed_block(1, blen, &disp, MPI_BYTE, &shifted);
	MPI_Type_commit(&shifted);
	fill(src, rank, 50, span);

	MPI_Win_fence(0, win);
	MPI_Put(src, 1, vec, right, disp_of(flavor, disp0s, right, 0), 1, vec,
		win);
	/* 64 bytes from src + 16 to the target's byte 2 * span + 16. */
	MPI_Put(src, 1, shifted, right,
		disp_of(flavor, disp0s, right, 2 * span), 1, shifted, win);
	accesses += 2;
	MPI_Win_fence(0, win);
	for (size_t i = 0; i < span; i++)
		if (i % 16 < 8)
			CHECK(mem[i] == pattern(left, 50, i),
			      "%s: vector put, byte %zu", flavor_name(flavor),
			      i);
	for (int i = 0; i < blen; i++)
		CHECK(mem[2 * span + 16 + i] == pattern(left, 50, 16 + i),
		      "%s: put with a lower bound, byte %d",
		      flavor_name(flavor), i);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	MPI_Type_free(&vec);
	MPI_Type_free(&shifted);
	free(src);
}

/* Post-start-complete-wait between changing groups (MPICH's
 * pscw_ordering): even ranks with odd ones, then each parity among itself,
 * many times. A rank whose puts need no target can post for the next
 * epoch before a slower rank started the current one: that post must wait
 * for its own start, not count for the current one (MPICH counted posts
 * from any rank and hung). */
static void pscw_groups(MPI_Win win, int flavor, const MPI_Aint *disp0s,
			unsigned char *mem)
{
	MPI_Group world, par[2];
	int *ranks = malloc(sizeof(int) * size), n[2] = { 0, 0 };
	int mine = rank % 2;

	CHECK(ranks, "malloc");
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	for (int p = 0; p < 2; p++) {
		n[p] = 0;
		for (int r = p; r < size; r += 2)
			ranks[n[p]++] = r;
		MPI_Group_incl(world, n[p], ranks, &par[p]);
	}
	for (int iter = 0; iter < 50; iter++) {
		for (int phase = 0; phase < 2; phase++) {
			/* phase 0: the other parity; 1: our own */
			int g = phase ? mine : !mine;
			unsigned char v = (unsigned char)(iter * 2 + phase);

			/* Even ranks start before they post to odd ones. */
			if (!mine && !phase) {
				MPI_Win_start(par[g], 0, win);
				MPI_Win_post(par[g], 0, win);
			} else {
				MPI_Win_post(par[g], 0, win);
				MPI_Win_start(par[g], 0, win);
			}
			for (int r = g; r < size; r += 2) {
				MPI_Put(&v, 1, MPI_BYTE, r,
					disp_of(flavor, disp0s, r, 8 * rank),
					1, MPI_BYTE, win);
				accesses += r != rank;
			}
			MPI_Win_complete(win);
			MPI_Win_wait(win);
			for (int r = g; r < size; r += 2)
				CHECK(mem[8 * r] == v,
				      "%s: pscw round %d phase %d: rank %d's "
				      "byte is %u, not %u", flavor_name(flavor),
				      iter, phase, r, mem[8 * r], v);
		}
	}
	MPI_Group_free(&par[0]);
	MPI_Group_free(&par[1]);
	MPI_Group_free(&world);
	free(ranks);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Past the end of the target's window: an error, and nothing written. */
static void out_of_range(MPI_Win win, int flavor, const MPI_Aint *disp0s)
{
	int right = (rank + 1) % size;
	unsigned char src[64] = { 0 };
	int rc, cls;

	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Win_lock_all(0, win);
	rc = MPI_Put(src, 64, MPI_BYTE, right,
		     disp_of(flavor, disp0s, right, WIN_BYTES - 32), 64,
		     MPI_BYTE, win);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RMA_RANGE,
	      "%s: a put past the window's end gave class %d, not "
	      "MPI_ERR_RMA_RANGE (%d)", flavor_name(flavor), cls,
	      MPI_ERR_RMA_RANGE);
	rc = MPI_Get(src, 64, MPI_BYTE, right,
		     disp_of(flavor, disp0s, right, WIN_BYTES), 64, MPI_BYTE,
		     win);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RMA_RANGE,
	      "%s: a get past the window's end gave class %d",
	      flavor_name(flavor), cls);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Each rank puts to its own window and gets it back, at an odd offset and
 * through a vector type: this rank's window is at hand. */
static void self_access(MPI_Win win, int flavor, const MPI_Aint *disp0s,
			unsigned char *mem)
{
	size_t len = 4099, off = 3 * 8 + 1024;
	unsigned char *src = malloc(len), *dst = malloc(len);
	MPI_Datatype vec;

	CHECK(src && dst, "malloc");
	fill(src, rank, 70, len);
	MPI_Type_vector(16, 8, 16, MPI_BYTE, &vec);
	MPI_Type_commit(&vec);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
	MPI_Put(src, (int)len, MPI_BYTE, rank,
		disp_of(flavor, disp0s, rank, off), (int)len, MPI_BYTE, win);
	MPI_Win_unlock(rank, win);
	check_bytes(mem + off, rank, 70, len, "put to the own rank");
	MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
	MPI_Get(dst, (int)len, MPI_BYTE, rank,
		disp_of(flavor, disp0s, rank, off), (int)len, MPI_BYTE, win);
	MPI_Win_unlock(rank, win);
	check_bytes(dst, rank, 70, len, "get from the own rank");
	memset(dst, 0, len);
	MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
	MPI_Get(dst, 1, vec, rank, disp_of(flavor, disp0s, rank, off), 1, vec,
		win);
	MPI_Win_unlock(rank, win);
	for (size_t i = 0; i < 16 * 16; i++)
		CHECK(dst[i] == (i % 16 < 8 ? pattern(rank, 70, i) : 0),
		      "%s: vector get from the own rank, byte %zu",
		      flavor_name(flavor), i);
	MPI_Type_free(&vec);
	free(src);
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 sleeps outside MPI; rank 1's put and get of 1 MiB to it, with
 * its flush, must be over long before rank 0 wakes: only the origin took
 * part. */
static void target_asleep(MPI_Win win, int flavor, const MPI_Aint *disp0s,
			  unsigned char *mem)
{
	unsigned char *buf = malloc(BIG);
	double t0, took = 0;

	CHECK(buf, "malloc");
	fill(buf, rank, 60, BIG);
	MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		sleep(2);
	} else if (rank == 1) {
		t0 = MPI_Wtime();
		MPI_Put(buf, BIG, MPI_BYTE, 0, disp_of(flavor, disp0s, 0, 0),
			BIG, MPI_BYTE, win);
		MPI_Win_flush(0, win);
		memset(buf, 0, BIG);
		MPI_Get(buf, BIG, MPI_BYTE, 0, disp_of(flavor, disp0s, 0, 0),
			BIG, MPI_BYTE, win);
		MPI_Win_flush(0, win);
		took = MPI_Wtime() - t0;
		accesses += 2;
		check_bytes(buf, 1, 60, BIG, "put and get to a sleeping rank");
		CHECK(took < 1.0,
		      "%s: put and get to a rank outside MPI took %.3f s: "
		      "they waited for it", flavor_name(flavor), took);
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		check_bytes(mem, 1, 60, BIG, "put from rank 1 while asleep");
	if (rank == 1)
		printf("%s: put and get of 1 MiB to a sleeping rank took "
		       "%.1f us\n", flavor_name(flavor), took * 1e6);
	free(buf);
}

/* Rank 0 only puts and flushes, in a loop, until rank 1's put reaches its
 * window: rank 1's lock and unlock of rank 0's window are messages rank 0
 * must answer, and only its flushes give it progress. A flush that owes
 * nothing polls only now and then (MPICH's dynamic polling, on in
 * bipmpi): it must still poll. */
static void flush_serves_locks(MPI_Win win, int flavor, const MPI_Aint *disp0s,
			       unsigned char *mem)
{
	const unsigned char magic = 0xa5;
	unsigned char byte = 0;
	double t0 = MPI_Wtime();
	long flushes = 0;

	mem[0] = 0;
	MPI_Win_lock_all(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		while (MPI_Wtime() - t0 < 10) {
			MPI_Put(&byte, 1, MPI_BYTE, 1,
				disp_of(flavor, disp0s, 1, 0), 1, MPI_BYTE,
				win);
			MPI_Win_flush(1, win);
			accesses++;
			flushes++;
			MPI_Win_sync(win);
			if (*(volatile unsigned char *)mem == magic)
				break;
		}
		CHECK(*(volatile unsigned char *)mem == magic,
		      "%s: a rank that only flushed never let another rank "
		      "lock its window (%ld flushes in %.1f s)",
		      flavor_name(flavor), flushes, MPI_Wtime() - t0);
	}
	MPI_Win_unlock_all(win);
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Put(&magic, 1, MPI_BYTE, 0, disp_of(flavor, disp0s, 0, 0),
			1, MPI_BYTE, win);
		MPI_Win_unlock(0, win);
		accesses++;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: rank 1 locked, put and unlocked while rank 0 "
		       "flushed: %ld flushes, %.1f us\n",
		       flavor_name(flavor), flushes,
		       (MPI_Wtime() - t0) * 1e6);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int flavor;
	} windows[] = { { "create", MPI_WIN_FLAVOR_CREATE },
			{ "allocate", MPI_WIN_FLAVOR_ALLOCATE },
			{ "shared", MPI_WIN_FLAVOR_SHARED },
			{ "dynamic", MPI_WIN_FLAVOR_DYNAMIC },
			{ "alloc_mem", FLAVOR_ALLOC_MEM } };
	static const size_t lens[] = { 8, 4099, BIG };
	bool direct, self;
	int round = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(argc >= 2 && (!strcmp(argv[1], "direct") ||
			    !strcmp(argv[1], "am")),
	      "usage: test_rma direct|am [WINDOW...]");
	CHECK(size >= 2, "needs 2 ranks or more");
	direct = !strcmp(argv[1], "direct");
	self = direct && argc == 2;

	/* First, before any access of this process went by messages (after
	 * one, every flush polls): its flushes poll only now and then. With
	 * every window (a list of windows is for the counters' checks). */
	if (self) {
		unsigned char *mem;
		void *to_free;
		MPI_Aint disp0s[2] = { 0, 0 };
		MPI_Win win = make_window(MPI_WIN_FLAVOR_ALLOCATE, &mem,
					  disp0s, &to_free);

		flush_serves_locks(win, MPI_WIN_FLAVOR_ALLOCATE, disp0s, mem);
		MPI_Win_free(&win);
	}
	for (size_t f = 0; f < sizeof(windows) / sizeof(windows[0]); f++) {
		int flavor = windows[f].flavor;
		unsigned char *mem;
		void *to_free;
		MPI_Aint disp0, *disp0s;
		MPI_Win win;
		bool wanted = argc == 2;

		for (int a = 2; a < argc; a++)
			wanted = wanted || !strcmp(argv[a], windows[f].name);
		/* allocate_shared needs one host. */
		if (!wanted || (flavor == MPI_WIN_FLAVOR_SHARED && !direct))
			continue;
		disp0s = malloc(sizeof(MPI_Aint) * size);
		CHECK(disp0s, "malloc");
		win = make_window(flavor, &mem, &disp0, &to_free);
		MPI_Allgather(&disp0, 1, MPI_AINT, disp0s, 1, MPI_AINT,
			      MPI_COMM_WORLD);
		for (int sync = 0; sync < 4; sync++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]);
			     l++)
				round_trip(win, flavor, disp0s, mem, sync,
					   ++round, lens[l], l == 1 ? 24 : 0);
		typed(win, flavor, disp0s, mem);
		if (size >= 4)
			pscw_groups(win, flavor, disp0s, mem);
		/* A dynamic window's puts go by messages, as off-host ones
		 * (the target's attached memory can change under them). */
		if (direct && flavor != MPI_WIN_FLAVOR_DYNAMIC) {
			out_of_range(win, flavor, disp0s);
			target_asleep(win, flavor, disp0s, mem);
			flush_serves_locks(win, flavor, disp0s, mem);
		}
		if (self)
			self_access(win, flavor, disp0s, mem);
		if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
			MPI_Win_detach(win, mem);
		MPI_Win_free(&win);
		if (flavor == FLAVOR_ALLOC_MEM)
			MPI_Free_mem(mem);
		free(to_free);
		free(disp0s);
	}
	printf("rank %d: %ld accesses\n", rank, accesses);
	if (rank == 0)
		printf("test_rma %s: passed on %d ranks\n", argv[1], size);
	MPI_Finalize();
	return 0;
}

/*
 * bip_rma.c - MPI_Put and MPI_Get moved by the origin alone, as an RDMA NIC
 * moves them, and the memory that makes most of them a load or a store.
 *
 * MPI_Alloc_mem and MPI_Win_allocate take BIP's memory shared within the
 * host (bip_mem_alloc; our MPICH patch sends both here). When a window is
 * created its ranks tell each other what they expose: base, size,
 * displacement unit, and the key of the shared memory it lies in, if any.
 * A put or get to a rank of this host whose window lies in such memory is
 * then a copy between the origin buffer and that window, mapped here when
 * the window was created (bip_mem_map), with any datatypes on either side,
 * as is one to a window of MPI_Win_allocate_shared (MPICH's segment, which
 * MPICH maps on every rank of the host); to a
 * rank whose window is plain memory (MPI_Win_create over the user's own),
 * one bip_write or bip_read (cross-memory attach), contiguous data only.
 * This rank's own window is at hand. Either way the access is complete at
 * return, with no action by the target.
 *
 * Everything else goes by MPIDIG's active messages: targets on other
 * hosts, dynamic windows, non-contiguous data to plain memory,
 * accumulates, and window synchronization. That mix is sound because
 * MPIDIG's lock, lock_all, start and fence return only once the target
 * opened the epoch (granted the lock, posted, or entered the fence's
 * barrier), so a direct access after them falls inside it; and a direct
 * access is complete when it returns, so the flushes and epoch ends, which
 * wait for MPIDIG's own operations, owe it nothing.
 */
#include "mpidimpl.h"
#include "bip_state.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_BIP_SHARED_MEM
      category    : CH4_BIP
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        MPI_Alloc_mem and MPI_Win_allocate take BIP's memory shared within
        the host (bip_mem_alloc), which the host's other ranks map: their
        puts and gets to a window in it are loads and stores, with no
        system call and no action by the target. false: plain memory,
        reached by cross-memory attach (one system call per access).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* What rma() returns when the access must go by active messages instead
 * (MPI error codes are not negative). */
#define BY_AM (-1)

/* What a rank exposes: learned from it, so checked before use; its base
 * is never dereferenced here (BIP hands it to the kernel). */
struct MPIDI_BIP_win_target {
	uint64_t base;
	uint64_t size;
	int64_t disp_unit;
	uint64_t key, key_off; /* BIP shared memory holding it (key 0: none) */
	/* Ours alone, set after the exchange: */
	void *local; /* the window mapped here (or our own), else NULL */
};

/* Memory the host's other ranks can map, when any could. */
void *MPIDI_BIP_mpi_alloc_mem(MPI_Aint size, MPIR_Info *info)
{
	void *p = NULL;
	int rc = -BIP_EAGAIN;

	if (MPIR_CVAR_CH4_BIP_SHARED_MEM && MPIR_Process.local_size > 1 &&
	    size > 0) {
		MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
		rc = bip_mem_alloc(MPIDI_BIP_global.ep, (size_t)size, &p);
		MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	}
	return rc ? MPIDIG_mpi_alloc_mem(size, info) : p;
}

int MPIDI_BIP_mpi_free_mem(void *ptr)
{
	int rc;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	rc = bip_mem_free(MPIDI_BIP_global.ep, ptr);
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return rc ? MPIDIG_mpi_free_mem(ptr) : MPI_SUCCESS;
}

/* The window of rank i here, if it lies in memory this process maps:
 * BIP's shared memory of a rank of this host (a forged key maps nothing),
 * or, for MPI_Win_allocate_shared, the segment MPICH mapped on every rank
 * of the host (indexed by rank, as MPI_Win_shared_query does), where the
 * part must have the size the rank announced. Else it stays unmapped and
 * is reached by cross-memory attach: into MPICH's segment that cost 2.5
 * us per 8-byte put, against 0.5 into plain memory. */
static void map_window(MPIR_Win *win, struct MPIDI_BIP_win_target *t, int i)
{
	const MPIDIG_win_shared_info_t *shared = MPIDIG_WIN(win, shared_table);

	t->local = NULL;
	if (!t->size || t->size > SIZE_MAX)
		return;
	if (win->create_flavor == MPI_WIN_FLAVOR_SHARED) {
		if (shared && win->comm_ptr->node_comm &&
		    shared[i].size == t->size)
			t->local = shared[i].shm_base_addr;
		return;
	}
	if (t->key &&
	    bip_mem_map(MPIDI_BIP_global.ep, MPIDI_BIP_node_of(win->comm_ptr, i),
			t->key, t->key_off, (size_t)t->size, &t->local))
		t->local = NULL;
}

/* Every rank of the window tells the others what it exposes; its own
 * window is at hand, the others of this host are mapped here and now: in
 * a call a program expects to be collective and slow, not in its first
 * put, which it times as one (33 us against 0.1 for the next, most of it
 * the mapping). */
static int win_exchange(MPIR_Win *win)
{
	MPIR_Comm *comm = win->comm_ptr;
	MPIR_Errflag_t errflag = MPIR_ERR_NONE;
	struct MPIDI_BIP_win_target *t, *me;
	int mpi_errno = MPI_SUCCESS;

	t = MPL_malloc(sizeof(*t) * (size_t)comm->local_size, MPL_MEM_RMA);
	MPIR_ERR_CHKANDJUMP(!t, mpi_errno, MPI_ERR_OTHER, "**nomem");
	me = &t[comm->rank];
	*me = (struct MPIDI_BIP_win_target){
		.base = (uint64_t)(uintptr_t)win->base,
		.size = (uint64_t)win->size,
		.disp_unit = win->disp_unit,
	};
	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	if (win->size > 0 &&
	    bip_mem_key(MPIDI_BIP_global.ep, win->base, (size_t)win->size,
			&me->key, &me->key_off))
		me->key = 0;
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	mpi_errno = MPIR_Allgather(MPI_IN_PLACE, sizeof(*t), MPI_BYTE, t,
				   sizeof(*t), MPI_BYTE, comm, &errflag);
	if (mpi_errno) {
		MPL_free(t);
		goto fn_fail;
	}
	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	for (int i = 0; i < comm->local_size; i++)
		if (i != comm->rank)
			map_window(win, &t[i], i);
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	me->local = win->size > 0 ? win->base : NULL;
	win->dev.netmod.bip.targets = t;
fn_fail:
	return mpi_errno;
}

int MPIDI_BIP_mpi_win_create_hook(MPIR_Win *win)
{
	return win_exchange(win);
}

int MPIDI_BIP_mpi_win_allocate_hook(MPIR_Win *win)
{
	return win_exchange(win);
}

int MPIDI_BIP_mpi_win_allocate_shared_hook(MPIR_Win *win)
{
	return win_exchange(win);
}

/* Memory comes and goes by attach and detach, one rank at a time: what
 * another rank was told could be stale by the time it copies. */
int MPIDI_BIP_mpi_win_create_dynamic_hook(MPIR_Win *win)
{
	win->dev.netmod.bip.targets = NULL;
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_attach_hook(MPIR_Win *win, void *base, MPI_Aint size)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_detach_hook(MPIR_Win *win, const void *base)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_free_hook(MPIR_Win *win)
{
	struct MPIDI_BIP_win_target *t = win->dev.netmod.bip.targets;
	/* MPICH unmaps MPI_Win_allocate_shared's segment itself. */
	bool mapped = t && win->create_flavor != MPI_WIN_FLAVOR_SHARED;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	for (int i = 0; mapped && i < win->comm_ptr->local_size; i++)
		if (t[i].local && i != win->comm_ptr->rank)
			bip_mem_unmap(MPIDI_BIP_global.ep, t[i].local);
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	MPL_free(t);
	win->dev.netmod.bip.targets = NULL;
	return MPI_SUCCESS;
}

/* Where an access of span bytes from target_disp (and lb, the target
 * type's true lower bound) falls in the target's window, or -1 when it
 * leaves it. */
static int64_t window_offset(const struct MPIDI_BIP_win_target *t,
			     MPI_Aint target_disp, MPI_Aint lb, MPI_Aint span)
{
	int64_t off;

	if (__builtin_mul_overflow((int64_t)target_disp, t->disp_unit, &off) ||
	    __builtin_add_overflow(off, (int64_t)lb, &off) || off < 0 ||
	    (uint64_t)off > t->size || (uint64_t)span > t->size - (uint64_t)off)
		return -1;
	return off;
}

/* How many bytes count elements of type cover from the type's true lower
 * bound, holes included: false if that cannot be told simply (a negative
 * extent) or overflows. */
static bool type_span(int count, MPI_Datatype type, MPI_Aint *span_p)
{
	MPI_Aint extent, true_lb, true_extent, span;

	MPIR_Datatype_get_extent_macro(type, extent);
	MPIR_Type_get_true_extent_impl(type, &true_lb, &true_extent);
	if (extent < 0 || true_extent < 0 || count <= 0 ||
	    __builtin_mul_overflow((MPI_Aint)(count - 1), extent, &span) ||
	    __builtin_add_overflow(span, true_extent, &span))
		return false;
	*span_p = span;
	return true;
}

/* One access, as the caller described it, and what rma() learned of its
 * datatypes. */
struct rma_op {
	void *origin;
	int origin_count, target_count;
	MPI_Datatype origin_type, target_type;
	int target_rank;
	MPI_Aint target_disp;
	bool put;
	bool contig;         /* both sides contiguous */
	MPI_Aint size;       /* bytes moved */
	MPI_Aint o_lb, t_lb; /* where the data starts from each side's
			      * address (true lower bounds) */
};

/* By load and store between the origin buffer and the target's data, at
 * `at` in its window mapped here: any datatypes. */
static int load_store(const struct rma_op *op, char *at)
{
	char *origin = (char *)op->origin;
	size_t len = (size_t)op->size;
	int mpi_errno = MPI_SUCCESS;

	if (!op->put)
		MPL_atomic_read_barrier();
	/* Contiguous (the common case) without the datatype engine. */
	if (op->contig && op->put)
		bip_copy(at, origin + op->o_lb, len);
	else if (op->contig)
		bip_copy(origin + op->o_lb, at, len);
	else if (op->put)
		mpi_errno = MPIR_Localcopy(origin, op->origin_count,
					   op->origin_type, at - op->t_lb,
					   op->target_count, op->target_type);
	else
		mpi_errno = MPIR_Localcopy(at - op->t_lb, op->target_count,
					   op->target_type, origin,
					   op->origin_count, op->origin_type);
	/* Stored before whatever message ends the epoch. */
	if (op->put)
		MPL_atomic_write_barrier();
	if (!mpi_errno)
		MPIDI_BIP_global.cnt.rma_mapped++;
	return mpi_errno;
}

/* Contiguous data by one single copy (cross-memory attach) to or from
 * addr in the target's plain memory. */
static int single_copy(const struct rma_op *op, int node, uint64_t addr)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	void *origin = (char *)op->origin + op->o_lb;
	size_t len = (size_t)op->size;
	int mpi_errno = MPI_SUCCESS;
	int rc = op->put ? bip_write(g->ep, node, addr, origin, len)
			 : bip_read(g->ep, node, origin, addr, len);

	/* Refused (cross-memory attach turned off since): BIP no longer
	 * reaches that rank, so this access and the next go by messages. */
	if (rc == -BIP_EAGAIN)
		return BY_AM;
	if (rc == -BIP_EPEERGONE) {
		mpi_errno = MPIDI_BIP_proc_failed(node);
		goto fn_fail;
	}
	MPIR_ERR_CHKANDJUMP2(rc, mpi_errno, MPI_ERR_RMA_RANGE, "**biprma",
			     "**biprma %d %s", op->target_rank,
			     bip_strerror(rc));
	g->cnt.rma_direct++;
fn_fail:
	return mpi_errno;
}

/* The access by the origin alone, if the target's window is mapped here
 * or its data contiguous in memory BIP reaches: in an epoch, inside the
 * window; else BY_AM. */
static int direct(const struct rma_op *op, struct MPIDI_BIP_win_target *t,
		  int node, MPIR_Win *win)
{
	MPI_Aint span = op->size;
	int64_t off;
	int mpi_errno = MPI_SUCCESS;

	if (!t->local &&
	    !(op->contig && bip_rma_reach(MPIDI_BIP_global.ep, node)))
		return BY_AM;
	if (!op->contig &&
	    !type_span(op->target_count, op->target_type, &span))
		return BY_AM;
	MPIDIG_RMA_OP_CHECK_SYNC(op->target_rank, win);
	off = window_offset(t, op->target_disp, op->t_lb, span);
	MPIR_ERR_CHKANDJUMP(off < 0, mpi_errno, MPI_ERR_RMA_RANGE,
			    "**rmarange");
	mpi_errno = t->local ? load_store(op, (char *)t->local + off)
			     : single_copy(op, node, t->base + (uint64_t)off);
fn_fail:
	return mpi_errno;
}

/* A put or get by the origin alone, complete at return, with *req_p a
 * completed request if req_p; or BY_AM. */
static int rma(struct rma_op *op, MPIR_Win *win, MPIDI_av_entry_t *addr,
	       MPIR_Request **req_p)
{
	struct MPIDI_BIP_win_target *t = win->dev.netmod.bip.targets;
	int mpi_errno, o_contig, t_contig;
	MPI_Aint o_size;
	MPIR_Datatype *dt_ptr;

	if (!t)
		return BY_AM;
	MPIDI_Datatype_get_info(op->origin_count, op->origin_type, o_contig,
				o_size, dt_ptr, op->o_lb);
	MPIDI_Datatype_get_info(op->target_count, op->target_type, t_contig,
				op->size, dt_ptr, op->t_lb);
	if (!o_size || o_size != op->size)
		return BY_AM;
	op->contig = o_contig && t_contig;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	mpi_errno = direct(op, &t[op->target_rank], addr->netmod.bip.node, win);
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	if (mpi_errno == MPI_SUCCESS && req_p) {
		*req_p = MPIR_Request_create_complete(MPIR_REQUEST_KIND__RMA);
		if (!*req_p)
			mpi_errno = MPIR_Err_create_code(
				MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				__LINE__, MPIX_ERR_NOREQ, "**nomemreq", 0);
	}
	return mpi_errno;
}

int MPIDI_BIP_put(const void *origin_addr, int origin_count,
		  MPI_Datatype origin_datatype, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_datatype, MPIR_Win *win,
		  MPIDI_av_entry_t *addr, MPIR_Request **req_p)
{
	struct rma_op op = {
		.origin = (void *)origin_addr,
		.origin_count = origin_count,
		.origin_type = origin_datatype,
		.target_rank = target_rank,
		.target_disp = target_disp,
		.target_count = target_count,
		.target_type = target_datatype,
		.put = true,
	};
	int rc = rma(&op, win, addr, req_p);

	if (rc != BY_AM)
		return rc;
	return req_p ? MPIDIG_mpi_rput(origin_addr, origin_count,
				       origin_datatype, target_rank,
				       target_disp, target_count,
				       target_datatype, win, req_p)
		     : MPIDIG_mpi_put(origin_addr, origin_count,
				      origin_datatype, target_rank,
				      target_disp, target_count,
				      target_datatype, win);
}

int MPIDI_BIP_get(void *origin_addr, int origin_count,
		  MPI_Datatype origin_datatype, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_datatype, MPIR_Win *win,
		  MPIDI_av_entry_t *addr, MPIR_Request **req_p)
{
	struct rma_op op = {
		.origin = origin_addr,
		.origin_count = origin_count,
		.origin_type = origin_datatype,
		.target_rank = target_rank,
		.target_disp = target_disp,
		.target_count = target_count,
		.target_type = target_datatype,
	};
	int rc = rma(&op, win, addr, req_p);

	if (rc != BY_AM)
		return rc;
	return req_p ? MPIDIG_mpi_rget(origin_addr, origin_count,
				       origin_datatype, target_rank,
				       target_disp, target_count,
				       target_datatype, win, req_p)
		     : MPIDIG_mpi_get(origin_addr, origin_count,
				      origin_datatype, target_rank,
				      target_disp, target_count,
				      target_datatype, win);
}

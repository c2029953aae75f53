/*
 * bip_rma.c - MPI_Put and MPI_Get moved by the origin alone, as an RDMA NIC
 * moves them: when a window is created its ranks tell each other what they
 * expose (base, size, displacement unit); a put or get whose target BIP
 * reaches directly (bip_rma_reach: on this host, cross-memory attach
 * allowed) is then one bip_write or bip_read into or out of that window,
 * complete at return, with no action by the target.
 *
 * Everything else goes by MPIDIG's active messages: targets on other
 * hosts, this rank itself (MPIDIG copies locally), dynamic windows,
 * non-contiguous datatypes, accumulates, and window synchronization. That
 * mix is sound because MPIDIG's lock, lock_all, start and fence return
 * only once the target opened the epoch (granted the lock, posted, or
 * entered the fence's barrier), so a direct copy after them falls inside
 * it; and a direct copy is complete when it returns, so the flushes and
 * epoch ends, which wait for MPIDIG's own operations, owe it nothing.
 */
#include "mpidimpl.h"
#include "bip_state.h"

/* What rma() and direct_copy() return when the access must go by active
 * messages instead (MPI error codes are not negative). */
#define BY_AM (-1)

/* What a rank exposes; learned from it, so checked before use, never
 * dereferenced here (BIP hands the address to the kernel). */
struct MPIDI_BIP_win_target {
	uint64_t base;
	uint64_t size;
	int64_t disp_unit;
};

/* Every rank of the window tells the others what it exposes. */
static int win_exchange(MPIR_Win *win)
{
	MPIR_Comm *comm = win->comm_ptr;
	MPIR_Errflag_t errflag = MPIR_ERR_NONE;
	struct MPIDI_BIP_win_target *t;
	int mpi_errno = MPI_SUCCESS;

	t = MPL_malloc(sizeof(*t) * (size_t)comm->local_size, MPL_MEM_RMA);
	MPIR_ERR_CHKANDJUMP(!t, mpi_errno, MPI_ERR_OTHER, "**nomem");
	t[comm->rank] = (struct MPIDI_BIP_win_target){
		.base = (uint64_t)(uintptr_t)win->base,
		.size = (uint64_t)win->size,
		.disp_unit = win->disp_unit,
	};
	mpi_errno = MPIR_Allgather(MPI_IN_PLACE, sizeof(*t), MPI_BYTE, t,
				   sizeof(*t), MPI_BYTE, comm, &errflag);
	if (mpi_errno) {
		MPL_free(t);
		goto fn_fail;
	}
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
	MPL_free(win->dev.netmod.bip.targets);
	win->dev.netmod.bip.targets = NULL;
	return MPI_SUCCESS;
}

/* Where a contiguous access of len bytes at target_disp (and the type's
 * true lower bound) falls in the target's window, or -1 when it leaves it. */
static int64_t window_offset(const struct MPIDI_BIP_win_target *t,
			     MPI_Aint target_disp, MPI_Aint true_lb,
			     MPI_Aint len)
{
	int64_t off;

	if (__builtin_mul_overflow((int64_t)target_disp, t->disp_unit, &off) ||
	    __builtin_add_overflow(off, (int64_t)true_lb, &off) || off < 0 ||
	    (uint64_t)off > t->size || (uint64_t)len > t->size - (uint64_t)off)
		return -1;
	return off;
}

/* The copy itself, once the access is known to be contiguous both sides
 * and its target reachable: in an epoch, inside the window. */
static int direct_copy(void *origin, int node, int target_rank,
		       MPI_Aint target_disp, MPI_Aint true_lb, MPI_Aint len,
		       MPIR_Win *win, bool put)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	const struct MPIDI_BIP_win_target *t =
		&win->dev.netmod.bip.targets[target_rank];
	int mpi_errno = MPI_SUCCESS, rc;
	int64_t off;

	MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
	off = window_offset(t, target_disp, true_lb, len);
	MPIR_ERR_CHKANDJUMP(off < 0, mpi_errno, MPI_ERR_RMA_RANGE,
			    "**rmarange");
	rc = put ? bip_write(g->ep, node, t->base + (uint64_t)off, origin,
			     (size_t)len)
		 : bip_read(g->ep, node, origin, t->base + (uint64_t)off,
			    (size_t)len);
	/* Refused (cross-memory attach turned off since): BIP no longer
	 * reaches that rank, so this copy and the next go by messages. */
	if (rc == -BIP_EAGAIN)
		return BY_AM;
	if (rc == -BIP_EPEERGONE) {
		mpi_errno = MPIDI_BIP_proc_failed(node);
		goto fn_fail;
	}
	MPIR_ERR_CHKANDJUMP2(rc, mpi_errno, MPI_ERR_RMA_RANGE, "**biprma",
			     "**biprma %d %s", target_rank, bip_strerror(rc));
	g->cnt.rma_direct++;
fn_fail:
	return mpi_errno;
}

/* A put (put true) or get by the origin alone, complete at return, with
 * *req_p a completed request if req_p. */
static int rma(void *origin_addr, int origin_count,
	       MPI_Datatype origin_datatype, int target_rank,
	       MPI_Aint target_disp, int target_count,
	       MPI_Datatype target_datatype, MPIR_Win *win,
	       MPIDI_av_entry_t *addr, bool put, MPIR_Request **req_p)
{
	int mpi_errno, node = addr->netmod.bip.node;
	int o_contig, t_contig;
	MPI_Aint o_size, t_size, o_lb, t_lb;
	MPIR_Datatype *dt_ptr;

	if (!win->dev.netmod.bip.targets || target_rank == win->comm_ptr->rank)
		return BY_AM;
	MPIDI_Datatype_get_info(origin_count, origin_datatype, o_contig,
				o_size, dt_ptr, o_lb);
	MPIDI_Datatype_get_info(target_count, target_datatype, t_contig,
				t_size, dt_ptr, t_lb);
	if (!o_contig || !t_contig || !o_size || o_size != t_size ||
	    !bip_rma_reach(MPIDI_BIP_global.ep, node))
		return BY_AM;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	mpi_errno = direct_copy((char *)origin_addr + o_lb, node, target_rank,
				target_disp, t_lb, t_size, win, put);
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
	int rc = rma((void *)origin_addr, origin_count, origin_datatype,
		     target_rank, target_disp, target_count, target_datatype,
		     win, addr, true, req_p);

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
	int rc = rma(origin_addr, origin_count, origin_datatype, target_rank,
		     target_disp, target_count, target_datatype, win, addr,
		     false, req_p);

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

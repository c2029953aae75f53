/*
 * bip_init.c - the bip netmod's life cycle and the non-inline entry points:
 * open the BIP endpoint with the job's key, exchange business cards through
 * MPICH's PMI helpers, connect every peer, finalize; the communicator, window,
 * datatype and op hooks (nothing to do yet); windows and partitioned
 * communication through MPIDIG; dynamic processes refused with an error.
 */
#include "mpidimpl.h"
#include "mpidu_bc.h"
#include "bip_state.h"

static int bip_error(int rc, const char *what)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_OTHER, "**bipfail",
				    "**bipfail %s %s", what, bip_strerror(rc));
}

int MPIDI_BIP_init_local(int *tag_bits)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	struct bip_open_params params = {
		.node = MPIR_Process.rank,
		.nnodes = MPIR_Process.size,
		.job_key = bip_job_key(MPIR_pmi_job_id()),
	};
	struct bip_limits lim;
	int rc;

	memset(g, 0, sizeof(*g));
	rc = bip_open(&params, &g->ep);
	if (rc)
		return bip_error(rc, "bip_open");
	bip_limits(g->ep, &lim);
	g->ntags = (int)lim.long_tags;
	g->tag_owner = MPL_calloc((size_t)g->ntags, sizeof(*g->tag_owner),
				  MPL_MEM_BUFFER);
	if (!g->tag_owner)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**nomem", 0);
	/* MPI tags are matched by MPIDIG, not by BIP. */
	*tag_bits = MPIR_TAG_BITS_DEFAULT;
	return MPI_SUCCESS;
}

/* Every rank publishes its card; each then connects every other rank. */
int MPIDI_BIP_init_world(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	char card[BIP_CARD_MAX] = { 0 };
	char *table = NULL;
	int mpi_errno = MPI_SUCCESS, rc, unused;
	const size_t len = sizeof(card); /* fixed size: same_len below */
	int rank = MPIR_Process.rank, size = MPIR_Process.size;

	rc = bip_card(g->ep, card, sizeof(card));
	if (rc)
		return bip_error(rc, "bip_card");
	mpi_errno = MPIDU_bc_table_create(rank, size, MPIR_Process.node_map,
					  card, (int)len, TRUE, 0,
					  (void **)&table, &unused);
	MPIR_ERR_CHECK(mpi_errno);
	for (int i = 0; i < size; i++) {
		MPIDIU_get_av(0, i).netmod.bip.node = i;
		if (i == rank)
			continue;
		rc = bip_connect(g->ep, i, table + (size_t)i * len);
		if (rc) {
			mpi_errno = bip_error(rc, "bip_connect");
			break;
		}
	}
	MPIDU_bc_table_destroy();
fn_fail:
	return mpi_errno;
}

int MPIDI_BIP_post_init(void)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_finalize_hook(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	MPIR_Assert(!g->lsends && !g->rfifo_head);
	/* Control messages still queued must reach their peers first. */
	while (g->sfifo_head)
		MPIDI_BIP_progress(0, 0);
	bip_close(g->ep);
	MPL_free(g->tag_owner);
	g->ep = NULL;
	return MPI_SUCCESS;
}

int MPIDI_BIP_comm_set_hints(MPIR_Comm *comm_ptr, MPIR_Info *info)
{
	return MPI_SUCCESS;
}

/* --- dynamic processes: not supported over BIP yet ---------------------- */

static int no_dynamic(void)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_SPAWN, "**bipnodynamic",
				    0);
}

int MPIDI_BIP_get_local_upids(MPIR_Comm *comm, int **local_upid_size,
			      char **local_upids)
{
	return no_dynamic();
}

int MPIDI_BIP_upids_to_gpids(int size, int *remote_upid_size,
			     char *remote_upids, uint64_t *remote_gpids)
{
	return no_dynamic();
}

int MPIDI_BIP_dynamic_send(uint64_t remote_gpid, int tag, const void *buf,
			   int size, int timeout)
{
	return no_dynamic();
}

int MPIDI_BIP_dynamic_recv(int tag, void *buf, int size, int timeout)
{
	return no_dynamic();
}

/* --- hooks with nothing to do -------------------------------------------- */

int MPIDI_BIP_mpi_comm_commit_pre_hook(MPIR_Comm *comm)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_comm_commit_post_hook(MPIR_Comm *comm)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_comm_free_hook(MPIR_Comm *comm)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_create_hook(MPIR_Win *win)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_allocate_hook(MPIR_Win *win)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_allocate_shared_hook(MPIR_Win *win)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_win_create_dynamic_hook(MPIR_Win *win)
{
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
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_type_commit_hook(MPIR_Datatype *datatype_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_type_free_hook(MPIR_Datatype *datatype_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_op_commit_hook(MPIR_Op *op_p)
{
	return MPI_SUCCESS;
}

int MPIDI_BIP_mpi_op_free_hook(MPIR_Op *op_p)
{
	return MPI_SUCCESS;
}

/* --- windows, memory and partitioned communication: MPIDIG's ------------- */

int MPIDI_BIP_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
			     MPI_Datatype datatype, int rank, int tag,
			     MPIR_Comm *comm, MPIR_Info *info,
			     MPIDI_av_entry_t *av, MPIR_Request **req_p)
{
	return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, rank,
				     tag, comm, info, req_p);
}

int MPIDI_BIP_mpi_precv_init(void *buf, int partitions, MPI_Aint count,
			     MPI_Datatype datatype, int rank, int tag,
			     MPIR_Comm *comm, MPIR_Info *info,
			     MPIDI_av_entry_t *av, MPIR_Request **req_p)
{
	return MPIDIG_mpi_precv_init(buf, partitions, count, datatype, rank,
				     tag, comm, info, req_p);
}

void *MPIDI_BIP_mpi_alloc_mem(MPI_Aint size, MPIR_Info *info)
{
	return MPIDIG_mpi_alloc_mem(size, info);
}

int MPIDI_BIP_mpi_free_mem(void *ptr)
{
	return MPIDIG_mpi_free_mem(ptr);
}

int MPIDI_BIP_mpi_win_set_info(MPIR_Win *win, MPIR_Info *info)
{
	return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_BIP_mpi_win_get_info(MPIR_Win *win, MPIR_Info **info_p)
{
	return MPIDIG_mpi_win_get_info(win, info_p);
}

int MPIDI_BIP_mpi_win_free(MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_free(win_p);
}

int MPIDI_BIP_mpi_win_create(void *base, MPI_Aint length, int disp_unit,
			     MPIR_Info *info, MPIR_Comm *comm_ptr,
			     MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm_ptr,
				     win_p);
}

int MPIDI_BIP_mpi_win_attach(MPIR_Win *win, void *base, MPI_Aint size)
{
	return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_BIP_mpi_win_allocate_shared(MPI_Aint size, int disp_unit,
				      MPIR_Info *info, MPIR_Comm *comm_ptr,
				      void **baseptr_p, MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info, comm_ptr,
					      baseptr_p, win_p);
}

int MPIDI_BIP_mpi_win_detach(MPIR_Win *win, const void *base)
{
	return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_BIP_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info *info,
			       MPIR_Comm *comm, void *baseptr, MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_allocate(size, disp_unit, info, comm, baseptr,
				       win_p);
}

int MPIDI_BIP_mpi_win_create_dynamic(MPIR_Info *info, MPIR_Comm *comm,
				     MPIR_Win **win_p)
{
	return MPIDIG_mpi_win_create_dynamic(info, comm, win_p);
}

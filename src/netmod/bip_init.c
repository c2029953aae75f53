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

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_BIP
      description : Variables of the CH4 bip netmod (MPI over BIP)

cvars:
    - name        : MPIR_CVAR_CH4_BIP_PRINT_COUNTERS
      category    : CH4_BIP
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, every rank prints at MPI_Finalize what each protocol of the
        bip netmod did (short and three-way active messages, messages to
        itself, the largest depths of the send and receive FIFOs) and what
        BIP did underneath (packets, acknowledgements, NACKs, retransmissions,
        small-queue overflows).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

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

static void print_counters(const MPIDI_BIP_global_t *g)
{
	const MPIDI_BIP_counters_t *c = &g->cnt;
	struct bip_counters b;

	bip_get_counters(g->ep, &b);
	fprintf(stderr,
		"bip netmod rank %d: am short %llu, am three-way %llu, to self "
		"%llu, send FIFO max %u, receive FIFO max %u | BIP: packets "
		"%llu sent %llu received, acks %llu, NACKs %llu sent %llu "
		"received, retransmits %llu, small-queue overflows %llu\n",
		MPIR_Process.rank, (unsigned long long)c->am_short,
		(unsigned long long)c->am_3way, (unsigned long long)c->to_self,
		c->sfifo_max, c->rfifo_max,
		(unsigned long long)b.packets_sent,
		(unsigned long long)b.packets_received,
		(unsigned long long)b.acks_sent,
		(unsigned long long)b.nacks_sent,
		(unsigned long long)b.nacks_received,
		(unsigned long long)b.retransmits,
		(unsigned long long)b.small_overflows);
}

int MPIDI_BIP_mpi_finalize_hook(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	MPIR_Assert(!g->lsends && !g->rfifo_head);
	/* Control messages still queued must reach their peers first. */
	while (g->sfifo_head)
		MPIDI_BIP_progress(0, 0);
	if (MPIR_CVAR_CH4_BIP_PRINT_COUNTERS)
		print_counters(g);
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

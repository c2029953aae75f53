## The bip netmod inside MPICH's build (linked as src/mpid/ch4/netmod/bip).
if BUILD_CH4_NETMOD_BIP

noinst_HEADERS += src/mpid/ch4/netmod/bip/bip_pre.h \
	src/mpid/ch4/netmod/bip/bip_impl.h \
	src/mpid/ch4/netmod/bip/bip_state.h \
	src/mpid/ch4/netmod/bip/bip_ctl.h \
	src/mpid/ch4/netmod/bip/bip_handle.h \
	src/mpid/ch4/netmod/bip/bip_path.h \
	src/mpid/ch4/netmod/bip/netmod_inline.h

mpi_core_sources += src/mpid/ch4/netmod/bip/func_table.c \
	src/mpid/ch4/netmod/bip/bip_init.c \
	src/mpid/ch4/netmod/bip/bip_am.c \
	src/mpid/ch4/netmod/bip/bip_buf.c \
	src/mpid/ch4/netmod/bip/bip_ctl.c \
	src/mpid/ch4/netmod/bip/bip_handle.c \
	src/mpid/ch4/netmod/bip/bip_coll.c \
	src/mpid/ch4/netmod/bip/bip_credits.c \
	src/mpid/ch4/netmod/bip/bip_long.c \
	src/mpid/ch4/netmod/bip/bip_path.c \
	src/mpid/ch4/netmod/bip/bip_progress.c \
	src/mpid/ch4/netmod/bip/bip_rma.c \
	src/mpid/ch4/netmod/bip/bip_recv.c \
	src/mpid/ch4/netmod/bip/bip_send.c

errnames_txt_files += src/mpid/ch4/netmod/bip/errnames.txt

endif

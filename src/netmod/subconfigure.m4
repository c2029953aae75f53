[#] start of __file__
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

dnl The bip netmod: every message of MPI over the BIP layer (libbip).
AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for net in $ch4_netmods ; do
            if test "$net" = "bip" ; then
                build_ch4_netmod_bip=yes
                AC_DEFINE(HAVE_CH4_NETMOD_BIP,1,[bip netmod is built])
                if test "$build_ch4_locality_info" != "yes" ; then
                    AC_DEFINE(MPIDI_BUILD_CH4_LOCALITY_INFO, 1, [CH4 should build locality info])
                    build_ch4_locality_info="yes"
                fi
            fi
        done
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_BIP],[test "X$build_ch4_netmod_bip" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_BIP],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:bip])
    dnl libbip comes from bipmpi's own build: MPICHLIB_CPPFLAGS and LDFLAGS
    dnl point at it.
    AC_CHECK_HEADER([bip.h], [], [AC_MSG_ERROR([bip.h not found: configure MPICH through bipmpi's build])])
    AC_CHECK_LIB([bip], [bip_open], [], [AC_MSG_ERROR([libbip not found: configure MPICH through bipmpi's build])])
    PAC_APPEND_FLAG([-lbip], [WRAPPER_LIBS])
])dnl end AM_COND_IF(BUILD_CH4_NETMOD_BIP,...)
])dnl end _BODY

[#] end of __file__

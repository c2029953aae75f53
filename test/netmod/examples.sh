#!/bin/sh
# The MPI examples, in C and Fortran, built with the installed mpicc and
# mpifort and run over BIP with mpiexec -n 1, 2 and 4 (4 is more ranks than
# this machine's cores: the netmod must not busy-wait them to a crawl).
. "$top_srcdir/test/netmod/lib.sh"
ex="$top_srcdir/examples/mpi"
# The wrappers carry what a user's program needs, not the flags that built
# MPICH: our source tree's headers (src/bip, src/common: log.h, knob.h...)
# on a user's include path could shadow the user's own.
for w in "$MPICC" "$MPIFORT"; do
	case " $("$w" -show) " in
	*" -I$top_srcdir/src"*)
		echo "FAILED: $w -show puts the source tree on the include path"
		exit 1 ;;
	esac
done
run "$MPICC" -O2 -o "$W/hello" "$ex/hello.c"
run "$MPICC" -O2 -o "$W/cpi" "$ex/cpi.c" -lm
run "$MPICC" -O2 -o "$W/ring" "$ex/ring.c"
run "$MPICC" -O2 -o "$W/pingpong" "$ex/pingpong.c"
run "$MPIFORT" -o "$W/hello_f" "$ex/hello_f.f90"
run "$MPIFORT" -fallow-argument-mismatch -o "$W/cpi_f" "$ex/cpi_f.f"
for n in 1 2 4; do
	mpirun $n "$W/hello"
	[ "$(echo "$out" | grep -c '^hello from rank')" -eq $n ] ||
		{ echo "FAILED: $n greetings expected"; exit 1; }
	mpirun $n "$W/cpi"
	echo "$out" | grep -q "error [0-9.]*e-1[0-9]" ||
		{ echo "FAILED: pi is off"; exit 1; }
	mpirun $n "$W/ring" 3000000
	echo "$out" | grep -q "intact" || { echo "FAILED: ring"; exit 1; }
	mpirun $n "$W/hello_f"
	[ "$(echo "$out" | grep -c '^ *hello from rank')" -eq $n ] ||
		{ echo "FAILED: Fortran greetings"; exit 1; }
	mpirun $n "$W/cpi_f"
	echo "$out" | grep -q "Fortran 77" || { echo "FAILED: cpi_f"; exit 1; }
done
mpirun 2 "$W/pingpong" 4194304
[ "$(echo "$out" | grep -c '^[0-9]')" -eq 24 ] ||
	{ echo "FAILED: the ping-pong table is incomplete"; exit 1; }
# Each protocol can be seen to run: the counters printed at finalize. On
# one host the receiver reads a large message itself; where BIP lets no
# one read (BIP_SHM_PULL_MIN above it) the data goes in fragments.
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/ring" 3000000
for c in "rendezvous" "read by us"; do
	echo "$out" | grep -q "$c [1-9]" ||
		{ echo "FAILED: nothing counted as '$c'"; exit 1; }
done
BIP_SHM_PULL_MIN=16m MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/ring" 3000000
echo "$out" | grep -q "fragments [1-9]" ||
	{ echo "FAILED: nothing counted as 'fragments'"; exit 1; }
"$prefix/bin/mpivars" 2>/dev/null | grep -q MPIR_CVAR_CH4_BIP_PRINT_COUNTERS ||
	{ echo "FAILED: mpivars does not list the bip netmod's CVARs"; exit 1; }
# Every control variable of the netmod is documented, in the README's MPI
# knobs and in bipmpi(7).
for v in $("$prefix/bin/mpivars" 2>/dev/null |
	grep -o 'MPIR_CVAR_CH4_BIP_[A-Z0-9_]*' | sort -u); do
	for doc in "$top_srcdir/README" "$top_srcdir/man/bipmpi.7"; do
		grep -q "$v" "$doc" ||
			{ echo "FAILED: $v is not in $doc"; exit 1; }
	done
done
# MPI_Init ends with a barrier of the world, by messages (dissemination:
# two rounds on 4 ranks, a short message each), unless
# MPIR_CVAR_CH4_BIP_INIT_BARRIER=false.
shorts() {
	echo "$out" | sed -n 's/^bip netmod rank \([0-9]*\): short \([0-9]*\),.*/\1 \2/p' | sort -n
}
MPIR_CVAR_CH4_BIP_INIT_BARRIER=true MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 4 "$W/hello"
with=$(shorts)
MPIR_CVAR_CH4_BIP_INIT_BARRIER=false MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 4 "$W/hello"
without=$(shorts)
echo "short messages per rank, with the barrier:" $with "; without:" $without
d=$(printf '%s\n%s\n' "$with" "$without" | awk '
	{ n[$1]++; if (n[$1] == 1) { a[$1] = $2; ranks++ } else b[$1] = $2 }
	END { for (r in a) if (a[r] - b[r] != 2) bad = 1
	      print (ranks == 4 && !bad) ? "ok" : "bad" }')
[ "$d" = ok ] || { echo "FAILED: the MPI_Init barrier is not two short messages a rank, or MPIR_CVAR_CH4_BIP_INIT_BARRIER=false does not leave it out"; exit 1; }

# peers.sh - sourced by the MPI benchmark scripts, which set $prefix (our
# MPI's install prefix).
#
# build_parties DIR SRC [CFLAGS...] builds SRC with our MPI (DIR/ours)
# and with Debian's MPICH (DIR/mpich) and Open MPI (DIR/openmpi) where they
# are installed, and lists in $peers those it built.
build_parties() {
	d=$1 s=$2
	shift 2
	"$prefix/bin/mpicc" -O2 "$@" -o "$d/ours" "$s"
	peers=
	if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
	   mpicc.mpich -O2 "$@" -o "$d/mpich" "$s" 2>/dev/null; then
		peers=mpich
	else
		echo "# Debian's mpich and libmpich-dev are not installed: no MPICH"
	fi
	if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
	   mpicc.openmpi -O2 "$@" -o "$d/openmpi" "$s" 2>/dev/null; then
		peers="$peers openmpi"
	else
		echo "# Debian's openmpi-bin and libopenmpi-dev are not installed: no Open MPI"
	fi
}

# steal: the CPU time the hypervisor took from this machine so far, in
# ticks (/proc/stat; 0 where it is not kept). A run during which it grew
# was slowed by the host, not by its MPI: the rings, which need both
# processes running at once, ran 4 x slower in such runs.
steal() {
	awk '/^cpu / { v = $9 } END { print v + 0 }' /proc/stat 2>/dev/null ||
		echo 0
}

# run_party PARTY RANKS OUT PROGRAM [ARGS...]: one run of PROGRAM on RANKS
# ranks of this host under PARTY's launcher (ours, mpich or openmpi),
# bounded by TIMEOUT seconds (default 900), its output in OUT; a failure
# says so and leaves no OUT. Open MPI refuses more ranks than cores unless
# told (--oversubscribe, which also makes its ranks yield when idle).
run_party() {
	p=$1 n=$2 o=$3
	shift 3
	case $p in
	ours) set -- "$prefix/bin/mpiexec" -n "$n" "$@" ;;
	mpich) set -- mpiexec.mpich -n "$n" "$@" ;;
	openmpi) set -- mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" "$@" ;;
	esac
	e=$(dirname "$o")/stderr
	s0=$(steal)
	timeout "${TIMEOUT:-900}" "$@" >"$o" 2>"$e" || {
		echo "# $p on $n ranks: failed or over ${TIMEOUT:-900} s: $(tail -n 2 "$e" | tr '\n' ' ')"
		rm -f "$o"
		return 1
	}
	s1=$(steal)
	runs=$((${runs:-0} + 1))
	[ "$s1" -le "$s0" ] ||
		stolen=$((${stolen:-0} + 1)) ticks=$((${ticks:-0} + s1 - s0))
}

# run_rounds DIR RANKS ARGS...: ROUNDS rounds (default 5), each running
# every party (ours, then $peers) once in turn: DIR/PARTY on RANKS ranks
# with ARGS, its output in DIR/PARTY.ROUND, and, where the caller defines
# a function each_round, 'each_round DIR ROUND' after them (a floor
# measured beside the parties, round by round); then how many runs the
# host slowed (steal).
run_rounds() {
	d=$1 n=$2
	shift 2
	r=0 runs=0 stolen=0 ticks=0
	while [ $r -lt "${ROUNDS:-5}" ]; do
		for p in ours $peers; do
			run_party "$p" "$n" "$d/$p.$r" "$d/$p" "$@" || true
		done
		! command -v each_round >/dev/null || each_round "$d" "$r"
		r=$((r + 1))
	done
	echo "# the host took CPU time from this machine (steal) during $stolen of $runs runs ($ticks ticks of 1/$(getconf CLK_TCK) s)"
}

# med_rounds DIR WHO SIZE COLUMN: the median over WHO's rounds (files
# DIR/WHO.ROUND) of COLUMN in the row whose first field is SIZE.
med_rounds() {
	for f in "$1/$2".[0-9]*; do
		[ -f "$f" ] && awk -v n="$3" -v c="$4" '$1==n {print $c}' "$f"
	done | median
}

# med_first DIR WHO: the median over WHO's rounds of the time (the number
# before "us") on their "# first ..." line.
med_first() {
	for f in "$1/$2".[0-9]*; do
		[ -f "$f" ] && awk '$2 == "first" {
			for (i = 1; i < NF; i++) if ($(i + 1) == "us") print $i }' "$f"
	done | median
}

# median: the median of the numbers on stdin, nothing if none.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

#!/bin/sh
# mpich.sh - build MPICH 4.0.2 with the bip netmod, without committing any
# of MPICH: fetch the release source, verify it, unpack it in the build
# tree, link src/netmod in as src/mpid/ch4/netmod/bip, apply our patch to
# MPICH's build scripts, regenerate only what that needs (seconds, not a
# full autogen), configure, build and install next to libbip.
#
#   mpich.sh fetch|build|install  TOP_SRCDIR TOP_BUILDDIR PREFIX [SOURCE]
#
# SOURCE (configure --with-mpich-source): an mpich-4.0.2 tarball or an
# unpacked tree. Without it: Debian's source package (apt-get source; as
# root a deb-src entry is added for that when none exists), else a download.
# Every step leaves a stamp, so re-running redoes only what changed.
set -eu
step=$1 top=$(cd "$2" && pwd) bld=$(cd "$3" && pwd) prefix=$4 source=${5:-}
version=4.0.2
# Known good archives: Debian's orig tarball and the upstream release.
debian_sha256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
upstream_url=https://www.mpich.org/static/downloads/$version/mpich-$version.tar.gz
upstream_sha256=${MPICH_SHA256:-}

m=$bld/mpich
src=$m/mpich-$version
obj=$m/build
mkdir -p "$m"
say() { echo "mpich.sh: $*"; }
die() { echo "mpich.sh: error: $*" >&2; exit 1; }

verify() { # FILE SHA256...
	f=$1; shift
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	for ok in "$@"; do [ -n "$ok" ] && [ "$sum" = "$ok" ] && return 0; done
	die "$f: checksum $sum is not a known MPICH $version archive (set MPICH_SHA256 to accept another)"
}

fetch() { # -> prints the path of a verified archive, or of a tree
	if [ -n "$source" ]; then
		[ -e "$source" ] || die "--with-mpich-source: $source does not exist"
		if [ -d "$source" ]; then echo "$source"; return; fi
		verify "$source" "$debian_sha256" "$upstream_sha256"
		echo "$source"; return
	fi
	for f in "$m"/mpich_$version.orig.tar.xz "$m"/mpich-$version.tar.gz; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
	if command -v apt-get >/dev/null; then
		if [ "$(id -u)" = 0 ] && ! grep -rqs '^Types:.*deb-src\|^deb-src' \
			/etc/apt/sources.list /etc/apt/sources.list.d; then
			say "adding a deb-src entry for Debian's MPICH source" >&2
			printf '%s\n' 'Types: deb-src' \
				'URIs: http://deb.debian.org/debian' \
				'Suites: bookworm' 'Components: main' \
				'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
				>/etc/apt/sources.list.d/bipmpi-mpich-src.sources
			apt-get update -qq >&2 || true
		fi
		(cd "$m" && apt-get source --download-only -qq mpich=$version-3 >&2 ||
			apt-get source --download-only -qq mpich >&2) || true
		f=$m/mpich_$version.orig.tar.xz
		if [ -f "$f" ]; then verify "$f" "$debian_sha256"; echo "$f"; return; fi
	fi
	say "no Debian source package: downloading $upstream_url" >&2
	f=$m/mpich-$version.tar.gz
	if command -v curl >/dev/null; then curl -fsSL -o "$f" "$upstream_url" >&2 || rm -f "$f"
	elif command -v wget >/dev/null; then wget -q -O "$f" "$upstream_url" >&2 || rm -f "$f"; fi
	[ -f "$f" ] || die "cannot obtain MPICH $version: give --with-mpich-source=PATH"
	verify "$f" "$upstream_sha256"
	echo "$f"
}

# A tree prepared with another version of our patch is prepared again.
patch_sum=$(cksum <"$top/src/netmod/mpich_$version.patch")
prepare() {
	[ "$(cat "$m/prepared" 2>/dev/null)" = "$patch_sum" ] && return
	rm -f "$m/regenerated" "$m/cvars" "$m/configured" "$m/tuned"
	rm -rf "$src"
	a=$(fetch)
	if [ -d "$a" ]; then
		say "copying the tree $a"
		cp -a "$a" "$src"
	else
		say "unpacking $a"
		tar -xf "$a" -C "$m"
	fi
	[ -f "$src/maint/gen_ch4_api.py" ] || die "$src is not an MPICH $version tree"
	ln -sfn "$top/src/netmod" "$src/src/mpid/ch4/netmod/bip"
	(cd "$src" && patch -p1 -s <"$top/src/netmod/mpich_$version.patch")
	echo "$patch_sum" >"$m/prepared"
}

# Regenerate the netmod tables, configure and Makefile.in - again whenever
# the netmod's build files (its source list, its configure part) change.
regen() {
	files=$(cat "$top/src/netmod/Makefile.mk" "$top/src/netmod/subconfigure.m4" | cksum)
	[ "$files" = "$(cat "$m/regenerated" 2>/dev/null)" ] && return
	say "regenerating the netmod tables and configure (seconds)"
	(cd "$src" && python3 maint/gen_ch4_api.py && ./maint/gen_subcfg_m4 &&
		aclocal -I confdb && autoconf && autoheader && automake) \
		>"$m/regen.log" 2>&1 || { cat "$m/regen.log" >&2; die "regeneration failed"; }
	echo "$files" >"$m/regenerated"
}

# The netmod's CVARs (MPIR_CVAR_CH4_BIP_*) are declared in comment blocks
# that MPICH's extractcvars turns into mpir_cvars.[ch]. Rerun it only when
# those blocks change: its output is included everywhere in MPICH.
cvars() {
	blocks=$(cat "$top"/src/netmod/*.c | sed -n '/BEGIN_MPI_T_CVAR_INFO_BLOCK/,/END_MPI_T_CVAR_INFO_BLOCK/p' | cksum)
	[ "$blocks" = "$(cat "$m/cvars" 2>/dev/null)" ] && return
	say "extracting MPICH's CVARs (the netmod's changed)"
	# The release's extractcvars has its build machine's paths baked in:
	# make ours from the template.
	sed "s|@abs_srcdir@|$src/maint|g" "$src/maint/extractcvars.in" >"$m/extractcvars"
	(cd "$src" && perl "$m/extractcvars" --dirs="src/mpi src/mpi_t src/nameserv src/util src/binding src/include src/mpid src/pmi") \
		>"$m/cvars.log" 2>&1 || { cat "$m/cvars.log" >&2; die "extractcvars failed"; }
	echo "$blocks" >"$m/cvars"
}

# Our collective selection (coll_selection.json) grafted into MPICH's
# decision trees, which its build compiles into libmpi (only
# csel_json_autogen.c is rebuilt when they change).
tuning() {
	sum=$(cat "$top/src/netmod/coll_selection.json" "$top/src/netmod/coll_selection.py" | cksum)
	[ "$sum" = "$(cat "$m/tuned" 2>/dev/null)" ] && return
	say "putting bipmpi's collective selection into MPICH's"
	python3 "$top/src/netmod/coll_selection.py" "$top/src/netmod/coll_selection.json" "$src" ||
		die "coll_selection.py failed"
	(cd "$src" && ./maint/tuning/coll/json_gen.sh) >/dev/null || die "json_gen.sh failed"
	echo "$sum" >"$m/tuned"
}

configure_mpich() {
	cc=gcc cxx=g++ fc=gfortran
	if command -v ccache >/dev/null; then
		cc="ccache gcc" cxx="ccache g++" fc="ccache gfortran"
	fi
	# The netmod includes bip.h (the BIP API) and, from src/common, the
	# header-only card field readers: MPICHLIB_CPPFLAGS, which builds
	# MPICH, where CPPFLAGS would also go into mpicc and put our source
	# tree on every user's include path. gfortran 12 needs
	# -fallow-argument-mismatch for MPICH's F77 bindings.
	set -- --prefix="$prefix" \
		CC="$cc" CXX="$cxx" FC="$fc" F77="$fc" \
		MPICHLIB_CPPFLAGS="-I$top/src/bip -I$top/src/common" \
		LDFLAGS="-L$bld/.libs -Wl,-rpath,$prefix/lib" \
		FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch \
		--with-device=ch4:bip --with-ch4-shmmods=none \
		--with-hwloc=/usr --with-datatype-engine=dataloop \
		--disable-static --enable-fortran=all --disable-f08 \
		--with-pm=hydra ${MPICH_CONFIGURE_FLAGS:-}
	# A tree configured with other arguments is configured again.
	args=$(echo "$*" | cksum)
	[ "$(cat "$m/configured" 2>/dev/null)" = "$args" ] && return
	mkdir -p "$obj"
	say "configuring MPICH (ch4:bip) into $prefix"
	(cd "$obj" && LD_LIBRARY_PATH="$bld/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$src/configure" "$@") >"$m/configure.log" 2>&1 ||
		{ tail -30 "$m/configure.log" >&2; die "configure failed (see $m/configure.log)"; }
	echo "$args" >"$m/configured"
}

case $step in
fetch)
	a=$(fetch)
	say "MPICH $version source: $a"
	;;
build)
	prepare
	regen
	cvars
	tuning
	configure_mpich
	say "building MPICH (make -j$(nproc))"
	# Not our make's command-line variables (make check TESTS=...,
	# top_srcdir=...): they would override MPICH's own.
	env -u MAKEFLAGS -u MFLAGS make -C "$obj" -j"$(nproc)" >"$m/make.log" 2>&1 ||
		{ grep -B2 -A8 -m5 'error' "$m/make.log" >&2; die "build failed (see $m/make.log)"; }
	;;
install)
	env -u MAKEFLAGS -u MFLAGS make -C "$obj" install DESTDIR="${DESTDIR:-}" \
		>"$m/install.log" 2>&1 ||
		{ tail -20 "$m/install.log" >&2; die "install failed (see $m/install.log)"; }
	# The trees in force, for reading and as a start for one's own
	# (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE and
	# MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE; bipmpi(7)).
	d=${DESTDIR:-}$prefix/share/bipmpi
	mkdir -p "$d"
	cp "$src/maint/tuning/coll/mpir/generic.json" "$d/coll_mpir.json"
	cp "$src/maint/tuning/coll/ch4/generic.json" "$d/coll_ch4.json"
	;;
*)
	die "usage: mpich.sh fetch|build|install TOP_SRCDIR TOP_BUILDDIR PREFIX [SOURCE]"
	;;
esac

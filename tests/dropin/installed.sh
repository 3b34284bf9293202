#!/bin/sh
# The drop-in library as a user installs it: `cmake --install` into a fresh prefix, then
# checks that libcomm_mpi.so exports only the intercepted MPI functions (C and Fortran
# entry points) and those of libcomm_mpi.h, needs no libmpi_cxx, finds libcomm.so through RUNPATH $ORIGIN, and that a
# plain MPI program preloaded with it from there is intercepted and stays correct (PROGRAM:
# tests/dropin/conformance.c, run with --quick).
#   installed.sh BUILD_DIR PREFIX MPIEXEC PROGRAM [MPIEXEC_FLAGS...]
set -eu
build=$1 prefix=$2 mpiexec=$3 program=$4
shift 4
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(ls "$prefix"/lib*/libcomm_mpi.so)
exports=$(nm -D --defined-only "$lib" | awk '{print $3}')
# Exactly the names of exports.map's global section: none more (C++ internals), none
# missing (a misspelt entry point would silently not intercept).
map="$(dirname "$0")/../../libcomm_mpi/exports.map"
tmp=$(mktemp -d)
sed -n '/global:/,/local:/p' "$map" | sed 's,/\*.*\*/,,' | tr ';' '\n' | tr -d ' ' |
  grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u > "$tmp/listed"
printf '%s\n' "$exports" | grep -v -E '^libcomm_mpi_[a-z_]+$' | sort -u > "$tmp/exported"
unexpected=$(comm -13 "$tmp/listed" "$tmp/exported")
missing=$(comm -23 "$tmp/listed" "$tmp/exported")
rm -rf "$tmp"
[ -z "$unexpected" ] || { echo "installed.sh: libcomm_mpi.so exports more than it should:"; echo "$unexpected"; exit 1; }
[ -z "$missing" ] || { echo "installed.sh: exports.map names what libcomm_mpi.so does not export:"; echo "$missing"; exit 1; }
for f in MPI_Alltoall MPI_Ialltoall MPIX_Alltoall_init MPI_Wait mpi_waitall_ mpi_alltoall_ MPI_ALLTOALLV \
         mpi_allgather_f08_ libcomm_mpi_last_route libcomm_mpi_reload_environment; do
  printf '%s\n' "$exports" | grep -qx "$f" || { echo "installed.sh: $f is not exported"; exit 1; }
done
if readelf -d "$lib" | grep -q 'libmpi_cxx'; then echo "installed.sh: libcomm_mpi.so needs libmpi_cxx"; exit 1; fi
readelf -d "$lib" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || { echo "installed.sh: RUNPATH is not \$ORIGIN"; exit 1; }
# Copied on its own with libcomm.so to another directory, it still loads.
copy="$prefix/copy"
mkdir -p "$copy"
cp "$lib" "$prefix"/lib*/libcomm.so "$copy/"
"$mpiexec" "$@" -n 2 env LD_PRELOAD="$copy/libcomm_mpi.so" LIBCOMM_VERBOSE=1 "$program" --quick

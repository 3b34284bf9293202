#!/bin/sh
# The drop-in library as a user installs it: `cmake --install` into a fresh prefix, then
# checks that libcomm_mpi.so exports only the intercepted MPI functions (C and Fortran
# entry points) and those of libcomm_mpi.h, needs no libmpi_cxx, finds libcomm.so through RUNPATH $ORIGIN, and that a
# plain MPI program preloaded with it from there is intercepted and stays correct.
#   installed.sh BUILD_DIR PREFIX MPIEXEC PROGRAM [MPIEXEC_FLAGS...]
set -eu
build=$1 prefix=$2 mpiexec=$3 program=$4
shift 4
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(ls "$prefix"/lib*/libcomm_mpi.so)
exports=$(nm -D --defined-only "$lib" | awk '{print $3}')
unexpected=$(printf '%s\n' "$exports" |
  grep -v -E '^(MPI_(Alltoall|Alltoallv|Allgather|Allgatherv|Reduce_scatter|Reduce_scatter_block)|(mpi_(alltoall|alltoallv|allgather|allgatherv|reduce_scatter|reduce_scatter_block)(_|__|_f08_)?)|MPI_(ALLTOALL|ALLTOALLV|ALLGATHER|ALLGATHERV|REDUCE_SCATTER|REDUCE_SCATTER_BLOCK)|libcomm_mpi_[a-z_]+)$' || true)
[ -z "$unexpected" ] || { echo "installed.sh: libcomm_mpi.so exports more than it should:"; echo "$unexpected"; exit 1; }
for f in MPI_Alltoall MPI_Reduce_scatter_block mpi_alltoall_ MPI_ALLTOALLV mpi_allgather_f08_ \
         libcomm_mpi_last_route libcomm_mpi_reload_environment; do
  printf '%s\n' "$exports" | grep -qx "$f" || { echo "installed.sh: $f is not exported"; exit 1; }
done
if readelf -d "$lib" | grep -q 'libmpi_cxx'; then echo "installed.sh: libcomm_mpi.so needs libmpi_cxx"; exit 1; fi
readelf -d "$lib" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || { echo "installed.sh: RUNPATH is not \$ORIGIN"; exit 1; }
# Copied on its own with libcomm.so to another directory, it still loads.
copy="$prefix/copy"
mkdir -p "$copy"
cp "$lib" "$prefix"/lib*/libcomm.so "$copy/"
"$mpiexec" "$@" -n 2 env LD_PRELOAD="$copy/libcomm_mpi.so" LIBCOMM_VERBOSE=1 "$program" --quick

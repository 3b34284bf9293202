# Small helpers shared by the project's CMakeLists.

# -Wno-restrict: GCC 12 reports false -Wrestrict positives inside std::string (GCC bug 105329).
set(LIBCOMM_WARNINGS -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)

# The environment every MPI test runs in: root is allowed (CI runs as root) and more
# ranks than cores are allowed (the machine has 2 cores, tests use up to 9 ranks).
set(LIBCOMM_MPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_btl_vader_single_copy_mechanism=none")

# libcomm_add_mpi_test(NAME <name> TARGET <exe> RANKS <n...> [ARGS <args...>] [LABELS <l...>])
# registers one CTest test per rank count, named <name>.np<N>, run through mpiexec.
function(libcomm_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "RANKS;ARGS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  foreach(np IN LISTS T_RANKS)
    add_test(NAME ${T_NAME}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${T_NAME}.np${np} PROPERTIES
        ENVIRONMENT "${LIBCOMM_MPI_TEST_ENV}" TIMEOUT ${T_TIMEOUT} PROCESSORS 2
        LABELS "mpi;${T_LABELS}")
  endforeach()
endfunction()

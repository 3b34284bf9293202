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

# LIBCOMM_TIMEOUT_FACTOR (environment, read at configure time; a positive integer, default
# 1): every test's TIMEOUT is multiplied by it, for a machine slower or busier than the one
# the timeouts were set on. Tests set their timeouts with set_tests_properties (scaled by
# the wrapper below) or gtest_discover_tests (give it ${LIBCOMM_UNIT_TIMEOUT}, or a
# libcomm_timeout() result).
set(LIBCOMM_TIMEOUT_FACTOR "$ENV{LIBCOMM_TIMEOUT_FACTOR}")
if(LIBCOMM_TIMEOUT_FACTOR STREQUAL "")
  set(LIBCOMM_TIMEOUT_FACTOR 1)
elseif(NOT LIBCOMM_TIMEOUT_FACTOR MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "LIBCOMM_TIMEOUT_FACTOR='${LIBCOMM_TIMEOUT_FACTOR}' is not a positive integer")
endif()

# libcomm_timeout(<var> <seconds>): <var> = seconds x LIBCOMM_TIMEOUT_FACTOR.
function(libcomm_timeout var seconds)
  math(EXPR scaled "${seconds} * ${LIBCOMM_TIMEOUT_FACTOR}")
  set(${var} ${scaled} PARENT_SCOPE)
endfunction()
libcomm_timeout(LIBCOMM_UNIT_TIMEOUT 60)

# set_tests_properties with its TIMEOUT scaled. Each argument is passed on as one bracket
# argument, so values holding semicolons (ENVIRONMENT lists, regular expressions) arrive whole.
function(set_tests_properties)
  set(call "_set_tests_properties(")
  set(scale_next FALSE)
  math(EXPR last "${ARGC} - 1")
  foreach(k RANGE ${last})
    set(arg "${ARGV${k}}")
    if(scale_next)
      math(EXPR arg "${arg} * ${LIBCOMM_TIMEOUT_FACTOR}")
      set(scale_next FALSE)
    elseif(arg STREQUAL "TIMEOUT")
      set(scale_next TRUE)
    endif()
    string(APPEND call " [==[${arg}]==]")
  endforeach()
  string(APPEND call ")")
  cmake_language(EVAL CODE "${call}")
endfunction()

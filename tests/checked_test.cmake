# Tests that check a program's exit status and what it prints, through tests/expect.py.
# CTest's PASS_REGULAR_EXPRESSION ignores the exit status (a program that prints
# "validation: PASS" and then crashes passes), so no test here uses it on a program that
# can exit non-zero; tests/selftest proves that each function below fails a program that
# prints the expected text and then exits 1 or crashes.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(LIBCOMM_EXPECT ${CMAKE_CURRENT_LIST_DIR}/expect.py)

# Regular expressions are Python's (tests/expect.py). A semicolon would split the CMake
# list that carries them: write it as \\x3b, and an unmatched [ or ] as \\x5b or \\x5d.
#
# libcomm_add_checked_test(NAME <name> COMMAND <command...> [EXIT <status>]
#                          [EXPECT <regex...>] [FORBID <regex...>] [ERROR <program> <message regex>]
#                          [ENV <NAME=VALUE...>])
# The command must exit with EXIT (default 0; 2 with ERROR), its output must match every
# EXPECT and no FORBID, and with ERROR hold the whole line "<program>: error: <message>"
# and no other error line. ENV is set for the command only. Set the test's other
# properties (TIMEOUT, LABELS, ...) with set_tests_properties.
function(libcomm_add_checked_test)
  cmake_parse_arguments(T "" "NAME;EXIT" "COMMAND;EXPECT;FORBID;ERROR;ENV" ${ARGN})
  if(NOT T_NAME OR NOT T_COMMAND)
    message(FATAL_ERROR "libcomm_add_checked_test: NAME and COMMAND are required")
  endif()
  set(checks)
  if(DEFINED T_EXIT)
    list(APPEND checks --exit ${T_EXIT})
  endif()
  foreach(e IN LISTS T_EXPECT)
    list(APPEND checks --expect "${e}")
  endforeach()
  foreach(f IN LISTS T_FORBID)
    list(APPEND checks --forbid "${f}")
  endforeach()
  if(T_ERROR)
    list(LENGTH T_ERROR n)
    if(NOT n EQUAL 2)
      message(FATAL_ERROR "libcomm_add_checked_test(${T_NAME}): ERROR takes <program> <message regex>")
    endif()
    list(GET T_ERROR 0 program)
    list(GET T_ERROR 1 msg)
    list(APPEND checks --error-line ${program} "${msg}")
  endif()
  foreach(v IN LISTS T_ENV)
    list(APPEND checks --env "${v}")
  endforeach()
  if(NOT T_EXPECT AND NOT T_ERROR AND NOT DEFINED T_EXIT)
    message(FATAL_ERROR "libcomm_add_checked_test(${T_NAME}): give EXPECT, ERROR or EXIT: a test must assert something")
  endif()
  add_test(NAME ${T_NAME} COMMAND ${Python3_EXECUTABLE} ${LIBCOMM_EXPECT} ${checks} -- ${T_COMMAND})
endfunction()

# The checks of an app or serial test (its parsed T_EXPECT, T_FORBID, T_EXIT, T_ERROR with
# T_TARGET, T_ENV), as arguments of libcomm_add_checked_test, in the list `out`. A macro, so
# that it reads the calling function's arguments.
macro(_libcomm_forward_checks out)
  set(${out})
  if(T_EXPECT)
    list(APPEND ${out} EXPECT ${T_EXPECT})
  endif()
  if(T_FORBID)
    list(APPEND ${out} FORBID ${T_FORBID})
  endif()
  if(DEFINED T_EXIT)
    list(APPEND ${out} EXIT ${T_EXIT})
  endif()
  if(DEFINED T_ERROR)
    list(APPEND ${out} ERROR ${T_TARGET} "${T_ERROR}")
  endif()
  if(T_ENV)
    list(APPEND ${out} ENV ${T_ENV})
  endif()
endmacro()

# libcomm_add_app_test(NAME <name> TARGET <exe> RANKS <n...> [ARGS <args...>]
#                      [EXPECT <regex...>] [FORBID <regex...>] [ERROR <message regex>]
#                      [EXIT <status>] [ENV <NAME=VALUE...>] [TIMEOUT <s>])
# One test apps.<name>.np<N> per rank count: the program under mpiexec, which must exit 0
# (EXIT to say otherwise) and print every EXPECT; with ERROR it must exit 2 with the one
# line "<program>: error: <message>" (the program's name is the target's).
function(libcomm_add_app_test)
  cmake_parse_arguments(T "" "NAME;TARGET;EXIT;TIMEOUT" "RANKS;ARGS;EXPECT;FORBID;ERROR;ENV" ${ARGN})
  _libcomm_forward_checks(checks)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 240)
  endif()
  foreach(np IN LISTS T_RANKS)
    set(test apps.${T_NAME}.np${np})
    libcomm_add_checked_test(NAME ${test} ${checks}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${LIBCOMM_MPI_TEST_ENV}"
                         TIMEOUT ${T_TIMEOUT} PROCESSORS 2 LABELS apps)
  endforeach()
endfunction()

# libcomm_add_serial_test(NAME <name> TARGET <exe> [ARGS <args...>] [EXPECT <regex...>]
#                         [FORBID <regex...>] [ERROR <message regex>] [EXIT <status>]
#                         [ENV <NAME=VALUE...>] [TIMEOUT <s>] [LABELS <l...>])
# The same checks for a program that is not an MPI program (schedgen), run without mpiexec.
function(libcomm_add_serial_test)
  cmake_parse_arguments(T "" "NAME;TARGET;EXIT;TIMEOUT" "ARGS;EXPECT;FORBID;ERROR;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS apps)
  endif()
  _libcomm_forward_checks(checks)
  libcomm_add_checked_test(NAME ${T_NAME} COMMAND $<TARGET_FILE:${T_TARGET}> ${T_ARGS} ${checks})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
endfunction()

# libcomm_add_help_test(NAME <name> TARGET <exe> [MPI] OPTIONS <option...> [ARGS <more args>])
# <exe> --help exits 0 and lists every named option in its option table (a line of its own
# beginning with the option), under a usage line naming the program. MPI: run it under
# mpiexec (apps.<name>.np1), else alone (apps.<name>).
function(libcomm_add_help_test)
  cmake_parse_arguments(T "MPI" "NAME;TARGET" "OPTIONS;ARGS" ${ARGN})
  set(expect "Usage: [^\n]*${T_TARGET} \\[OPTIONS\\]" "\nOptions:\n")
  foreach(o IN LISTS T_OPTIONS)
    list(APPEND expect "\n  (-[a-zA-Z],)?${o}[ ,\n]")
  endforeach()
  if(T_MPI)
    libcomm_add_app_test(NAME ${T_NAME} TARGET ${T_TARGET} RANKS 1 ARGS --help ${T_ARGS} EXPECT ${expect}
                         TIMEOUT 60)
  else()
    libcomm_add_serial_test(NAME apps.${T_NAME} TARGET ${T_TARGET} ARGS --help ${T_ARGS} EXPECT ${expect})
  endif()
endfunction()

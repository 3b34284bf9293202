# tune writes a table at 2 ranks; commbench --algo auto, pointed at it by LIBCOMM_TUNING,
# must say it took that table's row (apps.tune.table_drives_auto).
# Runs tune at 2 ranks with the given arguments and reads the table it wrote into `table`.
function(tune_np2)
  execute_process(COMMAND ${MPIEXEC} -n 2 ${TUNE} ${ARGN} -o ${TABLE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tune ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
  file(READ ${TABLE} t)
  set(table "${t}" PARENT_SCOPE)
endfunction()

tune_np2(--ops alltoall --algo pairwise,bruck --sizes 8,64K --reps 1)
if(NOT table MATCHES "\nalltoall +2 +[0-9]+ +0 +[0-9inf]+ +(native|pairwise|bruck)")
  message(FATAL_ERROR "no alltoall row in ${TABLE}:\n${table}")
endif()
set(ENV{LIBCOMM_TUNING} ${TABLE})
execute_process(COMMAND ${MPIEXEC} -n 2 ${COMMBENCH} --algo auto --auto table --sizes 8,64K --reps 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" MATCHES "auto \\(table\\): (native|pairwise|bruck) from [^\n]*tune_np2.tune line [0-9]+")
  message(FATAL_ERROR "commbench did not take the tuned row (${rc}):\n${out}\n${err}")
endif()
message(STATUS "auto took the row tune wrote")

# alltoallv: tune writes rows of the shape and spread it measured.
tune_np2(--ops alltoallv --algo direct,two_stage --sizes 8,64K --reps 3)
string(REGEX MATCHALL "\nalltoallv +2 +[0-9]+ +[0-9]+ +[0-9inf]+ +(direct|two_stage) +spread=[0-9.]+" rows "${table}")
list(LENGTH rows nrows)
if(nrows EQUAL 0)
  message(FATAL_ERROR "no alltoallv row in ${TABLE}:\n${table}")
endif()
message(STATUS "alltoallv: ${nrows} row(s)")

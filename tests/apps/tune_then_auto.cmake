# tune writes a table at 2 ranks; commbench --algo auto, pointed at it by LIBCOMM_TUNING,
# must say it took that table's row (apps.tune.table_drives_auto).
execute_process(COMMAND ${MPIEXEC} -n 2 ${TUNE} --ops alltoall --algo pairwise,bruck --sizes 8,64K
                        --reps 1 -o ${TABLE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tune failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${TABLE} table)
if(NOT table MATCHES "\nalltoall +2 +[0-9]+ +0 +[0-9inf]+ +(native|pairwise|bruck)")
  message(FATAL_ERROR "no alltoall row in ${TABLE}:\n${table}")
endif()
set(ENV{LIBCOMM_TUNING} ${TABLE})
execute_process(COMMAND ${MPIEXEC} -n 2 ${COMMBENCH} --algo auto --sizes 8,64K --reps 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" MATCHES "auto: (native|pairwise|bruck) from [^\n]*tune_np2.tune line [0-9]+")
  message(FATAL_ERROR "commbench did not take the tuned row (${rc}):\n${out}\n${err}")
endif()
message(STATUS "auto took the row tune wrote")

# schedgen prints the same synchronisation counts whatever the threads and the search
# budget (apps.schedgen.same_plan_any_threads): trees of 1000-1500 machines on which the
# searches leave questions to the spread sweep, and a regular three-level tree.
function(plan_line out_var)
  execute_process(COMMAND ${SCHEDGEN} ${ARGN} --table-phases 0
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "validation: PASS")
    message(FATAL_ERROR "schedgen ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCH "synchronisation \\(section 5\\): [^\n]*" line "${out}")
  if(line STREQUAL "")
    message(FATAL_ERROR "schedgen ${ARGN}: no synchronisation line:\n${out}")
  endif()
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

foreach(tree "--random;1024;--switches;4;--chain;0" "--random;1500;--switches;6;--chain;0;--seed;3"
             "--random;1200;--switches;150;--chain;0.9;--seed;2" "--regular;8,8,16")
  plan_line(reference ${tree} --threads 1)
  foreach(variant "--threads;2" "--threads;3" "--threads;2;--search-budget;0" "--threads;1;--search-budget;16")
    plan_line(line ${tree} ${variant})
    if(NOT line STREQUAL reference)
      message(FATAL_ERROR "schedgen ${tree} ${variant}:\n  ${line}\nbut on one thread:\n  ${reference}")
    endif()
  endforeach()
  message(STATUS "${tree}: ${reference}")
endforeach()

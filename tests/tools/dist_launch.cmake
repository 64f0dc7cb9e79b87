# ctest helper for `tessel launch` (app/launch.h) under real mpirun: removes CHECKPOINT and METRICS, runs COMMAND
# (arguments separated by '|'; TESSEL_FAULT in the test's environment applies to the first run only), and requires
# exit status 0 when OK is set (non-zero otherwise) and every regex of EXPECT (separated by '|||') in the output. With
# RANKS_AFTER, METRICS must hold RESTARTS (default 1) restart lines naming just-in-time state, the last on RANKS_AFTER
# ranks, then a final line on them whose test accuracy is at least MIN_ACC, and the job must have ended within
# MAX_SECONDS.
file(REMOVE_RECURSE "${CHECKPOINT}")
file(REMOVE "${METRICS}")
include(${CMAKE_CURRENT_LIST_DIR}/metrics_final.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_expect.cmake)
run_expect(out seconds)
if(DEFINED RANKS_AFTER)
  if(NOT DEFINED RESTARTS)
    set(RESTARTS 1)
  endif()
  if(seconds GREATER MAX_SECONDS)
    message(FATAL_ERROR "the job took ${seconds} s, more than ${MAX_SECONDS} s")
  endif()
  file(STRINGS "${METRICS}" lines)
  set(restarts 0)
  foreach(line IN LISTS lines)
    string(JSON restart ERROR_VARIABLE none GET "${line}" restart)
    if(NOT none)
      math(EXPR restarts "${restarts} + 1")
      string(JSON jit GET "${line}" restart just_in_time)
      string(JSON restart_ranks GET "${line}" restart ranks)
      if(NOT jit)
        message(FATAL_ERROR "restart line ${line}: expected just-in-time state")
      endif()
    endif()
  endforeach()
  if(NOT restarts EQUAL RESTARTS OR NOT restart_ranks EQUAL RANKS_AFTER)
    message(FATAL_ERROR "${METRICS} has ${restarts} restart lines, the last on ${restart_ranks} ranks; expected "
                        "${RESTARTS}, the last on ${RANKS_AFTER}")
  endif()
  check_final_line("${lines}" ${RANKS_AFTER} ${MIN_ACC})
endif()

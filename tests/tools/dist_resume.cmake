# ctest helper: a checkpoint written by 4 ranks (`mpirun -np 4 ... train gcn --partitions P4 --epochs 2 --checkpoint`)
# resumed under mpirun on 3, 2 and 1 ranks to 4 epochs (a rank holds several parts: partition/merge_parts.h). Each
# resumed run must exit 0, its metrics file must start with a restart line (after epoch 2, checkpoint of 4 ranks, run
# on R) and end with a final line on R ranks whose test accuracy is at least MIN_ACC. MPIRUN, TRAIN (the train gcn
# command, '|'-separated), WORK.
string(REPLACE "|" ";" train "${TRAIN}")
file(REMOVE_RECURSE "${WORK}/resume4_ck")
include(${CMAKE_CURRENT_LIST_DIR}/metrics_final.cmake)
execute_process(COMMAND ${MPIRUN} -np 4 --oversubscribe ${train} --epochs 2 --checkpoint ${WORK}/resume4_ck
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the 4-rank run exited with ${status}:\n${out}${err}")
endif()
foreach(r 3 2 1)
  file(REMOVE_RECURSE "${WORK}/resume_on${r}_ck")
  file(REMOVE "${WORK}/resume_on${r}.jsonl")
  file(COPY "${WORK}/resume4_ck/" DESTINATION "${WORK}/resume_on${r}_ck")
  execute_process(COMMAND ${MPIRUN} -np ${r} --oversubscribe ${train} --epochs 4 --resume
                          --checkpoint ${WORK}/resume_on${r}_ck --metrics ${WORK}/resume_on${r}.jsonl
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  message("${r} rank(s):\n${out}${err}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the resume on ${r} rank(s) exited with ${status}")
  endif()
  file(STRINGS "${WORK}/resume_on${r}.jsonl" lines)
  list(GET lines 0 first)
  string(JSON after GET "${first}" restart after_epoch)
  string(JSON ranks GET "${first}" restart ranks)
  string(JSON written GET "${first}" restart checkpoint_ranks)
  if(NOT after EQUAL 2 OR NOT ranks EQUAL r OR NOT written EQUAL 4)
    message(FATAL_ERROR "restart line ${first}: expected after epoch 2, ${r} ranks, a checkpoint of 4")
  endif()
  check_final_line("${lines}" ${r} ${MIN_ACC})
endforeach()

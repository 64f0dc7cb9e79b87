# Shared by dist_launch.cmake and dist_resume.cmake: fails unless the last line of a --metrics file (the list
# `lines`, from file(STRINGS)) is the run's final line on `ranks` ranks with test accuracy at least `min_acc`.
function(check_final_line lines ranks min_acc)
  list(GET lines -1 last)
  string(JSON acc GET "${last}" final test accuracy)
  string(JSON got GET "${last}" final ranks)
  if(NOT got EQUAL ranks OR acc LESS min_acc)
    message(FATAL_ERROR "final line: ${got} ranks (expected ${ranks}), test accuracy ${acc} (at least ${min_acc})")
  endif()
endfunction()

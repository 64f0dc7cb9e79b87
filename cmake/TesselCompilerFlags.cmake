# Warning and sanitizer flags shared by every tessel target (through the tessel_flags interface library).
add_library(tessel_flags INTERFACE)
target_compile_options(tessel_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion>)
if(TESSEL_WERROR)
  target_compile_options(tessel_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(TESSEL_SANITIZE)
  target_compile_options(tessel_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(tessel_flags INTERFACE -fsanitize=address,undefined)
endif()
target_compile_options(tessel_flags INTERFACE $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-march=x86-64-v2>)

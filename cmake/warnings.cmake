# Project-wide warning flags for our own C++ targets (not for third-party headers).
function(eagerlm_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>)
endfunction()

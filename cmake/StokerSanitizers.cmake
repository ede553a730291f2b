# Sanitizer and fuzzing builds (docs/security.md, "Fuzzing and sanitizers").
#
#   -DSTOKER_SANITIZE=ON  ASan + UBSan on every target of ours (any compiler; scripts/test.sh
#                         builds the unit and integration tests this way in build-asan/).
#   -DSTOKER_FUZZ=ON      the libFuzzer targets of tests/fuzz (clang only; scripts/fuzz.sh
#                         configures build-fuzz/ this way): our code is compiled with libFuzzer's
#                         coverage and ASan + UBSan, and each target links libFuzzer's main.
#
# Both make every undefined-behaviour report fatal (-fno-sanitize-recover), so a finding fails
# the test or stops the fuzzer with the input that caused it. The system libraries (gRPC,
# protobuf, Abseil, OpenCV, codecs) are the prebuilt Debian ones, not instrumented.

option(STOKER_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(STOKER_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)

if(STOKER_SANITIZE OR STOKER_FUZZ)
  set(STOKER_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g1)
  add_compile_options(${STOKER_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()

if(STOKER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "STOKER_FUZZ needs clang (libFuzzer); configure with "
      "-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 (scripts/fuzz.sh does)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

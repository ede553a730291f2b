# Sanitizer and fuzzing builds (docs/fuzzing.md).
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
if(STOKER_SANITIZE)
  # -O1 (after the build type's -O3, so it wins): the sanitizer build is compiled from scratch in
  # CI, and ASan's instrumentation makes -O3 compiles of the test sources much slower for no
  # benefit to what the tests check. NDEBUG stays, as in build/.
  add_compile_options(-O1)
endif()

if(STOKER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "STOKER_FUZZ needs clang (libFuzzer); configure with "
      "-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 (scripts/fuzz.sh does)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# With STOKER_SANITIZE: the target `sanitized_tests` builds the test binaries of the labels
# scripts/test-sanitized.sh runs (unit, integration, fuzz), and nothing else. Called at the end
# of the top-level CMakeLists.txt, once every test is defined.
function(stoker_add_sanitized_tests_target)
  if(NOT STOKER_SANITIZE OR NOT STOKER_BUILD_TESTS)
    return()
  endif()
  set(targets)
  foreach(label unit integration fuzz)
    get_property(label_targets GLOBAL PROPERTY STOKER_TEST_TARGETS_${label})
    list(APPEND targets ${label_targets})
  endforeach()
  list(REMOVE_DUPLICATES targets)
  add_custom_target(sanitized_tests)
  add_dependencies(sanitized_tests ${targets})
endfunction()

# Helpers that give every target of ours the same warnings and layout.
#
#   stoker_cc_library(NAME name SRCS ... [HDRS ...] [DEPS ...] [PUBLIC_DEPS ...])
#   stoker_cc_binary(NAME name SRCS ... DEPS ... [NO_INSTALL])   NO_INSTALL: benchmarks and
#                                                    other binaries `cmake --install` leaves out
#   stoker_cc_test(NAME name SRCS ... DEPS ... [LABELS unit|integration|chaos|gpu])
#                                                    a binary with a skipped test (GTEST_SKIP)
#                                                    and no failure shows as skipped in CTest
#
# Our own code builds with -Wall -Wextra -Werror; headers resolve from the repository root
# ("common/clock.h") and generated protos from the build root ("stoker/v1/common.pb.h").

set(STOKER_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter)

function(stoker_apply_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${STOKER_WARNINGS}>)
  # Sources compiled in batches (STOKER_UNITY_BUILD, top-level CMakeLists.txt); a source with
  # flags of its own (the AVX2 and AVX-512 variants) is compiled alone.
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${STOKER_UNITY_BUILD})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/proto>)
endfunction()

function(stoker_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;HDRS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS} ${ARG_HDRS})
  stoker_apply_defaults(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
endfunction()

function(stoker_cc_binary)
  cmake_parse_arguments(ARG "NO_INSTALL" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  stoker_apply_defaults(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${ARG_NAME} RUNTIME DESTINATION bin COMPONENT runtime)
  endif()
endfunction()

function(stoker_cc_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(ARG_NAME IN_LIST STOKER_SANITIZED_TESTS)
    list(APPEND ARG_LABELS sanitized)
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  stoker_apply_defaults(${ARG_NAME})
  # A test's own code is glue around the libraries it tests, which keep the build type's -O3:
  # at -O0 it compiles in 55 % of the time (a fresh scripts/test.sh spends half its compile on
  # tests) and the suite runs as long (docs/decisions/0069-the-suite-compiles-less.md). The
  # sanitizer trees set their own levels.
  if(CMAKE_BUILD_TYPE STREQUAL "Release" AND NOT STOKER_SANITIZE AND NOT STOKER_FUZZ)
    target_compile_options(${ARG_NAME} PRIVATE -O0)
  endif()
  # stoker_gtest_main (tests/testing/gtest_main.cc) exits 77 when a test called GTEST_SKIP and
  # none failed: CTest then shows the binary as skipped, not passed.
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} stoker_gtest_main)
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    SKIP_RETURN_CODE 77)
  stoker_register_test_target(${ARG_NAME} ${ARG_LABELS})
endfunction()

# Remembers that test binary `target` runs tests with the given labels (the sanitizer build
# builds only the binaries of its labels: cmake/StokerSanitizers.cmake).
function(stoker_register_test_target target)
  foreach(label ${ARGN})
    set_property(GLOBAL APPEND PROPERTY STOKER_TEST_TARGETS_${label} ${target})
  endforeach()
endfunction()

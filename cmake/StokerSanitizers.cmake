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

# The tests the ASan + UBSan stage builds and runs (label `sanitized`; scripts/test-sanitized.sh),
# besides every fuzz corpus replay (tests/fuzz adds those): the code where memory and
# undefined-behaviour errors come from what a peer or a file controls, or from threads sharing
# buffers. The kernels' tests, the tools' and most integration scenarios run in build/ only:
# their inputs are shapes the pipeline checked, the decoders are replayed here through the
# decode_gate and jpeg_region corpora, and building them again would double the suite's compile
# time on a 2-core machine (docs/fuzzing.md, "Sanitizers").
set(STOKER_SANITIZED_TESTS
  # Parsers of untrusted bytes: shards, tars, manifests, batch wire, tokens, codecs, AWS files,
  # flags and JSON text.
  data_test wire_test plan_test payload_codec_test storage_unit_test common_test
  # The coordinator's state: Apply, the journal, and its service (its logic under hostile
  # requests: the fuzz_coordinator_rpc replay).
  cluster_state_test journal_test coordinator_server_test
  # Streams: the worker's session, reactor and wire encoder, end to end over gRPC, hostile peers.
  worker_test batch_wire_encoder_test worker_stream_test grpc_worker_stream_test compression_test
  limits_test
  # The loader: its threads, epochs, resume tokens.
  trainer_client_test client_threads_test resume_test end_to_end_test)
option(STOKER_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)

if(STOKER_SANITIZE OR STOKER_FUZZ)
  set(STOKER_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g1)
  add_compile_options(${STOKER_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()
if(STOKER_SANITIZE)
  # -O0 (after the build type's -O3, so it wins): the sanitizer build is compiled from scratch in
  # CI, and optimizing costs compile time the tests do not need: built cold on 2 cores the stage
  # took 15.2 min at -O0 against 18.7 min at -O1, and its tests ran 40 s against 36 s (issue 35).
  add_compile_options(-O0)
endif()

if(STOKER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "STOKER_FUZZ needs clang (libFuzzer); configure with "
      "-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 (scripts/fuzz.sh does)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# The target `sanitized_tests` builds the test binaries of the label `sanitized` (what
# scripts/test-sanitized.sh runs), and nothing else. Fails the configuration when a name of
# STOKER_SANITIZED_TESTS is no test (a renamed test must not drop out of the stage unnoticed).
# Called at the end of the top-level CMakeLists.txt, once every test is defined.
function(stoker_add_sanitized_tests_target)
  if(NOT STOKER_BUILD_TESTS)
    return()
  endif()
  get_property(targets GLOBAL PROPERTY STOKER_TEST_TARGETS_sanitized)
  foreach(name ${STOKER_SANITIZED_TESTS})
    if(NOT name IN_LIST targets)
      message(FATAL_ERROR "STOKER_SANITIZED_TESTS names ${name}, which is no test")
    endif()
  endforeach()
  if(STOKER_SANITIZE)
    add_custom_target(sanitized_tests)
    add_dependencies(sanitized_tests ${targets})
  endif()
endfunction()

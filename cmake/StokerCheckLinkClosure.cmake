# Test step: fails when the link closure in CLOSURE (written by stoker_write_link_closure) lacks
# the library REQUIRED (so that an empty or stale list cannot pass) or holds a test library:
# a name ending in _testing, a *_test_* helper, gtest or gmock.
#   cmake -DCLOSURE=FILE -DREQUIRED=stoker_client -P StokerCheckLinkClosure.cmake
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${CLOSURE} libraries)
if(NOT REQUIRED IN_LIST libraries)
  message(FATAL_ERROR "${CLOSURE}: ${REQUIRED} is not in the link closure; stale list?")
endif()
set(test_libraries)
foreach(library ${libraries})
  if(library MATCHES "_testing$|_test_|gtest|gmock")
    list(APPEND test_libraries ${library})
  endif()
endforeach()
if(test_libraries)
  message(FATAL_ERROR "${CLOSURE}: links test libraries: ${test_libraries}")
endif()
list(LENGTH libraries count)
message(STATUS "${count} libraries, none of them a test library")

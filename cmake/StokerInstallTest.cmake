# CTest script (see StokerPackage.cmake): `cmake --install` of every component into a scratch
# prefix installs what a deployment needs and nothing else: the tools in bin/ (no benchmarks),
# the client library, headers and CMake package, the Python module (importable from there);
# and every installed binary answers --help with exit code 0.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... [-DPYTHON=/usr/bin/python3] -P StokerInstallTest.cmake

foreach(var BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "StokerInstallTest.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${err}")
endif()

file(GLOB installed RELATIVE ${prefix}/bin ${prefix}/bin/*)
list(SORT installed)
set(expected stoker-bench-client stoker-coordinator stoker-ctl stoker-gen-images stoker-pack
  stoker-worker)
if(NOT installed STREQUAL expected)
  message(FATAL_ERROR "bin/ holds '${installed}', expected '${expected}'")
endif()
foreach(path lib/libstoker_client.a lib/libstoker_proto.a lib/libstoker_common.a
    include/stoker/trainer_client/loader.h include/stoker/v1/worker.pb.h
    lib/cmake/stoker/stokerConfig.cmake lib/cmake/stoker/stokerTargets.cmake
    share/stoker/proto/stoker/v1/worker.proto)
  if(NOT EXISTS ${prefix}/${path})
    message(FATAL_ERROR "cmake --install did not install ${path}")
  endif()
endforeach()

foreach(binary ${installed})
  execute_process(COMMAND ${prefix}/bin/${binary} --help
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "usage|Usage")
    message(FATAL_ERROR "${binary} --help exited ${rc}:\n${out}${err}")
  endif()
  message(STATUS "${binary} --help: exit 0")
endforeach()

if(PYTHON)
  file(GLOB module ${prefix}/lib/python3/dist-packages/stoker/_stoker*.so)
  if(NOT module)
    message(FATAL_ERROR "the Python module was not installed")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/lib/python3/dist-packages
      ${PYTHON} -c "import stoker, sys; sys.exit(0 if stoker.__file__.startswith('${prefix}') else 1)"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "import stoker from the install prefix failed (${rc}):\n${err}")
  endif()
  message(STATUS "import stoker from ${prefix}: ok")
endif()
file(REMOVE_RECURSE ${WORK_DIR})

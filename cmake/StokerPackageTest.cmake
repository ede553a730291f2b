# CTest script (see StokerPackage.cmake): install the client component into WORK_DIR/prefix, then
# configure, build and run examples/cpp_trainer standalone against it.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DCXX_COMPILER=...]
#         [-DLAUNCHER=ccache] -P StokerPackageTest.cmake

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "StokerPackageTest.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${step}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("install client component"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} --component client --prefix ${prefix})

set(configure_args -S ${SOURCE_DIR}/examples/cpp_trainer -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run("configure example against the package" ${CMAKE_COMMAND} ${configure_args})
run("build example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("run example --help" ${WORK_DIR}/build/stoker_cpp_trainer --help)
if(NOT last_output MATCHES "usage: stoker_cpp_trainer")
  message(FATAL_ERROR "unexpected --help output:\n${last_output}")
endif()

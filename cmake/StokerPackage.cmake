# Installs the trainer client as a CMake package, so that another project does
#   find_package(stoker CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE stoker::client)
#
# Exported targets (namespace stoker::): client (trainer_client), and what it links of ours:
# wire (the batch message as received), proto (generated messages and stubs), common and plan
# (linked privately: no installed header includes plan/). Other components' targets stay out.
# Everything is in the install component `client`:
#   cmake --install build --component client --prefix /opt/stoker
# Layout under the prefix:
#   lib/libstoker_{client,wire,proto,common,plan}.a
#   include/stoker/{trainer_client,wire,common}/*.h  include/stoker is on the include path, so
#                                                 #include "trainer_client/loader.h" as in-tree
#   include/stoker/v1/*.pb.h                      generated; include/ is on the include path
#   share/stoker/proto/stoker/v1/*.proto          the wire contract, for other languages
#   lib/cmake/stoker/stoker{Config,ConfigVersion,Targets}.cmake
# stokerConfig.cmake find_dependency()s Threads, absl, Protobuf, gRPC and prometheus-cpp: the
# consumer needs the same development packages (Debian: libgrpc++-dev, libprotobuf-dev,
# libabsl-dev, prometheus-cpp-dev).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STOKER_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
set(STOKER_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/stoker)

set_target_properties(stoker_proto PROPERTIES EXPORT_NAME proto)
set_target_properties(stoker_common PROPERTIES EXPORT_NAME common)
set_target_properties(stoker_payload_codec PROPERTIES EXPORT_NAME payload_codec)
set_target_properties(stoker_plan PROPERTIES EXPORT_NAME plan)
set_target_properties(stoker_tls PROPERTIES EXPORT_NAME tls)
set_target_properties(stoker_grpc_tls PROPERTIES EXPORT_NAME grpc_tls)
set_target_properties(stoker_coordinator_client PROPERTIES EXPORT_NAME coordinator_client)
set_target_properties(stoker_trace PROPERTIES EXPORT_NAME trace)
set_target_properties(stoker_trace_proto PROPERTIES EXPORT_NAME trace_proto)
set_target_properties(stoker_client_trace PROPERTIES EXPORT_NAME client_trace)
# stoker_cc_library only sets build-tree include directories; stoker_proto sets include/ itself.
foreach(target stoker_common stoker_tls stoker_grpc_tls stoker_coordinator_client stoker_wire
    stoker_client)
  target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:${STOKER_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS stoker_proto stoker_common stoker_payload_codec stoker_tls stoker_grpc_tls
  stoker_plan stoker_coordinator_client stoker_wire stoker_client stoker_trace stoker_trace_proto
  stoker_client_trace
  EXPORT stokerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT client
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT client)
install(EXPORT stokerTargets
  NAMESPACE stoker::
  DESTINATION ${STOKER_INSTALL_CMAKEDIR}
  COMPONENT client)

# Public headers of the client (none includes grpcpp) and the common ones they build on.
install(FILES
    trainer_client/batch.h
    trainer_client/loader.h
    trainer_client/loader_env.h
    trainer_client/loader_options.h
    trainer_client/worker_stream.h
  DESTINATION ${STOKER_INSTALL_INCLUDEDIR}/trainer_client
  COMPONENT client)
install(FILES wire/batch_payload.h wire/message_pool.h
  DESTINATION ${STOKER_INSTALL_INCLUDEDIR}/wire
  COMPONENT client)
install(FILES coordinator/coordinator_client.h
  DESTINATION ${STOKER_INSTALL_INCLUDEDIR}/coordinator
  COMPONENT client)
install(DIRECTORY common/
  DESTINATION ${STOKER_INSTALL_INCLUDEDIR}/common
  COMPONENT client
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/stoker/
  DESTINATION ${STOKER_INSTALL_INCLUDEDIR}
  COMPONENT client
  FILES_MATCHING PATTERN "*.pb.h")
install(DIRECTORY proto/stoker/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/stoker/proto/stoker
  COMPONENT client
  FILES_MATCHING PATTERN "*.proto")

configure_package_config_file(cmake/stokerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stokerConfig.cmake
  INSTALL_DESTINATION ${STOKER_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/stokerConfig.cmake ${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  DESTINATION ${STOKER_INSTALL_CMAKEDIR}
  COMPONENT client)

# Installs the client component into a scratch prefix in the build tree and builds
# examples/cpp_trainer standalone against it (find_package(stoker)), then runs it with --help.
if(STOKER_BUILD_TESTS AND STOKER_BUILD_EXAMPLES)
  add_test(NAME client_package_test
    COMMAND ${CMAKE_COMMAND}
      -DBUILD_DIR=${PROJECT_BINARY_DIR}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DWORK_DIR=${PROJECT_BINARY_DIR}/client_package_test
      "-DGENERATOR=${CMAKE_GENERATOR}"
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DLAUNCHER=${CCACHE_PROGRAM}
      -P ${PROJECT_SOURCE_DIR}/cmake/StokerPackageTest.cmake)
  set_tests_properties(client_package_test PROPERTIES LABELS integration TIMEOUT 300)
endif()

# cmake --install of every component: the deployment's binaries (no benchmarks), library,
# headers, CMake package and Python module; every binary's --help exits 0.
if(STOKER_BUILD_TESTS)
  set(install_test_python)
  if(TARGET stoker_python)
    set(install_test_python -DPYTHON=${STOKER_PYTHON_EXECUTABLE})
  endif()
  add_test(NAME install_layout_test
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
      -DWORK_DIR=${PROJECT_BINARY_DIR}/install_layout_test ${install_test_python}
      -P ${PROJECT_SOURCE_DIR}/cmake/StokerInstallTest.cmake)
  set_tests_properties(install_layout_test PROPERTIES LABELS integration TIMEOUT 300)
endif()

#ifndef STOKER_COORDINATOR_HEALTH_CHECK_FOR_TEST_H_
#define STOKER_COORDINATOR_HEALTH_CHECK_FOR_TEST_H_

// grpc.health.v1.Health/Check with a hand-encoded request: Debian ships no generated health
// proto. HealthCheckRequest{service} is field 1 as a string (nothing on the wire for ""); the
// response is HealthCheckResponse{status}: field 1 as a varint, so bytes 08 01 for SERVING,
// 08 02 for NOT_SERVING.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/notification.h"

namespace stoker {

inline const std::string kHealthServing("\x08\x01", 2);
inline const std::string kHealthNotServing("\x08\x02", 2);

// The response's bytes for `service` ("": the whole server; names shorter than 128 bytes).
inline std::string CheckHealth(const std::string& address, const std::string& service = "") {
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  std::string encoded;
  if (!service.empty())
    encoded = std::string("\x0a", 1) + static_cast<char>(service.size()) + service;
  grpc::Slice slice(encoded);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& part : slices) {
    bytes.append(reinterpret_cast<const char*>(part.begin()), part.size());
  }
  return bytes;
}

}  // namespace stoker

#endif  // STOKER_COORDINATOR_HEALTH_CHECK_FOR_TEST_H_

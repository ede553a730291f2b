// The one HTTP status mapping (data/http_status.h): every row of its table, and Retry-After.

#include "data/http_status.h"

#include "common/retry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::Optional;

TEST(HttpStatusCodeTest, EveryRowOfTheTable) {
  using C = absl::StatusCode;
  EXPECT_EQ(HttpStatusCode(200), C::kOk);
  EXPECT_EQ(HttpStatusCode(206), C::kOk);
  EXPECT_EQ(HttpStatusCode(404), C::kNotFound);
  EXPECT_EQ(HttpStatusCode(410), C::kNotFound);
  EXPECT_EQ(HttpStatusCode(401), C::kPermissionDenied);
  EXPECT_EQ(HttpStatusCode(403), C::kPermissionDenied);
  EXPECT_EQ(HttpStatusCode(416), C::kOutOfRange);
  EXPECT_EQ(HttpStatusCode(408), C::kUnavailable);
  EXPECT_EQ(HttpStatusCode(429), C::kUnavailable);
  EXPECT_EQ(HttpStatusCode(500), C::kUnavailable);
  EXPECT_EQ(HttpStatusCode(503), C::kUnavailable);
  EXPECT_EQ(HttpStatusCode(599), C::kUnavailable);
  EXPECT_EQ(HttpStatusCode(301), C::kPermissionDenied);
  EXPECT_EQ(HttpStatusCode(302), C::kPermissionDenied);
  EXPECT_EQ(HttpStatusCode(400), C::kFailedPrecondition);
  EXPECT_EQ(HttpStatusCode(405), C::kFailedPrecondition);
  EXPECT_EQ(HttpStatusCode(409), C::kFailedPrecondition);
  EXPECT_EQ(HttpStatusCode(100), C::kFailedPrecondition);
  EXPECT_EQ(HttpStatusCode(600), C::kFailedPrecondition);
}

HttpResponse ResponseWith(long status, const std::string& retry_after = "") {
  HttpResponse response;
  response.status = status;
  if (!retry_after.empty()) response.headers["retry-after"] = retry_after;
  return response;
}

TEST(HttpAnswerStatusTest, CarriesRetryAfterOnlyWhenRetried) {
  FakeClock clock;
  EXPECT_TRUE(HttpAnswerStatus(ResponseWith(200), "x", &clock).ok());
  const absl::Status throttled = HttpAnswerStatus(ResponseWith(429, "12"), "u: HTTP 429", &clock);
  EXPECT_EQ(throttled.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(throttled.message(), "u: HTTP 429");
  EXPECT_THAT(RetryAfterOf(throttled), Optional(absl::Seconds(12)));
  EXPECT_EQ(RetryAfterOf(HttpAnswerStatus(ResponseWith(503), "u", &clock)), std::nullopt);
  EXPECT_EQ(RetryAfterOf(HttpAnswerStatus(ResponseWith(503, "soon"), "u", &clock)), std::nullopt);
  // A 404 with Retry-After is not retried, so it carries no wait.
  const absl::Status missing = HttpAnswerStatus(ResponseWith(404, "5"), "u", &clock);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RetryAfterOf(missing), std::nullopt);
}

TEST(ParseRetryAfterTest, SecondsAndHttpDates) {
  const absl::Time now = absl::FromUnixSeconds(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_THAT(ParseRetryAfter("120", now), Optional(absl::Seconds(120)));
  EXPECT_THAT(ParseRetryAfter(" 0 ", now), Optional(absl::ZeroDuration()));
  EXPECT_THAT(ParseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now), Optional(absl::Seconds(30)));
  EXPECT_THAT(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now),
              Optional(absl::ZeroDuration()));
  EXPECT_EQ(ParseRetryAfter("-5", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("tomorrow", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now), std::nullopt);
}

}  // namespace
}  // namespace stoker

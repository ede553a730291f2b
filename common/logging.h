#ifndef STOKER_COMMON_LOGGING_H_
#define STOKER_COMMON_LOGGING_H_

// Minimal leveled logging to stderr (Debian's Abseil has no absl/log yet):
//   STOKER_LOG(INFO) << "worker " << id << " registered";
// One line per statement, written atomically, prefixed with level, time and file:line.
// Thread-safe.

#include <sstream>

namespace stoker {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped. Default kInfo; STOKER_LOG_LEVEL=debug|info|warning|error
// in the environment overrides it at start.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace stoker

#define STOKER_LOG_LEVEL_DEBUG ::stoker::LogLevel::kDebug
#define STOKER_LOG_LEVEL_INFO ::stoker::LogLevel::kInfo
#define STOKER_LOG_LEVEL_WARNING ::stoker::LogLevel::kWarning
#define STOKER_LOG_LEVEL_ERROR ::stoker::LogLevel::kError

#define STOKER_LOG(severity)                                              \
  if (STOKER_LOG_LEVEL_##severity < ::stoker::MinLogLevel()) {            \
  } else                                                                  \
    ::stoker::LogMessage(STOKER_LOG_LEVEL_##severity, __FILE__, __LINE__).stream()

#endif  // STOKER_COMMON_LOGGING_H_

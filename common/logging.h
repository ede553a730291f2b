#ifndef STOKER_COMMON_LOGGING_H_
#define STOKER_COMMON_LOGGING_H_

// Minimal leveled logging to stderr (Debian's Abseil has no absl/log yet):
//   STOKER_LOG(INFO) << "worker " << id << " registered";
// One line per statement, written atomically. Text lines are prefixed with level, time and
// file:line; with --log-format=json each line is a JSON object for log collectors:
//   {"time":"2026-11-23T04:40:00.123Z","level":"info","file":"worker.cc","line":88,"msg":"..."}
// Thread-safe.

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace stoker {

class FlagSet;  // common/flags.h

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
enum class LogFormat { kText, kJson };

void SetLogFormat(LogFormat format);

// One log line, newline included (what LogMessage writes).
std::string FormatLogLine(LogFormat format, LogLevel level, const char* file, int line,
                          const std::string& message, absl::Time time);

// The --log-format flag every binary has. Thread-compatible.
struct LogFlags {
  std::string format = "text";

  void AddTo(FlagSet* flags);
  // Sets the process's log format. INVALID_ARGUMENT naming --log-format for another value.
  absl::Status Apply() const;
};

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
  const char* file_;
  int line_;
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

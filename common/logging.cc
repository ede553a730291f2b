#include "common/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace stoker {
namespace {

LogLevel LevelFromEnvironment() {
  const char* env = std::getenv("STOKER_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  const std::string value(env);
  if (value == "debug") return LogLevel::kDebug;
  if (value == "warning") return LogLevel::kWarning;
  if (value == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<int>& MinLevel() {
  static std::atomic<int> level(static_cast<int>(LevelFromEnvironment()));
  return level;
}

const char* LevelLetter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "D";
    case LogLevel::kInfo: return "I";
    case LogLevel::kWarning: return "W";
    case LogLevel::kError: return "E";
  }
  return "?";
}

}  // namespace

void SetMinLogLevel(LogLevel level) { MinLevel().store(static_cast<int>(level)); }
LogLevel MinLogLevel() { return static_cast<LogLevel>(MinLevel().load()); }

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  const char* base = std::strrchr(file, '/');
  stream_ << LevelLetter(level_)
          << absl::FormatTime(" %H:%M:%E3S ", absl::Now(), absl::LocalTimeZone())
          << (base ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  const std::string line = stream_.str();
  // One fwrite per line keeps lines from different threads whole.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace stoker

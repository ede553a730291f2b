#include "common/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "common/json_text.h"

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

std::atomic<LogFormat> g_format{LogFormat::kText};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

const char* LevelLetter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "D";
    case LogLevel::kInfo:
      return "I";
    case LogLevel::kWarning:
      return "W";
    case LogLevel::kError:
      return "E";
  }
  return "?";
}

}  // namespace

void SetMinLogLevel(LogLevel level) { MinLevel().store(static_cast<int>(level)); }
LogLevel MinLogLevel() { return static_cast<LogLevel>(MinLevel().load()); }

void SetLogFormat(LogFormat format) { g_format.store(format); }

void LogFlags::AddTo(FlagSet* flags) {
  flags->Add("log-format", &format, "text, or json (one object a line, for log collectors)");
}

absl::Status LogFlags::Apply() const {
  if (format == "text") {
    SetLogFormat(LogFormat::kText);
  } else if (format == "json") {
    SetLogFormat(LogFormat::kJson);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-format: must be text or json, got \"", format, "\""));
  }
  return absl::OkStatus();
}

LogMessage::LogMessage(LogLevel level, const char* file, int line)
    : level_(level), file_(file), line_(line) {
  const char* base = std::strrchr(file, '/');
  file_ = base ? base + 1 : file;
}

std::string FormatLogLine(LogFormat format, LogLevel level, const char* file, int line,
                          const std::string& message, absl::Time time) {
  if (format == LogFormat::kJson) {
    return absl::StrCat("{\"time\":\"",
                        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone()),
                        "\",\"level\":\"", LevelName(level), "\",\"file\":", JsonQuoted(file),
                        ",\"line\":", line, ",\"msg\":", JsonQuoted(message), "}\n");
  }
  return absl::StrCat(LevelLetter(level),
                      absl::FormatTime(" %H:%M:%E3S ", time, absl::LocalTimeZone()), file, ":",
                      line, "] ", message, "\n");
}

LogMessage::~LogMessage() {
  // The wall time, not a Clock: a stamp for humans to line up with other logs, never a duration.
  const std::string line =
      FormatLogLine(g_format.load(), level_, file_, line_, stream_.str(), absl::Now());
  // One fwrite per line keeps lines from different threads whole.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace stoker

#ifndef STOKER_COMMON_FLAGS_H_
#define STOKER_COMMON_FLAGS_H_

// Command-line flags for main.cc files. Accepts --name=value and --name value, --flag / --noflag
// for booleans, and --help. An unknown flag, a missing value or a value that does not parse ends
// the program with exit code 2 and a message naming the flag.
//
// A duration flag takes a bare number in the flag's unit, so that a flag named after its unit
// keeps its meaning (`--lease-duration-ms=500` is 500 ms), or a number with a unit, taken as
// written (`--lease-duration-ms=1.5s`, `250us`, `1m30s`: absl::ParseDuration's syntax).
//
//   FlagSet flags("stoker-worker", "Runs a worker.");
//   flags.Add("port", &config.port, "Port to listen on (0 = any free port)");
//   if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
//
// Not thread-safe; use from main only.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace stoker {

inline constexpr int kExitBadFlags = 2;

class FlagSet {
 public:
  FlagSet(std::string program, std::string summary);

  void Add(const std::string& name, std::string* target, const std::string& help);
  // Repeatable: every occurrence appends its value.
  void Add(const std::string& name, std::vector<std::string>* target, const std::string& help);
  void Add(const std::string& name, int64_t* target, const std::string& help);
  void Add(const std::string& name, uint32_t* target, const std::string& help);
  void Add(const std::string& name, uint64_t* target, const std::string& help);
  void Add(const std::string& name, double* target, const std::string& help);
  void Add(const std::string& name, bool* target, const std::string& help);
  // A duration: a bare number is in `unit`, a number with a unit is taken as written (above).
  // Negative and infinite values are refused. REQUIRES: `unit` is 1ns, 1us, 1ms, 1s, 1m or 1h.
  void Add(const std::string& name, absl::Duration* target, absl::Duration unit,
           const std::string& help);

  // nullopt: carry on. Otherwise the process should exit with the returned code (0 after
  // --help, kExitBadFlags after an error, both already printed). Positional arguments are errors;
  // so is a flag name added twice (kExitBadFlags even for --help: a bug of the program).
  std::optional<int> Parse(int argc, char** argv);

  std::string Usage() const;

  // Config validation messages start with the config field ("rpc_timeout: must be > 0"); a
  // command-line user should see the flag instead. Fail() rewrites `field` to `--flag`.
  void MapField(const std::string& field, const std::string& flag);

  // Prints "<program>: <status message>" (fields mapped to flags) and returns kExitBadFlags: for
  // config validation errors found after parsing.
  int Fail(const absl::Status& status) const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_value;
    bool is_bool = false;
    std::function<absl::Status(const std::string&)> set;
  };
  void AddFlag(Flag flag);
  absl::Status ParseArgs(const std::vector<std::string>& args, bool* help);
  const Flag* Find(const std::string& name) const;

  std::string program_;
  std::string summary_;
  std::vector<Flag> flags_;
  std::string duplicate_;  // The first flag name added twice, if any.
  std::vector<std::pair<std::string, std::string>> field_to_flag_;
};

}  // namespace stoker

#endif  // STOKER_COMMON_FLAGS_H_

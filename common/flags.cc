#include "common/flags.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

template <typename T>
std::function<absl::Status(const std::string&)> NumberSetter(const std::string& name, T* target) {
  return [name, target](const std::string& value) {
    T parsed;
    if (!absl::SimpleAtoi(value, &parsed)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": '", value, "' is not a valid integer in range"));
    }
    *target = parsed;
    return absl::OkStatus();
  };
}

// The suffix absl::ParseDuration reads for `unit`.
const char* UnitSuffix(absl::Duration unit) {
  if (unit == absl::Nanoseconds(1)) return "ns";
  if (unit == absl::Microseconds(1)) return "us";
  if (unit == absl::Milliseconds(1)) return "ms";
  if (unit == absl::Seconds(1)) return "s";
  if (unit == absl::Minutes(1)) return "m";
  return "h";
}

// `value` as a duration: a bare number in `unit`, or a number with its own unit.
std::optional<absl::Duration> ParseFlagDuration(const std::string& value, absl::Duration unit) {
  double number;
  if (absl::SimpleAtod(value, &number)) {
    if (!std::isfinite(number)) return std::nullopt;
    return unit * number;
  }
  absl::Duration parsed;
  if (!absl::ParseDuration(value, &parsed)) return std::nullopt;
  return parsed;
}

}  // namespace

FlagSet::FlagSet(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void FlagSet::AddFlag(Flag flag) {
  // Two flags of one name would silently share it (the second one never set): a bug of the
  // program, reported by every Parse, --help included, so that any run of the binary shows it.
  if (Find(flag.name) != nullptr && duplicate_.empty()) duplicate_ = flag.name;
  flags_.push_back(std::move(flag));
}

void FlagSet::Add(const std::string& name, std::string* target, const std::string& help) {
  AddFlag({name, help, "\"" + *target + "\"", false, [target](const std::string& value) {
             *target = value;
             return absl::OkStatus();
           }});
}

void FlagSet::Add(const std::string& name, std::vector<std::string>* target,
                  const std::string& help) {
  AddFlag({name, help + " (repeatable)", "none", false, [target](const std::string& value) {
             target->push_back(value);
             return absl::OkStatus();
           }});
}

void FlagSet::Add(const std::string& name, int64_t* target, const std::string& help) {
  AddFlag({name, help, absl::StrCat(*target), false, NumberSetter(name, target)});
}

void FlagSet::Add(const std::string& name, uint32_t* target, const std::string& help) {
  AddFlag({name, help, absl::StrCat(*target), false, NumberSetter(name, target)});
}

void FlagSet::Add(const std::string& name, uint64_t* target, const std::string& help) {
  AddFlag({name, help, absl::StrCat(*target), false, NumberSetter(name, target)});
}

void FlagSet::Add(const std::string& name, double* target, const std::string& help) {
  AddFlag({name, help, absl::StrCat(*target), false, [name, target](const std::string& value) {
             double parsed;
             if (!absl::SimpleAtod(value, &parsed)) {
               return absl::InvalidArgumentError(
                   absl::StrCat("--", name, ": '", value, "' is not a number"));
             }
             *target = parsed;
             return absl::OkStatus();
           }});
}

void FlagSet::Add(const std::string& name, bool* target, const std::string& help) {
  AddFlag({name, help, *target ? "true" : "false", true, [name, target](const std::string& value) {
             bool parsed;
             if (!absl::SimpleAtob(value, &parsed)) {
               return absl::InvalidArgumentError(
                   absl::StrCat("--", name, ": '", value, "' is not true or false"));
             }
             *target = parsed;
             return absl::OkStatus();
           }});
}

void FlagSet::Add(const std::string& name, absl::Duration* target, absl::Duration unit,
                  const std::string& help) {
  const std::string suffix = UnitSuffix(unit);
  const std::string forms = absl::StrCat("a number of ", suffix, ", or with a unit: 1.5s, 250ms");
  AddFlag({name, absl::StrCat(help, " (", forms, ")"),
           absl::StrCat(absl::FDivDuration(*target, unit)), false,
           [name, target, unit, forms](const std::string& value) {
             const std::optional<absl::Duration> parsed = ParseFlagDuration(value, unit);
             if (!parsed || *parsed == absl::InfiniteDuration() ||
                 *parsed == -absl::InfiniteDuration()) {
               return absl::InvalidArgumentError(
                   absl::StrCat("--", name, ": '", value, "' is not a duration (", forms, ")"));
             }
             if (*parsed < absl::ZeroDuration()) {
               return absl::InvalidArgumentError(
                   absl::StrCat("--", name, ": '", value, "' is negative"));
             }
             *target = *parsed;
             return absl::OkStatus();
           }});
}

const FlagSet::Flag* FlagSet::Find(const std::string& name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::ParseArgs(const std::vector<std::string>& args, bool* help) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "help" || name == "h") {
      *help = true;
      return absl::OkStatus();
    }
    const Flag* flag = Find(name);
    if (flag == nullptr && !value && name.rfind("no", 0) == 0) {
      const Flag* negated = Find(name.substr(2));
      if (negated != nullptr && negated->is_bool) {
        flag = negated;
        value = "false";
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, ": unknown flag"));
    }
    if (!value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("--", name, ": missing value"));
      }
    }
    if (absl::Status status = flag->set(*value); !status.ok()) return status;
  }
  return absl::OkStatus();
}

std::optional<int> FlagSet::Parse(int argc, char** argv) {
  if (!duplicate_.empty()) {
    return Fail(absl::InternalError(
        absl::StrCat("--", duplicate_, " is defined twice (a bug of this program)")));
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = false;
  absl::Status status = ParseArgs(args, &help);
  if (help) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!status.ok()) return Fail(status);
  return std::nullopt;
}

void FlagSet::MapField(const std::string& field, const std::string& flag) {
  field_to_flag_.emplace_back(field, flag);
}

int FlagSet::Fail(const absl::Status& status) const {
  std::string message(status.message());
  for (const auto& [field, flag] : field_to_flag_) {
    const std::string prefix = field + ":";
    if (message.rfind(prefix, 0) == 0) {
      message = absl::StrCat("--", flag, ":", message.substr(prefix.size()));
      break;
    }
  }
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the flags.\n", program_.c_str(),
               message.c_str(), program_.c_str());
  return kExitBadFlags;
}

std::string FlagSet::Usage() const {
  std::string out = absl::StrCat("Usage: ", program_, " [flags]\n", summary_, "\n\nFlags:\n");
  for (const Flag& flag : flags_) {
    absl::StrAppend(&out, "  --", flag.name, "  ", flag.help, " (default: ", flag.default_value,
                    ")\n");
  }
  return out;
}

}  // namespace stoker

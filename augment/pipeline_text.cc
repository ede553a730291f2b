#include "augment/pipeline_text.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "augment/batch_mix.h"
#include "augment/op_registry.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace stoker {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int kMaxRepeat = 1000;
constexpr int kMaxNesting = 8;  // Combinators inside combinators.

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsPunctuation(char c) {
  return c == ',' || c == '(' || c == ')' || c == '[' || c == ']' || c == '=' || c == '*';
}

// Recursive descent over the grammar in pipeline_text.h. Thread-compatible; one per parse.
class PipelineTextParser {
 public:
  explicit PipelineTextParser(std::string_view text) : text_(text) {}

  absl::StatusOr<stoker::v1::PipelineSpec> Parse() {
    stoker::v1::PipelineSpec spec;
    spec_ = &spec;
    SkipSpace();
    if (AtEnd()) return spec;
    while (true) {
      stoker::v1::Op op;
      int repeat = 1;
      RETURN_IF_ERROR(ParseOp(&op, &repeat));
      for (int i = 0; i < repeat; ++i) *spec.add_ops() = op;
      SkipSpace();
      if (AtEnd()) return spec;
      RETURN_IF_ERROR(Expect(','));
    }
  }

 private:
  // One op into *op, with its repeat count (0 for a batch-level op, which goes to
  // spec_->batch_mix instead).
  absl::Status ParseOp(stoker::v1::Op* op_out, int* repeat_out) {
    SkipSpace();
    const size_t column = pos_;
    ASSIGN_OR_RETURN(std::string name, ParseName("an op name"));
    if (const OpSchema* batch = FindBatchOpSchema(name); batch != nullptr) {
      if (depth_ > 0) {
        return Error(column, absl::StrCat(name, " is batch-level: it cannot be in an op list"));
      }
      *repeat_out = 0;
      return ParseBatchOp(*batch, column, spec_);
    }
    const OpSchema* schema = FindOpSchema(name);
    if (schema == nullptr) {
      return Error(column, absl::StrCat("unknown op '", name, "'; known ops: ", KnownOpNames(),
                                        ", and batch-level: ", KnownBatchOpNames()));
    }
    if (!batch_ops_.empty()) {
      return Error(column, absl::StrCat(name, " follows the batch-level op ", batch_ops_.back(),
                                        "; batch-level ops (mixup, cutmix) come last"));
    }
    stoker::v1::Op op;
    const FieldDescriptor* op_field = op.GetDescriptor()->FindFieldByName(schema->name);
    if (op_field == nullptr) {
      return absl::InternalError(absl::StrCat("op '", name, "' has no field in stoker.v1.Op"));
    }
    Message* args = op.GetReflection()->MutableMessage(&op, op_field);  // Sets the oneof.
    std::set<std::string> seen;
    RETURN_IF_ERROR(ParseArgs(*schema, args, &seen));
    int repeat = 1;
    SkipSpace();
    if (Peek() == '*') {
      ++pos_;
      SkipSpace();
      const size_t count_column = pos_;
      const std::string word = ParseWord();
      if (!absl::SimpleAtoi(word, &repeat) || repeat < 1 || repeat > kMaxRepeat) {
        return Error(count_column,
                     absl::StrCat("repeat count of ", name, " must be an integer in 1..",
                                  kMaxRepeat, ", got ", Shown(word)));
      }
    }
    *op_out = std::move(op);
    *repeat_out = repeat;
    return absl::OkStatus();
  }

  // A batch-level op (augment/batch_mix.h) fills spec->batch_mix: its arguments, then the
  // defaults of those not given; a field set by two batch ops is an error (num_classes only
  // when the two values differ).
  absl::Status ParseBatchOp(const OpSchema& schema, size_t column, stoker::v1::PipelineSpec* spec) {
    stoker::v1::BatchMixOp parsed;
    std::set<std::string> seen;
    RETURN_IF_ERROR(ParseArgs(schema, &parsed, &seen));
    const Reflection* reflection = parsed.GetReflection();
    for (const ArgSchema& arg : schema.args) {
      const FieldDescriptor* field =
          parsed.GetDescriptor()->FindFieldByName(BatchMixField(schema.name, arg.name));
      if (seen.count(arg.name) == 0) {
        if (arg.default_value.empty()) {
          return Error(column, absl::StrCat(schema.name, ".", arg.name, " is required"));
        }
        float value = 0;
        if (!absl::SimpleAtof(arg.default_value, &value)) {
          return absl::InternalError(absl::StrCat("bad default of ", schema.name, ".", arg.name));
        }
        reflection->SetFloat(&parsed, field, value);
      }
      stoker::v1::BatchMixOp* merged = spec->mutable_batch_mix();
      const bool same_classes =
          field->name() == "num_classes" && merged->num_classes() == parsed.num_classes();
      if (batch_fields_.count(field->name()) > 0 && !same_classes) {
        return Error(column, absl::StrCat(schema.name, ".", arg.name, ": batch_mix.", field->name(),
                                          " was already set by ", batch_fields_[field->name()]));
      }
      batch_fields_.emplace(field->name(), schema.name);
    }
    spec->mutable_batch_mix()->MergeFrom(parsed);
    batch_ops_.push_back(schema.name);
    return absl::OkStatus();
  }

  // The optional "(" [arg ("," arg)*] ")" after an op's name.
  absl::Status ParseArgs(const OpSchema& schema, Message* args, std::set<std::string>* seen) {
    SkipSpace();
    if (Peek() != '(') return absl::OkStatus();
    ++pos_;
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      RETURN_IF_ERROR(ParseArg(schema, args, seen));
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return absl::OkStatus();
      }
      RETURN_IF_ERROR(Expect(','));
    }
  }

  absl::Status ParseArg(const OpSchema& schema, Message* args, std::set<std::string>* seen) {
    SkipSpace();
    const size_t column = pos_;
    ASSIGN_OR_RETURN(std::string name, ParseName("an argument name"));
    const ArgSchema* arg = schema.FindArg(name);
    if (arg == nullptr) {
      const std::string known =
          schema.args.empty()
              ? std::string("it takes none")
              : absl::StrCat(
                    "its arguments: ",
                    absl::StrJoin(schema.args, ", ", [](std::string* out, const ArgSchema& a) {
                      out->append(a.name);
                    }));
      return Error(column, absl::StrCat(schema.name, " has no argument '", name, "'; ", known));
    }
    const std::string qualified = absl::StrCat(schema.name, ".", name);
    if (!seen->insert(name).second) return Error(column, absl::StrCat(qualified, " given twice"));
    const FieldDescriptor* field = args->GetDescriptor()->FindFieldByName(
        schema.op_case == stoker::v1::Op::OP_NOT_SET ? BatchMixField(schema.name, name) : name);
    if (field == nullptr) {
      return absl::InternalError(absl::StrCat(qualified, " has no field in the op's message"));
    }
    SkipSpace();
    RETURN_IF_ERROR(Expect('='));
    SkipSpace();
    if (arg->type == ArgType::kFloatList) return ParseList(qualified, args, field);
    if (arg->type == ArgType::kOpList) return ParseOpList(qualified, args, field);
    if (Peek() == '[') {
      return Error(pos_, absl::StrCat(qualified, ": expected a single ", ArgTypeName(arg->type),
                                      ", not a list"));
    }
    return ParseScalar(qualified, arg->type, args, field);
  }

  absl::Status ParseList(const std::string& qualified, Message* args,
                         const FieldDescriptor* field) {
    if (Peek() != '[') {
      return Error(pos_, absl::StrCat(qualified, ": expected a list like [1, 2, 3], got ",
                                      Shown(std::string(Rest(1)))));
    }
    ++pos_;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      SkipSpace();
      ASSIGN_OR_RETURN(float value, ParseFloat(qualified));
      args->GetReflection()->AddFloat(args, field, value);
      SkipSpace();
      if (Peek() == ']') {
        ++pos_;
        return absl::OkStatus();
      }
      RETURN_IF_ERROR(Expect(','));
    }
  }

  // "[" [op ("," op)*] "]", the ops of a combinator.
  absl::Status ParseOpList(const std::string& qualified, Message* args,
                           const FieldDescriptor* field) {
    if (Peek() != '[') {
      return Error(pos_, absl::StrCat(qualified,
                                      ": expected a list of ops like [invert, "
                                      "solarize(threshold=128)], got ",
                                      Shown(std::string(Rest(1)))));
    }
    if (++depth_ > kMaxNesting) {
      return Error(pos_, absl::StrCat(qualified, ": ops nested more than ", kMaxNesting, " deep"));
    }
    ++pos_;
    SkipSpace();
    if (Peek() != ']') {
      while (true) {
        stoker::v1::Op op;
        int repeat = 1;
        RETURN_IF_ERROR(ParseOp(&op, &repeat));
        for (int i = 0; i < repeat; ++i)
          args->GetReflection()->AddMessage(args, field)->CopyFrom(op);
        SkipSpace();
        if (Peek() == ']') break;
        RETURN_IF_ERROR(Expect(','));
      }
    }
    ++pos_;
    --depth_;
    return absl::OkStatus();
  }

  absl::Status ParseScalar(const std::string& qualified, ArgType type, Message* args,
                           const FieldDescriptor* field) {
    const Reflection* reflection = args->GetReflection();
    if (type == ArgType::kFloat) {
      ASSIGN_OR_RETURN(float value, ParseFloat(qualified));
      reflection->SetFloat(args, field, value);
      return absl::OkStatus();
    }
    const size_t column = pos_;
    const std::string word = ParseWord();
    int64_t value = 0;
    const bool is_unsigned = field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
    const int64_t lo = is_unsigned ? 0 : std::numeric_limits<int32_t>::min();
    const int64_t hi =
        is_unsigned ? std::numeric_limits<uint32_t>::max() : std::numeric_limits<int32_t>::max();
    if (!absl::SimpleAtoi(word, &value) || value < lo || value > hi) {
      return Error(column, absl::StrCat(qualified, ": expected an integer in ", lo, "..", hi,
                                        ", got ", Shown(word)));
    }
    if (is_unsigned) {
      reflection->SetUInt32(args, field, static_cast<uint32_t>(value));
    } else {
      reflection->SetInt32(args, field, static_cast<int32_t>(value));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<float> ParseFloat(const std::string& qualified) {
    const size_t column = pos_;
    const std::string word = ParseWord();
    float value = 0;
    if (!absl::SimpleAtof(word, &value) || !std::isfinite(value)) {
      return Error(column,
                   absl::StrCat(qualified, ": expected a finite number, got ", Shown(word)));
    }
    return value;
  }

  absl::StatusOr<std::string> ParseName(absl::string_view what) {
    if (AtEnd() || !IsNameStart(Peek())) {
      const std::string got = AtEnd() ? std::string() : std::string(1, Peek());
      return Error(pos_, absl::StrCat("expected ", what, ", got ", Shown(got)));
    }
    const size_t start = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // A maximal run of characters that are neither space nor punctuation (a number, or garbage
  // to quote in an error).
  std::string ParseWord() {
    const size_t start = pos_;
    while (!AtEnd() && !IsSpace(Peek()) && !IsPunctuation(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) {
      return Error(pos_, absl::StrCat("expected '", std::string(1, c), "', got ",
                                      Shown(std::string(Rest(1)))));
    }
    ++pos_;
    return absl::OkStatus();
  }

  static std::string Shown(const std::string& s) {
    return s.empty() ? std::string("end of text") : absl::StrCat("'", s, "'");
  }

  absl::Status Error(size_t column, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline text, column ", column + 1, ": ", message));
  }

  void SkipSpace() {
    while (!AtEnd() && IsSpace(Peek())) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  std::string_view Rest(size_t n) const { return text_.substr(pos_, n); }

  std::string_view text_;
  size_t pos_ = 0;
  stoker::v1::PipelineSpec* spec_ = nullptr;  // The spec Parse() fills.
  // Batch-level ops parsed so far, and which of them set each BatchMixOp field.
  std::vector<std::string> batch_ops_;
  std::map<std::string, std::string> batch_fields_;
  int depth_ = 0;  // Open op lists.
};

// Appends `text` word-wrapped to lines of at most `width` characters, each indented by `indent`.
void AppendWrapped(std::string_view text, size_t indent, size_t width, std::string* out) {
  size_t line_length = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (line_length > 0 && indent + line_length + 1 + word.size() > width) {
      out->append("\n");
      line_length = 0;
    }
    if (line_length == 0) {
      out->append(indent, ' ');
    } else {
      out->append(" ");
      ++line_length;
    }
    out->append(word.data(), word.size());
    line_length += word.size();
    pos = end + 1;
  }
  out->append("\n");
}

}  // namespace

absl::StatusOr<stoker::v1::PipelineSpec> ParsePipelineText(std::string_view text) {
  return PipelineTextParser(text).Parse();
}

std::string PipelineOpsHelp() {
  constexpr size_t kWidth = 96;
  std::string help =
      "Pipeline ops, comma-separated, each name(arg=value, ...) with an optional *N repeat;\n"
      "list values in brackets. Example:\n"
      "  to_float, gaussian_blur(ksize=11)*10, random_crop(height=200, width=200),\n"
      "  horizontal_flip(p=0.5), normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])\n"
      "The combinators take their ops as a bracketed op list:\n"
      "  random_apply(ops=[color_jitter(brightness=0.4), grayscale(channels=3)], p=0.8)\n";
  std::vector<const OpSchema*> schemas;
  for (const OpSchema& schema : OpSchemas()) schemas.push_back(&schema);
  for (const OpSchema& schema : BatchOpSchemas()) schemas.push_back(&schema);
  for (const OpSchema* schema_ptr : schemas) {
    const OpSchema& schema = *schema_ptr;
    help.append("\n");
    help.append(schema.name);
    if (!schema.args.empty()) {
      help.append("(");
      help.append(absl::StrJoin(schema.args, ", ", [](std::string* out, const ArgSchema& a) {
        out->append(a.default_value.empty() ? a.name : absl::StrCat(a.name, "=", a.default_value));
      }));
      help.append(")");
    }
    help.append("\n");
    AppendWrapped(schema.doc, 4, kWidth, &help);
    for (const ArgSchema& arg : schema.args) {
      AppendWrapped(
          absl::StrCat(
              arg.name, " (", ArgTypeName(arg.type), ", ",
              arg.default_value.empty() ? std::string("required") : "default " + arg.default_value,
              "): ", arg.doc, arg.range ? " Range: " + arg.range->Text() + "." : std::string()),
          6, kWidth, &help);
    }
  }
  return help;
}

}  // namespace stoker

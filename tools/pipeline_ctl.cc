#include "tools/pipeline_ctl.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "augment/op_docs.h"
#include "augment/pipeline_explain.h"
#include "augment/pipeline_text.h"
#include "common/flags.h"
#include "jobspec/job_spec_args.h"

namespace stoker {
namespace {

constexpr char kPipelineUsage[] =
    "usage: stoker-ctl pipeline explain \"<pipeline text>\" [--input=HxWxC] [--layout=hwc|chw]\n"
    "                  [--dtype=auto|uint8|float32] [--runs=N]\n"
    "       stoker-ctl pipeline ops [--markdown | --update=FILE]\n"
    "  explain  the ops with each output shape and dtype, and each op's cost per image measured\n"
    "           here on a synthetic image of --input (a JPEG of it when the pipeline decodes);\n"
    "           for a pipeline that decodes, its decoded prefix (fingerprint, cached entry size)\n"
    "           and whether a decoded-sample cache pays (a hit against decoding again)\n"
    "  ops      every op with its arguments, defaults, ranges and docs, from the op registry\n";

// `pipeline ops`: the registry as help text, or as docs/augmentations.md's generated tables.
int RunOps(int argc, char** argv) {
  bool markdown = false;
  std::string update;
  FlagSet flags("stoker-ctl pipeline ops",
                "Prints every pipeline op from the op registry, or the tables of "
                "docs/augmentations.md generated from it.");
  flags.Add("markdown", &markdown, "Print docs/augmentations.md's generated tables");
  flags.Add("update", &update,
            "Rewrite the generated tables of this Markdown file in place "
            "(docs/augmentations.md)");
  if (auto exit_code = flags.Parse(argc - 2, argv + 2)) return *exit_code;
  if (update.empty()) {
    if (!markdown) {
      std::fputs(PipelineOpsHelp().c_str(), stdout);
      return 0;
    }
    for (const GeneratedBlock& block : OpDocBlocks()) {
      std::fputs(block.text.c_str(), stdout);
    }
    return 0;
  }
  std::ifstream in(update, std::ios::binary);
  std::stringstream doc;
  doc << in.rdbuf();
  if (!in) {
    return flags.Fail(absl::InvalidArgumentError(absl::StrCat("--update: cannot read ", update)));
  }
  absl::StatusOr<std::string> spliced = SpliceGeneratedBlocks(doc.str(), OpDocBlocks());
  if (!spliced.ok()) {
    return flags.Fail(absl::InvalidArgumentError(
        absl::StrCat("--update: ", update, ": ", spliced.status().message())));
  }
  if (*spliced == doc.str()) return 0;
  std::ofstream out(update, std::ios::binary | std::ios::trunc);
  out << *spliced;
  out.close();
  if (!out) {
    std::fprintf(stderr, "stoker-ctl pipeline ops: cannot write %s\n", update.c_str());
    return 1;
  }
  std::fprintf(stderr, "stoker-ctl pipeline ops: updated %s\n", update.c_str());
  return 0;
}

}  // namespace

int RunPipelineCommand(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[2]) == "ops") return RunOps(argc, argv);
  if (argc < 3 || std::string(argv[2]) != "explain") {
    std::fputs(kPipelineUsage, argc >= 3 && std::string(argv[2]) == "--help" ? stdout : stderr);
    return argc >= 3 && std::string(argv[2]) == "--help" ? 0 : kExitBadFlags;
  }
  // The first argument that is not a flag is the pipeline text; the rest go to the flag parser.
  std::vector<char*> flag_args = {argv[2]};
  std::string text;
  bool have_text = false;
  for (int i = 3; i < argc; ++i) {
    if (!have_text && !absl::StartsWith(argv[i], "--")) {
      text = argv[i];
      have_text = true;
    } else {
      flag_args.push_back(argv[i]);
    }
  }
  std::string input = "375x500x3";
  JobSpecArgs args;
  args.num_samples = 1;
  args.layout = "hwc";
  int64_t runs = 15;
  FlagSet flags("stoker-ctl pipeline explain",
                "Prints a pipeline's ops, their output shapes and dtypes and their cost per image "
                "measured on this machine.");
  flags.Add("input", &input,
            "Input image HxWxC (for a pipeline starting with decode: the size "
            "of the decoded image)");
  flags.Add("layout", &args.layout, "Output layout: hwc or chw");
  flags.Add("dtype", &args.dtype, "Output dtype: auto, uint8 or float32");
  flags.Add("runs", &runs, "Timed runs per op (0: shapes only)");
  if (auto exit_code = flags.Parse(static_cast<int>(flag_args.size()), flag_args.data())) {
    return *exit_code;
  }
  if (!have_text) {
    std::fputs(kPipelineUsage, stderr);
    return kExitBadFlags;
  }
  if (runs < 0 || runs > 10000) {
    return flags.Fail(absl::InvalidArgumentError("--runs: must be in 0..10000"));
  }
  ExplainOptions options;
  absl::StatusOr<ImageShape> shape = ParseInputShape(input, "--input");
  if (!shape.ok()) return flags.Fail(shape.status());
  options.input = *shape;
  options.runs = static_cast<int>(runs);
  args.pipeline = text;
  absl::StatusOr<v1::JobSpec> spec = args.ToJobSpec([](absl::string_view field) {
    return field == "pipeline" ? std::string("pipeline") : absl::StrCat("--", field);
  });
  if (!spec.ok()) return flags.Fail(spec.status());
  absl::StatusOr<PipelineExplanation> explanation = ExplainPipeline(spec->pipeline(), options);
  if (!explanation.ok()) {
    if (explanation.status().code() == absl::StatusCode::kInvalidArgument &&
        !absl::StartsWith(explanation.status().message(), "running on")) {
      return flags.Fail(explanation.status());
    }
    std::fprintf(stderr, "stoker-ctl pipeline explain: %s\n",
                 explanation.status().ToString().c_str());
    return 1;
  }
  std::fputs(FormatExplanation(*explanation).c_str(), stdout);
  return 0;
}

}  // namespace stoker

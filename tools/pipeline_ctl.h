#ifndef STOKER_TOOLS_PIPELINE_CTL_H_
#define STOKER_TOOLS_PIPELINE_CTL_H_

// `stoker-ctl pipeline explain "<pipeline text>" [--input=HxWxC] [--layout=chw|hwc]
// [--dtype=auto|uint8|float32] [--runs=N]`: prints the ops with the shape and dtype each
// produces and each op's measured cost per image (augment/pipeline_explain.h). Needs no cluster.
//
// `stoker-ctl pipeline ops [--markdown | --update=FILE]`: every op of the registry with its
// arguments (PipelineOpsHelp); --markdown prints docs/augmentations.md's tables generated from
// the registry (augment/op_docs.h) and --update=FILE rewrites them in FILE, the way to
// regenerate the document after changing an op.
//
// Exit codes: 0 printed; 2 (kExitBadFlags) for a usage error, a bad flag or an invalid pipeline
// (the message names the op and field); 1 when running the pipeline on the synthetic input
// fails (e.g. a crop larger than --input).

#include <string>

namespace stoker {

// argv[0] is the program, argv[1] "pipeline". Prints to stdout/stderr; returns the exit code.
int RunPipelineCommand(int argc, char** argv);

}  // namespace stoker

#endif  // STOKER_TOOLS_PIPELINE_CTL_H_

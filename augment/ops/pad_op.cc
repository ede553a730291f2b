// pad: torchvision Pad(padding, fill, padding_mode); also the padding of random_crop.

#include <memory>
#include <utility>
#include <vector>

#include "augment/kernels/pad.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

absl::StatusOr<uint32_t> PadAmount(float value) {
  if (!(value >= 0.0f && value <= 65536.0f) ||
      value != static_cast<float>(static_cast<int>(value))) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding values must be integers in [0, 65536], got ", value));
  }
  return static_cast<uint32_t>(value);
}

class PadOp final : public Op {
 public:
  PadOp(const ImageShape& input, PadArgs args)
      : Op("pad", input, PaddedOrVarying(input, args.padding)), args_(std::move(args)) {}

  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    return PaddedShape(in, args_.padding);
  }

  void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const override {
    moves->push_back(PadMove(in.height, in.width, args_.padding, args_.mode));
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    Pad(in, args_.padding, args_.mode, args_.fill.data(), out);
    return absl::OkStatus();
  }

 private:
  const PadArgs args_;
};

absl::StatusOr<std::unique_ptr<Op>> CreatePadOp(const v1::Op& op, const ImageShape& input) {
  const v1::PadOp& args = op.pad();
  if (args.padding_size() == 0) return absl::InvalidArgumentError("padding must be given");
  ASSIGN_OR_RETURN(PadArgs pad,
                   ParsePadArgs(args.padding(), args.fill(), args.padding_mode(), input));
  return std::make_unique<PadOp>(input, std::move(pad));
}

}  // namespace

absl::StatusOr<PadArgs> ParsePadArgs(const google::protobuf::RepeatedField<float>& padding,
                                     const google::protobuf::RepeatedField<float>& fill,
                                     uint32_t padding_mode, const ImageShape& input) {
  std::vector<uint32_t> amounts;
  for (const float value : padding) {
    ASSIGN_OR_RETURN(const uint32_t amount, PadAmount(value));
    amounts.push_back(amount);
  }
  PadArgs args;
  if (amounts.size() == 1) {
    args.padding = Padding{amounts[0], amounts[0], amounts[0], amounts[0]};
  } else if (amounts.size() == 2) {  // torchvision: (left/right, top/bottom)
    args.padding = Padding{amounts[0], amounts[1], amounts[0], amounts[1]};
  } else if (amounts.size() == 4) {  // (left, top, right, bottom)
    args.padding = Padding{amounts[0], amounts[1], amounts[2], amounts[3]};
  } else if (!amounts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding takes 1, 2 or 4 values, got ", amounts.size()));
  }
  if (padding_mode > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "padding_mode must be 0 (constant), 1 (edge), 2 (reflect) or 3 (symmetric), got ",
        padding_mode));
  }
  args.mode = static_cast<PadMode>(padding_mode);
  if (input.channels > 16) return absl::InvalidArgumentError("pad takes at most 16 channels");
  ASSIGN_OR_RETURN(args.fill, PerChannelValues("fill", fill, input.channels));
  if (args.fill.empty()) args.fill.assign(input.channels, 0.0f);
  return args;
}

absl::StatusOr<std::vector<float>> PerChannelValues(
    absl::string_view name, const google::protobuf::RepeatedField<float>& values,
    uint32_t channels) {
  if (values.size() > 1 && static_cast<uint32_t>(values.size()) != channels) {
    return absl::InvalidArgumentError(absl::StrCat(name, " takes 1 value or one per channel (",
                                                   channels, "), got ", values.size()));
  }
  if (values.size() == 1) return std::vector<float>(channels, values[0]);
  return std::vector<float>(values.begin(), values.end());
}

OpSchema PadOpSchema() {
  return OpSchema{
      "pad",
      v1::Op::kPad,
      "torchvision Pad: pads the four sides. padding: 1 value (all sides), 2 (left/right, "
      "top/bottom) or 4 (left, top, right, bottom); padding_mode 0 constant (fill), 1 edge, "
      "2 reflect, 3 symmetric. Any pixel type.",
      {{"padding", ArgType::kFloatList, "", "1, 2 or 4 non-negative integers."},
       {"fill", ArgType::kFloatList, "[0]", "Constant fill: 1 value or one per channel."},
       {"padding_mode", ArgType::kInt, "0", "0 constant, 1 edge, 2 reflect, 3 symmetric.",
        Closed(0, 3)}},
      &CreatePadOp,
      {"`Pad` / `F.pad` (`padding_mode` 0 constant, 1 edge, 2 reflect, 3 symmetric)", "any",
       "exact"},
      TargetSupport::kMoves,
      RngDraws::kNever};
}

}  // namespace stoker

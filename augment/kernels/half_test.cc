// float32 → float16 / bfloat16 against references that share no code with the kernels: the
// nearest representable value found by search over the target format's values (compared in
// double, where every difference is exact), ties to the even bit pattern; every variant the CPU
// runs (portable, AVX2/F16C, AVX-512), at an unaligned output, with a length that leaves a tail.

#include "augment/kernels/half.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "augment/pipeline.h"
#include "common/counter_rng.h"
#include "gtest/gtest.h"
#include "image/image.h"

namespace stoker {
namespace {

using half_internal::HalfIsa;

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t ToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// The value of a finite, non-negative float16 bit pattern, decoded by its definition.
double Float16Value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  if (exponent == 0) return std::ldexp(mantissa, -24);
  return std::ldexp(1024 + mantissa, exponent - 25);
}

bool IsNan(float f) { return (ToBits(f) & 0x7FFFFFFF) > 0x7F800000; }

// Nearest of two candidates to x (lo <= x <= hi), ties to the even bit pattern.
uint16_t Nearest(double x, uint16_t lo, double lo_value, uint16_t hi, double hi_value) {
  const double below = x - lo_value;
  const double above = hi_value - x;
  if (below < above) return lo;
  if (above < below) return hi;
  return (lo & 1) == 0 ? lo : hi;
}

uint16_t ReferenceFloat16(float f) {
  const uint32_t bits = ToBits(f);
  const uint16_t sign = (bits >> 31) ? 0x8000 : 0;
  if (IsNan(f)) return sign | 0x7E00 | ((bits >> 13) & 0x3FF);
  const double x = std::fabs(static_cast<double>(f));
  // The largest finite half at or below x, by search over the positive finite halves.
  uint16_t lo = 0;
  for (int step = 1 << 14; step > 0; step >>= 1) {
    const int candidate = lo + step;
    if (candidate <= 0x7BFF && Float16Value(static_cast<uint16_t>(candidate)) <= x) {
      lo = static_cast<uint16_t>(candidate);
    }
  }
  if (Float16Value(lo) == x) return sign | lo;
  // Above the largest finite half the next "value" is 2^16: the boundary of rounding to inf.
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  const double hi_value = lo == 0x7BFF ? 65536.0 : Float16Value(hi);
  if (x >= hi_value) return sign | 0x7C00;  // inf or beyond
  return sign | Nearest(x, lo, Float16Value(lo), hi, hi_value);
}

uint16_t ReferenceBfloat16(float f) {
  const uint32_t bits = ToBits(f);
  if (IsNan(f)) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  const uint16_t sign = (bits >> 31) ? 0x8000 : 0;
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  const uint16_t lo = static_cast<uint16_t>(magnitude >> 16);
  const double x = std::fabs(static_cast<double>(f));
  const double lo_value = FromBits(uint32_t{lo} << 16);
  if (lo_value == x) return sign | lo;
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  // Past the largest finite bfloat16 the next value is 2^128 (rounds to inf).
  const double hi_value = hi == 0x7F80 ? std::ldexp(1.0, 128) : FromBits(uint32_t{hi} << 16);
  return sign | Nearest(x, lo, lo_value, hi, hi_value);
}

// Special values, every float16 value, the midpoints between neighbours (ties) and one float
// ulp either side, float subnormals, bfloat16 ties, and random bit patterns over every exponent.
std::vector<float> TestInputs() {
  std::vector<float> in = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           65504.0f,
                           65519.996f,
                           65520.0f,
                           -65520.0f,
                           65536.0f,
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(),
                           5.9604645e-08f,
                           2.9802322e-08f,
                           2.9802326e-08f,
                           6.1035156e-05f};
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FA5A5A5u, 0x7F802000u,
                       0xFFFFFFFFu, 0x7F810000u, 0x7F800040u}) {
    in.push_back(FromBits(nan));
  }
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const double value = Float16Value(static_cast<uint16_t>(h));
    const double next = h == 0x7BFF ? 65536.0 : Float16Value(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((value + next) / 2);  // exact: a tie
    for (float f :
         {static_cast<float>(value), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      in.push_back(f);
      in.push_back(-f);
    }
  }
  for (uint32_t top = 0; top < 0x10000; top += 7) {  // bfloat16 ties and neighbours
    in.push_back(FromBits((top << 16) | 0x8000));
    in.push_back(FromBits((top << 16) | 0x7FFF));
  }
  std::mt19937 random(12345);  // fixed: the inputs are the same every run
  for (int i = 0; i < 200000; ++i) in.push_back(FromBits(static_cast<uint32_t>(random())));
  in.push_back(1.0f);  // an odd length leaves a tail for the scalar loop
  return in;
}

std::vector<HalfIsa> IsasHere() {
  std::vector<HalfIsa> isas = {HalfIsa::kPortable};
  if (half_internal::BestHalfIsa() != HalfIsa::kPortable) isas.push_back(HalfIsa::kAvx2);
  if (half_internal::BestHalfIsa() == HalfIsa::kAvx512) isas.push_back(HalfIsa::kAvx512);
  return isas;
}

// Runs `convert` with `isa` into an unaligned buffer and returns the 16-bit results.
template <typename Convert>
std::vector<uint16_t> RunUnaligned(Convert convert, HalfIsa isa, const std::vector<float>& in) {
  std::vector<uint8_t> buffer(2 * in.size() + 1);
  convert(isa, in.data(), in.size(), buffer.data() + 1);
  std::vector<uint16_t> out(in.size());
  std::memcpy(out.data(), buffer.data() + 1, 2 * in.size());
  return out;
}

TEST(HalfTest, Float16MatchesTheNearestValueOnEveryVariant) {
  const std::vector<float> in = TestInputs();
  for (HalfIsa isa : IsasHere()) {
    const std::vector<uint16_t> out = RunUnaligned(half_internal::FloatToFloat16With, isa, in);
    int failures = 0;
    for (size_t i = 0; i < in.size() && failures < 10; ++i) {
      const uint16_t expected = ReferenceFloat16(in[i]);
      if (out[i] != expected) {
        ++failures;
        ADD_FAILURE() << "isa " << static_cast<int>(isa) << ": float bits 0x" << std::hex
                      << ToBits(in[i]) << " gave 0x" << out[i] << ", expected 0x" << expected;
      }
    }
  }
}

TEST(HalfTest, Bfloat16MatchesTheNearestValueOnEveryVariant) {
  const std::vector<float> in = TestInputs();
  for (HalfIsa isa : IsasHere()) {
    const std::vector<uint16_t> out = RunUnaligned(half_internal::FloatToBfloat16With, isa, in);
    int failures = 0;
    for (size_t i = 0; i < in.size() && failures < 10; ++i) {
      const uint16_t expected = ReferenceBfloat16(in[i]);
      if (out[i] != expected) {
        ++failures;
        ADD_FAILURE() << "isa " << static_cast<int>(isa) << ": float bits 0x" << std::hex
                      << ToBits(in[i]) << " gave 0x" << out[i] << ", expected 0x" << expected;
      }
    }
  }
}

TEST(HalfTest, NamedCases) {
  EXPECT_EQ(Float16Bits(1.0f), 0x3C00);
  EXPECT_EQ(Float16Bits(-2.0f), 0xC000);
  EXPECT_EQ(Float16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(Float16Bits(65520.0f), 0x7C00);              // the tie above the largest: inf
  EXPECT_EQ(Float16Bits(5.9604645e-08f), 0x0001);        // 2^-24, the smallest subnormal
  EXPECT_EQ(Float16Bits(2.9802322e-08f), 0x0000);        // 2^-25: a tie, to even (0)
  EXPECT_EQ(Float16Bits(1.0f + 1.0f / 2048), 0x3C00);    // tie between 0x3C00 and 0x3C01
  EXPECT_EQ(Float16Bits(1.0f + 3.0f / 2048), 0x3C02);    // tie between 0x3C01 and 0x3C02
  EXPECT_EQ(Float16Bits(FromBits(0x7F800001)), 0x7E00);  // signalling NaN: quieted
  EXPECT_EQ(Bfloat16Bits(1.0f), 0x3F80);
  EXPECT_EQ(Bfloat16Bits(FromBits(0x3F808000)), 0x3F80);  // tie, to even
  EXPECT_EQ(Bfloat16Bits(FromBits(0x3F818000)), 0x3F82);  // tie, to even
  EXPECT_EQ(Bfloat16Bits(FromBits(0x7F7FFFFF)), 0x7F80);  // FLT_MAX rounds to inf
  EXPECT_EQ(Bfloat16Bits(FromBits(0x7F800001)), 0x7FC0);  // NaN never rounds into inf
  EXPECT_EQ(Bfloat16Bits(FromBits(0x00008000)), 0x0000);  // a subnormal tie, to even
  EXPECT_EQ(Bfloat16Bits(FromBits(0x00018000)), 0x0002);
}

// A float16 / bfloat16 pipeline writes exactly the conversion of its float32 output, in HWC
// and CHW.
TEST(HalfTest, PipelineOutputIsTheConvertedFloat32Output) {
  ImageBuffer image;
  image.Reshape(ImageShape{5, 7, 3, PixelType::kUint8});
  uint8_t* pixels = image.view().pixels<uint8_t>();
  for (size_t i = 0; i < image.view().shape.elements(); ++i) pixels[i] = (i * 37) % 256;
  for (auto layout : {stoker::v1::LAYOUT_HWC, stoker::v1::LAYOUT_CHW}) {
    stoker::v1::PipelineSpec spec;
    spec.add_ops()->mutable_to_float();
    auto* normalize = spec.add_ops()->mutable_normalize();
    for (float m : {0.485f, 0.456f, 0.406f}) normalize->add_mean(m);
    for (float s : {0.229f, 0.224f, 0.225f}) normalize->add_std(s);
    spec.set_output_layout(layout);
    spec.set_output_dtype(stoker::v1::DTYPE_FLOAT32);
    absl::StatusOr<Pipeline> f32 = Pipeline::Compile(spec, image.view().shape);
    ASSERT_TRUE(f32.ok()) << f32.status();
    std::vector<float> reference(f32->output_bytes_per_sample() / 4);
    PipelineWorkspace workspace;
    CounterRng rng(1);
    ASSERT_TRUE(
        f32->Run(image.view(), &rng, &workspace, reinterpret_cast<uint8_t*>(reference.data()))
            .ok());
    for (auto dtype : {stoker::v1::DTYPE_FLOAT16, stoker::v1::DTYPE_BFLOAT16}) {
      spec.set_output_dtype(dtype);
      absl::StatusOr<Pipeline> half = Pipeline::Compile(spec, image.view().shape);
      ASSERT_TRUE(half.ok()) << half.status();
      ASSERT_EQ(half->output_bytes_per_sample(), reference.size() * 2);
      std::vector<uint8_t> out(half->output_bytes_per_sample() + 1);
      ASSERT_TRUE(half->Run(image.view(), &rng, &workspace, out.data() + 1).ok());  // unaligned
      for (size_t i = 0; i < reference.size(); ++i) {
        uint16_t got;
        std::memcpy(&got, out.data() + 1 + 2 * i, 2);
        const uint16_t expected = dtype == stoker::v1::DTYPE_FLOAT16
                                      ? ReferenceFloat16(reference[i])
                                      : ReferenceBfloat16(reference[i]);
        ASSERT_EQ(got, expected) << "layout " << layout << " dtype " << dtype << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace stoker

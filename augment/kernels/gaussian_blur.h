#ifndef STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_H_
#define STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_H_

// Gaussian blur of float32 HWC images with torchvision's semantics (transforms.GaussianBlur):
//
//   1-D kernel:  x = linspace(-(ksize-1)/2, (ksize-1)/2, ksize)   (in float)
//                pdf = exp(-0.5 * (x / sigma)^2);  w = pdf / sum(pdf)
//   2-D kernel:  w ⊗ w, applied to every channel independently
//   borders:     reflect without repeating the edge (…cba|abcd|dcb…), i.e. OpenCV's
//                BORDER_REFLECT_101 and torch.nn.functional.pad(mode="reflect")
//
// torchvision convolves the full ksize × ksize kernel; this kernel runs the equivalent separable
// form (a vertical pass into padded rows, four rows at a time, then a horizontal pass from each),
// folding the kernel's symmetric tap pairs. Results match the 2-D convolution to float rounding
// (~1e-7 on [0, 1) data). The code is compiled three times, for baseline x86-64, for AVX2 + FMA
// and for AVX-512, and the best build the CPU runs is chosen at run time
// (gaussian_blur_variants.h), so results are bit-identical on machines with the same CPU
// features, not across them (the AVX2 and AVX-512 builds agree bit for bit).
//
// Pure functions: no allocation, no exceptions, no global state; thread-safe on distinct outputs.

#include <cstddef>

#include "image/image.h"

namespace stoker {

// Writes the normalized torchvision 1-D Gaussian of `ksize` taps to weights[0..ksize).
// REQUIRES: ksize odd and > 0; sigma > 0.
void GaussianKernel1D(int ksize, float sigma, float* weights);

// Number of floats of scratch GaussianBlur needs for an image of `shape` and a `ksize` kernel.
size_t GaussianBlurScratchFloats(const ImageShape& shape, int ksize);

// out = in convolved with weights ⊗ weights, reflect-101 borders.
// REQUIRES: in.shape.type == kFloat32; out.shape == in.shape; `in` and `out` do not overlap;
//   ksize odd and > 0; weights[0..ksize) symmetric (weights[i] == weights[ksize-1-i]);
//   in.shape.height > ksize/2 and in.shape.width > ksize/2 (reflect padding needs it);
//   `scratch` holds GaussianBlurScratchFloats(in.shape, ksize) floats (contents unspecified).
void GaussianBlur(const ImageView& in, const float* weights, int ksize, float* scratch,
                  const ImageView& out);

// Fused chains of blurs (what a pipeline's "to_float, gaussian_blur(...) * n" runs): the blurs
// are run row by row, each blur's output rows feeding the next blur's vertical pass through a
// ring of 2R + 7 rows (R = its ksize / 2), so the chain's working set is a few dozen rows per
// blur instead of two whole images per blur (a 224×224×3 float32 image is 602 KB). The result is
// bit-identical to ToFloat (for uint8 input) followed by GaussianBlur once per blur, on the same
// CPU (the same build of the kernel runs the same passes on the same rows).
constexpr int kMaxBlurChain = 16;       // Blurs per GaussianBlurChain call.
constexpr int kMaxBlurChainKsize = 15;  // Larger kernels run GaussianBlur alone.

// Number of floats of scratch GaussianBlurChain needs for `in_shape` and ksizes[0..count).
size_t GaussianBlurChainScratchFloats(const ImageShape& in_shape, const int* ksizes, int count);

// out = blur_{count-1}(... blur_0(x)), x = in (float32) or ToFloat(in) (uint8), where blur_k is
// GaussianBlur with weights[k] (ksizes[k] taps).
// REQUIRES: in.shape.type is kUint8 or kFloat32; out is float32 with in's height, width and
//   channels; `in` and `out` do not overlap; 1 <= count <= kMaxBlurChain; every ksizes[k] odd,
//   3 <= ksizes[k] <= kMaxBlurChainKsize, with height and width > ksizes[k] / 2; weights[k]
//   symmetric; `scratch` holds GaussianBlurChainScratchFloats(in.shape, ksizes, count) floats.
void GaussianBlurChain(const ImageView& in, const float* const* weights, const int* ksizes,
                       int count, float* scratch, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_H_

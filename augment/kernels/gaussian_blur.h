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
// form (a vertical pass into padded rows, two rows at a time, then a horizontal pass from each),
// folding the kernel's symmetric tap pairs. Results match the 2-D convolution to float rounding
// (~1e-7 on [0, 1) data). The code is compiled twice, for baseline x86-64 and for AVX2 + FMA,
// and the AVX2 build is chosen at run time when the CPU has it (gaussian_blur_variants.h), so
// results are bit-identical on machines with the same CPU features, not across them.
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

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_GAUSSIAN_BLUR_H_

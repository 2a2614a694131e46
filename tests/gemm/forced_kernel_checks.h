// forced_kernel_checks.h — the two checks every test of one forced kernel
// runs (decode, swapped, stream-K tiles …): every epilogue variant against
// the CPU backend at a few shapes, and every M of the kernel's token range
// against the CPU and, for int8, bit for bit against a twin kernel. int8 is
// exact up to the epilogue's rounding, so two int8 kernels with the same
// epilogue give the same bits; fp8 uses gemm_compare.h's accumulation bound.
#pragma once

#if QGEMM_WITH_CUDA

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "gemm/gemm_compare.h"
#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {

// A kernel forced through detail::scaled_mm_cuda_with, with a stream-K
// workspace attached to every run where given.
struct ForcedKernel {
  detail::GemmKernel kernel;
  const char* label;  // names the kernel in failure messages
  const StreamKWorkspace* workspace = nullptr;
  std::vector<uint8_t> run(const GemmProblem& p) const { return run_forced(p, kernel, workspace); }
};

struct Mnk {
  int64_t m, n, k;
};

// Every epilogue variant of epilogue_cases (scales per tensor / token /
// channel, bias, zero points, bf16 / fp16, int8 and fp8) at each shape,
// against the CPU backend. With `int8_declined` the kernel must refuse the
// int8 variants (an fp8-only kernel) and take the fp8 ones.
inline void expect_every_epilogue_matches_cpu(const ForcedKernel& forced, std::initializer_list<Mnk> shapes,
                                              bool int8_declined = false) {
  for (const Mnk& s : shapes) {
    int ran = 0, expected = 0;
    const auto seed = static_cast<uint64_t>(s.m * 131 + s.n * 7 + s.k);
    for_each_epilogue_problem(s.m, s.n, s.k, seed, [&](const GemmCase& c, GemmProblem& p) {
      const std::vector<uint8_t> out = forced.run(p);
      if (int8_declined && c.input == DType::kInt8) {
        EXPECT_TRUE(out.empty()) << forced.label << " took int8: " << c.name();
        return;
      }
      ++expected;
      if (out.empty()) {
        ADD_FAILURE() << forced.label << " refused " << c.name();
        return;
      }
      ++ran;
      EXPECT_EQ(compare_all(p, out, forced.label), 0);
    });
    EXPECT_EQ(ran, expected) << forced.label << " at " << s.m << "x" << s.n << "x" << s.k;
    EXPECT_GT(ran, 0);
  }
}

// At each M of `ms` on M × n × k with bias (int8 with per-token zero points,
// fp8 plain), the forced kernel against the CPU; int8 also against
// `int8_twin` forced without a workspace, bit for bit.
inline void expect_every_m_matches_cpu(const ForcedKernel& forced, const std::vector<int64_t>& ms, int64_t n,
                                       int64_t k, std::initializer_list<DType> inputs,
                                       std::optional<detail::GemmKernel> int8_twin) {
  for (int64_t m : ms) {
    for (DType input : inputs) {
      GemmCase c;
      c.m = m, c.n = n, c.k = k, c.input = input, c.bias = true;
      c.zero_point = input == DType::kInt8 ? ZeroPoint::kPerToken : ZeroPoint::kNone;
      auto rng = make_rng(static_cast<uint64_t>(m * 17 + (input == DType::kInt8)));
      GemmProblem p(c, rng);
      const std::vector<uint8_t> out = forced.run(p);
      if (out.empty()) {
        ADD_FAILURE() << forced.label << " refused " << c.name();
        continue;
      }
      EXPECT_EQ(compare_all(p, out, forced.label), 0);
      if (input == DType::kInt8 && int8_twin) {
        const std::vector<uint8_t> twin = run_forced(p, *int8_twin);
        if (twin.empty()) {
          ADD_FAILURE() << "the twin refused " << c.name();
          continue;
        }
        EXPECT_EQ(out, twin) << forced.label << " " << c.name() << ": not the same bits as its twin";
      }
    }
  }
}

}  // namespace qgemm::test

#endif  // QGEMM_WITH_CUDA

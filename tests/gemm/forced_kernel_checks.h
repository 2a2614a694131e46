// forced_kernel_checks.h — the checks the tests of one forced kernel share
// (decode, swapped, stream-K tiles …): every epilogue variant against the
// CPU backend at a few shapes; every M of the kernel's token range against
// the CPU and, for int8, bit for bit against a twin kernel; sub-matrix views
// and the layouts it declines; the same bits on every run. int8 is exact up
// to the epilogue's rounding, so two int8 kernels with the same epilogue
// give the same bits; fp8 uses gemm_compare.h's accumulation bound. And
// the public API picking the kernel where its rule holds.
#pragma once

#if QGEMM_WITH_CUDA

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
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
  // run(p) where the kernel must take p: a refusal (an empty output) is
  // recorded as a failure naming the case.
  std::vector<uint8_t> run_taken(const GemmProblem& p) const {
    std::vector<uint8_t> out = run(p);
    if (out.empty()) ADD_FAILURE() << label << " refused " << p.c.name();
    return out;
  }
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
      if (int8_declined && c.input == DType::kInt8) {
        EXPECT_TRUE(forced.run(p).empty()) << forced.label << " took int8: " << c.name();
        return;
      }
      ++expected;
      const std::vector<uint8_t> out = forced.run_taken(p);
      if (out.empty()) return;
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
      const std::vector<uint8_t> out = forced.run_taken(p);
      if (out.empty()) continue;
      EXPECT_EQ(compare_all(p, out, forced.label), 0);
      if (input == DType::kInt8 && int8_twin) {
        const std::vector<uint8_t> twin = ForcedKernel{*int8_twin, "the twin"}.run_taken(p);
        if (twin.empty()) continue;
        EXPECT_EQ(out, twin) << forced.label << " " << c.name() << ": not the same bits as its twin";
      }
    }
  }
}

// `padded` (leading dimensions past the row; the output's a multiple of 8,
// as TMA needs), int8 with per-tensor zero points and fp8, against the CPU;
// then what the kernel declines: an output pitch TMA cannot store, M =
// `too_many_tokens` and each of `too_few_tokens`, and for a kernel given a
// workspace, none or 256 bytes of one (the dispatcher then runs a twin).
inline void expect_padded_views_and_declines(const ForcedKernel& forced, GemmCase padded,
                                             int64_t too_many_tokens,
                                             std::initializer_list<int64_t> too_few_tokens = {}) {
  const std::string label = std::string(forced.label) + ", padded";
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    padded.input = input, padded.zero_point = input == DType::kInt8 ? ZeroPoint::kPerTensor : ZeroPoint::kNone;
    auto rng = make_rng(5);
    GemmProblem p(padded, rng);
    const std::vector<uint8_t> out = forced.run_taken(p);
    if (out.empty()) continue;
    EXPECT_EQ(compare_all(p, out, label), 0);
    if (forced.workspace != nullptr) {
      EXPECT_TRUE(run_forced(p, forced.kernel).empty()) << forced.label << " ran without a workspace";
      EXPECT_TRUE(run_forced(p, forced.kernel, forced.workspace, 256).empty())
          << forced.label << " ran in 256 bytes of workspace";
    }
  }
  GemmCase odd = padded;
  odd.ldo_pad = 3;  // the output's rows 6 bytes off 16
  auto rng = make_rng(6);
  GemmProblem p(odd, rng);
  EXPECT_TRUE(forced.run(p).empty()) << forced.label << " took an output TMA cannot store";
  const auto expect_declines_tokens = [&](int64_t m) {
    GemmCase declined = padded;
    declined.m = m;
    GemmProblem d(declined, rng);
    EXPECT_TRUE(forced.run(d).empty()) << forced.label << " took M = " << m;
  };
  expect_declines_tokens(too_many_tokens);
  for (int64_t m : too_few_tokens) expect_declines_tokens(m);
}

// `c` in int8 and fp8: the same bits on every run (fp8's stream-K peers add
// in k order; int8's int32 sums are exact in any order), with a workspace
// left as the last run left it, and against the CPU.
inline void expect_deterministic(const ForcedKernel& forced, GemmCase c) {
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    c.input = input;
    auto rng = make_rng(12);
    GemmProblem p(c, rng);
    const std::vector<uint8_t> first = forced.run_taken(p);
    if (first.empty()) continue;
    for (int r = 0; r < 3; ++r) EXPECT_EQ(forced.run(p), first) << c.name() << " run " << r;
    EXPECT_EQ(compare_all(p, first, forced.label), 0);
  }
}

// The public API (scaled_mm) at each shape, int8 and fp8 with bias, with and
// without a workspace, against the CPU. On 132 SMs, where the rules were
// measured, the table must pick `expected` with the workspace; a kernel
// that needs none gives the same bits both ways.
inline void expect_public_api_picks(detail::GemmKernel expected, std::initializer_list<Mnk> shapes,
                                    uint64_t seed_base) {
  for (const Mnk& s : shapes) {
    for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
      GemmCase c;
      c.m = s.m, c.n = s.n, c.k = s.k, c.input = input, c.bias = true;
      auto rng = make_rng(static_cast<uint64_t>(seed_base + s.m + s.n));
      GemmProblem p(c, rng);
      const WithAndWithoutWorkspace out = run_with_and_without_workspace(p);
      if (StreamKWorkspace::sm_count() == 132) EXPECT_EQ(out.chosen_with, expected) << c.name();
      EXPECT_EQ(compare_all(p, out.with, "scaled_mm"), 0);
      EXPECT_EQ(out.with, out.without) << c.name();
    }
  }
}

}  // namespace qgemm::test

#endif  // QGEMM_WITH_CUDA

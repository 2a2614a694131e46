// gemm_compare.h — the GPU kernel tests' comparison with the CPU backend
// (whole output, a tolerance from the arithmetic) and their list of
// epilogue variants. The reasoning behind the tolerance is in
// test_scaled_mm_kernels.cpp's header comment.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gemm/epilogue_math.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {

inline double fp8_accumulation_bound(const GemmProblem& p, int64_t i, int64_t j) {
  return std::ldexp(1.0, -9) * p.scale(i, j) * p.abs_accumulator(i, j);
}

// Whole-output comparison with the CPU backend (run on p's host buffers):
// one output ulp, and for fp8 the accumulation bound above (plus, with
// `fp32_order`, GemmProblem::tolerance's fp32 summation-order term).
inline int64_t compare_all(GemmProblem& p, const std::vector<uint8_t>& gpu_out, const std::string& what,
                           bool fp32_order = false) {
  p.run_cpu();
  int64_t bad = 0;
  for (int64_t i = 0; i < p.c.m; ++i) {
    for (int64_t j = 0; j < p.c.n; ++j) {
      const double cpu = p.out_value(i, j);
      const double gpu = detail::load_float(gpu_out.data(), i * p.ldo + j, p.c.out);
      double tol = unit_roundoff(p.c.out) * std::fabs(cpu) + subnormal_spacing(p.c.out);
      if (p.c.input != DType::kInt8) tol += fp8_accumulation_bound(p, i, j) + (fp32_order ? p.tolerance(i, j) : 0.0);
      if (!(std::fabs(gpu - cpu) <= tol)) {
        if (bad < 5) ADD_FAILURE() << what << " " << p.c.name() << ": [" << i << "," << j << "] gpu " << gpu << " cpu " << cpu;
        ++bad;
      }
    }
  }
  return bad;
}

inline std::vector<GemmCase> epilogue_cases(int64_t m, int64_t n, int64_t k) {
  std::vector<GemmCase> cases;
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    for (DType out : {DType::kBFloat16, DType::kFloat16}) {
      for (ZeroPoint zp : {ZeroPoint::kNone, ZeroPoint::kPerTensor, ZeroPoint::kPerToken}) {
        if (input != DType::kInt8 && zp != ZeroPoint::kNone) continue;
        for (int granularity = 0; granularity < 4; ++granularity) {
          for (bool bias : {false, true}) {
            GemmCase c;
            c.m = m, c.n = n, c.k = k;
            c.input = input, c.out = out, c.zero_point = zp, c.bias = bias;
            c.per_token = granularity & 1;
            c.per_channel = granularity & 2;
            cases.push_back(c);
          }
        }
      }
    }
  }
  return cases;
}

// Each problem of epilogue_cases(m, n, k) drawn from `seed` (what
// GemmProblem(case, make_rng(seed)) would give), passed to fn(case,
// problem). A and B are drawn once per input dtype and shared
// (GemmOperands): for a large shape most of the setup.
template <class Fn>
void for_each_epilogue_problem(int64_t m, int64_t n, int64_t k, uint64_t seed, Fn&& fn) {
  std::optional<GemmOperands> operands;  // for the input dtype of the last case
  DType drawn_for = DType::kInt8;
  for (const GemmCase& c : epilogue_cases(m, n, k)) {  // the same shape, no padding
    if (!operands || c.input != drawn_for) {
      auto rng = make_rng(seed);
      operands = GemmOperands::draw(c, rng);
      drawn_for = c.input;
    }
    GemmProblem p(c, *operands);
    fn(c, p);
  }
}

}  // namespace qgemm::test

// TensorView construction, strides and contiguity.
#include <gtest/gtest.h>

#include "qgemm/error.h"
#include "qgemm/tensor.h"

namespace qgemm {
namespace {

TEST(TensorView, ContiguousStridesAreRowMajor) {
  int32_t storage[24];
  TensorView t(storage, DType::kInt32, {2, 3, 4});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(1), 4);
  EXPECT_EQ(t.stride(2), 1);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.device().is_cpu());
}

TEST(TensorView, StridedViewIsNotContiguous) {
  int8_t storage[64];
  auto t = TensorView::strided(storage, DType::kInt8, {4, 8}, {1, 8}, Device::cuda(1));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.device(), Device::cuda(1));
  EXPECT_EQ(dtype_size(t.dtype()), 1u);
}

TEST(TensorView, RejectsTooManyDims) {
  float x = 0;
  EXPECT_THROW(TensorView(&x, DType::kFloat32, {1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(TensorView::strided(&x, DType::kFloat32, {1, 1}, {1}), Error);
}

TEST(TensorView, DtypeNamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::kBFloat16), "bf16");
  EXPECT_STREQ(dtype_name(DType::kFloat8E4M3), "fp8e4m3");
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
}

}  // namespace
}  // namespace qgemm

// qgemm/qgemm.h — everything in the public API.
#pragma once

#include "qgemm/calibration.h"
#include "qgemm/error.h"
#include "qgemm/fused.h"
#include "qgemm/gemm.h"
#include "qgemm/kv_cache.h"
#include "qgemm/launch.h"
#include "qgemm/quant.h"
#include "qgemm/tensor.h"
#include "qgemm/version.h"
#include "qgemm/weight_only.h"

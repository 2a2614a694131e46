// cpu_simd.h — QGEMM_CPU_CLONES marks a hot CPU loop to be compiled several
// times (x86-64-v4 = AVX-512, v3 = AVX2+FMA, baseline) and picked at load time for the machine it
// runs on, so one portable binary still uses wide vectors. Results do not
// depend on the clone: integer loops are exact, and float loops keep a fixed
// summation order (no -ffast-math, -ffp-contract=off).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define QGEMM_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define QGEMM_CPU_CLONES
#endif

// qgemm/launch.h — how qgemm launches its own CUDA kernels.
#pragma once

namespace qgemm {

// Programmatic dependent launch (PDL; GPUs of compute capability 9.0 and
// newer). When enabled, qgemm launches its kernels with programmatic stream
// serialization: a kernel may be scheduled onto the GPU while the kernel
// before it in the stream is still finishing, and its first global-memory
// access waits (`griddepcontrol.wait`) until that kernel has completed and
// its memory is visible. Every kernel also lets the next one be scheduled
// early (`griddepcontrol.launch_dependents`, where it measured fastest for
// that kernel). What overlaps is the launch and the scheduling of the next
// kernel's blocks, never a memory access, so results are bit-identical with
// it on or off; calls stay capturable in CUDA graphs (as programmatic
// edges). The CUTLASS 3.x GEMMs (scaled_mm's sm_90 tiles, the weight-only
// dense path) take part through CUTLASS's own waits; kernels whose loaded
// code predates sm_90 (the sm_80 / sm_89 builds, also when they run on a
// Hopper) are launched the ordinary way.
//
// On by default; the environment variable QGEMM_PDL=0 turns it off when the
// library loads. Setting it applies to launches that follow; it is a
// process-wide switch (not per thread or per stream).
void set_programmatic_dependent_launch(bool enabled);
bool programmatic_dependent_launch();

}  // namespace qgemm

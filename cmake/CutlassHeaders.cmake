# Finds the CUTLASS 4.2 headers: -DCUTLASS_DIR=<dir holding include/cutlass>
# (a CUTLASS checkout or install), else the headers that scripts/fetch_cutlass.sh
# unpacks from the nvidia-cutlass PyPI wheel into .deps/cutlass. Defines the
# interface target qgemm::cutlass.
set(CUTLASS_DIR "" CACHE PATH "CUTLASS root (contains include/cutlass and tools/util/include)")

set(_qgemm_cutlass_candidates)
if(CUTLASS_DIR)
  list(APPEND _qgemm_cutlass_candidates "${CUTLASS_DIR}")
endif()
list(APPEND _qgemm_cutlass_candidates "${PROJECT_SOURCE_DIR}/.deps/cutlass")

set(QGEMM_CUTLASS_INCLUDE "")
foreach(_root IN LISTS _qgemm_cutlass_candidates)
  if(EXISTS "${_root}/include/cutlass/cutlass.h")
    set(QGEMM_CUTLASS_INCLUDE "${_root}/include")
    set(QGEMM_CUTLASS_UTIL_INCLUDE "${_root}/tools/util/include")
    break()
  endif()
endforeach()

if(NOT QGEMM_CUTLASS_INCLUDE)
  message(FATAL_ERROR
    "CUTLASS headers not found. Run scripts/fetch_cutlass.sh (downloads the "
    "nvidia-cutlass 4.2 wheel from PyPI into .deps/cutlass) or pass "
    "-DCUTLASS_DIR=<cutlass root>. To build without CUDA: -DQGEMM_ENABLE_CUDA=OFF.")
endif()
message(STATUS "qgemm: CUTLASS headers at ${QGEMM_CUTLASS_INCLUDE}")

add_library(qgemm_cutlass INTERFACE)
add_library(qgemm::cutlass ALIAS qgemm_cutlass)
target_include_directories(qgemm_cutlass SYSTEM INTERFACE "${QGEMM_CUTLASS_INCLUDE}"
                                                           "${QGEMM_CUTLASS_UTIL_INCLUDE}")

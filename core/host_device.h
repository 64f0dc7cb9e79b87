// TESSEL_HOST_DEVICE, the one host/device marker: a function so marked is compiled for the host and, in nvcc
// compiles, for CUDA device code too, so the CPU path and a kernel run one definition (the RNG, the dropout mask,
// the sampler's steps, the SVM's per-pair arithmetic). Empty in host-only compiles. Plain C++17, no CUDA header.
#pragma once

#if defined(__CUDACC__)
#define TESSEL_HOST_DEVICE __host__ __device__
#else
#define TESSEL_HOST_DEVICE
#endif

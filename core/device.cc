// core/device.h's functions over the device runtime's table: the CUDA runtime's (core/device_cuda.cu) when this
// build compiled it, none otherwise (the one place in core that asks). Without CUDA the queries answer "none" and
// memory calls throw, so Buffer<T> and every caller compile and link the same way in both builds.
#include "core/device.h"

#include "core/build_config.h"
#include "core/error.h"

namespace tessel::device {

#if TESSEL_HAVE_CUDA
extern const RuntimeOps kCudaRuntime;
#endif

namespace {

const RuntimeOps* Runtime() {
#if TESSEL_HAVE_CUDA
  return &kCudaRuntime;
#else
  return nullptr;
#endif
}

const RuntimeOps& Cuda() {
  const RuntimeOps* r = Runtime();
  if (r == nullptr) throw Error("this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON)");
  return *r;
}

}  // namespace

bool BuiltWithCuda() { return Runtime() != nullptr; }
int CudaDeviceCount() { return Runtime() != nullptr ? Runtime()->device_count() : 0; }
std::string Describe(int device_id) {
  return Runtime() != nullptr ? Runtime()->describe(device_id) : std::string("built without CUDA");
}
void SetDevice(int device_id) { Cuda().set_device(device_id); }
void* Malloc(size_t bytes) { return Cuda().alloc(bytes); }
void Free(void* ptr) noexcept {
  if (Runtime() != nullptr) Runtime()->release(ptr);
}
void CopyToDevice(void* dst, const void* src, size_t bytes) { Cuda().copy_to_device(dst, src, bytes); }
void CopyToHost(void* dst, const void* src, size_t bytes) { Cuda().copy_to_host(dst, src, bytes); }
void Synchronize() {
  if (Runtime() != nullptr) Runtime()->synchronize();
}

}  // namespace tessel::device

// The device runtime of a CPU-only build: no devices; every memory call throws "built without CUDA".
// Keeps Buffer<T> and Context free of #ifdefs.
#include "core/device.h"
#include "core/error.h"

namespace tessel::device {
namespace {
[[noreturn]] void NoCuda() { throw Error("this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON)"); }
}  // namespace

bool BuiltWithCuda() { return false; }
int CudaDeviceCount() { return 0; }
std::string Describe(int /*device_id*/) { return "built without CUDA"; }
void SetDevice(int /*device_id*/) { NoCuda(); }
void* Malloc(size_t /*bytes*/) { NoCuda(); }
void Free(void* /*ptr*/) noexcept {}
void CopyToDevice(void* /*dst*/, const void* /*src*/, size_t /*bytes*/) { NoCuda(); }
void CopyToHost(void* /*dst*/, const void* /*src*/, size_t /*bytes*/) { NoCuda(); }
void Synchronize() {}

}  // namespace tessel::device

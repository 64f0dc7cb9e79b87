// Run-time device selection, the one mechanism every kernel, sampler and solver uses: a library with device code
// groups its device-dependent operations in a table (a struct of function pointers, e.g. kernels::KernelOps) with a
// CPU instance and, in CUDA builds only, a CUDA instance; callers ask SelectOps for the table the Context names.
// Only the library's one registry file knows whether the CUDA instance was compiled in; CPU kernels never contain
// device switches, and a CPU-only build fails with "built without CUDA" exactly when CUDA is asked for.
#pragma once

#include <string_view>
#include <type_traits>

#include "core/context.h"
#include "core/device.h"
#include "core/error.h"

namespace tessel {

// The table for ctx.device: `cpu`, or *cuda after ctx.RequireCuda() (which throws when this build or machine has
// no CUDA). `cuda` is null when the library was built without its CUDA half; `what` names the library in errors.
// While a simulated device is installed (core/device.h ScopedSimulatedDevice, tests only) CUDA means `simulated`:
// the library's CUDA wrappers over host twins of its raw kernels; a library without one refuses.
template <typename Ops>
const Ops& SelectOps(const Context& ctx, const Ops& cpu, const std::type_identity_t<Ops>* cuda, std::string_view what,
                     const std::type_identity_t<Ops>* simulated = nullptr) {
  if (!ctx.IsCuda()) return cpu;
  ctx.RequireCuda();
  if (device::Simulated()) {
    TESSEL_CHECK(simulated != nullptr, "{}: no simulated-device implementation (a test asked for one)", what);
    return *simulated;
  }
  TESSEL_CHECK(cuda != nullptr, "{}: this tessel was built without its CUDA implementation", what);
  return *cuda;
}

}  // namespace tessel

// Shared pieces of the Python binding (module _tessel): running C++ with the GIL released and Ctrl-C turned into a
// cooperative stop (core/interrupt.h), zero-copy numpy views of Buffers, copies of numpy arrays into Buffers, and the
// JSON bridge of the parameter declarations (core/params.h) to Python keyword arguments.
#pragma once

#include <csignal>
#include <span>
#include <string>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "core/buffer.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/params.h"
#include "datasets/dataset.h"

namespace tessel::python {

namespace py = pybind11;

// While alive on the main thread, SIGINT (Ctrl-C) requests a cooperative stop (interrupt::Request) instead of
// Python's handler, which cannot run while C++ holds the thread; the previous handler comes back afterwards. On
// other threads it does nothing (signals reach the main thread only).
class SigintStop {
 public:
  explicit SigintStop(bool main_thread);
  ~SigintStop();
  SigintStop(const SigintStop&) = delete;
  SigintStop& operator=(const SigintStop&) = delete;

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

// Whether the calling thread is Python's main thread (the GIL must be held).
bool OnMainThread();

// Runs fn with the GIL released and Ctrl-C mapped to interrupt::Request; a stop arrives as interrupt::Interrupted,
// which the module's translator raises as KeyboardInterrupt. A Ctrl-C that came after the last check point of fn
// still raises (after fn returned), as Python would have.
template <typename Fn>
auto RunReleased(Fn&& fn) {
  const bool main = OnMainThread();
  interrupt::Clear();
  if constexpr (std::is_void_v<decltype(fn())>) {
    {
      SigintStop guard(main);
      py::gil_scoped_release release;
      fn();
    }
    interrupt::Check("tessel");
  } else {
    auto result = [&] {
      SigintStop guard(main);
      py::gil_scoped_release release;
      return fn();
    }();
    interrupt::Check("tessel");
    return result;
  }
}

// A read-only numpy view of `values` kept alive by `owner` (the Python object that owns the C++ data).
template <typename T>
py::array View(std::span<const T> values, py::handle owner, std::vector<py::ssize_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<py::ssize_t>(values.size())};
  py::array_t<T> a(shape, {}, values.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// A Buffer copied from a C-contiguous numpy array of exactly T (the Python layer converts and checks dtypes first).
template <typename T>
Buffer<T> CopyToBuffer(const py::array_t<T, py::array::c_style>& a) {
  return Buffer<T>::CopyOf(std::span<const T>(a.data(), static_cast<size_t>(a.size())));
}

// The C-contiguous numpy arrays the functions take.
using I64 = py::array_t<int64_t, py::array::c_style>;
using I32 = py::array_t<int32_t, py::array::c_style>;
using F32 = py::array_t<float, py::array::c_style>;
using F64 = py::array_t<double, py::array::c_style>;

// Sparse rows X (CSR arrays) and their labels copied into a dataset, the shape checked first
// (SparseRowDataset::Validate reads indptr[0] and indptr[rows]) and num_features within [0, max_features]. The caller
// sets what else it needs (a name, labels for an empty `labels`) and validates.
inline datasets::SparseRowDataset CopyRows(const I64& indptr, const I32& indices, const F64& values, const F64& labels,
                                           int64_t num_features, int64_t max_features) {
  TESSEL_CHECK(indptr.ndim() == 1 && indptr.size() >= 1,
               "X: indptr has {} entries; a CSR matrix of n rows has n + 1 (at least 1)", indptr.size());
  TESSEL_CHECK(indices.ndim() == 1 && values.ndim() == 1 && labels.ndim() == 1,
               "X: indices, values and labels must be 1-D arrays");
  TESSEL_CHECK(num_features >= 0 && num_features <= max_features,
               "X: {} features; between 0 and {} (32-bit feature ids) are needed", num_features, max_features);
  datasets::SparseRowDataset d;
  d.num_rows = static_cast<int64_t>(indptr.size()) - 1;
  d.num_features = num_features;
  d.indptr = CopyToBuffer(indptr);
  d.indices = CopyToBuffer(indices);
  d.values = CopyToBuffer(values);
  d.labels = CopyToBuffer(labels);
  return d;
}

}  // namespace tessel::python

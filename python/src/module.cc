// The Python extension module tessel._tessel: errors, logging, Ctrl-C, and the three groups of functions (datasets,
// GCN, SVM; py_data.cc, py_gcn.cc, py_svm.cc). The public API is the pure-Python package python/tessel, which
// checks and converts user arguments before they reach this module.
#include <pthread.h>

#include <new>
#include <string_view>

#include "core/build_config.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "python/src/py_common.h"
#include "python/src/py_modules.h"

namespace tessel::python {
namespace {

void OnSigint(int /*signal*/) { interrupt::Request(); }

}  // namespace

SigintStop::SigintStop(bool main_thread) {
  if (!main_thread) return;
  struct sigaction action {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  installed_ = sigaction(SIGINT, &action, &previous_) == 0;
}

SigintStop::~SigintStop() {
  if (installed_) sigaction(SIGINT, &previous_, nullptr);
}

bool OnMainThread() {
  // Leaked on purpose: a static py::object would be released after the interpreter is gone.
  static const py::handle threading = py::module_::import("threading").release();
  return threading.attr("current_thread")().is(threading.attr("main_thread")());
}

}  // namespace tessel::python

PYBIND11_MODULE(_tessel, m) {
  namespace py = pybind11;
  using namespace tessel::python;  // NOLINT(google-build-using-namespace)
  m.doc() = "tessel's C++ engine; use the `tessel` package, which checks arguments before they reach this module";
  m.attr("__version__") = TESSEL_VERSION;
  m.attr("cuda") = static_cast<bool>(TESSEL_HAVE_CUDA);
  m.attr("mpi") = static_cast<bool>(TESSEL_MPI);

  // tessel.Error is defined in Python (a ValueError); the module raises that class for every tessel::Error, its
  // message passed through tessel._errors.python_spelling: the engine names the command line's options ("pass
  // --force"), a Python caller gave keyword arguments ("pass force=True").
  static const py::handle errors = py::module_::import("tessel._errors").release();
  static const py::handle error_type = py::object(errors.attr("Error")).release();
  static const py::handle spelling = py::object(errors.attr("python_spelling")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessel::interrupt::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const tessel::Error& e) {
      // Not PyErr_SetString: a message quoting bytes that are not UTF-8 (a binary file's) would raise it empty.
      const std::string_view what(e.what());
      PyObject* text = PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "backslashreplace");
      PyObject* spelled = text == nullptr ? nullptr : PyObject_CallFunctionObjArgs(spelling.ptr(), text, nullptr);
      if (spelled != nullptr) {
        Py_DECREF(text);
        text = spelled;
      } else {
        PyErr_Clear();  // the engine's own words rather than no error
      }
      PyErr_SetObject(error_type.ptr(), text);
      Py_XDECREF(text);
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, tessel::memory::OutOfMemoryMessage().c_str());
    }
  });

  m.def(
      "set_log_level", [](const std::string& level) { tessel::log::SetLevel(tessel::log::ParseLevel(level)); },
      "Sets the level of tessel's log on stderr: trace, debug, info, warn, error or off");
  m.def("get_log_level", [] {
    static const char* names[] = {"trace", "debug", "info", "warn", "error", "off"};
    return std::string(names[static_cast<int>(tessel::log::GetLevel())]);
  });
  m.def(
      "_request_interrupt", [] { tessel::interrupt::Request(); },
      "Test hook: asks running work to stop as Ctrl-C does");

  RegisterData(m);
  RegisterGcn(m);
  RegisterSvm(m);
}

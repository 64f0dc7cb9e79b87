// GCN in Python: training on a NodeData with the parameters of `tessel train gcn` (TrainConfig::Params, passed as
// JSON by tessel/gcn.py), an epoch callback, checkpoints, the CLI's --random-split; prediction from a checkpoint;
// METIS partitioning into a partition folder. Training runs with the GIL released; the callback takes it for each
// epoch.
#include <array>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "app/options_json.h"
#include "app/partition.h"
#include "app/predict_gcn.h"
#include "app/train_gcn.h"
#include "core/context.h"
#include "core/error.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "core/params_json.h"
#include "datasets/split.h"
#include "partition/partition_format.h"
#include "python/src/py_common.h"
#include "python/src/py_modules.h"
#include "train/gcn/trainer.h"

namespace tessel::python {
namespace {

namespace gcn = train::gcn;

py::array_t<float> CopyMatrix(const kernels::Matrix& m) {
  py::array_t<float> out({m.rows, m.cols});
  if (m.size() > 0) std::memcpy(out.mutable_data(), m.View().data(), static_cast<size_t>(m.size()) * sizeof(float));
  return out;
}

// `tessel.train_gcn`: app::TrainGcn on the caller's dataset with the options of `tessel train gcn` (their Python
// keywords as JSON, checked by the declaration), the history in the result, and the class probabilities on request.
py::tuple TrainGcn(const NodeData& d, const std::string& options_json, bool predict, py::object on_epoch) {
  app::TrainGcnOptions options;
  app::OptionsFromJson(nlohmann::json::parse(options_json), &options);
  app::TrainGcnHooks hooks;
  d.Checked();  // a mapped file truncated on disk is refused, not read (SIGBUS)
  hooks.data = d.data;
  hooks.probabilities = predict;
  hooks.history = true;
  // The per-epoch call into Python only when someone listens (a callback, a progress bar); the history comes
  // from the result either way.
  if (!on_epoch.is_none()) {
    hooks.on_epoch = [&](const gcn::EpochStats& s) {
      const std::string line = s.ToJson().dump();
      py::gil_scoped_acquire acquire;
      on_epoch(line);  // a Python exception propagates as error_already_set and stops training
    };
  }
  app::TrainGcnOutcome r = RunReleased([&] { return app::TrainGcn(options, hooks); });
  py::object probs = predict ? py::object(CopyMatrix(r.probabilities)) : py::object(py::none());
  return py::make_tuple(r.result.dump(), probs);
}

// `tessel.predict_gcn`: app::PredictGcnProbabilities on the caller's dataset with the options of `tessel predict gcn`
// (their Python keywords as JSON).
py::array_t<float> PredictGcn(const NodeData& d, const std::string& options_json) {
  app::PredictGcnOptions options;
  app::OptionsFromJson(nlohmann::json::parse(options_json), &options);
  kernels::Matrix probs = RunReleased([&] { return app::PredictGcnProbabilities(options, d.Checked()); });
  return CopyMatrix(probs);
}

// `tessel.partition`: app::PartitionData on the caller's dataset with the options of `tessel partition` (their
// Python keywords as JSON); returns the description written to partitions.json, with the path and the time.
std::string Partition(const NodeData& d, const std::string& options_json) {
  app::PartitionOptions options;
  app::OptionsFromJson(nlohmann::json::parse(options_json), &options);
  return RunReleased([&] {
    const partition::PartitionResult r = app::PartitionData(options, d.Checked());
    nlohmann::ordered_json j = r.description;
    j["path"] = std::filesystem::absolute(options.output).string();
    j["seconds"] = r.timings.total;
    return j.dump();
  });
}

}  // namespace

void RegisterGcn(py::module_& m) {
  m.def(
      "gcn_params", [] { return app::DescribeOptions(app::TrainGcnOptions{}).dump(); },
      "The options of `tessel train gcn` offered to Python (name, help, flag, default) as JSON");
  m.def("train_gcn", &TrainGcn, py::arg("data"), py::arg("options_json"), py::arg("predict"), py::arg("on_epoch"));
  m.def(
      "predict_gcn_params", [] { return app::DescribeOptions(app::PredictGcnOptions{}).dump(); },
      "The options of `tessel predict gcn` offered to Python as JSON");
  m.def("predict_gcn", &PredictGcn, py::arg("data"), py::arg("options_json"));
  m.def(
      "partition_params", [] { return app::DescribeOptions(app::PartitionOptions{}).dump(); },
      "The options of `tessel partition` offered to Python as JSON");
  m.def("partition", &Partition, py::arg("data"), py::arg("options_json"));
}

}  // namespace tessel::python

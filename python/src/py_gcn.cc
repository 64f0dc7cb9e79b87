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

Context MakeContext(uint64_t seed, int threads, const std::string& device, int device_id) {
  TESSEL_CHECK(threads >= 0, "threads={} must be 0 (all cores) or positive", threads);
  Context ctx;
  ctx.device = ParseDevice(device);
  ctx.device_id = ChooseCudaDevice(device_id);
  ctx.seed = seed;
  ctx.threads = threads;
  if (ctx.IsCuda()) ctx.RequireCuda();
  return ctx;
}

// A Buffer over the memory of `b` (no copy), kept alive by `owner`.
template <typename T>
Buffer<T> Share(const Buffer<T>& b, const std::shared_ptr<void>& owner) {
  const std::span<const T> host = b.Host();
  return Buffer<T>::Borrow(owner, const_cast<T*>(host.data()), host.size());
}

// `tessel train gcn --random-split TRAIN,VAL,TEST --seed SEED` on a dataset held by Python: the dataset's graph,
// features and labels shared (no copy; the caller's dataset keeps them alive) with a new split made by the CLI's
// parser and split (datasets::ParseSplitFractions, AssignRandomSplit). The caller's dataset keeps its own split.
std::shared_ptr<const datasets::NodeDataset> WithRandomSplit(const NodeData& d, const std::array<double, 3>& fractions,
                                                             uint64_t seed) {
  const datasets::NodeDataset& src = *d.data;
  const std::shared_ptr<void> owner = d.data;
  auto out = std::make_shared<datasets::NodeDataset>();
  out->name = src.name;
  out->graph = std::visit(
      [&](const auto& g) -> datasets::AnyGraph {
        return std::decay_t<decltype(g)>(Share(g.indptr(), owner), Share(g.indices(), owner),
                                         Share(g.weights(), owner));
      },
      src.graph);
  out->features.num_rows = src.features.num_rows;
  out->features.dim = src.features.dim;
  out->features.sparse = src.features.sparse;
  out->features.dense = Share(src.features.dense, owner);
  out->features.indptr = Share(src.features.indptr, owner);
  out->features.indices = Share(src.features.indices, owner);
  out->features.values = Share(src.features.values, owner);
  out->labels = Share(src.labels, owner);
  out->num_classes = src.num_classes;
  out->fingerprint = src.fingerprint;  // graph, features and labels: unchanged
  // The CLI's text form, in the shortest decimal that reads back as the same doubles.
  const std::string text = fmt::format("{},{},{}", fractions[0], fractions[1], fractions[2]);
  datasets::AssignRandomSplit(*out, datasets::ParseSplitFractions(text), seed);
  return out;
}

// The configuration from the JSON of tessel.train_gcn's keyword arguments (names of TrainConfig::Params), with the
// same rules as `tessel train gcn`: fanouts only for sampled runs, dropped for full batch.
gcn::TrainConfig MakeConfig(const std::string& params_json, const std::string& checkpoint, int checkpoint_every,
                            bool resume, bool force) {
  const nlohmann::json given = nlohmann::json::parse(params_json);
  gcn::TrainConfig c = gcn::TrainConfig::UserDefaults();
  ParamsFromJson(given, &c);
  if (c.batch_size == 0) {
    TESSEL_CHECK(!given.contains("fanouts") && !given.contains("replace"),
                 "fanouts and replace apply to sampled mini-batches: add batch_size=N (seed nodes per step) or drop "
                 "them (full-batch training uses every neighbour)");
    c.fanouts.clear();
  }
  c.checkpoint_dir = checkpoint;
  c.checkpoint_every = checkpoint_every;
  c.resume = resume;
  gcn::CheckCheckpointTarget(c, force, {}, {}, "checkpoint");
  c.Validate(false);
  return c;
}

py::tuple TrainGcn(const NodeData& d, const std::string& params_json, uint64_t seed, int threads,
                   const std::string& device, int device_id, const std::string& checkpoint, int checkpoint_every,
                   bool resume, bool force, bool predict, const std::optional<std::array<double, 3>>& random_split,
                   py::object on_epoch) {
  const gcn::TrainConfig c = MakeConfig(params_json, checkpoint, checkpoint_every, resume, force);
  const Context ctx = MakeContext(seed, threads, device, device_id);
  std::string result_json;
  kernels::Matrix probabilities;
  RunReleased([&] {
    ThreadLimit limit(threads);
    const std::shared_ptr<const datasets::NodeDataset> data =
        random_split ? WithRandomSplit(d, *random_split, seed) : d.data;
    gcn::GcnTrainer trainer(*data, c, ctx);
    // The per-epoch call into Python only when someone listens (a callback, a progress bar); the history comes
    // from the result either way.
    std::function<void(const gcn::EpochStats&)> listener;
    if (!on_epoch.is_none()) {
      listener = [&](const gcn::EpochStats& s) {
        const std::string line = s.ToJson().dump();
        py::gil_scoped_acquire acquire;
        on_epoch(line);  // a Python exception propagates as error_already_set and stops training
      };
    }
    const gcn::TrainResult r = trainer.Train(listener);
    nlohmann::json result = r.ToJson();
    nlohmann::json history = nlohmann::json::array();
    for (const gcn::EpochStats& s : r.epochs) history.push_back(s.ToJson());
    result["history"] = std::move(history);
    result["dataset"] = data->name;
    result["split"] = {{"train", data->train.size()}, {"val", data->val.size()}, {"test", data->test.size()}};
    result["config"] = trainer.config().ToJson(false);
    result["seed"] = seed;
    result_json = result.dump();
    if (predict) probabilities = trainer.PredictProbabilities();
  });
  py::object probs = predict ? py::object(CopyMatrix(probabilities)) : py::object(py::none());
  return py::make_tuple(result_json, probs);
}

py::array_t<float> PredictGcn(const NodeData& d, const std::string& checkpoint, int threads, const std::string& device,
                              int device_id) {
  const Context ctx = MakeContext(0, threads, device, device_id);
  kernels::Matrix probs = RunReleased([&] {
    ThreadLimit limit(threads);
    return gcn::PredictFromCheckpoint(ctx, *d.data, checkpoint);
  });
  return CopyMatrix(probs);
}

std::string Partition(const NodeData& d, int32_t parts, const std::string& output, const std::string& method,
                      const std::string& balance, const std::string& objective, const std::string& metis_algorithm,
                      uint64_t seed, double imbalance, bool force, int threads) {
  TESSEL_CHECK(parts >= 1, "parts={} must be at least 1", parts);
  TESSEL_CHECK(threads >= 0, "threads={} must be 0 (all cores) or positive", threads);
  partition::PartitionOptions o;
  o.method = partition::ParseMethod(method);
  o.num_parts = parts;
  if (balance != "auto") o.balance = partition::ParseBalance(balance);
  o.objective = partition::ParseObjective(objective);
  o.metis_algorithm = partition::ParseMetisAlgorithm(metis_algorithm);
  o.seed = seed;
  o.imbalance = imbalance;
  CheckOutputPath(output, OutputKind::kPartitionFolder, force, "output");
  return RunReleased([&] {
    ThreadLimit limit(threads);
    const partition::PartitionResult r = partition::PartitionToFolder(*d.data, o, output, force);
    nlohmann::ordered_json j = r.description;
    j["path"] = std::filesystem::absolute(output).string();
    j["seconds"] = r.timings.total;
    return j.dump();
  });
}

}  // namespace

void RegisterGcn(py::module_& m) {
  m.def(
      "gcn_params", [] { return DescribeParams(gcn::TrainConfig::UserDefaults()).dump(); },
      "The parameters of `tessel train gcn` (name, help, flag, default) as JSON");
  m.def("train_gcn", &TrainGcn, py::arg("data"), py::arg("params_json"), py::arg("seed"), py::arg("threads"),
        py::arg("device"), py::arg("device_id"), py::arg("checkpoint"), py::arg("checkpoint_every"), py::arg("resume"),
        py::arg("force"), py::arg("predict"), py::arg("random_split"), py::arg("on_epoch"));
  m.def("predict_gcn", &PredictGcn, py::arg("data"), py::arg("checkpoint"), py::arg("threads"), py::arg("device"),
        py::arg("device_id"));
  m.def("partition", &Partition, py::arg("data"), py::arg("parts"), py::arg("output"), py::arg("method"),
        py::arg("balance"), py::arg("objective"), py::arg("metis_algorithm"), py::arg("seed"), py::arg("imbalance"),
        py::arg("force"), py::arg("threads"));
}

}  // namespace tessel::python

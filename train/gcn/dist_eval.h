// Distributed GCN evaluation (DESIGN.md §4 "Distributed GCN"): layer-wise full-neighbour inference of the owned
// nodes over the 1-hop halo (one halo exchange per layer, no sampling, no skew) and global split metrics.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "core/context.h"
#include "partition/partition_build.h"
#include "train/gcn/data.h"
#include "train/gcn/dist_features.h"
#include "train/gcn/metrics.h"
#include "train/gcn/model.h"

namespace tessel::train::gcn {

// Metrics over three node lists (train, val, test: indices into pred and labels) with per-class counts summed over
// ranks in one allreduce (purpose "stats"), metrics.cc's definitions. Collective.
void SplitMetrics(comm::Communicator& comm, int32_t classes, std::span<const int32_t> pred,
                  std::span<const int32_t> labels, std::span<const int64_t> train, std::span<const int64_t> val,
                  std::span<const int64_t> test, ClassMetrics* train_out, ClassMetrics* val_out,
                  ClassMetrics* test_out);

class DistEvaluator {
 public:
  // Collective: builds the halo exchanger and the evaluation adjacency, Â (GCN) or mean (SAGE) rows of the owned
  // nodes over local ids, with the halo degrees from their owners (one exchange).
  DistEvaluator(const partition::LocalPart& part, comm::Communicator& comm, ModelKind kind);
  DistEvaluator(const DistEvaluator&) = delete;
  DistEvaluator& operator=(const DistEvaluator&) = delete;

  // Output rows (logits) [num_owned x classes] of every owned node from the owned input rows x (no dropout): x's
  // first num_owned rows, when it holds more (dense: the device feature table, DistFeatureStore::EvalInput, whose
  // products are cut to the owned rows on the device). Collective.
  Matrix Logits(const Context& ctx, const GcnModel& model, const FeatureMatrix& x) const;
  // The same with each layer's halo rows sent through the row codec of `spec` (--feature-compress; HaloExchanger's
  // compressed Exchange), QSGD's rounding keyed by `seed` and the layer; `stats` (may be null) receives the bytes
  // and seconds. Spec none: the exact Logits. Every rank passes the same spec and seed. Collective.
  Matrix Logits(const Context& ctx, const GcnModel& model, const FeatureMatrix& x, const comm::CompressSpec& spec,
                uint64_t seed, FetchStats* stats) const;

  // Metrics over the global train, val and test splits of the owned predictions `pred` (labels per owned node):
  // per-class counts summed over ranks in one allreduce (purpose "stats"). Collective.
  void Metrics(std::span<const int32_t> pred, std::span<const int32_t> labels, ClassMetrics* train, ClassMetrics* val,
               ClassMetrics* test) const;

 private:
  const partition::LocalPart* part_;
  comm::Communicator* comm_;
  HaloExchanger halo_;
  SparseMatrix adj_;  // [num_owned x num_local]
};

}  // namespace tessel::train::gcn

// DistEvaluator: distributed layer-wise full-neighbour GCN / GraphSAGE inference over the 1-hop halo, and split
// metrics from per-class confusion counts summed over ranks (metrics.cc's definitions).
#include "train/gcn/dist_eval.h"

#include <cmath>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/dense.h"
#include "kernels/gather.h"
#include "kernels/loss.h"
#include "kernels/sparse.h"

namespace tessel::train::gcn {
namespace {

// Per-class confusion counts of one split, laid out for one allreduce: [count, correct, tp[C], fp[C], fn[C]].
void CountSplit(std::span<const int32_t> pred, std::span<const int32_t> labels, std::span<const int64_t> nodes,
                int32_t classes, std::span<int64_t> out) {
  const auto c = static_cast<size_t>(classes);
  for (int64_t u : nodes) {
    const int32_t y = labels[static_cast<size_t>(u)];
    const int32_t p = pred[static_cast<size_t>(u)];
    TESSEL_CHECK(y >= 0 && y < classes, "node {} has label {} outside [0, {})", u, y, classes);
    ++out[0];
    if (p == y) {
      ++out[1];
      ++out[2 + static_cast<size_t>(y)];
    } else {
      ++out[2 + 2 * c + static_cast<size_t>(y)];
      if (p >= 0 && p < classes) ++out[2 + c + static_cast<size_t>(p)];
    }
  }
}

// ClassMetrics from summed counts, with metrics.cc's definitions (F1 = 2TP / (2TP + FP + FN), macro average).
ClassMetrics MetricsFromCounts(std::span<const int64_t> in, int32_t classes) {
  const auto c = static_cast<size_t>(classes);
  ClassMetrics m;
  m.count = in[0];
  m.accuracy = m.count > 0 ? static_cast<double>(in[1]) / static_cast<double>(m.count) : 0.0;
  m.f1.resize(c);
  double sum = 0;
  for (size_t k = 0; k < c; ++k) {
    const int64_t tp = in[2 + k];
    const int64_t denom = 2 * tp + in[2 + c + k] + in[2 + 2 * c + k];
    m.f1[k] = denom > 0 ? 2.0 * static_cast<double>(tp) / static_cast<double>(denom) : 0.0;
    sum += m.f1[k];
  }
  m.macro_f1 = sum / static_cast<double>(c);
  return m;
}

// Â or mean-aggregation rows of the owned nodes over local ids, with the halo degrees from their owners (one
// HaloExchanger round). Entry order and weights follow data.cc's Normalized: self term first for GCN.
SparseMatrix EvalAdjacency(const partition::LocalPart& part, const HaloExchanger& halo, bool gcn) {
  const int64_t n = part.num_owned;
  const auto p = part.graph.indptr().Host();
  const auto idx = part.graph.indices().Host();
  Matrix own_deg(n, 1);
  auto od = own_deg.Mut();
  // Row lengths from the integer degrees: the float copy that travels is exact only below 2^24, and a rounded
  // length would size a row differently from the entries written into it.
  std::vector<int64_t> own_d(static_cast<size_t>(n));
  for (int64_t u = 0; u < n; ++u) {
    int64_t d = 0;
    for (int64_t e = p[u]; e < p[u + 1]; ++e) d += idx[e] != u ? 1 : 0;
    own_d[static_cast<size_t>(u)] = d;
    od[u] = static_cast<float>(d);
  }
  // [num_local x 1]; degrees below 2^24 are exact in float, larger ones within float rounding (normalisation only)
  const Matrix deg_all = halo.Exchange(own_deg);
  const auto dv = deg_all.View();
  auto deg = [&](int64_t v) { return static_cast<double>(dv[static_cast<size_t>(v)]) + (gcn ? 1.0 : 0.0); };
  std::vector<int64_t> out_p(static_cast<size_t>(n + 1), 0);
  for (int64_t u = 0; u < n; ++u) out_p[u + 1] = out_p[u] + own_d[static_cast<size_t>(u)] + (gcn ? 1 : 0);
  std::vector<int32_t> out_i(static_cast<size_t>(out_p.back()));
  std::vector<float> out_v(out_i.size());
  for (int64_t u = 0; u < n; ++u) {
    int64_t k = out_p[u];
    if (gcn) {
      out_i[k] = static_cast<int32_t>(u);
      out_v[k++] = static_cast<float>(1.0 / deg(u));
    }
    for (int64_t e = p[u]; e < p[u + 1]; ++e) {
      const int64_t v = idx[e];
      if (v == u) continue;
      out_i[k] = static_cast<int32_t>(v);
      out_v[k++] = static_cast<float>(gcn ? 1.0 / std::sqrt(deg(u) * deg(v)) : 1.0 / deg(u));
    }
  }
  return SparseMatrix{n, part.num_local(), Buffer<int64_t>(std::move(out_p)), Buffer<int32_t>(std::move(out_i)),
                      Buffer<float>(std::move(out_v))};
}

}  // namespace

DistEvaluator::DistEvaluator(const partition::LocalPart& part, comm::Communicator& comm, ModelKind kind)
    : part_(&part), comm_(&comm), halo_(part, comm), adj_(EvalAdjacency(part, halo_, kind == ModelKind::kGcn)) {}

Matrix DistEvaluator::Logits(const Context& ctx, const GcnModel& model, const FeatureMatrix& x) const {
  return Logits(ctx, model, x, comm::CompressSpec{}, 0, nullptr);
}

Matrix DistEvaluator::Logits(const Context& ctx, const GcnModel& model, const FeatureMatrix& x,
                             const comm::CompressSpec& spec, uint64_t seed, FetchStats* stats) const {
  const ModelConfig& mc = model.config();
  const bool sage = mc.kind == ModelKind::kSage;
  const auto& params = model.params();
  const size_t per_layer = 1 + (sage ? 1 : 0) + (mc.bias ? 1 : 0);
  Matrix h;  // owned rows of the previous layer's output
  for (int l = 0; l < mc.layers; ++l) {
    const size_t first = static_cast<size_t>(l) * per_layer;
    const Matrix& w = params[first].value;
    const bool sparse_in = l == 0 && x.is_sparse;
    const Matrix& in = l == 0 && !x.is_sparse ? x.dense : h;
    // A dense input with more rows than the owned ones (the device table: owned rows first) is multiplied whole and
    // the product cut to its owned rows (a few columns per row, not the input's width).
    const bool cut = l == 0 && !x.is_sparse && in.rows > part_->num_owned;
    const auto owned_product = [&](const Matrix& weights, Matrix* out) {
      if (!cut) {
        kernels::Gemm(ctx, in, false, weights, false, 1.0F, 0.0F, out);
        return;
      }
      Matrix all;
      kernels::Gemm(ctx, in, false, weights, false, 1.0F, 0.0F, &all);
      kernels::GatherRowsDropout(ctx, all, std::span<const int64_t>(), part_->num_owned, 0.0F, StreamKey{}, out);
    };
    TESSEL_CHECK(x.is_sparse || l > 0 || in.rows >= part_->num_owned, "evaluation: {} input rows for {} owned nodes",
                 in.rows, part_->num_owned);
    Matrix t;  // [num_owned x out]: transform first, then aggregate (model.cc's order)
    if (sparse_in) {
      kernels::SpMM(ctx, x.sparse, w, &t);
    } else {
      owned_product(w, &t);
    }
    // [num_local x out]; compressed, the rows of T travel as the training's remote feature rows do (one scale a row)
    const Matrix t_all = halo_.Exchange(t, spec, Mix64(seed ^ static_cast<uint64_t>(l + 1)), stats);
    Matrix z;
    kernels::SpMM(ctx, adj_, t_all, &z);
    if (sage) {
      const Matrix& w_self = params[first + 1].value;
      if (sparse_in) {
        Matrix self;
        kernels::SpMM(ctx, x.sparse, w_self, &self);
        auto sv = self.View();
        auto zv = z.Mut();
        for (size_t i = 0; i < zv.size(); ++i) zv[i] += sv[i];
      } else if (!cut) {
        kernels::Gemm(ctx, in, false, w_self, false, 1.0F, 1.0F, &z);
      } else {
        Matrix self;
        owned_product(w_self, &self);
        kernels::Axpy(ctx, 1.0F, self, &z);
      }
    }
    if (mc.bias) kernels::AddBias(ctx, params[first + per_layer - 1].value, &z);
    if (l < mc.layers - 1) kernels::Relu(ctx, z, &z);
    h = std::move(z);
  }
  return h;
}

void SplitMetrics(comm::Communicator& comm, int32_t classes, std::span<const int32_t> pred,
                  std::span<const int32_t> labels, std::span<const int64_t> train, std::span<const int64_t> val,
                  std::span<const int64_t> test, ClassMetrics* train_out, ClassMetrics* val_out,
                  ClassMetrics* test_out) {
  const size_t split_len = 2 + 3 * static_cast<size_t>(classes);
  std::vector<int64_t> counts(3 * split_len, 0);
  const std::span<const int64_t> splits[3] = {train, val, test};
  for (size_t s = 0; s < 3; ++s) {
    CountSplit(pred, labels, splits[s], classes, std::span<int64_t>(counts).subspan(s * split_len, split_len));
  }
  comm.Allreduce<int64_t>(counts, comm::ReduceOp::kSum, "stats").ThrowIfError();
  ClassMetrics* out[3] = {train_out, val_out, test_out};
  for (size_t s = 0; s < 3; ++s) {
    *out[s] = MetricsFromCounts(std::span<const int64_t>(counts).subspan(s * split_len, split_len), classes);
  }
}

void DistEvaluator::Metrics(std::span<const int32_t> pred, std::span<const int32_t> labels, ClassMetrics* train,
                            ClassMetrics* val, ClassMetrics* test) const {
  SplitMetrics(*comm_, part_->num_classes, pred, labels, part_->train.Host(), part_->val.Host(), part_->test.Host(),
               train, val, test);
}

}  // namespace tessel::train::gcn

// Forward and backward passes of the GCN / GraphSAGE-mean stack. Each dense layer either transforms first
// (T = H·W, Z = A·T: full graphs, wide or sparse features) or aggregates first (Z = (A·H)·W: sampled blocks with
// far fewer destinations than sources), whichever needs fewer multiply-adds (LayerOrder). Dropout is fused into the
// first layer's gather and aggregation, and its mask is regenerated in the backward pass (kernels/dropout_math.h).
// The backward pass uses the transposed aggregation (Aᵀ) and the kernels in kernels/ for everything else.
#include "train/gcn/model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "core/memory_budget.h"
#include "kernels/dense.h"
#include "kernels/gather.h"
#include "kernels/sparse.h"

namespace tessel::train::gcn {
namespace {

// A matrix viewing the first `rows` rows of m (no copy; writes go to m).
Matrix RowPrefix(const Matrix& m, int64_t rows) {
  Matrix v;
  v.rows = rows;
  v.cols = m.cols;
  v.data = Buffer<float>::Borrow(nullptr, const_cast<float*>(m.View().data()), static_cast<size_t>(rows * m.cols));
  return v;
}

template <typename T>
Buffer<T> BorrowAll(const Buffer<T>& b, size_t n) {
  return Buffer<T>::Borrow(nullptr, const_cast<T*>(b.Host().data()), n);
}

// The first `rows` rows of a CSR matrix (no copy).
SparseMatrix SparsePrefix(const SparseMatrix& a, int64_t rows) {
  const auto nnz = static_cast<size_t>(a.indptr[static_cast<size_t>(rows)]);
  return SparseMatrix{rows, a.cols, BorrowAll(a.indptr, static_cast<size_t>(rows + 1)), BorrowAll(a.indices, nnz),
                      a.has_values() ? BorrowAll(a.values, nnz) : Buffer<float>()};
}

}  // namespace

// The transpose of a's structure (rows and columns swapped, rows sorted: cuSPARSE's csr2csc order) and, for each
// entry of it, the entry of a it comes from; rebuilt only when a's structure changes (Buffer versions).
void GcnModel::SparseTransposeOf(const SparseMatrix& a, LayerState* s) {
  const std::array<uint64_t, 2> versions{a.indptr.version(), a.indices.version()};
  if (versions == s->t_versions && s->in_t.rows == a.cols) return;
  const auto p = a.indptr.Host();
  const auto idx = a.indices.Host();
  std::vector<int64_t> tp(static_cast<size_t>(a.cols + 1), 0);
  for (const int32_t c : idx) ++tp[static_cast<size_t>(c) + 1];
  for (int64_t c = 0; c < a.cols; ++c) tp[static_cast<size_t>(c + 1)] += tp[static_cast<size_t>(c)];
  std::vector<int64_t> next(tp.begin(), tp.end() - 1);
  std::vector<int32_t> ti(idx.size());
  std::vector<int64_t> from(idx.size());
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t e = p[static_cast<size_t>(r)]; e < p[static_cast<size_t>(r + 1)]; ++e) {
      const auto k = static_cast<size_t>(next[static_cast<size_t>(idx[static_cast<size_t>(e)])]++);
      ti[k] = static_cast<int32_t>(r);
      from[k] = e;
    }
  }
  s->in_t =
      SparseMatrix{a.cols, a.rows, Buffer<int64_t>(std::move(tp)), Buffer<int32_t>(std::move(ti)), Buffer<float>()};
  s->in_t_from = Buffer<int64_t>(std::move(from));
  s->t_versions = versions;
}

ModelKind ParseModelKind(std::string_view name) {
  for (const auto& [kind, kind_name] : EnumNames<ModelKind>::kNames) {
    if (name == kind_name) return kind;
  }
  throw Error(fmt::format("unknown model '{}' (use gcn or sage)", name));
}

std::string_view ModelKindName(ModelKind kind) { return EnumName(kind); }

void ModelConfig::Validate() const {
  TESSEL_CHECK(in_dim > 0, "the model needs input features (feature dimension is {})", in_dim);
  TESSEL_CHECK(num_classes > 1, "the model needs at least 2 classes, got {}", num_classes);
  TESSEL_CHECK(layers >= 1, "--layers must be >= 1, got {}", layers);
  TESSEL_CHECK(hidden >= 1 || layers == 1, "--hidden must be >= 1, got {}", hidden);
  TESSEL_CHECK(dropout >= 0.0F && dropout < 1.0F, "--dropout must be in [0, 1), got {}", dropout);
}

GcnModel::GcnModel(const ModelConfig& config, uint64_t seed) : config_(config) {
  config_.Validate();
  // The weights, their gradients and Adam's two moments, checked as a whole before any is made, so that a large
  // --hidden or --layers is refused by name rather than failing as a bare out-of-memory.
  double parameters = 0;
  for (int l = 0; l < config_.layers; ++l) {
    parameters += static_cast<double>(InDim(l)) * static_cast<double>(OutDim(l)) *
                      (config_.kind == ModelKind::kSage ? 2.0 : 1.0) +
                  (config_.bias ? static_cast<double>(OutDim(l)) : 0.0);
  }
  const std::string sizes = fmt::format("--hidden {}, --layers {}, {} input features, {} classes", config_.hidden,
                                        config_.layers, config_.in_dim, config_.num_classes);
  memory::CheckArray(
      parameters >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(parameters),
      4 * static_cast<int64_t>(sizeof(float)),
      fmt::format("the model's {:.0f} parameters with their gradients and Adam moments ({})", parameters, sizes),
      "lower --hidden or --layers");
  Rng rng(StreamKey{.seed = seed, .purpose = 0x1417});
  for (int l = 0; l < config_.layers; ++l) {
    param_index_.push_back(params_.size());
    const int64_t in = InDim(l);
    const int64_t out = OutDim(l);
    auto glorot = [&](const std::string& name) {
      Param p{name, Matrix(in, out), Matrix(in, out), l == 0};
      const double limit = std::sqrt(6.0 / static_cast<double>(in + out));
      for (float& v : p.value.Mut()) v = static_cast<float>((2.0 * rng.Uniform() - 1.0) * limit);
      params_.push_back(std::move(p));
    };
    glorot(fmt::format("layer{}.weight", l));
    if (config_.kind == ModelKind::kSage) glorot(fmt::format("layer{}.weight_self", l));
    if (config_.bias) params_.push_back(Param{fmt::format("layer{}.bias", l), Matrix(1, out), Matrix(1, out), l == 0});
  }
}

int64_t GcnModel::InDim(int l) const { return l == 0 ? config_.in_dim : config_.hidden; }
int64_t GcnModel::OutDim(int l) const { return l == config_.layers - 1 ? config_.num_classes : config_.hidden; }

bool GcnModel::AggregateFirst(const SparseMatrix& a, int64_t n_src, int l, bool materialize) const {
  if (order_ != LayerOrder::kAuto) return order_ == LayerOrder::kAggregateFirst;
  // Multiply-adds of each order (the SAGE self term is the same in both); transform first also writes its input
  // once when it is gathered or dropped out.
  const auto in = static_cast<double>(InDim(l));
  const auto out = static_cast<double>(OutDim(l));
  const auto nnz = static_cast<double>(a.nnz());
  const double transform_first =
      static_cast<double>(n_src) * in * out + nnz * out + (materialize ? static_cast<double>(n_src) * in : 0.0);
  const double aggregate_first = nnz * in + static_cast<double>(a.rows) * in * out;
  return aggregate_first < transform_first;
}

const Matrix& GcnModel::Forward(const Context& ctx, const FeatureMatrix& x, std::span<const int64_t> x_rows,
                                std::span<const LayerGraph> graphs, bool training, const StreamKey& dropout_key,
                                const Buffer<int64_t>* x_row_ids) {
  const int layers = config_.layers;
  TESSEL_CHECK(static_cast<int>(graphs.size()) == layers, "the model has {} layers but {} graphs were given", layers,
               graphs.size());
  TESSEL_CHECK(x.cols() == config_.in_dim, "features have {} columns, the model expects {}", x.cols(), config_.in_dim);
  const bool drop = training && config_.dropout > 0.0F;
  const float p = drop ? config_.dropout : 0.0F;
  state_.resize(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    LayerState& s = state_[static_cast<size_t>(l)];
    s.graph = graphs[static_cast<size_t>(l)];
    const SparseMatrix& a = *s.graph.adj;
    s.key = dropout_key;
    s.key.purpose += static_cast<uint64_t>(l);
    s.sparse_in = l == 0 && x.is_sparse;
    const std::span<const int64_t> rows = l == 0 ? x_rows : std::span<const int64_t>();
    // On a device the input row ids are read there by every gather of the layer: the caller's copy already on the
    // device (x_row_ids; with dense features it may come without a host copy, x_rows empty), or x_ids_ (uploaded
    // once per step).
    const bool ids_only = ctx.IsCuda() && l == 0 && x_row_ids != nullptr && rows.empty();
    TESSEL_CHECK(!ids_only || !x.is_sparse, "sparse input rows are gathered from host ids (x_rows), none given");
    const bool gathered = !rows.empty() || ids_only;  // the input's rows read through ids
    const bool device_ids = ctx.IsCuda() && gathered;
    const Buffer<int64_t>* ids = &x_ids_;
    if (device_ids && x_row_ids != nullptr) {
      TESSEL_CHECK(ids_only || x_row_ids->size() == rows.size(), "{} device row ids for {} input rows",
                   x_row_ids->size(), rows.size());
      ids = x_row_ids;
    } else if (device_ids) {
      x_ids_.ResizeUninitialized(rows.size());
      std::copy(rows.begin(), rows.end(), x_ids_.MutableHost().begin());
    }
    const int64_t n_src = l == 0 ? (ids_only ? static_cast<int64_t>(x_row_ids->size())
                                             : (rows.empty() ? x.rows() : static_cast<int64_t>(rows.size())))
                                 : state_[static_cast<size_t>(l - 1)].out.rows;
    TESSEL_CHECK(a.cols == n_src, "layer {}: aggregation has {} source columns but {} input rows", l, a.cols, n_src);
    const bool sage = config_.kind == ModelKind::kSage;
    TESSEL_CHECK(!sage || a.rows <= n_src, "layer {}: {} destination rows but only {} source rows", l, a.rows, n_src);
    s.agg_first = s.fused_drop = false;
    s.in_ref = nullptr;
    if (s.sparse_in) {
      const SparseMatrix& xs = x.sparse;
      const SparseMatrix* in = &xs;
      s.self_sp = SparseMatrix();
      if (!rows.empty()) {
        // A sampled batch's input rows, gathered (on a device, there: the ids read in place, nothing through the
        // host) and dropped out in place. The SAGE self term's rows (the first a.rows) are gathered on their own
        // on a device (a host prefix view would download the matrix); dropout's mask, a function of the entry
        // index, gives them the same values.
        const auto gather = [&](std::span<const int64_t> r, SparseMatrix* out) {
          *out = kernels::GatherSparseRows(ctx, xs, r, device_ids ? ids : nullptr);
          if (!drop) return;
          if (out->has_values()) {
            kernels::Dropout(ctx, out->values, p, s.key, &out->values);
          } else {  // value-less features: dropout of their implied ones (a grow-only constant, so on a device it
                    // goes up only when it grows)
            const auto nnz = static_cast<size_t>(out->nnz());
            if (s.ones.size() < nnz) s.ones = Buffer<float>(std::max(nnz, s.ones.size() * 2), 1.0F);
            kernels::DropoutPrefix(ctx, s.ones, out->nnz(), p, s.key, &out->values);
          }
        };
        gather(rows, &s.in_sp);
        s.sp_versions = {};  // in_sp no longer borrows the features' structure
        in = &s.in_sp;
        if (sage && a.rows < in->rows && ctx.IsCuda()) gather(rows.first(static_cast<size_t>(a.rows)), &s.self_sp);
      } else if (drop) {
        // Without dropout the features themselves are the input (their device mirrors persist between steps). With
        // dropout, a copy that borrows their structure, rebuilt only when the features change (Buffer versions),
        // takes the dropped values into the same buffer every step: nothing is allocated or uploaded for it.
        const std::array<uint64_t, 3> versions{xs.indptr.version(), xs.indices.version(), xs.values.version()};
        if (versions != s.sp_versions || s.in_sp.rows != xs.rows) {
          s.in_sp = SparseMatrix{xs.rows, xs.cols, BorrowAll(xs.indptr, xs.indptr.size()),
                                 BorrowAll(xs.indices, xs.indices.size()), Buffer<float>()};
          s.ones = xs.has_values() ? Buffer<float>() : Buffer<float>(static_cast<size_t>(xs.nnz()), 1.0F);
          s.sp_versions = versions;
        }
        kernels::DropoutPrefix(ctx, xs.has_values() ? xs.values : s.ones, xs.nnz(), p, s.key, &s.in_sp.values);
        in = &s.in_sp;
      }
      // Elsewhere the self rows are a prefix view of the input (its host arrays).
      if (sage && a.rows < in->rows && s.self_sp.indptr.empty()) s.self_sp = SparsePrefix(*in, a.rows);
      s.in_sp_ref = in;
      kernels::SpMM(ctx, *in, W(l).value, &s.work);
      kernels::SpMM(ctx, a, s.work, &s.out);
      if (sage) {  // out += in[0 .. dst)·W_self, added where out lives (no host round trip)
        kernels::SpMM(ctx, a.rows == in->rows ? *in : s.self_sp, WSelf(l).value, &s.self_in);
        kernels::Axpy(ctx, 1.0F, s.self_in, &s.out);
      }
    } else {
      const Matrix& src = l == 0 ? x.dense : state_[static_cast<size_t>(l - 1)].out;
      const bool materialize = drop || gathered;
      s.agg_first = AggregateFirst(a, n_src, l, materialize);
      s.fused_drop = !s.agg_first && !sage && drop && !gathered && kernels::DropoutGemmFuses(ctx, OutDim(l));
      if (s.agg_first) {
        // (A·drop(H))·W: the gather and the mask are fused into the aggregation; only the destinations' rows are
        // built (for the SAGE self term).
        s.in = Matrix();
        if (device_ids) {
          kernels::GatherSpMM(ctx, a, src, *ids, p, s.key, &s.agg);
        } else {
          kernels::GatherSpMM(ctx, a, src, rows, p, s.key, &s.agg);
        }
        kernels::Gemm(ctx, s.agg, false, W(l).value, false, 1.0F, 0.0F, &s.out);
        if (sage) {
          if (device_ids) {
            kernels::GatherRowsDropout(ctx, src, *ids, a.rows, p, s.key, &s.self_in);
          } else {
            kernels::GatherRowsDropout(ctx, src, rows.empty() ? rows : rows.first(static_cast<size_t>(a.rows)), a.rows,
                                       p, s.key, &s.self_in);
          }
          kernels::Gemm(ctx, s.self_in, false, WSelf(l).value, false, 1.0F, 1.0F, &s.out);
        }
      } else {
        if (materialize && !s.fused_drop && device_ids) {
          kernels::GatherRowsDropout(ctx, src, *ids, n_src, p, s.key, &s.in);
        } else if (materialize && !s.fused_drop) {
          kernels::GatherRowsDropout(ctx, src, rows, n_src, p, s.key, &s.in);
        } else {  // read in place (fused: dropped out inside the products): no copy, no host round trip
          s.in = Matrix();
          s.in_ref = &src;
        }
        const Matrix& in = s.in_ref != nullptr ? *s.in_ref : s.in;
        if (s.fused_drop) {
          kernels::DropoutGemm(ctx, in, false, p, s.key, W(l).value, &s.work);
        } else {
          kernels::Gemm(ctx, in, false, W(l).value, false, 1.0F, 0.0F, &s.work);
        }
        kernels::SpMM(ctx, a, s.work, &s.out);
        if (sage) {
          Matrix prefix;
          const Matrix& self_in = a.rows == in.rows ? in : (prefix = RowPrefix(in, a.rows));
          kernels::Gemm(ctx, self_in, false, WSelf(l).value, false, 1.0F, 1.0F, &s.out);
        }
      }
    }
    const bool hidden = l < layers - 1;
    if (config_.bias && hidden) {
      kernels::AddBiasRelu(ctx, B(l).value, &s.out);  // one pass: the same values as AddBias, then Relu
    } else if (config_.bias) {
      kernels::AddBias(ctx, B(l).value, &s.out);
    } else if (hidden) {
      kernels::Relu(ctx, s.out, &s.out);
    }
  }
  has_forward_ = true;
  last_training_ = drop;
  return state_.back().out;
}

void GcnModel::Backward(const Context& ctx, const Matrix& grad_logits) {
  TESSEL_CHECK(has_forward_, "Backward needs a Forward first");
  const bool sage = config_.kind == ModelKind::kSage;
  // din[0 .. dst) += dz·W_selfᵀ: the SAGE self term's share of the input gradient.
  auto add_self_grad = [&](const Matrix& dz, int l, int64_t dst, Matrix* din) {
    if (dst == din->rows) {
      kernels::Gemm(ctx, dz, false, WSelf(l).value, true, 1.0F, 1.0F, din);
    } else if (ctx.IsCuda()) {
      // A borrowed prefix would only update its own device mirror: add the rows where din lives instead.
      kernels::Gemm(ctx, dz, false, WSelf(l).value, true, 1.0F, 0.0F, &s_self_grad_);
      kernels::Axpy(ctx, 1.0F, s_self_grad_, din);
    } else {
      Matrix prefix = RowPrefix(*din, dst);
      kernels::Gemm(ctx, dz, false, WSelf(l).value, true, 1.0F, 1.0F, &prefix);
    }
  };
  auto transpose_times = [&](const LayerGraph& g, const Matrix& m, Matrix* out) {
    if (g.adj_t != nullptr) {
      kernels::SpMM(ctx, *g.adj_t, m, out);
    } else {
      kernels::SpMMTranspose(ctx, *g.adj, m, out);
    }
  };
  // The top layer reads grad_logits in place (no copy, so it can stay on the device); layer l < top reads the
  // input gradient layer l + 1 left in its grad_in. Every temporary is a per-layer workspace kept between steps.
  for (int l = config_.layers - 1; l >= 0; --l) {
    LayerState& s = state_[static_cast<size_t>(l)];
    const SparseMatrix& a = *s.graph.adj;
    if (l < config_.layers - 1) {
      Matrix& up = state_[static_cast<size_t>(l + 1)].grad_in;
      kernels::ReluBackward(ctx, s.out, up, &up);
    }
    const Matrix& dz = l < config_.layers - 1 ? state_[static_cast<size_t>(l + 1)].grad_in : grad_logits;
    if (config_.bias) kernels::BiasGrad(ctx, dz, &B(l).grad);
    Matrix& din = s.grad_in;
    if (s.agg_first) {
      kernels::Gemm(ctx, s.agg, true, dz, false, 1.0F, 0.0F, &W(l).grad);
      if (sage) kernels::Gemm(ctx, s.self_in, true, dz, false, 1.0F, 0.0F, &WSelf(l).grad);
      if (l == 0) break;
      kernels::Gemm(ctx, dz, false, W(l).value, true, 1.0F, 0.0F, &s.work);  // d(agg)
      transpose_times(s.graph, s.work, &din);
    } else {
      transpose_times(s.graph, dz, &s.work);  // dT
      if (s.sparse_in) {
        const SparseMatrix& in = *s.in_sp_ref;
        const std::array<uint64_t, 2> versions{in.indptr.version(), in.indices.version()};
        const bool same_structure = versions == s.last_in_versions;  // the whole graph's features, every step
        s.last_in_versions = versions;
        if (ctx.IsCuda() && same_structure) {
          // W.grad = inᵀ·dT through the transpose of in's structure, built once (SparseTransposeOf) and refilled
          // with in's values by a gather per step, instead of a transpose on the device every step. (A sampled
          // batch's input changes every step: it keeps the device transpose, which needs no upload.)
          SparseTransposeOf(in, &s);
          if (in.has_values()) kernels::GatherValues(ctx, in.values, s.in_t_from, &s.in_t.values);
          kernels::SpMM(ctx, s.in_t, s.work, &W(l).grad);
        } else {
          kernels::SpMMTranspose(ctx, *s.in_sp_ref, s.work, &W(l).grad);
        }
        if (sage) kernels::SpMMTranspose(ctx, a.rows == in.rows ? in : s.self_sp, dz, &WSelf(l).grad);
      } else if (s.fused_drop) {
        kernels::DropoutGemm(ctx, *s.in_ref, true, config_.dropout, s.key, s.work, &W(l).grad);
      } else {
        const Matrix& in = s.in_ref != nullptr ? *s.in_ref : s.in;
        kernels::Gemm(ctx, in, true, s.work, false, 1.0F, 0.0F, &W(l).grad);
        if (sage) {
          Matrix prefix;
          const Matrix& self_in = a.rows == in.rows ? in : (prefix = RowPrefix(in, a.rows));
          kernels::Gemm(ctx, self_in, true, dz, false, 1.0F, 0.0F, &WSelf(l).grad);
        }
      }
      if (l == 0) break;
      kernels::Gemm(ctx, s.work, false, W(l).value, true, 1.0F, 0.0F, &din);
    }
    if (sage) add_self_grad(dz, l, a.rows, &din);
    if (last_training_) kernels::DropoutBackward(ctx, din.data, config_.dropout, s.key, &din.data);
  }
}

}  // namespace tessel::train::gcn

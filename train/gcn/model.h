// The GCN model: a stack of graph convolution layers, Kipf & Welling GCN (Z = Â·H·W + b, "Semi-Supervised
// Classification with Graph Convolutional Networks", ICLR 2017) or GraphSAGE-mean (Hamilton et al., NIPS 2017:
// Z = H_dst·W_self + mean_j H_j·W_neigh + b), with dropout before every layer and ReLU between layers.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/params.h"
#include "core/rng.h"
#include "kernels/matrix.h"
#include "train/gcn/data.h"

namespace tessel::train::gcn {

using kernels::Matrix;
using kernels::SparseMatrix;

enum class ModelKind { kGcn, kSage };
ModelKind ParseModelKind(std::string_view name);  // "gcn" | "sage"; throws naming both otherwise
std::string_view ModelKindName(ModelKind kind);

struct ModelConfig {
  ModelKind kind = ModelKind::kGcn;
  int64_t in_dim = 0;
  int64_t hidden = 16;
  int64_t num_classes = 0;
  int layers = 2;
  float dropout = 0.5F;
  bool bias = true;
  void Validate() const;
};

// A trainable array with its gradient. `decay` marks the parameters weight decay applies to.
struct Param {
  std::string name;
  Matrix value;
  Matrix grad;
  bool decay = true;
};

// One layer's aggregation: adj is [num_dst x num_src] with the aggregation weights (Â rows for GCN, mean
// weights for SAGE); adj_t its transpose (may point to adj when it is symmetric and square). For SAGE the
// first num_dst source rows are the destination nodes themselves (DGL's block convention).
struct LayerGraph {
  const SparseMatrix* adj = nullptr;
  const SparseMatrix* adj_t = nullptr;
};

// Order of a dense layer's two products (Z = A·H·W). Transform first, T = H·W then A·T, is cheaper when there are
// about as many source rows as destination rows and H is wide (full-graph training); aggregate first, (A·H)·W,
// when a sampled block has far fewer destinations than sources (mini-batches: the first layer's GEMM runs over
// the destinations only, and its gathered input is never built). kAuto picks the one with fewer multiply-adds.
enum class LayerOrder { kAuto, kTransformFirst, kAggregateFirst };

class GcnModel {
 public:
  // Glorot-uniform weights and zero biases from the stream (seed, purpose "init").
  GcnModel(const ModelConfig& config, uint64_t seed);

  // Logits [rows of the last layer's adj x num_classes]. training = dropout on, with masks drawn from
  // `dropout_key` (layer l uses purpose key.purpose + l). Keeps what Backward needs.
  const Matrix& Forward(const Context& ctx, const FeatureMatrix& x, std::span<const LayerGraph> graphs, bool training,
                        const StreamKey& dropout_key) {
    return Forward(ctx, x, {}, graphs, training, dropout_key);
  }
  // The same with the first layer's input rows read through `x_rows`: input row i is x's row x_rows[i] (empty: x's
  // rows in order). A sampled batch passes the whole feature matrix and its first block's source ids: dense rows
  // are gathered inside the first layer's kernels (with dropout fused) instead of copied first; sparse rows are
  // gathered by GatherSparseRows (on a device, there) and dropped out in place. On a device, `x_row_ids` (when given)
  // holds x_rows already there (the GPU sampler's first block: Block::device_src) and the gathers read it in place;
  // otherwise x_rows go up once per step. Dense features on a device may be given x_row_ids alone (x_rows empty):
  // the input rows are then its size, read through it (no host copy of the ids needed).
  const Matrix& Forward(const Context& ctx, const FeatureMatrix& x, std::span<const int64_t> x_rows,
                        std::span<const LayerGraph> graphs, bool training, const StreamKey& dropout_key,
                        const Buffer<int64_t>* x_row_ids = nullptr);
  // Fills every Param::grad from the gradient of the loss with respect to the last logits.
  void Backward(const Context& ctx, const Matrix& grad_logits);

  std::vector<Param>& params() { return params_; }
  const std::vector<Param>& params() const { return params_; }
  const ModelConfig& config() const { return config_; }
  // Forces the order of every dense layer (tests compare the two); kAuto by default.
  void set_layer_order(LayerOrder order) { order_ = order; }

 private:
  struct LayerState {
    LayerGraph graph;
    StreamKey key;           // the dropout stream of this layer's input (the mask is regenerated, never stored)
    bool sparse_in = false;  // layer 0 with sparse features
    bool agg_first = false;  // aggregate first: agg = A·drop(H), out = agg·W
    // transform first over the whole input with dropout fused into the products (kernels::DropoutGemm, forward and
    // weight gradient) where the device can (DropoutGemmFuses; AggregateFirst decides the order as on the CPU):
    // in_ref is the input before dropout, and no dropped-out copy is built
    bool fused_drop = false;
    Matrix in;  // transform first: the input after dropout or gathered (layers > 0, dense features)
    const Matrix* in_ref = nullptr;         // transform first without dropout or gather: the input itself (no copy)
    SparseMatrix in_sp;                     // sparse input after dropout (layer 0 with sparse features): the features'
                                            // structure borrowed, the dropped values owned
    std::array<uint64_t, 3> sp_versions{};  // the Buffer versions of the features in_sp was built from
    Buffer<float> ones;                     // the implied values of value-less sparse features (dropout's input)
    SparseMatrix self_sp;  // SAGE on sampled sparse input: the destinations' rows of the input (after dropout)
    const SparseMatrix* in_sp_ref = nullptr;  // the sparse input of the last forward: &in_sp or the features
    SparseMatrix in_t;          // on a device: the transpose of the sparse input's structure, values per step
    Buffer<int64_t> in_t_from;  // in_t's entry k is the input's entry in_t_from[k]
    std::array<uint64_t, 2> t_versions{};        // the input structure's versions in_t was built from
    std::array<uint64_t, 2> last_in_versions{};  // the sparse input structure's versions at the last backward
    Matrix agg;                                  // aggregate first: A·drop(H) [dst x in]
    Matrix self_in;                              // aggregate first, SAGE: drop(H) of the destination rows [dst x in]
    Matrix out;                                  // output after ReLU (hidden layers) or logits (last layer)
    Matrix work;                                 // workspace: T = H·W forward, then dT or d(agg) backward
    Matrix grad_in;                              // backward: the gradient of this layer's input (layers > 0)
  };
  static void SparseTransposeOf(const SparseMatrix& a, LayerState* s);
  int64_t InDim(int l) const;
  // Whether dense layer l with aggregation a over n_src input rows aggregates first (LayerOrder); `materialize`:
  // transform first would have to build its input (gathered or dropped out).
  bool AggregateFirst(const SparseMatrix& a, int64_t n_src, int l, bool materialize) const;
  int64_t OutDim(int l) const;
  Param& W(int l) { return params_[param_index_[l]]; }
  Param& WSelf(int l) { return params_[param_index_[l] + 1]; }
  Param& B(int l) { return params_[param_index_[l] + (config_.kind == ModelKind::kSage ? 2 : 1)]; }

  ModelConfig config_;
  std::vector<Param> params_;
  std::vector<size_t> param_index_;  // first parameter of each layer
  std::vector<LayerState> state_;
  Matrix s_self_grad_;     // backward workspace: dz·W_selfᵀ of a SAGE layer on a device
  Buffer<int64_t> x_ids_;  // on a device: the input row ids of the step (uploaded once for all the layer's gathers)
  bool has_forward_ = false;
  bool last_training_ = false;
  LayerOrder order_ = LayerOrder::kAuto;
};

}  // namespace tessel::train::gcn

namespace tessel {
// The one list of ModelKind's names: the CLI, the JSON and ModelKindName read it (core/params.h).
TESSEL_ENUM_NAMES(train::gcn::ModelKind, {train::gcn::ModelKind::kGcn, "gcn"}, {train::gcn::ModelKind::kSage, "sage"});
}  // namespace tessel

// The gradient average over ranks and GraphSource's default evaluation (graph_source.h).
#include "train/gcn/graph_source.h"

#include "core/error.h"
#include "kernels/loss.h"

namespace tessel::train::gcn {

std::vector<float> PackGradients(const std::vector<Param>& params, int64_t local_count, int64_t total_count) {
  TESSEL_CHECK(local_count >= 0 && total_count >= local_count && total_count > 0,
               "AverageGradients: local count {} and total {} (need 0 <= local <= total, total > 0)", local_count,
               total_count);
  size_t size = 0;
  for (const Param& p : params) size += static_cast<size_t>(p.value.size());
  std::vector<float> buf(size, 0.0F);
  if (local_count > 0) {
    const auto w = static_cast<float>(static_cast<double>(local_count) / static_cast<double>(total_count));
    size_t k = 0;
    for (const Param& p : params) {
      TESSEL_CHECK(p.grad.size() == p.value.size(), "AverageGradients: {} has no gradient of its shape", p.name);
      for (float g : p.grad.View()) buf[k++] = local_count == total_count ? g : g * w;
    }
  }
  return buf;
}

void SumGradients(comm::Communicator& comm, std::vector<float>& buf, comm::CompressedAllreduce* compress, uint64_t step,
                  comm::CompressStats* stats) {
  if (compress != nullptr) {
    compress->Allreduce(comm, buf, step, "gradients", stats).ThrowIfError();
  } else {
    comm.Allreduce<float>(buf, comm::ReduceOp::kSum, "gradients").ThrowIfError();
  }
}

void UnpackGradients(std::span<const float> buf, std::vector<Param>& params) {
  size_t k = 0;
  for (Param& p : params) {
    TESSEL_CHECK(k + static_cast<size_t>(p.value.size()) <= buf.size(), "UnpackGradients: {} floats for the model",
                 buf.size());
    p.grad.Resize(p.value.rows, p.value.cols);
    for (float& g : p.grad.Mut()) g = buf[k++];
  }
}

void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count,
                      comm::CompressedAllreduce* compress, uint64_t step, comm::CompressStats* stats) {
  std::vector<float> buf = PackGradients(params, local_count, total_count);
  SumGradients(comm, buf, compress, step, stats);
  UnpackGradients(buf, params);
}

void GraphSource::EvaluateSplits(const Context& ctx, GcnModel& model, int /*epoch*/, bool /*final*/,
                                 ClassMetrics* train, ClassMetrics* val, ClassMetrics* test,
                                 StepCounters* /*counters*/) {
  const Matrix& logits = Logits(ctx, model);
  std::vector<int32_t> pred(static_cast<size_t>(logits.rows));
  kernels::RowArgmax(ctx, logits, pred);
  Metrics(pred, train, val, test);
}

}  // namespace tessel::train::gcn

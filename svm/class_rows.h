// The kernel rows that one-vs-one pairs share. Pair (a, b) needs, for a sample r of class a, the Q row over the
// samples of a and of b; the part over class a is the same in every pair a takes part in (Q = K there, y_r y_s =
// +1). A ClassRowCache keeps that part once for all pairs: the row of r over its own class, K(r, members[a]) as
// float, computed by the first pair that needs it. A letter-sized problem (26 classes, 25 pairs per class) then
// computes each own-class half once instead of once per pair that asks for the row.
//
// Every value is computed by SvmKernelRows::QRow with sign +1, so it is the float the pair would have computed
// itself (float(-k) = -float(k) for the other class): training gives the same model bit for bit.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/svm_kernel.h"

namespace tessel::svm {

class ClassRowCache {
 public:
  // members[c]: the dataset rows of class c (rows < num_rows). Allocates sum_c |members[c]|^2 floats (Bytes()).
  ClassRowCache(int64_t num_rows, const std::vector<std::vector<int32_t>>& members);

  // Bytes the cache holds for these classes: one float per pair of samples of the same class.
  static int64_t Bytes(const std::vector<std::vector<int32_t>>& members);

  // K(r, s) as float for every s of r's class, in members[ClassOf(r)] order, computed here with the caller's
  // kernel object (its scratch, its evaluation count) when no pair has asked for it yet. nullptr while another
  // thread is computing it: the caller then computes what it needs itself (no thread ever waits).
  const float* OwnClassRow(int32_t r, kernels::SvmKernelRows& kernel);

  int32_t ClassOf(int32_t r) const { return row_class_[static_cast<size_t>(r)]; }
  int32_t IndexInClass(int32_t r) const { return index_[static_cast<size_t>(r)]; }
  // Rows served from the cache (computed before) and rows computed into it.
  int64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  int64_t fills() const { return fills_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::vector<int32_t>> members_;
  std::vector<int32_t> row_class_;  // per dataset row (-1: in no class)
  std::vector<int32_t> index_;      // per dataset row: its index in its class
  std::vector<int64_t> offset_;     // per dataset row: where its row starts in values_
  std::unique_ptr<float[]> values_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;  // per dataset row: 0 empty, 1 being computed, 2 ready
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> fills_{0};
};

}  // namespace tessel::svm

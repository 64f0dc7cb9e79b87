// Element types and reduction operators of the collectives: sum/min/max on scalars and the fused (value, index)
// max-loc/min-loc on ValueIndex<T> (the SVM picks its working pair with one such allreduce per iteration).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "core/type_list.h"

namespace tessel::comm {

// 16-bit floating-point wire elements (comm/half.h converts): the summable forms of the fp16 and bf16 compressors.
struct Half {
  uint16_t bits = 0;
  bool operator==(const Half&) const = default;
};
struct BFloat16 {
  uint16_t bits = 0;
  bool operator==(const BFloat16&) const = default;
};

// A value with the global index it came from; the max-loc/min-loc element type.
template <typename T>
struct ValueIndex {
  T value{};
  int64_t index = 0;
  bool operator==(const ValueIndex&) const = default;
};

enum class DataType : uint8_t {
  kInt8,
  kUInt8,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kFloat32Index,  // ValueIndex<float>
  kFloat64Index,  // ValueIndex<double>
  kFloat16,       // Half (IEEE binary16): reduced in float, rounded back to nearest even after each addition
  kBFloat16,      // BFloat16: the same
};

// kSum, kMin, kMax apply to scalar types; kMinLoc, kMaxLoc to the ValueIndex types. Loc ops pick the smaller
// (min) or larger (max) value and, on a tie, the smaller index, so the result does not depend on rank order.
// NaN values are not ordered: a reduction over NaN gives an unspecified one of the operands.
enum class ReduceOp : uint8_t { kSum, kMin, kMax, kMinLoc, kMaxLoc };

size_t DataTypeSize(DataType type);
std::string_view DataTypeName(DataType type);
std::string_view ReduceOpName(ReduceOp op);
bool IsIndexType(DataType type);
// Whether `op` applies to `type` (scalar ops on scalars, loc ops on ValueIndex types).
bool OpFits(DataType type, ReduceOp op);

// inout[i] = op(inout[i], in[i]) for i in [0, count). Throws tessel::Error when op does not fit type.
void ReduceInto(void* inout, const void* in, int64_t count, DataType type, ReduceOp op);

// The element type of every DataType, in the enumeration's order: the one list DataTypeOf, DataTypeSize and
// ReduceInto read.
using DataTypeElements = std::tuple<int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t, float, double,
                                    ValueIndex<float>, ValueIndex<double>, Half, BFloat16>;

template <typename T>
constexpr DataType DataTypeOf() {
  constexpr size_t at = kTypeIndex<T, DataTypeElements>;
  static_assert(at < std::tuple_size_v<DataTypeElements>, "no comm::DataType for this element type");
  return static_cast<DataType>(at);
}

}  // namespace tessel::comm

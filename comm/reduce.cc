// The reduction kernel shared by the local, thread and MPI backends (the MPI backend uses it for the loc ops).
// One typed loop per (type, op); the loc ops break ties towards the smaller index.
#include "comm/reduce.h"

#include <algorithm>

#include "comm/half.h"
#include "core/error.h"

namespace tessel::comm {
namespace {

template <typename T>
void ReduceScalar(T* inout, const T* in, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      for (int64_t i = 0; i < n; ++i) inout[i] = static_cast<T>(inout[i] + in[i]);
      return;
    case ReduceOp::kMin:
      for (int64_t i = 0; i < n; ++i) inout[i] = std::min(inout[i], in[i]);
      return;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < n; ++i) inout[i] = std::max(inout[i], in[i]);
      return;
    default:
      break;
  }
}

template <typename T>
void ReduceLoc(ValueIndex<T>* inout, const ValueIndex<T>* in, int64_t n, bool max) {
  for (int64_t i = 0; i < n; ++i) {
    const ValueIndex<T>& a = inout[i];
    const ValueIndex<T>& b = in[i];
    const bool b_better = max ? (b.value > a.value) : (b.value < a.value);
    if (b_better || (b.value == a.value && b.index < a.index)) inout[i] = b;
  }
}

// 16-bit floats: each operation in float, rounded back (what an fp16 allreduce on the wire computes).
template <typename T, float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void Reduce16(T* inout, const T* in, int64_t n, ReduceOp op) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = ToFloat(inout[i].bits);
    const float b = ToFloat(in[i].bits);
    const float r = op == ReduceOp::kSum ? a + b : op == ReduceOp::kMin ? std::min(a, b) : std::max(a, b);
    inout[i].bits = FromFloat(r);
  }
}

}  // namespace

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUInt8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFloat64:
      return 8;
    case DataType::kFloat32Index:
      return sizeof(ValueIndex<float>);
    case DataType::kFloat64Index:
      return sizeof(ValueIndex<double>);
  }
  throw Error("comm: unknown DataType");
}

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return "int8";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kUInt32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUInt64:
      return "uint64";
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kFloat32Index:
      return "(float32, index)";
    case DataType::kFloat64Index:
      return "(float64, index)";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMinLoc:
      return "min-loc";
    case ReduceOp::kMaxLoc:
      return "max-loc";
  }
  return "unknown";
}

bool IsIndexType(DataType type) { return type == DataType::kFloat32Index || type == DataType::kFloat64Index; }

bool OpFits(DataType type, ReduceOp op) {
  const bool loc_op = op == ReduceOp::kMinLoc || op == ReduceOp::kMaxLoc;
  return loc_op == IsIndexType(type);
}

void ReduceInto(void* inout, const void* in, int64_t count, DataType type, ReduceOp op) {
  TESSEL_CHECK(OpFits(type, op),
               "comm: reduction {} does not apply to {} (use min-loc/max-loc with ValueIndex, "
               "sum/min/max with scalars)",
               ReduceOpName(op), DataTypeName(type));
  if (count <= 0) return;
  const bool max = op == ReduceOp::kMaxLoc;
  switch (type) {
    case DataType::kInt8:
      return ReduceScalar(static_cast<int8_t*>(inout), static_cast<const int8_t*>(in), count, op);
    case DataType::kUInt8:
      return ReduceScalar(static_cast<uint8_t*>(inout), static_cast<const uint8_t*>(in), count, op);
    case DataType::kInt32:
      return ReduceScalar(static_cast<int32_t*>(inout), static_cast<const int32_t*>(in), count, op);
    case DataType::kUInt32:
      return ReduceScalar(static_cast<uint32_t*>(inout), static_cast<const uint32_t*>(in), count, op);
    case DataType::kInt64:
      return ReduceScalar(static_cast<int64_t*>(inout), static_cast<const int64_t*>(in), count, op);
    case DataType::kUInt64:
      return ReduceScalar(static_cast<uint64_t*>(inout), static_cast<const uint64_t*>(in), count, op);
    case DataType::kFloat32:
      return ReduceScalar(static_cast<float*>(inout), static_cast<const float*>(in), count, op);
    case DataType::kFloat64:
      return ReduceScalar(static_cast<double*>(inout), static_cast<const double*>(in), count, op);
    case DataType::kFloat32Index:
      return ReduceLoc(static_cast<ValueIndex<float>*>(inout), static_cast<const ValueIndex<float>*>(in), count, max);
    case DataType::kFloat64Index:
      return ReduceLoc(static_cast<ValueIndex<double>*>(inout), static_cast<const ValueIndex<double>*>(in), count, max);
    case DataType::kFloat16:
      return Reduce16<Half, HalfToFloat, FloatToHalf>(static_cast<Half*>(inout), static_cast<const Half*>(in), count,
                                                      op);
    case DataType::kBFloat16:
      return Reduce16<BFloat16, BFloat16ToFloat, FloatToBFloat16>(static_cast<BFloat16*>(inout),
                                                                  static_cast<const BFloat16*>(in), count, op);
  }
}

}  // namespace tessel::comm

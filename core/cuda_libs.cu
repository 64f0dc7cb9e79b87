// Lazy loading of cuBLAS and cuSPARSE (docs/gpu.md, "CUDA libraries"): tessel defines the few functions of the two
// libraries it calls, and each definition opens its library (dlopen, by soname) and looks the real function up the
// first time it is called. A process that never runs a kernel on a GPU never maps them: cuBLAS (with cuBLASLt) and
// cuSPARSE added about 180 MiB to the resident memory of every process, `tessel --help` included, and every rank of a
// CPU job paid it. libcudart stays linked (small, and the device runtime table needs it to count devices).
//
// A library that cannot be opened makes every call return *_STATUS_NOT_INITIALIZED, and the error-name functions
// say which library is missing and why (the checking macros of core/cuda_check.h put that in their message).
#include <cublas_v2.h>
#include <cusparse.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>

namespace {

struct Library {
  const char* soname;
  void* handle = nullptr;
  std::string error;
};

Library& Open(Library& lib) {
  // Called once per library, from the function-local static initialisers below (thread-safe in C++11).
  if (lib.handle == nullptr && lib.error.empty()) {
    lib.handle = dlopen(lib.soname, RTLD_NOW | RTLD_LOCAL);
    if (lib.handle == nullptr) {
      const char* e = dlerror();
      lib.error = std::string(lib.soname) + " could not be loaded: " + (e != nullptr ? e : "unknown error");
    }
  }
  return lib;
}

Library& Cublas() {
  static Library lib{TESSEL_CUBLAS_SONAME};
  static Library& opened = Open(lib);
  return opened;
}
Library& Cusparse() {
  static Library lib{TESSEL_CUSPARSE_SONAME};
  static Library& opened = Open(lib);
  return opened;
}

void* Resolve(Library& lib, const char* name) { return lib.handle == nullptr ? nullptr : dlsym(lib.handle, name); }

}  // namespace

extern "C" {

const char* cublasGetStatusName(cublasStatus_t status) {
  static const auto fn = reinterpret_cast<const char* (*)(cublasStatus_t)>(Resolve(Cublas(), "cublasGetStatusName"));
  return fn == nullptr ? Cublas().error.c_str() : fn(status);
}
const char* cublasGetStatusString(cublasStatus_t status) {
  static const auto fn = reinterpret_cast<const char* (*)(cublasStatus_t)>(Resolve(Cublas(), "cublasGetStatusString"));
  return fn == nullptr ? Cublas().error.c_str() : fn(status);
}
const char* cusparseGetErrorName(cusparseStatus_t status) {
  static const auto fn =
      reinterpret_cast<const char* (*)(cusparseStatus_t)>(Resolve(Cusparse(), "cusparseGetErrorName"));
  return fn == nullptr ? Cusparse().error.c_str() : fn(status);
}
const char* cusparseGetErrorString(cusparseStatus_t status) {
  static const auto fn =
      reinterpret_cast<const char* (*)(cusparseStatus_t)>(Resolve(Cusparse(), "cusparseGetErrorString"));
  return fn == nullptr ? Cusparse().error.c_str() : fn(status);
}

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  static const auto fn =
      reinterpret_cast<cublasStatus_t (*)(cublasHandle_t * handle)>(Resolve(Cublas(), "cublasCreate_v2"));
  return fn == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : fn(handle);
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  static const auto fn =
      reinterpret_cast<cublasStatus_t (*)(cublasHandle_t handle)>(Resolve(Cublas(), "cublasDestroy_v2"));
  return fn == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : fn(handle);
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  static const auto fn = reinterpret_cast<cublasStatus_t (*)(cublasHandle_t handle, cublasMath_t mode)>(
      Resolve(Cublas(), "cublasSetMathMode"));
  return fn == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : fn(handle, mode);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                              const float* beta, float* C, int ldc) {
  static const auto fn = reinterpret_cast<cublasStatus_t (*)(
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
      const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc)>(
      Resolve(Cublas(), "cublasSgemm_v2"));
  return fn == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED
                       : fn(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cusparseStatus_t cusparseCreate(cusparseHandle_t* handle) {
  static const auto fn =
      reinterpret_cast<cusparseStatus_t (*)(cusparseHandle_t * handle)>(Resolve(Cusparse(), "cusparseCreate"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(handle);
}

cusparseStatus_t cusparseDestroy(cusparseHandle_t handle) {
  static const auto fn =
      reinterpret_cast<cusparseStatus_t (*)(cusparseHandle_t handle)>(Resolve(Cusparse(), "cusparseDestroy"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(handle);
}

cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz,
                                   void* csrRowOffsets, void* csrColInd, void* csrValues,
                                   cusparseIndexType_t csrRowOffsetsType, cusparseIndexType_t csrColIndType,
                                   cusparseIndexBase_t idxBase, cudaDataType valueType) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(
      cusparseSpMatDescr_t * spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* csrRowOffsets, void* csrColInd,
      void* csrValues, cusparseIndexType_t csrRowOffsetsType, cusparseIndexType_t csrColIndType,
      cusparseIndexBase_t idxBase, cudaDataType valueType)>(Resolve(Cusparse(), "cusparseCreateCsr"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED
                       : fn(spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues, csrRowOffsetsType,
                            csrColIndType, idxBase, valueType);
}

cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t* dnMatDescr, int64_t rows, int64_t cols, int64_t ld,
                                     void* values, cudaDataType valueType, cusparseOrder_t order) {
  static const auto fn =
      reinterpret_cast<cusparseStatus_t (*)(cusparseDnMatDescr_t * dnMatDescr, int64_t rows, int64_t cols, int64_t ld,
                                            void* values, cudaDataType valueType, cusparseOrder_t order)>(
          Resolve(Cusparse(), "cusparseCreateDnMat"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(dnMatDescr, rows, cols, ld, values, valueType, order);
}

cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t dnMatDescr) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(cusparseConstDnMatDescr_t dnMatDescr)>(
      Resolve(Cusparse(), "cusparseDestroyDnMat"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(dnMatDescr);
}

cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t spMatDescr) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(cusparseConstSpMatDescr_t spMatDescr)>(
      Resolve(Cusparse(), "cusparseDestroySpMat"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(spMatDescr);
}

cusparseStatus_t cusparseDnMatSetValues(cusparseDnMatDescr_t dnMatDescr, void* values) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(cusparseDnMatDescr_t dnMatDescr, void* values)>(
      Resolve(Cusparse(), "cusparseDnMatSetValues"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(dnMatDescr, values);
}

cusparseStatus_t cusparseCsrSetPointers(cusparseSpMatDescr_t spMatDescr, void* csrRowOffsets, void* csrColInd,
                                        void* csrValues) {
  static const auto fn =
      reinterpret_cast<cusparseStatus_t (*)(cusparseSpMatDescr_t spMatDescr, void* csrRowOffsets, void* csrColInd,
                                            void* csrValues)>(Resolve(Cusparse(), "cusparseCsrSetPointers"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED : fn(spMatDescr, csrRowOffsets, csrColInd, csrValues);
}

cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                                         const void* alpha, cusparseConstSpMatDescr_t matA,
                                         cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
                                         cudaDataType computeType, cusparseSpMMAlg_t alg, size_t* bufferSize) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(
      cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
      cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
      cudaDataType computeType, cusparseSpMMAlg_t alg, size_t* bufferSize)>(
      Resolve(Cusparse(), "cusparseSpMM_bufferSize"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED
                       : fn(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, bufferSize);
}

cusparseStatus_t cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                              const void* alpha, cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                              const void* beta, cusparseDnMatDescr_t matC, cudaDataType computeType,
                              cusparseSpMMAlg_t alg, void* externalBuffer) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(
      cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
      cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
      cudaDataType computeType, cusparseSpMMAlg_t alg, void* externalBuffer)>(Resolve(Cusparse(), "cusparseSpMM"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED
                       : fn(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer);
}

cusparseStatus_t cusparseCsr2cscEx2_bufferSize(cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal,
                                               const int* csrRowPtr, const int* csrColInd, void* cscVal, int* cscColPtr,
                                               int* cscRowInd, cudaDataType valType, cusparseAction_t copyValues,
                                               cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg,
                                               size_t* bufferSize) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(
      cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal, const int* csrRowPtr, const int* csrColInd,
      void* cscVal, int* cscColPtr, int* cscRowInd, cudaDataType valType, cusparseAction_t copyValues,
      cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg, size_t* bufferSize)>(
      Resolve(Cusparse(), "cusparseCsr2cscEx2_bufferSize"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED
                       : fn(handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType,
                            copyValues, idxBase, alg, bufferSize);
}

cusparseStatus_t cusparseCsr2cscEx2(cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal,
                                    const int* csrRowPtr, const int* csrColInd, void* cscVal, int* cscColPtr,
                                    int* cscRowInd, cudaDataType valType, cusparseAction_t copyValues,
                                    cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg, void* buffer) {
  static const auto fn = reinterpret_cast<cusparseStatus_t (*)(
      cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal, const int* csrRowPtr, const int* csrColInd,
      void* cscVal, int* cscColPtr, int* cscRowInd, cudaDataType valType, cusparseAction_t copyValues,
      cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg, void* buffer)>(Resolve(Cusparse(), "cusparseCsr2cscEx2"));
  return fn == nullptr ? CUSPARSE_STATUS_NOT_INITIALIZED
                       : fn(handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType,
                            copyValues, idxBase, alg, buffer);
}

}  // extern "C"

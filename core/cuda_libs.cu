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

// One library, opened by the first call of any of its functions (function-local statics: thread-safe).
struct Library {
  explicit Library(const char* soname) : handle(dlopen(soname, RTLD_NOW | RTLD_LOCAL)) {
    if (handle == nullptr) {
      const char* e = dlerror();
      error = std::string(soname) + " could not be loaded: " + (e != nullptr ? e : "unknown error");
    }
  }
  void* Resolve(const char* name) const { return handle == nullptr ? nullptr : dlsym(handle, name); }

  void* handle;
  std::string error;  // why dlopen failed; what the status-name functions return then
};

Library& Cublas() {
  static Library lib(TESSEL_CUBLAS_SONAME);
  return lib;
}
Library& Cusparse() {
  static Library lib(TESSEL_CUSPARSE_SONAME);
  return lib;
}

}  // namespace

// Defines NAME PARAMS: looks the library's NAME up once and calls it with ARGS; FAIL when the library or the function
// is missing.
#define TESSEL_FORWARD(LIB, FAIL, RET, NAME, PARAMS, ARGS)                        \
  RET NAME PARAMS {                                                               \
    static const auto fn = reinterpret_cast<RET(*) PARAMS>(LIB().Resolve(#NAME)); \
    return fn == nullptr ? FAIL : fn ARGS;                                        \
  }

// Defines cuSPARSE's pair of a workspace query and the call that takes the workspace, which share their leading
// parameters PARAMS: NAME_bufferSize(PARAMS, size_t* bufferSize) and NAME(PARAMS, void* buffer).
#define TESSEL_UNPAREN(...) __VA_ARGS__
#define TESSEL_FORWARD_WITH_BUFFER(NAME, PARAMS, ARGS)                                            \
  TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, NAME##_bufferSize,  \
                 (TESSEL_UNPAREN PARAMS, size_t * bufferSize), (TESSEL_UNPAREN ARGS, bufferSize)) \
  TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, NAME,               \
                 (TESSEL_UNPAREN PARAMS, void* buffer), (TESSEL_UNPAREN ARGS, buffer))

extern "C" {

TESSEL_FORWARD(Cublas, Cublas().error.c_str(), const char*, cublasGetStatusName, (cublasStatus_t status), (status))
TESSEL_FORWARD(Cublas, Cublas().error.c_str(), const char*, cublasGetStatusString, (cublasStatus_t status), (status))
TESSEL_FORWARD(Cusparse, Cusparse().error.c_str(), const char*, cusparseGetErrorName, (cusparseStatus_t status),
               (status))
TESSEL_FORWARD(Cusparse, Cusparse().error.c_str(), const char*, cusparseGetErrorString, (cusparseStatus_t status),
               (status))
TESSEL_FORWARD(Cublas, CUBLAS_STATUS_NOT_INITIALIZED, cublasStatus_t, cublasCreate_v2, (cublasHandle_t * handle),
               (handle))
TESSEL_FORWARD(Cublas, CUBLAS_STATUS_NOT_INITIALIZED, cublasStatus_t, cublasDestroy_v2, (cublasHandle_t handle),
               (handle))
TESSEL_FORWARD(Cublas, CUBLAS_STATUS_NOT_INITIALIZED, cublasStatus_t, cublasSetMathMode,
               (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
TESSEL_FORWARD(Cublas, CUBLAS_STATUS_NOT_INITIALIZED, cublasStatus_t, cublasSgemm_v2,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C,
                int ldc),
               (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseCreate, (cusparseHandle_t * handle),
               (handle))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseDestroy, (cusparseHandle_t handle),
               (handle))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseCreateCsr,
               (cusparseSpMatDescr_t * spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* csrRowOffsets,
                void* csrColInd, void* csrValues, cusparseIndexType_t csrRowOffsetsType,
                cusparseIndexType_t csrColIndType, cusparseIndexBase_t idxBase, cudaDataType valueType),
               (spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues, csrRowOffsetsType, csrColIndType,
                idxBase, valueType))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseCreateDnMat,
               (cusparseDnMatDescr_t * dnMatDescr, int64_t rows, int64_t cols, int64_t ld, void* values,
                cudaDataType valueType, cusparseOrder_t order),
               (dnMatDescr, rows, cols, ld, values, valueType, order))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseDestroyDnMat,
               (cusparseConstDnMatDescr_t dnMatDescr), (dnMatDescr))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseDestroySpMat,
               (cusparseConstSpMatDescr_t spMatDescr), (spMatDescr))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseDnMatSetValues,
               (cusparseDnMatDescr_t dnMatDescr, void* values), (dnMatDescr, values))
TESSEL_FORWARD(Cusparse, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, cusparseCsrSetPointers,
               (cusparseSpMatDescr_t spMatDescr, void* csrRowOffsets, void* csrColInd, void* csrValues),
               (spMatDescr, csrRowOffsets, csrColInd, csrValues))
TESSEL_FORWARD_WITH_BUFFER(cusparseSpMM,
                           (cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                            const void* alpha, cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                            const void* beta, cusparseDnMatDescr_t matC, cudaDataType computeType,
                            cusparseSpMMAlg_t alg),
                           (handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg))
TESSEL_FORWARD_WITH_BUFFER(cusparseCsr2cscEx2,
                           (cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal, const int* csrRowPtr,
                            const int* csrColInd, void* cscVal, int* cscColPtr, int* cscRowInd, cudaDataType valType,
                            cusparseAction_t copyValues, cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg),
                           (handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType,
                            copyValues, idxBase, alg))

}  // extern "C"

#undef TESSEL_FORWARD_WITH_BUFFER
#undef TESSEL_UNPAREN
#undef TESSEL_FORWARD

// comm::Status, the [[nodiscard]] result of every collective (after XGBoost's collective/result.h).
// A failed Status carries the reason ("rank 2 failed: ...", "MPI_Allreduce: ..."); ThrowIfError turns it into
// tessel::Error.
#pragma once

#include <string>
#include <utility>

#include "core/error.h"

namespace tessel::comm {

// Where Status and exceptions fit (docs/comm.md): a collective returns a failed Status for anything that comes
// from outside this rank (a peer rank failed or left, the transport reported an error, the ranks' arguments
// disagree); it throws tessel::Error for a local contract violation that is a bug at the call site (a span of the
// wrong size, a root out of range, negative counts). Callers normally write `comm.Allreduce(...).ThrowIfError();`.
class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  static Status Failed(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }
  // Throws tessel::Error with the message when failed.
  void ThrowIfError() const {
    if (failed_) throw Error(message_);
  }

 private:
  bool failed_ = false;
  std::string message_;
};

}  // namespace tessel::comm

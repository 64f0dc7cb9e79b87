#include "core/worker.h"

#include <stdexcept>
#include <utility>

namespace tessel {

BackgroundWorker::BackgroundWorker() : thread_([this] { Loop(); }) {}

BackgroundWorker::~BackgroundWorker() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !has_job_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWorker::Start(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (has_job_) throw std::logic_error("BackgroundWorker::Start: a job is still running");
    job_ = std::move(job);
    error_ = nullptr;
    has_job_ = true;
  }
  cv_.notify_all();
}

void BackgroundWorker::Wait() {
  std::exception_ptr error;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !has_job_; });
    error = std::exchange(error_, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

void BackgroundWorker::RunAlongside(std::function<void()> job, const std::function<void()>& here) {
  Start(std::move(job));
  try {
    here();
  } catch (...) {
    try {
      Wait();
    } catch (...) {  // the caller's error is the one reported
    }
    throw;
  }
  Wait();
}

bool BackgroundWorker::Busy() const {
  std::lock_guard lock(mu_);
  return has_job_;
}

void BackgroundWorker::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || (has_job_ && job_); });
    if (stop_) return;
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    has_job_ = false;
    cv_.notify_all();
  }
}

}  // namespace tessel

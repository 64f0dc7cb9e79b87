// BackgroundWorker: one persistent second thread that runs one job at a time for its owner. The GCN trainer's
// step pipeline uses it: the owner thread (the one that talks to the communicator, so collective calls keep one
// order on every rank) hands the worker step s's forward/backward, prepares step s + 1 (sampling, fetching) itself,
// then waits for the worker and finishes step s. One thread for a whole run instead of one per step: no thread
// start, stack faults or oneTBB arena registration per step.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tessel {

class BackgroundWorker {
 public:
  BackgroundWorker();
  // Waits for a running job (its exception, if any, is dropped) and stops the thread.
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Hands `job` to the worker and returns at once. Throws std::logic_error when a job is still running (Wait first).
  void Start(std::function<void()> job);
  // Blocks until the running job ends (returns at once when none runs) and rethrows what the job threw.
  void Wait();
  // Runs `job` on the worker while `here` runs on the calling thread, and returns when both have ended. An exception
  // of `here` is rethrown once the job has ended (the job may read the caller's frame; its own exception is then
  // dropped); otherwise the job's, as Wait does.
  void RunAlongside(std::function<void()> job, const std::function<void()>& here);
  // Whether a job was started and not yet waited for.
  bool Busy() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool has_job_ = false;  // a job is queued or running
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the state above exists
};

}  // namespace tessel

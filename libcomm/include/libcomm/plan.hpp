// Requests and persistent plans: the non-blocking and persistent forms of every operation.
//
//   auto req = libcomm::ialltoall(send, recv, block_bytes, comm, algo);
//   ... pack, transform ...
//   req.wait();                                   // or poll with req.test()
//
//   auto plan = libcomm::plan_alltoall(comm, block_bytes, algo);   // built once
//   for (...) { plan.start(send, recv); ...; plan.wait(); }
//
// A plan holds the algorithm's step program (libcomm/program.hpp) for this rank and its
// scratch memory; start() runs the first stage, test() and wait() progress the rest (no
// helper thread: the application's calls drive the algorithm, as in MPICH's gentran
// engine). Native plans start the MPI library's own non-blocking collective. The buffers
// given to start() must stay untouched until the request completes, and a plan must not
// be started again before it has completed. Every rank must start its collectives on one
// communicator in the same order (MPI's rule for non-blocking collectives).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace libcomm {

struct StepProgram;

namespace detail {
struct PlanState;
}

class Request {
 public:
  Request() = default;
  explicit Request(std::shared_ptr<detail::PlanState> state) : state_(std::move(state)) {}
  // Progresses the collective; true when it has completed (or was never started).
  bool test();
  // Progresses the collective until it completes.
  void wait();
  bool active() const;
  // The algorithm that runs and why it was chosen (Auto, fallbacks).
  std::string_view algorithm() const;
  const std::string& reason() const;
  // The step program this rank runs; null for native.
  const StepProgram* program() const;

 protected:
  std::shared_ptr<detail::PlanState> state_;
};

class Plan : public Request {
 public:
  using Request::Request;
  // Starts one run on these buffers (the sizes the plan was made for).
  void start(const void* send, void* recv);
};

class Comm;
// A plan that runs a step program of one's own on comm (its channel 0; one program per
// rank, built for comm.rank()): how the switch-tree routines and user-written schedules
// reach the executor.
Plan plan_program(const Comm& comm, StepProgram program);

}  // namespace libcomm

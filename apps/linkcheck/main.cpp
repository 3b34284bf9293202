// linkcheck: what the path between two ranks achieves, for calibrating an emulated network
// (scripts/testbed.sh check, issue 9).
//
//   latency:   half the round trip of a 1-byte ping-pong (median of --latency-reps)
//   pingpong:  one direction's rate: --size bytes over half a round trip (median of --reps)
//   bidir:     both ranks send --size bytes to each other at once, as messages of at most
//              --chunk bytes all posted together; the rate of each direction (a full-duplex
//              link gives the same rate as one direction alone). Chunks below Open MPI's
//              eager limit keep its rendezvous hand-shake, which queues behind the data going
//              the other way on the one TCP connection of a pair, out of the measurement.
// Every received message is checked against the sender's pattern. Prints one line:
//   linkcheck: latency_us=.. pingpong_mbit=.. bidir_mbit=.. validation: PASS
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"

namespace {

// Seconds of one round trip of `bytes` (rank 0 sends first), checked on arrival.
double round_trip(std::vector<std::byte>& out, std::vector<std::byte>& in, std::size_t bytes,
                  int me, bool& ok) {
  const int peer = 1 - me;
  const int n = static_cast<int>(bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (me == 0) {
    MPI_Send(out.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    MPI_Recv(in.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(in.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out.data(), n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
  }
  const double t = MPI_Wtime() - t0;
  ok = ok && apps::check_pattern(in.data(), peer, me, bytes) == bytes;
  return t;
}

// Seconds until both directions of a simultaneous exchange of `bytes` are done (the
// slower rank's time), checked on arrival.
double exchange(std::vector<std::byte>& out, std::vector<std::byte>& in, std::size_t bytes,
                std::size_t chunk, int me, bool& ok) {
  const int peer = 1 - me;
  std::vector<MPI_Request> req;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (std::size_t at = 0; at < bytes; at += chunk) {
    const int n = static_cast<int>(std::min(chunk, bytes - at));
    req.emplace_back();
    MPI_Irecv(in.data() + at, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req.back());
    req.emplace_back();
    MPI_Isend(out.data() + at, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req.back());
  }
  MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ok = ok && apps::check_pattern(in.data(), peer, me, bytes) == bytes;
  return t;
}

int run(int argc, char** argv) {
  CLI::App app{
      "linkcheck: latency, one-way and bidirectional bandwidth between exactly 2 ranks, every\n"
      "message validated (the link calibration of scripts/testbed.sh check)."};
  std::string size_s = "256KiB", chunk_s = "32KiB";
  int reps = 3, latency_reps = 30;
  app.add_option("--size", size_s, "bytes per message of the bandwidth tests")->capture_default_str();
  app.add_option("--chunk", chunk_s, "largest message of the bidirectional test")->capture_default_str();
  app.add_option("--reps", reps, "repetitions of each bandwidth test (median)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--latency-reps", latency_reps, "round trips of the latency test (median)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  apps::parse_command_line(app, argc, argv);
  const std::size_t size = apps::parse_size(size_s, "--size");
  const std::size_t chunk = apps::parse_size(chunk_s, "--chunk");
  int p = 0, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (p != 2) throw libcomm::Error("linkcheck needs exactly 2 ranks, got " + std::to_string(p));
  if (size < 1 || size > (1u << 30))
    throw libcomm::Error("--size must be between 1 byte and 1 GiB, got " + size_s);
  if (chunk < 1) throw libcomm::Error("--chunk must be at least 1 byte, got " + chunk_s);
  std::vector<std::byte> out(size), in(size);
  apps::fill_pattern(out.data(), me, 1 - me, size);
  bool ok = true;
  std::vector<double> lat, one_way, both;
  round_trip(out, in, 1, me, ok);  // warm-up: connection set-up
  for (int r = 0; r < latency_reps; ++r) lat.push_back(round_trip(out, in, 1, me, ok) / 2);
  for (int r = 0; r < reps; ++r) one_way.push_back(round_trip(out, in, size, me, ok) / 2);
  for (int r = 0; r < reps; ++r) both.push_back(exchange(out, in, size, chunk, me, ok));
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const double bits = 8.0 * static_cast<double>(size);
  if (me == 0)
    std::printf("linkcheck: latency_us=%.1f pingpong_mbit=%.2f bidir_mbit=%.2f size=%zu "
                "validation: %s\n",
                apps::median(lat) * 1e6, bits / apps::median(one_way) / 1e6,
                bits / apps::median(both) / 1e6, size, all_ok ? "PASS" : "FAIL");
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "linkcheck", run); }

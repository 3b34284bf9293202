// fft3d: distributed 3-D FFT (slab and pencil decompositions) whose transposes run on any
// libcomm all-to-all algorithm. Every run is validated (round trip, and the forward result
// against a serial FFTW transform or a known plane-wave spectrum) and timed per stage:
// FFT compute, pack/unpack, communication. Optionally FFTW's own MPI transform is timed
// on the same grid as the peer to beat.
#include <fftw3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "apps/common.hpp"
#include "distributed_fft.hpp"
#include "fftw_mpi_peer.hpp"
#include "libcomm/libcomm.hpp"
#include "validation.hpp"

namespace fft3d {
namespace {

constexpr double kTolerance = 1e-9;              // relative max error that passes
constexpr std::size_t kSerialCheckMax = 64 * 64 * 64;  // gather + serial FFTW up to here
#ifdef LIBCOMM_SIMGRID
// Under SimGrid all simulated ranks are threads of one process, FFTW_MEASURE's trial runs
// would be charged as computation of the rank that plans (with --host-speed), and FFTW
// shares its wisdom between the ranks, so only the first one would pay. Estimate instead.
constexpr const char* kDefaultPlan = "estimate";
#else
constexpr const char* kDefaultPlan = "measure";
#endif

// "a,b,c" -> {a, b, c}; an empty list or an empty item is an error naming `option`.
std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  libcomm::require(!out.empty() && text.back() != ',' &&
                       std::find(out.begin(), out.end(), std::string()) == out.end(),
                   option + ": '" + text + "' is not a comma-separated list");
  return out;
}

// One timed configuration: our transform (engine, algorithm) or an FFTW-MPI peer.
struct Variant {
  std::string decomp;  // slab, pencil, fftw_mpi, fftw_mpi_transposed_out
  std::string proc_grid;
  int engine = -1, peer = -1;
  libcomm::AlltoallAlgo algo = libcomm::AlltoallAlgo::Native;
  bool overlap = false;  // forward_overlapped (the x <-> y transpose in pipelined chunks)
  std::string algo_name, ran;
  std::vector<double> fwd, bwd, fft, pack, comm;
  double fwd_err = -1, rt_err = -1;
  bool pass() const { return fwd_err >= 0 && fwd_err <= kTolerance && rt_err >= 0 && rt_err <= kTolerance; }
};

int run(int argc, char** argv) {
  CLI::App app{
      "fft3d: distributed 3-D FFT whose transposes run on libcomm's all-to-all algorithms.\n"
      "Slab (1-D process grid) and pencil (Pr x Pc) decompositions, c2c or r2c. Every run\n"
      "is validated: forward+backward returns the input, and the forward result equals a\n"
      "serial FFTW transform of the gathered input (grids up to 64^3) or the known spectrum\n"
      "of a few plane waves (larger grids). Times are medians over --reps of the slowest\n"
      "rank; stage times (fft, pack, comm) are rank averages."};
  long long n_cube = 32;
  std::string size_text, grid_text, decomp_text = "slab,pencil", algo_text = "auto",
                                    nodes = "shared", json_path, plan = kDefaultPlan, check = "auto";
  bool r2c = false, with_fftw_mpi = false;
  int reps = 5, warmup = 1, overlap = 0;
  auto* n_opt = app.add_option("--n", n_cube, "cube grid N x N x N")->capture_default_str();
  auto* size_opt = app.add_option("--size", size_text, "grid NXxNYxNZ, e.g. 12x10x9")->check(apps::kNonEmpty);
  n_opt->excludes(size_opt);
  app.add_option("--decomp", decomp_text, "comma-separated: slab, pencil")->capture_default_str();
  app.add_option("--grid", grid_text,
                 "pencil process grid PrxPc (Pr * Pc = ranks); default: chosen automatically "
                 "(even splits first, then the squarest)")
      ->check(apps::kNonEmpty);
  app.add_flag("--r2c", r2c, "real input, real-to-complex forward (NZ/2+1 outputs along z)");
  app.add_option("--algo", algo_text,
                 "all-to-all algorithm(s) of the transposes, comma-separated, or 'all'; "
                 "'native' is always timed as the reference")
      ->capture_default_str();
  app.add_option("--nodes", nodes,
                 "node map for hierarchical algorithms: shared | flat | ppn=N | sizes=A,B,.. | "
                 "map=N0,N1,.. | file:PATH")
      ->capture_default_str();
  app.add_option("--reps", reps, "timed repetitions (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", warmup,
                 "untimed runs first (the first run is validated and checks the all-to-all "
                 "arguments); 0 times that first run too, without the argument check, and "
                 "its time then includes one-time set-up such as the node communicators of "
                 "the hierarchical algorithms")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--plan", plan,
                 "FFTW planner: estimate | measure | patient | exhaustive (default measure; "
                 "estimate in a SimGrid build)")
      ->capture_default_str();
  app.add_option("--check", check,
                 "forward check: auto (serial up to 64^3, else analytic) | serial | analytic")
      ->check(CLI::IsMember({"auto", "serial", "analytic"}))
      ->capture_default_str();
  app.add_flag("--fftw-mpi", with_fftw_mpi,
               "also time FFTW's fftw_mpi_plan_dft_3d, with and without FFTW_MPI_TRANSPOSED_OUT "
               "(c2c only)");
  double model_gflops = 0, model_copy_gbs = 0;
  app.add_option("--model-fft", model_gflops,
                 "SimGrid build without --host-speed: charge each FFT stage its nominal flops "
                 "(5 n log2 n per transform) at this many GFlop/s instead of measuring this machine, so the "
                 "simulated time is deterministic")
      ->check(apps::positive_number(1e9));
  app.add_option("--model-copy", model_copy_gbs,
                 "with --model-fft: charge each pack/unpack, and the block copies inside the "
                 "all-to-all algorithms, their bytes at this many GB/s")
      ->check(apps::positive_number(1e6));
  double model_cold_gbs = 0;
  app.add_option("--model-copy-cold", model_cold_gbs,
                 "with --model-copy: charge the copies out of data the network delivered (the receive-side "
                 "distribution of recv_distribute / leader, a program's copies out of its own receives) at "
                 "this many GB/s instead: not in the core's cache (paper 002, s. 3, Fig. 5); default: the "
                 "--model-copy rate")
      ->check(apps::positive_number(1e6));
  app.add_option("--overlap", overlap,
                 "also time the forward transform with the x <-> y transpose pipelined in this many chunks "
                 "(>= 2; persistent libcomm plans, each chunk's FFT and pack overlapping the chunks before "
                 "it in flight; its backward is the blocking one, after a copy)")
      ->check(CLI::Range(0, 4096));
  std::string valgo_text = "auto", vmode_text = "b";
  app.add_option("--alltoallv", valgo_text,
                 "irregular algorithm of the uneven transposes (a grid that does not split evenly): "
                 "native (MPI_Alltoallv), direct, two_stage, mesh, four_stage or auto (paper 001)")
      ->capture_default_str();
  app.add_option("--alltoallv-mode", vmode_text, "mode of the uneven transposes: b, n1 or n2 (paper 001, s. 3.4)")
      ->capture_default_str();
  std::string topology_path;
  app.add_option("--topology", topology_path,
                 "switch tree of the ranks (inputs/topologies/*.topo, one machine per rank) for tree_scheduled "
                 "(paper 003): each transpose's sub-communicator gets the part of the tree its ranks use; "
                 "default: one switch")
      ->check(CLI::ExistingFile);
  double sphere = 0;
  app.add_option("--sphere", sphere,
                 "CPMD's cutoff sphere (paper 002, s. 6.2): the slab transpose carries only the x lines "
                 "whose (ky, kz) lies inside a disk of this radius (a fraction of NY/2, NZ/2), dealt "
                 "round-robin over the ranks and padded to the largest count: one regular all-to-all "
                 "of smaller blocks. Slab, c2c only; validated against the full transform at those lines")
      ->check(CLI::Range(1e-9, 1.0));
  app.add_option("--json", json_path, "also write the results as JSON to this file")->check(apps::kWritableFile);
  apps::parse_command_line(app, argc, argv);

  libcomm::require(overlap == 0 || overlap >= 2,
                   "--overlap: " + std::to_string(overlap) + " chunk(s); pipelining needs at least 2 (0: off)");
  const LocalWorkModel model{model_gflops * 1e9, model_copy_gbs * 1e9};
  if (model.enabled()) {
    libcomm::sim::require_cost_model_applies("--model-fft/--model-copy");
    libcomm::require(model_gflops > 0 && model_copy_gbs > 0,
                     "--model-fft and --model-copy go together (give both rates)");
    libcomm::require(!with_fftw_mpi,
                     "--model-fft: the FFTW-MPI peer's local work cannot be charged by the "
                     "model (drop --fftw-mpi)");
    // The all-to-all algorithms' own block copies are charged at the same copy rate.
    libcomm::sim::set_copy_rate(model.copy_bytes_per_second);
    libcomm::sim::set_cold_copy_rate(model_cold_gbs * 1e9);
  }
  libcomm::require(model_cold_gbs == 0 || model.enabled(), "--model-copy-cold goes with --model-fft and --model-copy");
  libcomm::AlltoallvAlgo valgo{};
  libcomm::AlltoallvMode vmode{};
  try {
    valgo = libcomm::alltoallv_algo_from_name(valgo_text);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--alltoallv: ") + e.what());
  }
  try {
    vmode = libcomm::alltoallv_mode_from_name(vmode_text);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--alltoallv-mode: ") + e.what());
  }
  const libcomm::Comm world = apps::world_comm(nodes);
  const int p = world.size();
  const Extent g = size_text.empty() ? parse_cube(n_cube, "--n") : parse_extent(size_text, "--size");
  unsigned flags = 0;
  try {
    flags = kernels::fft_plan_flags_from_name(plan);
  } catch (const std::invalid_argument& e) {
    throw libcomm::Error(std::string("--plan: ") + e.what());
  }
  const std::size_t nzc = r2c ? g.nz / 2 + 1 : g.nz;

  // Decompositions.
  std::vector<std::string> decomps = split_list(decomp_text, "--decomp");
  if (!grid_text.empty() && app.count("--decomp") == 0) decomps = {"pencil"};
  libcomm::require(!decomps.empty(), "--decomp: empty list (use slab, pencil)");
  for (const auto& d : decomps)
    libcomm::require(d == "slab" || d == "pencil",
                     "--decomp: unknown decomposition '" + d + "' (valid: slab, pencil)");
  const bool has_pencil = std::count(decomps.begin(), decomps.end(), "pencil") > 0;
  if (sphere > 0) {
    libcomm::require(!has_pencil && app.count("--grid") == 0,
                     "--sphere: the cutoff sphere applies to the slab decomposition (CPMD's); use --decomp slab");
    libcomm::require(!r2c, "--sphere: complex-to-complex only (drop --r2c)");
    libcomm::require(overlap == 0, "--sphere: not with --overlap");
    libcomm::require(!with_fftw_mpi, "--sphere: the FFTW-MPI peer transforms the full grid (drop --fftw-mpi)");
  }
  libcomm::require(grid_text.empty() || has_pencil,
                   "--grid " + grid_text + " applies to the pencil decomposition (add --decomp pencil)");
  const ProcGrid pencil_grid =
      grid_text.empty() ? choose_proc_grid(p, g, nzc) : parse_proc_grid(grid_text, "--grid", p);

  // Algorithms, native first (the reference of the ratio column).
  std::vector<std::string> algo_names;
  for (const auto& a : split_list(algo_text, "--algo")) {
    if (a == "all") {
      for (const auto& info : libcomm::alltoall_algorithms()) algo_names.emplace_back(info.name);
    } else {
      try {
        algo_names.push_back(std::string(libcomm::alltoall_algo_name(libcomm::alltoall_algo_from_name(a))));
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--algo: ") + e.what());
      }
    }
  }
  libcomm::require(!algo_names.empty(), "--algo: empty list");
  algo_names.erase(std::remove(algo_names.begin(), algo_names.end(), "native"), algo_names.end());
  algo_names.insert(algo_names.begin(), "native");
  {  // keep first occurrences only
    std::vector<std::string> uniq;
    for (const auto& a : algo_names)
      if (std::find(uniq.begin(), uniq.end(), a) == uniq.end()) uniq.push_back(a);
    algo_names = uniq;
  }

  libcomm::require(!(with_fftw_mpi && r2c),
                   "--fftw-mpi: the FFTW-MPI peer is timed for complex-to-complex only (drop --r2c)");
  const bool serial_check =
      check == "serial" || (check == "auto" && g.total() <= kSerialCheckMax);
  libcomm::require(!serial_check || g.total() <= (std::size_t{1} << 26),
                   "--check serial: grid " + g.str() + " is too large to gather (use analytic)");
  const Signal signal = serial_check ? Signal::Random : Signal::PlaneWaves;

  libcomm::Topology world_tree;
  if (!topology_path.empty()) {
    try {
      world_tree = libcomm::Topology::load(topology_path);
      libcomm::attach_topology(world, world_tree);  // checks one machine per rank
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--topology: ") + e.what());
    }
  }
  // Engines (plans made here, once) and peers.
  std::vector<std::unique_ptr<DistributedFft>> engines;
  std::vector<std::string> engine_decomp;
  for (const auto& d : decomps) {
    const ProcGrid pg = d == "slab" ? ProcGrid{p, 1} : pencil_grid;
    engines.push_back(std::make_unique<DistributedFft>(world, g, pg, r2c, flags, overlap, sphere));
    engines.back()->set_local_work_model(model);
    engines.back()->set_uneven_algorithm(valgo, vmode);
    if (!topology_path.empty()) engines.back()->attach_topology(world_tree);
    engine_decomp.push_back(d);
  }
  std::vector<std::unique_ptr<FftwMpiPeer>> peers;
  if (with_fftw_mpi) {
    fftw_mpi_startup();
    peers.push_back(std::make_unique<FftwMpiPeer>(world.mpi(), g, false, flags));
    peers.push_back(std::make_unique<FftwMpiPeer>(world.mpi(), g, true, flags));
  }

  // Inputs, saved once per engine/peer (the transforms overwrite their input buffers).
  std::vector<std::vector<cplx>> saved_c(engines.size() + peers.size());
  std::vector<std::vector<double>> saved_r(engines.size());
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const Box box = engines[e]->input_box();
    if (r2c) {
      saved_r[e].resize(box.count());
      fill_input(signal, g, box, saved_r[e].data());
    } else {
      saved_c[e].resize(box.count());
      fill_input(signal, g, box, saved_c[e].data());
    }
  }
  for (std::size_t k = 0; k < peers.size(); ++k) {
    auto& s = saved_c[engines.size() + k];
    s.resize(peers[k]->input_box().count());
    fill_input(signal, g, peers[k]->input_box(), s.data());
  }

  // The reference spectrum: serial FFTW of the gathered input, or the analytic spikes.
  const std::array<std::size_t, 3> out_dims{g.nx, g.ny, nzc};
  std::vector<cplx> reference;  // on rank 0
  Spectrum spectrum;
  if (serial_check) {
    const Box box = engines[0]->input_box();
    const std::array<std::size_t, 3> in_dims{g.nx, g.ny, g.nz};
    if (r2c) {
      const auto all = gather_boxes(saved_r[0].data(), box, in_dims, world.mpi());
      if (world.rank() == 0) reference = serial_forward(all, g);
    } else {
      const auto all = gather_boxes(saved_c[0].data(), box, in_dims, world.mpi());
      if (world.rank() == 0) reference = serial_forward(all, g);
    }
  } else {
    spectrum = plane_wave_spectrum(g, r2c);
  }
  if (sphere > 0 && serial_check) {  // every rank compares its own sticks
    reference.resize(g.nx * g.ny * nzc);
    MPI_Bcast(reference.data(), static_cast<int>(reference.size()), MPI_C_DOUBLE_COMPLEX, 0, world.mpi());
  }
  // The cutoff sphere's output (this rank's sticks, [stick][x]) against the full transform
  // at those lines: serial FFTW of the gathered input, or the analytic spectrum.
  auto sphere_error = [&](const DistributedFft& f, const cplx* out) {
    const auto& sticks = f.sphere_sticks();
    double err[2] = {0, serial_check ? 0.0 : spectrum.peak};
    for (std::size_t k = 0; k < sticks.size(); ++k)
      for (std::size_t x = 0; x < g.nx; ++x) {
        const auto [y, z] = sticks[k];
        cplx want{};
        if (serial_check) {
          want = reference[(x * g.ny + y) * g.nz + z];
        } else if (auto it = spectrum.spikes.find({x, y, z}); it != spectrum.spikes.end()) {
          want = it->second;
        }
        err[0] = std::max(err[0], std::abs(out[k * g.nx + x] - want));
      }
    if (serial_check)
      for (const auto& v : reference) err[1] = std::max(err[1], std::abs(v));
    MPI_Allreduce(MPI_IN_PLACE, err, 2, MPI_DOUBLE, MPI_MAX, world.mpi());
    return err[1] > 0 ? err[0] / err[1] : err[0];
  };
  auto forward_error = [&](cplx* out, const Box& box) {
    if (!serial_check) return analytic_error(out, box, spectrum, world.mpi());
    const auto all = gather_boxes(out, box, out_dims, world.mpi());
    double err = world.rank() == 0 ? relative_max_error(all, reference) : 0.0;
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, world.mpi());
    return err;
  };

  std::vector<Variant> variants;
  for (std::size_t e = 0; e < engines.size(); ++e)
    for (const auto& a : algo_names) {
      Variant v;
      v.decomp = engine_decomp[e];
      v.proc_grid = engines[e]->procs().str();
      v.engine = static_cast<int>(e);
      v.algo = libcomm::alltoall_algo_from_name(a);
      v.algo_name = a;
      variants.push_back(v);
    }
  for (std::size_t e = 0; e < engines.size(); ++e) {
    if (engines[e]->overlap_chunks() == 0) continue;  // (one process row: no x <-> y transpose)
    Variant v;
    v.decomp = engine_decomp[e];
    v.proc_grid = engines[e]->procs().str();
    v.engine = static_cast<int>(e);
    v.overlap = true;
    v.algo_name = "overlap" + std::to_string(overlap);
    variants.push_back(v);
  }
  for (std::size_t k = 0; k < peers.size(); ++k) {
    Variant v;
    v.decomp = k == 0 ? "fftw_mpi" : "fftw_mpi_transposed_out";
    v.proc_grid = std::to_string(p) + "x1";
    v.peer = static_cast<int>(k);
    v.algo_name = v.ran = k == 0 ? "fftw_mpi" : "fftw_mpi_transposed_out";
    variants.push_back(v);
  }

  if (apps::is_root()) {
    std::cout << "fft3d: grid " << g.str() << (r2c ? " r2c" : " c2c") << ", " << p << " ranks ("
              << world.nodes().describe() << "), plan " << plan << ", reps " << reps
              << ", warmup " << warmup << "\ncheck: "
              << (serial_check ? "random input vs serial FFTW of the gathered input"
                               : "plane waves vs their analytic spectrum")
              << "; errors are max |error| / max |reference|, tolerance " << kTolerance << "\n";
    if (model.enabled()) {
      std::cout << "local work modelled: FFT stages at " << model_gflops
                << " GFlop/s (5 n log2 n per transform), pack/unpack at " << model_copy_gbs << " GB/s";
      if (model_cold_gbs > 0) std::cout << ", copies of received data at " << model_cold_gbs << " GB/s";
      std::cout << "\n";
    }
    for (std::size_t e = 0; e < engines.size(); ++e)
      std::cout << engine_decomp[e] << " " << engines[e]->procs().str() << ": "
                << engines[e]->describe_transposes() << "\n";
  }

  const double scale = 1.0 / static_cast<double>(g.total());
  for (int rep = 0; rep < warmup + reps; ++rep) {
    for (auto& v : variants) {
      libcomm::AlltoallOptions opts;
      // The argument check adds collectives; keep it out of timed runs.
      opts.check_args = rep == 0 && warmup > 0;
      StageTimes tf, tb;
      double t[2];
      std::string ran;
      if (v.engine >= 0) {
        DistributedFft& f = *engines[v.engine];
        const std::size_t e = static_cast<std::size_t>(v.engine);
        if (r2c)
          std::copy(saved_r[e].begin(), saved_r[e].end(), f.real_input());
        else
          std::copy(saved_c[e].begin(), saved_c[e].end(), f.complex_input());
        MPI_Barrier(world.mpi());
        double t0 = MPI_Wtime();
        ran = v.overlap ? f.forward_overlapped(tf) : f.forward(v.algo, opts, tf);
        t[0] = MPI_Wtime() - t0;
        std::vector<cplx> first;  // the sphere's spectrum, for its round trip
        if (rep == 0 && sphere > 0) {
          v.fwd_err = sphere_error(f, f.output());
          first.assign(f.output(), f.output() + f.sphere_sticks().size() * g.nx);
        } else if (rep == 0) {
          v.fwd_err = forward_error(f.output(), f.output_box());
        }
        MPI_Barrier(world.mpi());
        t0 = MPI_Wtime();
        f.backward(v.algo, opts, tb);
        t[1] = MPI_Wtime() - t0;
        if (rep == 0 && sphere > 0) {
          // Backward keeps only the sphere's lines (a projection), so the input does not come
          // back; its forward must give the first spectrum again (times N).
          StageTimes unused;
          f.forward(v.algo, opts, unused);
          v.rt_err = roundtrip_error(f.output(), first.data(), first.size(), scale, world.mpi());
        } else if (rep == 0)
          v.rt_err = r2c ? roundtrip_error(f.real_input(), saved_r[e].data(), saved_r[e].size(),
                                           scale, world.mpi())
                         : roundtrip_error(f.complex_input(), saved_c[e].data(),
                                           saved_c[e].size(), scale, world.mpi());
      } else {
        FftwMpiPeer& f = *peers[v.peer];
        const auto& s = saved_c[engines.size() + static_cast<std::size_t>(v.peer)];
        std::copy(s.begin(), s.end(), f.input());
        MPI_Barrier(world.mpi());
        double t0 = MPI_Wtime();
        f.forward();
        t[0] = MPI_Wtime() - t0;
        if (rep == 0) v.fwd_err = forward_error(f.output(), f.output_box());
        MPI_Barrier(world.mpi());
        t0 = MPI_Wtime();
        f.backward();
        t[1] = MPI_Wtime() - t0;
        if (rep == 0)
          v.rt_err = roundtrip_error(f.input(), s.data(), s.size(), scale, world.mpi());
        ran = v.ran;
      }
      MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, world.mpi());
      double st[3] = {tf.fft, tf.pack, tf.comm};
      MPI_Allreduce(MPI_IN_PLACE, st, 3, MPI_DOUBLE, MPI_SUM, world.mpi());
      if (rep == 0) v.ran = ran;
      if (rep >= warmup) {
        v.fwd.push_back(t[0]);
        v.bwd.push_back(t[1]);
        v.fft.push_back(st[0] / p);
        v.pack.push_back(st[1] / p);
        v.comm.push_back(st[2] / p);
      }
    }
  }

  // Report.
  const double n = static_cast<double>(g.total());
  const double flops = (r2c ? 2.5 : 5.0) * n * std::log2(std::max(n, 2.0));
  auto med = [](const std::vector<double>& x) { return apps::median(x); };
  auto reference_median = [&](const Variant& v) {
    for (const auto& w : variants)
      if (w.algo_name == "native" && (w.decomp == v.decomp || v.peer >= 0) && w.engine >= 0)
        return med(w.fwd);
    return med(v.fwd);
  };
  long long failures = 0;
  for (const auto& v : variants) failures += v.pass() ? 0 : 1;

  // Peer ratios: the best slab algorithm against each FFTW-MPI variant.
  const Variant* best_slab = nullptr;
  for (const auto& v : variants)
    if (v.decomp == "slab" && (!best_slab || med(v.fwd) < med(best_slab->fwd))) best_slab = &v;

  if (apps::is_root()) {
    std::cout << "\n"
              << std::left << std::setw(25) << "decomp" << std::setw(7) << "grid" << std::setw(24)
              << "algo" << std::setw(26) << "ran" << std::right << std::setw(10) << "fwd_ms"
              << std::setw(10) << "bwd_ms" << std::setw(9) << "fft_ms" << std::setw(9)
              << "pack_ms" << std::setw(9) << "comm_ms" << std::setw(8) << "GF/s" << std::setw(7)
              << "ratio" << std::setw(10) << "fwd_err" << std::setw(10) << "rt_err"
              << "  valid\n";
    for (const auto& v : variants) {
      const double f = med(v.fwd);
      // The peers' stages are inside FFTW: no breakdown.
      auto stage = [&](const std::vector<double>& x) {
        std::ostringstream os;
        if (v.peer >= 0)
          os << "-";
        else
          os << std::fixed << std::setprecision(3) << med(x) * 1e3;
        return os.str();
      };
      std::cout << std::left << std::setw(25) << v.decomp << std::setw(7) << v.proc_grid
                << std::setw(24) << v.algo_name << std::setw(26) << v.ran << std::right
                << std::fixed << std::setprecision(3) << std::setw(10) << f * 1e3 << std::setw(10)
                << med(v.bwd) * 1e3 << std::setw(9) << stage(v.fft) << std::setw(9)
                << stage(v.pack) << std::setw(9) << stage(v.comm) << std::setprecision(2) << std::setw(8) << flops / f / 1e9 << std::setw(7)
                << f / reference_median(v) << std::scientific << std::setprecision(1)
                << std::setw(10) << v.fwd_err << std::setw(10) << v.rt_err << std::fixed << "  "
                << (v.pass() ? "PASS" : "FAIL") << "\n";
    }
    std::cout << "fwd/bwd: forward/backward transform (median, slowest rank); fft/pack/comm: "
                 "forward stages (median of rank averages); GF/s = "
              << (r2c ? "2.5" : "5") << " N log2 N / fwd; ratio = fwd / native fwd\n";
    if (best_slab && !peers.empty())
      for (const auto& v : variants)
        if (v.peer >= 0)
          std::cout << "peer: slab " << best_slab->algo_name << " " << std::setprecision(3)
                    << med(best_slab->fwd) * 1e3 << " ms vs " << v.decomp << " "
                    << med(v.fwd) * 1e3 << " ms: ours / fftw = " << std::setprecision(2)
                    << med(best_slab->fwd) / med(v.fwd) << "\n";
    double worst_f = 0, worst_r = 0;
    for (const auto& v : variants) worst_f = std::max(worst_f, v.fwd_err), worst_r = std::max(worst_r, v.rt_err);
    std::cout << std::scientific << std::setprecision(2);
    if (failures == 0)
      std::cout << "validation: PASS (" << variants.size() << " runs; max forward error "
                << worst_f << ", max round-trip error " << worst_r << ")\n";
    else
      std::cout << "validation: FAIL (" << failures << " of " << variants.size()
                << " runs beyond " << kTolerance << "; max forward error " << worst_f
                << ", max round-trip error " << worst_r << ")\n";
    std::cout << std::defaultfloat;

    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "fft3d";
      j["ranks"] = p;
      j["nodes"] = world.nodes().describe();
      j["grid"] = g.str();
      j["transform"] = r2c ? "r2c" : "c2c";
      j["reps"] = reps;
      j["plan"] = plan;
      j["check"] = serial_check ? "serial" : "analytic";
      j["local_work"] = model.enabled()
                            ? nlohmann::json{{"model_fft_gflops", model_gflops},
                                             {"model_copy_gbs", model_copy_gbs}}
                            : nlohmann::json("measured");
      j["block_bytes_meaning"] = "bytes of the whole input grid";
      j["validation"] = failures == 0 ? "PASS" : "FAIL";
      j["results"] = nlohmann::json::array();
      const std::size_t grid_bytes = g.total() * (r2c ? sizeof(double) : sizeof(cplx));
      for (const auto& v : variants) {
        const double f = med(v.fwd);
        j["results"].push_back({{"decomp", v.decomp},
                                {"proc_grid", v.proc_grid},
                                {"algo", v.algo_name},
                                {"ran", v.ran},
                                {"block_bytes", grid_bytes},
                                {"median_s", f},
                                {"median_us", f * 1e6},
                                {"min_s", *std::min_element(v.fwd.begin(), v.fwd.end())},
                                {"backward_median_s", med(v.bwd)},
                                {"fft_s", med(v.fft)},
                                {"pack_s", med(v.pack)},
                                {"comm_s", med(v.comm)},
                                {"gflops", flops / f / 1e9},
                                {"ratio_to_native", f / reference_median(v)},
                                {"forward_error", v.fwd_err},
                                {"roundtrip_error", v.rt_err},
                                {"times_s", v.fwd},
                                {"validation", v.pass() ? "PASS" : "FAIL"}});
        if (v.peer >= 0)  // FFTW's stages are not separable
          for (const char* k : {"fft_s", "pack_s", "comm_s"}) j["results"].back()[k] = nullptr;
      }
      if (best_slab && !peers.empty())
        for (const auto& v : variants)
          if (v.peer >= 0)
            j["peer_ratio"][v.decomp] = {{"best_slab_algo", best_slab->algo_name},
                                         {"ours_over_fftw", med(best_slab->fwd) / med(v.fwd)}};
      std::ofstream out(json_path);
      libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
      out << j.dump(2) << "\n";
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace fft3d

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "fft3d", fft3d::run); }

// fft3d: distributed 3-D FFT (slab and pencil decompositions) whose transposes run on any
// libcomm all-to-all algorithm. Every run is validated (round trip, and the forward result
// against a serial FFTW transform or a known plane-wave spectrum) and timed per stage:
// FFT compute, pack/unpack, communication. Optionally FFTW's own MPI transform is timed
// on the same grid as the peer to beat.
//
// Flow (run): parse the options -> the problem (grid, decompositions, algorithms) -> the
// engines (plans made once) and the reference spectrum -> build the variants (engine x
// algorithm, the pipelined forward, the FFTW-MPI peers) -> --warmup + --reps rounds over
// every variant, the first one validated -> report.
#include <fftw3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "apps/common.hpp"
#include "distributed_fft.hpp"
#include "fftw_mpi_peer.hpp"
#include "libcomm/libcomm.hpp"
#include "validation.hpp"

namespace fft3d {
namespace {

constexpr double kTolerance = 1e-9;                     // relative max error that passes
constexpr std::size_t kSerialCheckMax = 64 * 64 * 64;  // gather + serial FFTW up to here
#ifdef LIBCOMM_SIMGRID
// Under SimGrid all simulated ranks are threads of one process, FFTW_MEASURE's trial runs
// would be charged as computation of the rank that plans (with --host-speed), and FFTW
// shares its wisdom between the ranks, so only the first one would pay. Estimate instead.
constexpr const char* kDefaultPlan = "estimate";
#else
constexpr const char* kDefaultPlan = "measure";
#endif

struct Settings {
  long long n_cube = 32;
  std::string size, grid, decomp = "slab,pencil", plan = kDefaultPlan, check = "auto", valgo = "auto", vmode = "b",
                          topology;
  bool r2c = false, fftw_mpi = false;
  int overlap = 0;
  double model_gflops = 0, model_copy_gbs = 0, model_cold_gbs = 0, sphere = 0;
  apps::RunOptions run = apps::RunOptions::defaults("auto");
};

// What the options describe, checked and resolved once.
struct Problem {
  Extent g;
  std::size_t nzc = 0;
  unsigned flags = 0;
  bool serial_check = false;
  std::vector<std::string> decomps, algos;  // algos: native first
  ProcGrid pencil;
  libcomm::AlltoallvAlgo valgo{};
  libcomm::AlltoallvMode vmode{};
  LocalWorkModel model;
  libcomm::Topology tree;
};

// The transforms, each with the input it is run on (saved once: they overwrite it).
struct Engines {
  std::vector<std::unique_ptr<DistributedFft>> ours;
  std::vector<std::string> decomp;
  std::vector<std::unique_ptr<FftwMpiPeer>> peers;
  std::vector<std::vector<cplx>> saved_c;    // per engine, then per peer
  std::vector<std::vector<double>> saved_r;  // per engine (r2c)
};

// The reference spectrum: serial FFTW of the gathered input (rank 0; every rank's copy
// with the cutoff sphere), or the analytic spikes of the plane waves.
struct Reference {
  std::vector<cplx> values;
  Spectrum spectrum;
};

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

void add_grid_options(CLI::App& app, Settings& s) {
  auto* n_opt = app.add_option("--n", s.n_cube, "cube grid N x N x N")->capture_default_str();
  auto* size_opt = app.add_option("--size", s.size, "grid NXxNYxNZ, e.g. 12x10x9")->check(apps::kNonEmpty);
  n_opt->excludes(size_opt);
  app.add_option("--decomp", s.decomp, "comma-separated: slab, pencil")->capture_default_str();
  app.add_option("--grid", s.grid,
                 "pencil process grid PrxPc (Pr * Pc = ranks); default: chosen automatically (even splits first, "
                 "then the squarest)")
      ->check(apps::kNonEmpty);
  app.add_flag("--r2c", s.r2c, "real input, real-to-complex forward (NZ/2+1 outputs along z)");
  app.add_option("--plan", s.plan, "FFTW planner: estimate | measure | patient | exhaustive (default measure; "
                                   "estimate in a SimGrid build)")
      ->capture_default_str();
  app.add_option("--check", s.check, "forward check: auto (serial up to 64^3, else analytic) | serial | analytic")
      ->check(CLI::IsMember({"auto", "serial", "analytic"}))
      ->capture_default_str();
  app.add_flag("--fftw-mpi", s.fftw_mpi,
               "also time FFTW's fftw_mpi_plan_dft_3d, with and without FFTW_MPI_TRANSPOSED_OUT (c2c only)");
}

void add_model_options(CLI::App& app, Settings& s) {
  app.add_option("--model-fft", s.model_gflops,
                 "SimGrid build without --host-speed: charge each FFT stage its nominal flops (5 n log2 n per "
                 "transform) at this many GFlop/s instead of measuring this machine, so the simulated time is "
                 "deterministic")
      ->check(apps::positive_number(1e9));
  app.add_option("--model-copy", s.model_copy_gbs,
                 "with --model-fft: charge each pack/unpack, and the block copies inside the all-to-all algorithms, "
                 "their bytes at this many GB/s")
      ->check(apps::positive_number(1e6));
  app.add_option("--model-copy-cold", s.model_cold_gbs,
                 "with --model-copy: charge the copies out of data the network delivered (the receive-side "
                 "distribution of recv_distribute / leader, a program's copies out of its own receives) at this many "
                 "GB/s instead: not in the core's cache (paper 002, s. 3, Fig. 5); default: the --model-copy rate")
      ->check(apps::positive_number(1e6));
}

void add_transpose_options(CLI::App& app, Settings& s) {
  app.add_option("--overlap", s.overlap,
                 "also time the forward transform with the x <-> y transpose pipelined in this many chunks (>= 2; "
                 "persistent libcomm plans, each chunk's FFT and pack overlapping the chunks before it in flight; its "
                 "backward is the blocking one, after a copy)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--alltoallv", s.valgo,
                 "irregular algorithm of the uneven transposes (a grid that does not split evenly): native "
                 "(MPI_Alltoallv), direct, two_stage, mesh, four_stage or auto (paper 001)")
      ->capture_default_str();
  app.add_option("--alltoallv-mode", s.vmode, "mode of the uneven transposes: b, n1 or n2 (paper 001, s. 3.4)")
      ->capture_default_str();
  app.add_option("--topology", s.topology,
                 "switch tree of the ranks (inputs/topologies/*.topo, one machine per rank) for tree_scheduled "
                 "(paper 003): each transpose's sub-communicator gets the part of the tree its ranks use; default: "
                 "one switch")
      ->check(CLI::ExistingFile);
  app.add_option("--sphere", s.sphere,
                 "CPMD's cutoff sphere (paper 002, s. 6.2): the slab transpose carries only the x lines whose (ky, "
                 "kz) lies inside a disk of this radius (a fraction of NY/2, NZ/2), dealt round-robin over the ranks "
                 "and padded to the largest count: one regular all-to-all of smaller blocks. Slab, c2c only; "
                 "validated against the full transform at those lines")
      ->check(CLI::Range(1e-9, 1.0));
}

Settings parse(int argc, char** argv) {
  CLI::App app{"fft3d: distributed 3-D FFT whose transposes run on libcomm's all-to-all algorithms.\n"
               "Slab (1-D process grid) and pencil (Pr x Pc) decompositions, c2c or r2c. Every run\n"
               "is validated: forward+backward returns the input, and the forward result equals a\n"
               "serial FFTW transform of the gathered input (grids up to 64^3) or the known spectrum\n"
               "of a few plane waves (larger grids). Times are medians over --reps of the slowest\n"
               "rank; stage times (fft, pack, comm) are rank averages."};
  Settings s;
  add_grid_options(app, s);
  apps::add_run_options(app, s.run,
                        apps::kAlgoOption | apps::kAutoOption | apps::kNodesOption | apps::kRepsOption |
                            apps::kWarmupOption,
                        "all-to-all algorithm(s) of the transposes, comma-separated, or 'all'; 'native' is always "
                        "timed as the reference");
  add_model_options(app, s);
  add_transpose_options(app, s);
  apps::add_run_options(app, s.run, apps::kJsonOption, "");
  apps::parse_command_line(app, argc, argv);
  apps::apply_run_options(app, s.run);
  if (!s.grid.empty() && app.count("--decomp") == 0) s.decomp = "pencil";
  return s;
}

// The cost model of the local work (SimGrid); its options go together.
LocalWorkModel local_work_model(const Settings& s) {
  const LocalWorkModel model{s.model_gflops * 1e9, s.model_copy_gbs * 1e9};
  libcomm::require(s.overlap == 0 || s.overlap >= 2,
                   "--overlap: " + std::to_string(s.overlap) + " chunk(s); pipelining needs at least 2 (0: off)");
  if (model.enabled()) {
    libcomm::sim::require_cost_model_applies("--model-fft/--model-copy");
    libcomm::require(s.model_gflops > 0 && s.model_copy_gbs > 0,
                     "--model-fft and --model-copy go together (give both rates)");
    libcomm::require(!s.fftw_mpi, "--model-fft: the FFTW-MPI peer's local work cannot be charged by the model (drop "
                                  "--fftw-mpi)");
    // The all-to-all algorithms' own block copies are charged at the same copy rate.
    libcomm::sim::set_copy_rate(model.copy_bytes_per_second);
    libcomm::sim::set_cold_copy_rate(s.model_cold_gbs * 1e9);
  }
  libcomm::require(s.model_cold_gbs == 0 || model.enabled(), "--model-copy-cold goes with --model-fft and --model-copy");
  return model;
}

// The decompositions, checked against --grid, --sphere and the other options.
std::vector<std::string> decompositions(const Settings& s) {
  const auto decomps = apps::split_list(s.decomp, "--decomp");
  for (const auto& d : decomps)
    libcomm::require(d == "slab" || d == "pencil", "--decomp: unknown decomposition '" + d + "' (valid: slab, pencil)");
  const bool has_pencil = std::count(decomps.begin(), decomps.end(), "pencil") > 0;
  if (s.sphere > 0) {
    libcomm::require(!has_pencil && s.grid.empty(),
                     "--sphere: the cutoff sphere applies to the slab decomposition (CPMD's); use --decomp slab");
    libcomm::require(!s.r2c, "--sphere: complex-to-complex only (drop --r2c)");
    libcomm::require(s.overlap == 0, "--sphere: not with --overlap");
    libcomm::require(!s.fftw_mpi, "--sphere: the FFTW-MPI peer transforms the full grid (drop --fftw-mpi)");
  }
  libcomm::require(s.grid.empty() || has_pencil,
                   "--grid " + s.grid + " applies to the pencil decomposition (add --decomp pencil)");
  libcomm::require(!(s.fftw_mpi && s.r2c), "--fftw-mpi: the FFTW-MPI peer is timed for complex-to-complex only (drop --r2c)");
  return decomps;
}

// The algorithms of the transposes, native first (the reference of the ratio column).
std::vector<std::string> algorithms(const Settings& s) {
  std::vector<std::string> all;
  for (const auto& info : libcomm::alltoall_algorithms()) all.emplace_back(info.name);
  std::vector<std::string> names = {"native"};
  for (const auto& a : apps::expand_list(s.run.algo, "--algo", all)) try {
      const std::string name(libcomm::alltoall_algo_name(libcomm::alltoall_algo_from_name(a)));
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--algo: ") + e.what());
    }
  return names;
}

template <class T, class FromName>
T named(const std::string& text, const std::string& option, FromName from_name) {
  try {
    return from_name(text);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(option + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw libcomm::Error(option + ": " + e.what());
  }
}

Problem make_problem(const Settings& s, const libcomm::Comm& world) {
  Problem pb;
  pb.model = local_work_model(s);
  pb.valgo = named<libcomm::AlltoallvAlgo>(s.valgo, "--alltoallv", libcomm::alltoallv_algo_from_name);
  pb.vmode = named<libcomm::AlltoallvMode>(s.vmode, "--alltoallv-mode", libcomm::alltoallv_mode_from_name);
  pb.g = s.size.empty() ? parse_cube(s.n_cube, "--n") : parse_extent(s.size, "--size");
  pb.flags = named<unsigned>(s.plan, "--plan", kernels::fft_plan_flags_from_name);
  pb.nzc = s.r2c ? pb.g.nz / 2 + 1 : pb.g.nz;
  pb.decomps = decompositions(s);
  pb.pencil = s.grid.empty() ? choose_proc_grid(world.size(), pb.g, pb.nzc)
                             : parse_proc_grid(s.grid, "--grid", world.size());
  pb.algos = algorithms(s);
  pb.serial_check = s.check == "serial" || (s.check == "auto" && pb.g.total() <= kSerialCheckMax);
  libcomm::require(!pb.serial_check || pb.g.total() <= (std::size_t{1} << 26),
                   "--check serial: grid " + pb.g.str() + " is too large to gather (use analytic)");
  if (!s.topology.empty()) try {
      pb.tree = libcomm::Topology::load(s.topology);
      libcomm::attach_topology(world, pb.tree);  // checks one machine per rank
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--topology: ") + e.what());
    }
  return pb;
}

Engines make_engines(const Settings& s, const Problem& pb, const libcomm::Comm& world) {
  Engines en;
  const Signal signal = pb.serial_check ? Signal::Random : Signal::PlaneWaves;
  for (const auto& d : pb.decomps) {
    const ProcGrid pg = d == "slab" ? ProcGrid{world.size(), 1} : pb.pencil;
    auto f = std::make_unique<DistributedFft>(world, pb.g, pg, s.r2c, pb.flags, s.overlap, s.sphere);
    f->set_local_work_model(pb.model);
    f->set_uneven_algorithm(pb.valgo, pb.vmode);
    if (!s.topology.empty()) f->attach_topology(pb.tree);
    const Box box = f->input_box();
    en.saved_r.emplace_back(s.r2c ? box.count() : 0);
    en.saved_c.emplace_back(s.r2c ? 0 : box.count());
    if (s.r2c) fill_input(signal, pb.g, box, en.saved_r.back().data());
    else fill_input(signal, pb.g, box, en.saved_c.back().data());
    en.ours.push_back(std::move(f));
    en.decomp.push_back(d);
  }
  if (s.fftw_mpi) {
    fftw_mpi_startup();
    for (bool transposed_out : {false, true}) {
      en.peers.push_back(std::make_unique<FftwMpiPeer>(world.mpi(), pb.g, transposed_out, pb.flags));
      en.saved_c.emplace_back(en.peers.back()->input_box().count());
      fill_input(signal, pb.g, en.peers.back()->input_box(), en.saved_c.back().data());
    }
  }
  return en;
}

Reference make_reference(const Settings& s, const Problem& pb, const Engines& en, const libcomm::Comm& world) {
  Reference ref;
  if (!pb.serial_check) {
    ref.spectrum = plane_wave_spectrum(pb.g, s.r2c);
    return ref;
  }
  const Box box = en.ours[0]->input_box();
  const std::array<std::size_t, 3> in_dims{pb.g.nx, pb.g.ny, pb.g.nz};
  if (s.r2c) {
    const auto all = gather_boxes(en.saved_r[0].data(), box, in_dims, world.mpi());
    if (world.rank() == 0) ref.values = serial_forward(all, pb.g);
  } else {
    const auto all = gather_boxes(en.saved_c[0].data(), box, in_dims, world.mpi());
    if (world.rank() == 0) ref.values = serial_forward(all, pb.g);
  }
  if (s.sphere > 0) {  // every rank compares its own sticks
    ref.values.resize(pb.g.nx * pb.g.ny * pb.nzc);
    MPI_Bcast(ref.values.data(), static_cast<int>(ref.values.size()), MPI_C_DOUBLE_COMPLEX, 0, world.mpi());
  }
  return ref;
}

// The forward result against the reference: of the full output box, or of this rank's
// cutoff-sphere sticks ([stick][x]) against the full transform at those lines.
double forward_error(const Problem& pb, const Reference& ref, cplx* out, const Box& box, MPI_Comm comm) {
  if (!pb.serial_check) return analytic_error(out, box, ref.spectrum, comm);
  const auto all = gather_boxes(out, box, {pb.g.nx, pb.g.ny, pb.nzc}, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double err = rank == 0 ? relative_max_error(all, ref.values) : 0.0;
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, comm);
  return err;
}

double sphere_error(const Problem& pb, const Reference& ref, const DistributedFft& f, const cplx* out, MPI_Comm comm) {
  const Extent& g = pb.g;
  double err[2] = {0, pb.serial_check ? 0.0 : ref.spectrum.peak};
  for (std::size_t k = 0; k < f.sphere_sticks().size(); ++k)
    for (std::size_t x = 0; x < g.nx; ++x) {
      const auto [y, z] = f.sphere_sticks()[k];
      cplx want{};
      if (pb.serial_check) want = ref.values[(x * g.ny + y) * g.nz + z];
      else if (auto it = ref.spectrum.spikes.find({x, y, z}); it != ref.spectrum.spikes.end()) want = it->second;
      err[0] = std::max(err[0], std::abs(out[k * g.nx + x] - want));
    }
  if (pb.serial_check)
    for (const auto& v : ref.values) err[1] = std::max(err[1], std::abs(v));
  MPI_Allreduce(MPI_IN_PLACE, err, 2, MPI_DOUBLE, MPI_MAX, comm);
  return err[1] > 0 ? err[0] / err[1] : err[0];
}

// Every engine with every algorithm, each engine's pipelined forward, then the peers.
std::vector<Variant> build_variants(const Settings& s, const Problem& pb, const Engines& en, int p) {
  std::vector<Variant> variants;
  for (std::size_t e = 0; e < en.ours.size(); ++e) {
    Variant v;
    v.decomp = en.decomp[e];
    v.proc_grid = en.ours[e]->procs().str();
    v.engine = static_cast<int>(e);
    for (const auto& a : pb.algos) {
      v.algo = libcomm::alltoall_algo_from_name(a);
      v.algo_name = a;
      variants.push_back(v);
    }
  }
  for (std::size_t e = 0; e < en.ours.size(); ++e) {
    if (en.ours[e]->overlap_chunks() == 0) continue;  // (one process row: no x <-> y transpose)
    Variant v;
    v.decomp = en.decomp[e];
    v.proc_grid = en.ours[e]->procs().str();
    v.engine = static_cast<int>(e);
    v.overlap = true;
    v.algo_name = "overlap" + std::to_string(s.overlap);
    variants.push_back(v);
  }
  for (std::size_t k = 0; k < en.peers.size(); ++k) {
    Variant v;
    v.decomp = v.algo_name = v.ran = k == 0 ? "fftw_mpi" : "fftw_mpi_transposed_out";
    v.proc_grid = std::to_string(p) + "x1";
    v.peer = static_cast<int>(k);
    variants.push_back(v);
  }
  return variants;
}

// One forward and backward transform of our engine: times {fwd, bwd} and the forward
// stages; the first run (`check`) validates both directions.
std::string run_engine(Variant& v, bool check, const libcomm::AlltoallOptions& opts, Engines& en, const Problem& pb,
                       const Reference& ref, double t[2], StageTimes& tf, MPI_Comm comm) {
  DistributedFft& f = *en.ours[static_cast<std::size_t>(v.engine)];
  const auto e = static_cast<std::size_t>(v.engine);
  if (f.r2c()) std::copy(en.saved_r[e].begin(), en.saved_r[e].end(), f.real_input());
  else std::copy(en.saved_c[e].begin(), en.saved_c[e].end(), f.complex_input());
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  const std::string ran = v.overlap ? f.forward_overlapped(tf) : f.forward(v.algo, opts, tf);
  t[0] = MPI_Wtime() - t0;
  const bool sphere = f.sphere() > 0;
  std::vector<cplx> first;  // the sphere's spectrum, for its round trip
  if (check && sphere) first.assign(f.output(), f.output() + f.sphere_sticks().size() * pb.g.nx);
  if (check) v.fwd_err = sphere ? sphere_error(pb, ref, f, f.output(), comm) : forward_error(pb, ref, f.output(), f.output_box(), comm);
  StageTimes tb;
  MPI_Barrier(comm);
  t0 = MPI_Wtime();
  f.backward(v.algo, opts, tb);
  t[1] = MPI_Wtime() - t0;
  if (!check) return ran;
  const double scale = 1.0 / static_cast<double>(pb.g.total());
  if (sphere) {
    // Backward keeps only the sphere's lines (a projection), so the input does not come
    // back; its forward must give the first spectrum again (times N).
    StageTimes unused;
    f.forward(v.algo, opts, unused);
    v.rt_err = roundtrip_error(f.output(), first.data(), first.size(), scale, comm);
  } else {
    v.rt_err = f.r2c() ? roundtrip_error(f.real_input(), en.saved_r[e].data(), en.saved_r[e].size(), scale, comm)
                       : roundtrip_error(f.complex_input(), en.saved_c[e].data(), en.saved_c[e].size(), scale, comm);
  }
  return ran;
}

std::string run_peer(Variant& v, bool check, Engines& en, const Problem& pb, const Reference& ref, double t[2],
                     MPI_Comm comm) {
  FftwMpiPeer& f = *en.peers[static_cast<std::size_t>(v.peer)];
  const auto& saved = en.saved_c[en.ours.size() + static_cast<std::size_t>(v.peer)];
  std::copy(saved.begin(), saved.end(), f.input());
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  f.forward();
  t[0] = MPI_Wtime() - t0;
  if (check) v.fwd_err = forward_error(pb, ref, f.output(), f.output_box(), comm);
  MPI_Barrier(comm);
  t0 = MPI_Wtime();
  f.backward();
  t[1] = MPI_Wtime() - t0;
  if (check) v.rt_err = roundtrip_error(f.input(), saved.data(), saved.size(), 1.0 / static_cast<double>(pb.g.total()), comm);
  return v.ran;
}

// Round `rep` of variant v: repetition 0 is validated (and checks the all-to-all
// arguments when it is a warm-up); the rounds after --warmup are timed.
void run_variant(Variant& v, int rep, const Settings& s, Engines& en, const Problem& pb, const Reference& ref,
                 const libcomm::Comm& world) {
  libcomm::AlltoallOptions opts;
  opts.check_args = rep == 0 && s.run.warmup > 0;  // the check adds collectives: not in timed runs
  StageTimes tf;
  double t[2];
  const std::string ran = v.engine >= 0 ? run_engine(v, rep == 0, opts, en, pb, ref, t, tf, world.mpi())
                                        : run_peer(v, rep == 0, en, pb, ref, t, world.mpi());
  const auto slowest = apps::slowest({t[0], t[1]}, world.mpi());
  double st[3] = {tf.fft, tf.pack, tf.comm};
  MPI_Allreduce(MPI_IN_PLACE, st, 3, MPI_DOUBLE, MPI_SUM, world.mpi());
  if (rep == 0) v.ran = ran;
  if (rep < s.run.warmup) return;
  const double p = world.size();
  v.fwd.push_back(slowest[0]);
  v.bwd.push_back(slowest[1]);
  v.fft.push_back(st[0] / p);
  v.pack.push_back(st[1] / p);
  v.comm.push_back(st[2] / p);
}

void print_header(const Settings& s, const Problem& pb, const Engines& en, const libcomm::Comm& world) {
  if (!apps::is_root()) return;
  std::cout << "fft3d: grid " << pb.g.str() << (s.r2c ? " r2c" : " c2c") << ", " << world.size() << " ranks ("
            << world.nodes().describe() << "), plan " << s.plan << ", reps " << s.run.reps << ", warmup "
            << s.run.warmup << "\ncheck: "
            << (pb.serial_check ? "random input vs serial FFTW of the gathered input"
                                : "plane waves vs their analytic spectrum")
            << "; errors are max |error| / max |reference|, tolerance " << kTolerance << "\n";
  if (pb.model.enabled()) {
    std::cout << "local work modelled: FFT stages at " << s.model_gflops
              << " GFlop/s (5 n log2 n per transform), pack/unpack at " << s.model_copy_gbs << " GB/s";
    if (s.model_cold_gbs > 0) std::cout << ", copies of received data at " << s.model_cold_gbs << " GB/s";
    std::cout << "\n";
  }
  for (std::size_t e = 0; e < en.ours.size(); ++e)
    std::cout << en.decomp[e] << " " << en.ours[e]->procs().str() << ": " << en.ours[e]->describe_transposes() << "\n";
}

// Each variant's forward median against native's of the same decomposition (a peer: the
// first one's); the best slab variant, the peers' opponent.
struct Summary {
  std::vector<double> ratio;
  const Variant* best_slab = nullptr;
  double flops = 0;
  apps::Validation validation;
  double worst_fwd = 0, worst_rt = 0;
};

Summary summarize(const Settings& s, const Problem& pb, const std::vector<Variant>& variants) {
  Summary sum;
  const double n = static_cast<double>(pb.g.total());
  sum.flops = (s.r2c ? 2.5 : 5.0) * n * std::log2(std::max(n, 2.0));
  for (const auto& v : variants) {
    double reference = apps::median(v.fwd);
    for (const auto& w : variants)
      if (w.algo_name == "native" && (w.decomp == v.decomp || v.peer >= 0) && w.engine >= 0) {
        reference = apps::median(w.fwd);
        break;
      }
    sum.ratio.push_back(apps::median(v.fwd) / reference);
    if (v.decomp == "slab" && (!sum.best_slab || apps::median(v.fwd) < apps::median(sum.best_slab->fwd))) sum.best_slab = &v;
    sum.validation.add(v.pass());
    sum.worst_fwd = std::max(sum.worst_fwd, v.fwd_err);
    sum.worst_rt = std::max(sum.worst_rt, v.rt_err);
  }
  return sum;
}

const apps::Table kTable({{"decomp", 25, true, ""}, {"grid", 7, true, ""}, {"algo", 24, true, ""},
                          {"ran", 26, true, ""}, {"fwd_ms", 10, false, ""}, {"bwd_ms", 10, false, ""},
                          {"fft_ms", 9, false, ""}, {"pack_ms", 9, false, ""}, {"comm_ms", 9, false, ""},
                          {"GF/s", 8, false, ""}, {"ratio", 7, false, ""}, {"fwd_err", 10, false, ""},
                          {"rt_err", 10, false, ""}, {"valid", 0, true, "  "}});

void print_table(const Settings& s, const std::vector<Variant>& variants, const Summary& sum, bool peers) {
  std::cout << "\n" << kTable.header() << "\n";
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const Variant& v = variants[k];
    const double f = apps::median(v.fwd);
    // The peers' stages are inside FFTW: no breakdown.
    const auto stage = [&](const std::vector<double>& x) { return v.peer >= 0 ? "-" : apps::fixed(apps::median(x) * 1e3, 3); };
    std::cout << kTable.row({v.decomp, v.proc_grid, v.algo_name, v.ran, apps::fixed(f * 1e3, 3),
                             apps::fixed(apps::median(v.bwd) * 1e3, 3), stage(v.fft), stage(v.pack), stage(v.comm),
                             apps::fixed(sum.flops / f / 1e9, 2), apps::fixed(sum.ratio[k], 2),
                             apps::scientific(v.fwd_err, 1), apps::scientific(v.rt_err, 1), v.pass() ? "PASS" : "FAIL"})
              << "\n";
  }
  std::cout << "fwd/bwd: forward/backward transform (median, slowest rank); fft/pack/comm: forward stages (median of "
               "rank averages); GF/s = "
            << (s.r2c ? "2.5" : "5") << " N log2 N / fwd; ratio = fwd / native fwd\n";
  if (sum.best_slab && peers)
    for (const auto& v : variants)
      if (v.peer >= 0)
        std::cout << std::fixed << "peer: slab " << sum.best_slab->algo_name << " " << std::setprecision(3)
                  << apps::median(sum.best_slab->fwd) * 1e3 << " ms vs " << v.decomp << " " << apps::median(v.fwd) * 1e3
                  << " ms: ours / fftw = " << std::setprecision(2)
                  << apps::median(sum.best_slab->fwd) / apps::median(v.fwd) << std::defaultfloat << "\n";
  const std::string errors = "; max forward error " + apps::scientific(sum.worst_fwd, 2) + ", max round-trip error " +
                             apps::scientific(sum.worst_rt, 2);
  std::cout << sum.validation.line("runs" + errors, "runs beyond " + apps::scientific(kTolerance, 2) + errors) << "\n";
}

nlohmann::json record(const Settings& s, const Problem& pb, const std::vector<Variant>& variants, const Summary& sum,
                      const libcomm::Comm& world) {
  nlohmann::json j = {{"program", "fft3d"}, {"ranks", world.size()}, {"nodes", world.nodes().describe()},
                      {"grid", pb.g.str()}, {"transform", s.r2c ? "r2c" : "c2c"}, {"reps", s.run.reps},
                      {"plan", s.plan}, {"check", pb.serial_check ? "serial" : "analytic"},
                      {"block_bytes_meaning", "bytes of the whole input grid"},
                      {"validation", sum.validation.verdict()}, {"results", nlohmann::json::array()}};
  j["local_work"] = pb.model.enabled() ? nlohmann::json{{"model_fft_gflops", s.model_gflops},
                                                        {"model_copy_gbs", s.model_copy_gbs}}
                                       : nlohmann::json("measured");
  const std::size_t grid_bytes = pb.g.total() * (s.r2c ? sizeof(double) : sizeof(cplx));
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const Variant& v = variants[k];
    const double f = apps::median(v.fwd);
    nlohmann::json r = {{"decomp", v.decomp}, {"proc_grid", v.proc_grid}, {"algo", v.algo_name}, {"ran", v.ran},
                        {"block_bytes", grid_bytes}, {"median_s", f}, {"median_us", f * 1e6},
                        {"min_s", *std::min_element(v.fwd.begin(), v.fwd.end())},
                        {"backward_median_s", apps::median(v.bwd)}, {"fft_s", apps::median(v.fft)},
                        {"pack_s", apps::median(v.pack)}, {"comm_s", apps::median(v.comm)},
                        {"gflops", sum.flops / f / 1e9}, {"ratio_to_native", sum.ratio[k]},
                        {"forward_error", v.fwd_err}, {"roundtrip_error", v.rt_err}, {"times_s", v.fwd},
                        {"validation", v.pass() ? "PASS" : "FAIL"}};
    if (v.peer >= 0)  // FFTW's stages are not separable
      for (const char* stage : {"fft_s", "pack_s", "comm_s"}) r[stage] = nullptr;
    j["results"].push_back(r);
    if (v.peer >= 0 && sum.best_slab)
      j["peer_ratio"][v.decomp] = {{"best_slab_algo", sum.best_slab->algo_name},
                                   {"ours_over_fftw", apps::median(sum.best_slab->fwd) / f}};
  }
  return j;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  const libcomm::Comm world = apps::world_comm(s.run.nodes);
  const Problem pb = make_problem(s, world);
  Engines en = make_engines(s, pb, world);
  const Reference ref = make_reference(s, pb, en, world);
  std::vector<Variant> variants = build_variants(s, pb, en, world.size());
  print_header(s, pb, en, world);
  apps::round_robin(s.run.warmup + s.run.reps, variants.size(),
                    [&](int rep, std::size_t k) { run_variant(variants[k], rep, s, en, pb, ref, world); });
  const Summary sum = summarize(s, pb, variants);
  if (apps::is_root()) {
    print_table(s, variants, sum, !en.peers.empty());
    apps::write_json(s.run.json, record(s, pb, variants, sum, world));
  }
  return sum.validation.ok() ? 0 : 1;
}

}  // namespace
}  // namespace fft3d

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "fft3d", fft3d::run); }

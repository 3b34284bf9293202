// Exercises the drop-in library (libcomm_mpi) with plain MPI calls: every case runs the
// intercepted MPI_<op> and the MPI library's own PMPI_<op> on the same input and compares
// the whole receive buffers byte for byte (gaps of non-contiguous datatypes included,
// which must keep their fill). It also checks the route the library took
// (libcomm_mpi_last_route, looked up with dlsym): libcomm for what libcomm can do exactly,
// "pmpi" for inter-communicators and unsupported reductions, and MPI error classes.
//
// Built twice: linked with libcomm_mpi, and against plain MPI for a run under LD_PRELOAD.
// Exit code 0 only when every check passed on every rank.
#include <dlfcn.h>
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

int world_rank = 0;
int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAIL: %s\n", world_rank, what.c_str());
}

std::string last_route() {
  using RouteFn = const char* (*)();
  static const auto fn = reinterpret_cast<RouteFn>(dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route"));
  return fn == nullptr ? "(libcomm_mpi not loaded)" : fn();
}

void expect_libcomm(const std::string& what) {
  const std::string r = last_route();
  check(!r.empty() && r != "pmpi" && r[0] != '(', what + ": ran '" + r + "', expected libcomm");
}

void expect_pmpi(const std::string& what) {
  const std::string r = last_route();
  check(r == "pmpi", what + ": ran '" + r + "', expected the fallback to PMPI");
}

// Receive buffers start filled with this byte so that bytes a collective must not touch
// (gaps of vector types, unused displacements) are compared as well.
constexpr unsigned char kFill = 0xA5;

template <class T>
void compare(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  check(got.size() == want.size() &&
            std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0,
        what + ": differs from PMPI");
}

template <class T>
std::vector<T> filled(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), kFill, n * sizeof(T));
  return v;
}

// Values identified by (source rank, destination rank, index), exact in every type used.
int value(int src, int dst, int k) { return src * 1000 + dst * 10 + k % 10; }

// The library reads its environment once; a changed variable counts after this.
void reload_environment() {
  using ReloadFn = void (*)();
  static const auto fn = reinterpret_cast<ReloadFn>(dlsym(RTLD_DEFAULT, "libcomm_mpi_reload_environment"));
  check(fn != nullptr, "libcomm_mpi_reload_environment is exported");
  if (fn != nullptr) fn();
}

void set_env(const char* var, const std::string& value) {
  setenv(var, value.c_str(), 1);
  reload_environment();
}

void unset_env(const char* var) {
  unsetenv(var);
  reload_environment();
}

void set_algo(const char* var, const std::string& name) { set_env(var, name); }

// ---- MPI_Alltoall --------------------------------------------------------------------------

void alltoall_cases(MPI_Comm comm, const std::string& algo) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::string tag = "alltoall[" + algo + "] ";
  for (int count : {0, 3, 5000}) {  // 5000 ints = 20 KB blocks: a different auto choice
    std::vector<int> send(static_cast<std::size_t>(p * count));
    for (int d = 0; d < p; ++d)
      for (int k = 0; k < count; ++k) send[static_cast<std::size_t>(d * count + k)] = value(me, d, k);
    auto got = filled<int>(send.size()), want = filled<int>(send.size());
    check(MPI_Alltoall(send.data(), count, MPI_INT, got.data(), count, MPI_INT, comm) == MPI_SUCCESS,
          tag + "MPI_INT returns MPI_SUCCESS");
    expect_libcomm(tag + "MPI_INT count " + std::to_string(count));
    PMPI_Alltoall(send.data(), count, MPI_INT, want.data(), count, MPI_INT, comm);
    compare(got, want, tag + "MPI_INT count " + std::to_string(count));
  }
  {  // MPI_IN_PLACE
    std::vector<double> got(static_cast<std::size_t>(2 * p));
    for (int d = 0; d < p; ++d)
      for (int k = 0; k < 2; ++k) got[static_cast<std::size_t>(2 * d + k)] = value(me, d, k);
    auto want = got;
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), 2, MPI_DOUBLE, comm);
    expect_libcomm(tag + "MPI_IN_PLACE");
    PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want.data(), 2, MPI_DOUBLE, comm);
    compare(got, want, tag + "MPI_IN_PLACE");
  }
  {  // contiguous derived send type (3 shorts) against plain shorts, same signature
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_SHORT, &three);
    MPI_Type_commit(&three);
    std::vector<short> send(static_cast<std::size_t>(6 * p));
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = static_cast<short>(value(me, static_cast<int>(k / 6), static_cast<int>(k)));
    auto got = filled<short>(send.size()), want = filled<short>(send.size());
    MPI_Alltoall(send.data(), 2, three, got.data(), 6, MPI_SHORT, comm);
    expect_libcomm(tag + "contiguous derived type");
    PMPI_Alltoall(send.data(), 2, three, want.data(), 6, MPI_SHORT, comm);
    compare(got, want, tag + "contiguous derived type");
    MPI_Type_free(&three);
  }
  {  // non-contiguous receive type: 2 ints with a one-int gap (extent 3 ints)
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    std::vector<int> send(static_cast<std::size_t>(2 * p));
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = value(me, static_cast<int>(k / 2), static_cast<int>(k));
    auto got = filled<int>(static_cast<std::size_t>(3 * p)), want = got;
    MPI_Alltoall(send.data(), 2, MPI_INT, got.data(), 1, strided, comm);
    expect_libcomm(tag + "vector receive type");
    PMPI_Alltoall(send.data(), 2, MPI_INT, want.data(), 1, strided, comm);
    compare(got, want, tag + "vector receive type");
    // and as the send type, with a plain receive
    auto got2 = filled<int>(send.size()), want2 = got2;
    std::vector<int> wide(static_cast<std::size_t>(3 * p));
    for (std::size_t k = 0; k < wide.size(); ++k) wide[k] = value(me, static_cast<int>(k / 3), static_cast<int>(k));
    MPI_Alltoall(wide.data(), 1, strided, got2.data(), 2, MPI_INT, comm);
    PMPI_Alltoall(wide.data(), 1, strided, want2.data(), 2, MPI_INT, comm);
    compare(got2, want2, tag + "vector send type");
    MPI_Type_free(&strided);
  }
  {  // dense type whose data does not start at the buffer address (true lb = 4 bytes)
    MPI_Datatype shifted;
    const int len = 1;
    const MPI_Aint disp = sizeof(int);
    const MPI_Datatype base = MPI_INT;
    MPI_Type_create_struct(1, &len, &disp, &base, &shifted);
    MPI_Type_commit(&shifted);
    std::vector<int> send(static_cast<std::size_t>(p + 1));
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = value(me, static_cast<int>(k), 7);
    auto got = filled<int>(send.size()), want = got;
    MPI_Alltoall(send.data(), 1, shifted, got.data(), 1, shifted, comm);
    expect_libcomm(tag + "struct type with lower bound 4");
    PMPI_Alltoall(send.data(), 1, shifted, want.data(), 1, shifted, comm);
    compare(got, want, tag + "struct type with lower bound 4");
    MPI_Type_free(&shifted);
  }
}

// ---- MPI_Alltoallv -------------------------------------------------------------------------

int vcount(int src, int dst) { return (src * 7 + dst * 3) % 5; }  // zeros included

void alltoallv_cases(MPI_Comm comm, const std::string& algo) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::string tag = "alltoallv[" + algo + "] ";
  const auto n = static_cast<std::size_t>(p);
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  int stotal = 0, rtotal = 0;
  // Send blocks packed in reverse rank order, receive blocks in rank order with a gap of
  // one element after each (unused, must keep its fill).
  for (int r = p - 1; r >= 0; --r) {
    sc[static_cast<std::size_t>(r)] = vcount(me, r);
    sd[static_cast<std::size_t>(r)] = stotal;
    stotal += vcount(me, r);
  }
  for (int r = 0; r < p; ++r) {
    rc[static_cast<std::size_t>(r)] = vcount(r, me);
    rd[static_cast<std::size_t>(r)] = rtotal;
    rtotal += vcount(r, me) + 1;
  }
  std::vector<int> send(static_cast<std::size_t>(stotal));
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < sc[static_cast<std::size_t>(r)]; ++k)
      send[static_cast<std::size_t>(sd[static_cast<std::size_t>(r)] + k)] = value(me, r, k);
  {
    auto got = filled<int>(static_cast<std::size_t>(rtotal)), want = got;
    check(MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(), rc.data(), rd.data(),
                        MPI_INT, comm) == MPI_SUCCESS,
          tag + "returns MPI_SUCCESS");
    expect_libcomm(tag + "MPI_INT");
    PMPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(),
                   MPI_INT, comm);
    compare(got, want, tag + "MPI_INT");
  }
  {  // MPI_IN_PLACE: symmetric counts, as MPI requires for in-place alltoallv
    std::vector<int> ic(n), id(n);
    int total = 0;
    for (int r = 0; r < p; ++r) {
      ic[static_cast<std::size_t>(r)] = (me + r) % 3;
      id[static_cast<std::size_t>(r)] = total;
      total += (me + r) % 3 + 1;
    }
    std::vector<int> got(static_cast<std::size_t>(total));
    for (std::size_t k = 0; k < got.size(); ++k) got[k] = value(me, static_cast<int>(k), 1);
    auto want = got;
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, got.data(), ic.data(), id.data(),
                  MPI_INT, comm);
    expect_libcomm(tag + "MPI_IN_PLACE");
    PMPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, want.data(), ic.data(),
                   id.data(), MPI_INT, comm);
    compare(got, want, tag + "MPI_IN_PLACE");
  }
  {  // non-contiguous receive type: every int lands 2 ints apart (resized extent 8 bytes)
    MPI_Datatype spaced;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &spaced);
    MPI_Type_commit(&spaced);
    auto got = filled<int>(static_cast<std::size_t>(2 * rtotal)), want = got;
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(), rc.data(), rd.data(),
                  spaced, comm);
    expect_libcomm(tag + "resized receive type");
    PMPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(),
                   spaced, comm);
    compare(got, want, tag + "resized receive type");
    MPI_Type_free(&spaced);
  }
}

// ---- MPI_Allgather / MPI_Allgatherv --------------------------------------------------------

void allgather_cases(MPI_Comm comm, const std::string& algo) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::string tag = "allgather[" + algo + "] ";
  const auto n = static_cast<std::size_t>(p);
  {
    std::vector<int> send(5);
    for (int k = 0; k < 5; ++k) send[static_cast<std::size_t>(k)] = value(me, 0, k);
    auto got = filled<int>(5 * n), want = got;
    check(MPI_Allgather(send.data(), 5, MPI_INT, got.data(), 5, MPI_INT, comm) == MPI_SUCCESS,
          tag + "returns MPI_SUCCESS");
    expect_libcomm(tag + "MPI_INT");
    PMPI_Allgather(send.data(), 5, MPI_INT, want.data(), 5, MPI_INT, comm);
    compare(got, want, tag + "MPI_INT");
  }
  {  // MPI_IN_PLACE
    auto got = filled<double>(3 * n);
    for (int k = 0; k < 3; ++k) got[static_cast<std::size_t>(3 * me + k)] = value(me, 1, k);
    auto want = got;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), 3, MPI_DOUBLE, comm);
    expect_libcomm(tag + "MPI_IN_PLACE");
    PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want.data(), 3, MPI_DOUBLE, comm);
    compare(got, want, tag + "MPI_IN_PLACE");
  }
  {  // non-contiguous receive type
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    const std::vector<int> send = {value(me, 2, 0), value(me, 2, 1)};
    auto got = filled<int>(3 * n), want = got;
    MPI_Allgather(send.data(), 2, MPI_INT, got.data(), 1, strided, comm);
    expect_libcomm(tag + "vector receive type");
    PMPI_Allgather(send.data(), 2, MPI_INT, want.data(), 1, strided, comm);
    compare(got, want, tag + "vector receive type");
    MPI_Type_free(&strided);
  }
  // Allgatherv: uneven counts with zeros, packed in rank order (libcomm writes straight
  // into the user's buffer) and then reversed with gaps (staged).
  std::vector<int> counts(n), packed(n), reversed(n);
  int total = 0;
  for (int r = 0; r < p; ++r) {
    counts[static_cast<std::size_t>(r)] = r % 3 == 1 ? 0 : r + 1;
    packed[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  int at = 0;
  for (int r = p - 1; r >= 0; --r) {
    reversed[static_cast<std::size_t>(r)] = at;
    at += counts[static_cast<std::size_t>(r)] + 2;
  }
  std::vector<int> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]));
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = value(me, 3, static_cast<int>(k));
  for (const auto* displs : {&packed, &reversed}) {
    const std::string what = tag + (displs == &packed ? "allgatherv packed" : "allgatherv reversed");
    auto got = filled<int>(static_cast<std::size_t>(at)), want = got;
    MPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, got.data(),
                   counts.data(), displs->data(), MPI_INT, comm);
    expect_libcomm(what);
    PMPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, want.data(),
                    counts.data(), displs->data(), MPI_INT, comm);
    compare(got, want, what);
    // in place: this rank's block already sits at its displacement
    auto got2 = filled<int>(static_cast<std::size_t>(at));
    std::copy(mine.begin(), mine.end(), got2.begin() + (*displs)[static_cast<std::size_t>(me)]);
    auto want2 = got2;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got2.data(), counts.data(), displs->data(),
                   MPI_INT, comm);
    expect_libcomm(what + " MPI_IN_PLACE");
    PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want2.data(), counts.data(), displs->data(),
                    MPI_INT, comm);
    compare(got2, want2, what + " MPI_IN_PLACE");
  }
}

// ---- MPI_Reduce_scatter / MPI_Reduce_scatter_block -----------------------------------------

// Element-wise a * b + a + b: commutative but not predefined.
void user_combine(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int k = 0; k < *len; ++k) b[k] = (a[k] * b[k] + a[k] + b[k]) % 1009;
}
// Element-wise b = 2 * a + b: not commutative.
void user_ordered(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int k = 0; k < *len; ++k) b[k] = (2 * a[k] + b[k]) % 1009;
}

template <class T>
void reduce_scatter_case(MPI_Comm comm, const std::vector<int>& counts, MPI_Datatype type, MPI_Op op,
                         bool in_place, bool via_libcomm, const std::string& what) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  int total = 0;
  for (int c : counts) total += c;
  std::vector<T> send(static_cast<std::size_t>(total));
  for (int k = 0; k < total; ++k) send[static_cast<std::size_t>(k)] = static_cast<T>((me * 37 + k * 11) % 101);
  const std::size_t mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]);
  std::vector<T> got, want;
  if (in_place) {
    got = send;
    want = send;
    MPI_Reduce_scatter(MPI_IN_PLACE, got.data(), counts.data(), type, op, comm);
  } else {
    got = filled<T>(mine + 1);
    want = got;
    MPI_Reduce_scatter(send.data(), got.data(), counts.data(), type, op, comm);
  }
  via_libcomm ? expect_libcomm(what) : expect_pmpi(what);
  PMPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send.data(), want.data(), counts.data(), type, op, comm);
  if (in_place) {  // only the first counts[me] elements are defined after an in-place call
    got.resize(mine);
    want.resize(mine);
  }
  compare(got, want, what);
}

void reduce_scatter_cases(MPI_Comm comm, const std::string& algo) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::string tag = "reduce_scatter[" + algo + "] ";
  std::vector<int> counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) counts[static_cast<std::size_t>(r)] = r % 4 == 2 ? 0 : r % 3 + 1;
  // Small integers: the sums are exact in every order, so the bytes must agree.
  reduce_scatter_case<double>(comm, counts, MPI_DOUBLE, MPI_SUM, false, true, tag + "double sum");
  reduce_scatter_case<int>(comm, counts, MPI_INT, MPI_MAX, false, true, tag + "int max");
  reduce_scatter_case<float>(comm, counts, MPI_FLOAT, MPI_MIN, true, true, tag + "float min in place");
  reduce_scatter_case<std::complex<double>>(comm, counts, MPI_C_DOUBLE_COMPLEX, MPI_SUM, false, true,
                                            tag + "complex sum");
  reduce_scatter_case<int>(comm, counts, MPI_INT, MPI_PROD, false, false, tag + "int prod (fallback)");
  reduce_scatter_case<long>(comm, counts, MPI_LONG, MPI_SUM, false, false, tag + "long sum (fallback)");
  for (int commute : {1, 0}) {
    MPI_Op op;
    MPI_Op_create(commute ? user_combine : user_ordered, commute, &op);
    reduce_scatter_case<int>(comm, counts, MPI_INT, op, false, false,
                             tag + (commute ? "user op (fallback)" : "non-commutative user op (fallback)"));
    MPI_Op_free(&op);
  }
  // Reduce_scatter_block, also in place.
  std::vector<float> send(static_cast<std::size_t>(3 * p));
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = static_cast<float>((me + 1) * (k % 7));
  auto got = filled<float>(3), want = got;
  MPI_Reduce_scatter_block(send.data(), got.data(), 3, MPI_FLOAT, MPI_SUM, comm);
  expect_libcomm(tag + "block");
  PMPI_Reduce_scatter_block(send.data(), want.data(), 3, MPI_FLOAT, MPI_SUM, comm);
  compare(got, want, tag + "block");
  auto got2 = send, want2 = send;
  MPI_Reduce_scatter_block(MPI_IN_PLACE, got2.data(), 3, MPI_FLOAT, MPI_MAX, comm);
  expect_libcomm(tag + "block in place");
  PMPI_Reduce_scatter_block(MPI_IN_PLACE, want2.data(), 3, MPI_FLOAT, MPI_MAX, comm);
  got2.resize(3);
  want2.resize(3);
  compare(got2, want2, tag + "block in place");
}

// ---- Inter-communicators, errors, communicator lifetime ------------------------------------

void intercomm_case(MPI_Comm world) {
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  if (p < 2) return;
  MPI_Comm half, inter;
  MPI_Comm_split(world, me % 2, me, &half);
  MPI_Intercomm_create(half, 0, world, me % 2 == 0 ? 1 : 0, 77, &inter);
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  std::vector<int> send(static_cast<std::size_t>(2 * remote));
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = value(me, static_cast<int>(k / 2), static_cast<int>(k));
  auto got = filled<int>(send.size()), want = got;
  MPI_Alltoall(send.data(), 2, MPI_INT, got.data(), 2, MPI_INT, inter);
  expect_pmpi("alltoall on an inter-communicator");
  PMPI_Alltoall(send.data(), 2, MPI_INT, want.data(), 2, MPI_INT, inter);
  compare(got, want, "alltoall on an inter-communicator");
  auto got2 = filled<int>(static_cast<std::size_t>(remote)), want2 = got2;
  MPI_Allgather(&me, 1, MPI_INT, got2.data(), 1, MPI_INT, inter);
  expect_pmpi("allgather on an inter-communicator");
  PMPI_Allgather(&me, 1, MPI_INT, want2.data(), 1, MPI_INT, inter);
  compare(got2, want2, "allgather on an inter-communicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

void error_cases(MPI_Comm world) {
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  MPI_Comm comm;
  MPI_Comm_dup(world, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<int> a(static_cast<std::size_t>(4 * p)), b(a.size());
  // A negative count: the same error class as MPI's own.
  const int mine = MPI_Alltoall(a.data(), -1, MPI_INT, b.data(), -1, MPI_INT, comm);
  const int theirs = PMPI_Alltoall(a.data(), -1, MPI_INT, b.data(), -1, MPI_INT, comm);
  check(mine != MPI_SUCCESS && error_class(mine) == error_class(theirs),
        "negative count: error class " + std::to_string(error_class(mine)) + ", MPI gives " +
            std::to_string(error_class(theirs)));
  // Ranks that disagree on the block size (erroneous in MPI, which checks nothing
  // collectively; neither does the library by default): with LIBCOMM_CHECK_ARGS=1 every
  // rank gets MPI_ERR_ARG instead of a hang.
  if (p > 1) {
    set_env("LIBCOMM_CHECK_ARGS", "1");
    const int count = me == 0 ? 2 : 1;
    const int rc = MPI_Alltoall(a.data(), count, MPI_INT, b.data(), count, MPI_INT, comm);
    check(error_class(rc) == MPI_ERR_ARG, "block sizes that disagree across ranks: got error class " +
                                              std::to_string(error_class(rc)) + ", want MPI_ERR_ARG");
    unset_env("LIBCOMM_CHECK_ARGS");
  }
  // The environment is read once: a variable changed without the reload does not count.
  setenv("LIBCOMM_ALLTOALL", "linear", 1);
  MPI_Alltoall(a.data(), 3, MPI_INT, b.data(), 3, MPI_INT, comm);
  check(last_route() != "linear", "LIBCOMM_ALLTOALL changed after the first call took effect without "
                                  "libcomm_mpi_reload_environment (ran '" + last_route() + "')");
  reload_environment();
  MPI_Alltoall(a.data(), 3, MPI_INT, b.data(), 3, MPI_INT, comm);
  check(last_route() == "linear", "LIBCOMM_ALLTOALL=linear after the reload ran '" + last_route() + "'");
  unset_env("LIBCOMM_ALLTOALL");
  // An unknown algorithm name: MPI_ERR_ARG on every rank, the library keeps working.
  set_algo("LIBCOMM_ALLTOALL", "no_such_algorithm");
  const int rc = MPI_Alltoall(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, comm);
  check(error_class(rc) == MPI_ERR_ARG, "unknown LIBCOMM_ALLTOALL: got error class " +
                                            std::to_string(error_class(rc)) + ", want MPI_ERR_ARG");
  unset_env("LIBCOMM_ALLTOALL");
  check(MPI_Alltoall(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, comm) == MPI_SUCCESS,
        "a good call after the errors succeeds");
  MPI_Comm_free(&comm);
  // Communicators freed and created again (MPI may reuse the handle): the library must
  // not keep a stale state.
  for (int round = 0; round < 3; ++round) {
    MPI_Comm c;
    MPI_Comm_split(world, round == 1 ? me % 2 : 0, p - me, &c);
    alltoall_cases(c, "auto, split " + std::to_string(round));
    MPI_Comm_free(&c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  check(last_route().rfind('(', 0) != 0, "libcomm_mpi is loaded (link it or LD_PRELOAD it)");

  // Every algorithm through the environment variable, as a user would select it. The
  // names are those of libcomm (commbench --list); some need P of a given form and
  // then run their documented fallback. --quick (the LD_PRELOAD runs, which test the
  // loading rather than the algorithms) keeps auto and one explicit algorithm per op.
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const auto algos = [quick](std::vector<const char*> all) {
    return quick ? std::vector<const char*>{all[0], all[2]} : all;
  };
  const std::vector<std::pair<const char*, std::vector<const char*>>> ops = {
      {"LIBCOMM_ALLTOALL",
       algos({"auto", "native", "factor", "linear", "ring", "ring_sendrecv", "pairwise",
              "factor_grouped", "bruck", "clustered_factor", "leader", "send_aggregate",
              "recv_distribute", "tree_scheduled"})},
      {"LIBCOMM_ALLTOALLV", algos({"auto", "native", "four_stage", "direct", "two_stage"})},
      {"LIBCOMM_ALLGATHER", algos({"auto", "native", "d_cycles", "ring", "send_spread", "butterfly"})},
      {"LIBCOMM_REDUCE_SCATTER", algos({"auto", "native", "d_cycles", "ring", "reduce_spread"})},
  };
  const std::vector<void (*)(MPI_Comm, const std::string&)> cases = {
      alltoall_cases, alltoallv_cases, allgather_cases, reduce_scatter_cases};
  for (std::size_t k = 0; k < ops.size(); ++k) {
    for (const char* a : ops[k].second) {
      set_algo(ops[k].first, a);
      cases[k](MPI_COMM_WORLD, a);
    }
    unset_env(ops[k].first);
  }
  intercomm_case(MPI_COMM_WORLD);
  error_cases(MPI_COMM_WORLD);

  int total = 0;
  PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("dropin_semantics: %s (%d failed checks)\n", total == 0 ? "PASS" : "FAIL", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

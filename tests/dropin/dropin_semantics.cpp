// Exercises the drop-in library (libcomm_mpi) with plain MPI calls: every case runs the
// intercepted operation, in each of its three forms (blocking MPI_<op>, non-blocking
// MPI_I<op>, persistent MPIX_<op>_init), and the MPI library's own blocking PMPI_<op> on the
// same input and compares
// the whole receive buffers byte for byte (gaps of non-contiguous datatypes included,
// which must keep their fill). It also checks the route the library took
// (libcomm_mpi_last_route, looked up with dlsym): libcomm for what libcomm can do exactly,
// "pmpi" for inter-communicators and unsupported reductions, and MPI error classes.
//
// Built twice: linked with libcomm_mpi, and against plain MPI for a run under LD_PRELOAD.
// Exit code 0 only when every check passed on every rank.
#include <dlfcn.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_<op>_init
#endif

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
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
            (got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0),
        what + ": differs from PMPI");
}

template <class T>
std::vector<T> filled(std::size_t n) {
  std::vector<T> v(n);
  if (n > 0) std::memset(static_cast<void*>(v.data()), kFill, n * sizeof(T));
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

// ---- The three forms -----------------------------------------------------------------------

// Every case calls its collective through call_<op> below, in the form under test. The
// non-blocking and persistent forms complete through a different call each time (MPI_Wait,
// MPI_Test polled, MPI_Waitall, MPI_Waitany, MPI_Testsome polled, MPI_Request_get_status
// polled): all of them must progress libcomm's collective.
enum class Form { Blocking, Nonblocking, Persistent };
Form form = Form::Blocking;
int completion_round = 0;

const char* form_name(Form f) {
  return f == Form::Blocking ? "blocking" : f == Form::Nonblocking ? "non-blocking" : "persistent";
}

int complete(MPI_Request* r) {
  switch (completion_round++ % 6) {
    case 0: return MPI_Wait(r, MPI_STATUS_IGNORE);
    case 1: {
      int flag = 0, rc = MPI_SUCCESS;
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
      return rc;
    }
    case 2: return MPI_Waitall(1, r, MPI_STATUSES_IGNORE);
    case 3: {
      int index = -1;
      return MPI_Waitany(1, r, &index, MPI_STATUS_IGNORE);
    }
    case 4: {
      int out = 0, index = -1, rc = MPI_SUCCESS;
      while (rc == MPI_SUCCESS && out == 0) rc = MPI_Testsome(1, r, &out, &index, MPI_STATUSES_IGNORE);
      return rc;
    }
    default: {
      int flag = 0;
      while (!flag) MPI_Request_get_status(*r, &flag, MPI_STATUS_IGNORE);
      return MPI_Wait(r, MPI_STATUS_IGNORE);
    }
  }
}

// Runs one collective in the current form: `blocking()`, `start(&request)` (MPI_I<op>) or
// `init(&request)` (MPIX_<op>_init), completing and freeing the request.
template <class Blocking, class Start, class Init>
int run_form(const Blocking& blocking, const Start& start, const Init& init) {
  MPI_Request r = MPI_REQUEST_NULL;
  switch (form) {
    case Form::Blocking: return blocking();
    case Form::Nonblocking: {
      int rc = start(&r);
      if (rc != MPI_SUCCESS) return rc;
      rc = complete(&r);
      check(r == MPI_REQUEST_NULL, "a completed non-blocking collective's request is MPI_REQUEST_NULL");
      return rc;
    }
    case Form::Persistent: {
      int rc = init(&r);
      if (rc != MPI_SUCCESS) return rc;
      rc = MPI_Start(&r);
      if (rc == MPI_SUCCESS) rc = complete(&r);
      check(r != MPI_REQUEST_NULL, "a completed persistent request stays allocated (inactive)");
      MPI_Request_free(&r);
      check(r == MPI_REQUEST_NULL, "MPI_Request_free sets the handle to MPI_REQUEST_NULL");
      return rc;
    }
  }
  return MPI_ERR_OTHER;
}

#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
constexpr bool kHavePersistent = true;
#define LIBCOMM_TEST_INIT(call) call
#else
constexpr bool kHavePersistent = false;
#define LIBCOMM_TEST_INIT(call) MPI_ERR_OTHER
#endif

int call_alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  return run_form([&] { return MPI_Alltoall(s, sc, st, r, rc, rt, c); },
                  [&](MPI_Request* q) { return MPI_Ialltoall(s, sc, st, r, rc, rt, c, q); },
                  [&](MPI_Request* q) { return LIBCOMM_TEST_INIT(MPIX_Alltoall_init(s, sc, st, r, rc, rt, c, MPI_INFO_NULL, q)); });
}
int call_alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r, const int* rc,
                   const int* rd, MPI_Datatype rt, MPI_Comm c) {
  return run_form([&] { return MPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c); },
                  [&](MPI_Request* q) { return MPI_Ialltoallv(s, sc, sd, st, r, rc, rd, rt, c, q); },
                  [&](MPI_Request* q) {
                    return LIBCOMM_TEST_INIT(MPIX_Alltoallv_init(s, sc, sd, st, r, rc, rd, rt, c, MPI_INFO_NULL, q));
                  });
}
int call_allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  return run_form([&] { return MPI_Allgather(s, sc, st, r, rc, rt, c); },
                  [&](MPI_Request* q) { return MPI_Iallgather(s, sc, st, r, rc, rt, c, q); },
                  [&](MPI_Request* q) { return LIBCOMM_TEST_INIT(MPIX_Allgather_init(s, sc, st, r, rc, rt, c, MPI_INFO_NULL, q)); });
}
int call_allgatherv(const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* rd, MPI_Datatype rt,
                    MPI_Comm c) {
  return run_form([&] { return MPI_Allgatherv(s, sc, st, r, rc, rd, rt, c); },
                  [&](MPI_Request* q) { return MPI_Iallgatherv(s, sc, st, r, rc, rd, rt, c, q); },
                  [&](MPI_Request* q) {
                    return LIBCOMM_TEST_INIT(MPIX_Allgatherv_init(s, sc, st, r, rc, rd, rt, c, MPI_INFO_NULL, q));
                  });
}
int call_reduce_scatter(const void* s, void* r, const int* rc, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return run_form([&] { return MPI_Reduce_scatter(s, r, rc, t, op, c); },
                  [&](MPI_Request* q) { return MPI_Ireduce_scatter(s, r, rc, t, op, c, q); },
                  [&](MPI_Request* q) { return LIBCOMM_TEST_INIT(MPIX_Reduce_scatter_init(s, r, rc, t, op, c, MPI_INFO_NULL, q)); });
}
int call_reduce_scatter_block(const void* s, void* r, int rc, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return run_form([&] { return MPI_Reduce_scatter_block(s, r, rc, t, op, c); },
                  [&](MPI_Request* q) { return MPI_Ireduce_scatter_block(s, r, rc, t, op, c, q); },
                  [&](MPI_Request* q) {
                    return LIBCOMM_TEST_INIT(MPIX_Reduce_scatter_block_init(s, r, rc, t, op, c, MPI_INFO_NULL, q));
                  });
}

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
    check(call_alltoall(send.data(), count, MPI_INT, got.data(), count, MPI_INT, comm) == MPI_SUCCESS,
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
    call_alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), 2, MPI_DOUBLE, comm);
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
    call_alltoall(send.data(), 2, three, got.data(), 6, MPI_SHORT, comm);
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
    call_alltoall(send.data(), 2, MPI_INT, got.data(), 1, strided, comm);
    expect_libcomm(tag + "vector receive type");
    PMPI_Alltoall(send.data(), 2, MPI_INT, want.data(), 1, strided, comm);
    compare(got, want, tag + "vector receive type");
    // and as the send type, with a plain receive
    auto got2 = filled<int>(send.size()), want2 = got2;
    std::vector<int> wide(static_cast<std::size_t>(3 * p));
    for (std::size_t k = 0; k < wide.size(); ++k) wide[k] = value(me, static_cast<int>(k / 3), static_cast<int>(k));
    call_alltoall(wide.data(), 1, strided, got2.data(), 2, MPI_INT, comm);
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
    call_alltoall(send.data(), 1, shifted, got.data(), 1, shifted, comm);
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
    check(call_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(), rc.data(), rd.data(),
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
    call_alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, got.data(), ic.data(), id.data(),
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
    call_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(), rc.data(), rd.data(),
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
    check(call_allgather(send.data(), 5, MPI_INT, got.data(), 5, MPI_INT, comm) == MPI_SUCCESS,
          tag + "returns MPI_SUCCESS");
    expect_libcomm(tag + "MPI_INT");
    PMPI_Allgather(send.data(), 5, MPI_INT, want.data(), 5, MPI_INT, comm);
    compare(got, want, tag + "MPI_INT");
  }
  {  // MPI_IN_PLACE
    auto got = filled<double>(3 * n);
    for (int k = 0; k < 3; ++k) got[static_cast<std::size_t>(3 * me + k)] = value(me, 1, k);
    auto want = got;
    call_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), 3, MPI_DOUBLE, comm);
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
    call_allgather(send.data(), 2, MPI_INT, got.data(), 1, strided, comm);
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
    call_allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, got.data(),
                   counts.data(), displs->data(), MPI_INT, comm);
    expect_libcomm(what);
    PMPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, want.data(),
                    counts.data(), displs->data(), MPI_INT, comm);
    compare(got, want, what);
    // in place: this rank's block already sits at its displacement
    auto got2 = filled<int>(static_cast<std::size_t>(at));
    std::copy(mine.begin(), mine.end(), got2.begin() + (*displs)[static_cast<std::size_t>(me)]);
    auto want2 = got2;
    call_allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got2.data(), counts.data(), displs->data(),
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
    call_reduce_scatter(MPI_IN_PLACE, got.data(), counts.data(), type, op, comm);
  } else {
    got = filled<T>(mine + 1);
    want = got;
    call_reduce_scatter(send.data(), got.data(), counts.data(), type, op, comm);
  }
  via_libcomm ? expect_libcomm(what) : expect_pmpi(what);
  // What falls back is compared with MPI's own call of the same form: the user operations
  // here are not associative, and MPI's non-blocking and blocking forms group them differently.
  const void* in = in_place ? MPI_IN_PLACE : send.data();
  MPI_Request r = MPI_REQUEST_NULL;
  if (via_libcomm || form == Form::Blocking) {
    PMPI_Reduce_scatter(in, want.data(), counts.data(), type, op, comm);
  } else if (form == Form::Nonblocking) {
    PMPI_Ireduce_scatter(in, want.data(), counts.data(), type, op, comm, &r);
    PMPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
    PMPIX_Reduce_scatter_init(in, want.data(), counts.data(), type, op, comm, MPI_INFO_NULL, &r);
    PMPI_Start(&r);
    PMPI_Wait(&r, MPI_STATUS_IGNORE);
    PMPI_Request_free(&r);
#endif
  }
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
  call_reduce_scatter_block(send.data(), got.data(), 3, MPI_FLOAT, MPI_SUM, comm);
  expect_libcomm(tag + "block");
  PMPI_Reduce_scatter_block(send.data(), want.data(), 3, MPI_FLOAT, MPI_SUM, comm);
  compare(got, want, tag + "block");
  auto got2 = send, want2 = send;
  call_reduce_scatter_block(MPI_IN_PLACE, got2.data(), 3, MPI_FLOAT, MPI_MAX, comm);
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
  {  // the same through the non-blocking form: MPI's own call reports it
    MPI_Request r = MPI_REQUEST_NULL;
    const int nb = MPI_Ialltoall(a.data(), -1, MPI_INT, b.data(), -1, MPI_INT, comm, &r);
    check(nb != MPI_SUCCESS && error_class(nb) == error_class(theirs),
          "MPI_Ialltoall with a negative count: error class " + std::to_string(error_class(nb)));
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
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

// ---- Non-blocking and persistent: more than one call at a time ----------------------------

int pmpi_alltoall_int(const std::vector<int>& send, std::vector<int>& recv, int n, MPI_Comm c) {
  return PMPI_Alltoall(send.data(), n, MPI_INT, recv.data(), n, MPI_INT, c);
}

// Three collectives in flight at once (two on one communicator, one on another) beside a
// ring of point-to-point messages, completed in orders that differ between ranks. The
// algorithms take several steps each, so every completion call must progress all of
// libcomm's collectives, not only the one it was given, or the ranks wait on each other
// forever.
void overlap_case(MPI_Comm world) {
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  MPI_Comm a, b;
  MPI_Comm_dup(world, &a);
  MPI_Comm_dup(world, &b);
  set_algo("LIBCOMM_ALLTOALL", "bruck");
  set_algo("LIBCOMM_ALLGATHER", "ring");
  const int n = 3;
  const auto np = static_cast<std::size_t>(p);
  std::vector<int> s1(n * np), s2(n * np), g = {value(me, 0, 1), value(me, 0, 2)};
  for (std::size_t k = 0; k < s1.size(); ++k) {
    s1[k] = value(me, static_cast<int>(k) / n, static_cast<int>(k));
    s2[k] = -value(me, static_cast<int>(k) / n, static_cast<int>(k));
  }
  // A blocking call first makes libcomm's state for each communicator (see fresh_communicator_case).
  auto r1 = filled<int>(n * np), r2 = filled<int>(n * np), rg = filled<int>(2 * np);
  MPI_Alltoall(s1.data(), n, MPI_INT, r1.data(), n, MPI_INT, a);
  MPI_Allgather(g.data(), 2, MPI_INT, rg.data(), 2, MPI_INT, b);
  r1 = filled<int>(n * np);
  rg = filled<int>(2 * np);
  for (int round = 0; round < 3; ++round) {
    MPI_Request q[5];
    MPI_Ialltoall(s1.data(), n, MPI_INT, r1.data(), n, MPI_INT, a, &q[0]);
    expect_libcomm("overlap: first MPI_Ialltoall on one communicator");
    MPI_Ialltoall(s2.data(), n, MPI_INT, r2.data(), n, MPI_INT, a, &q[1]);
    expect_libcomm("overlap: second MPI_Ialltoall on the same communicator");
    MPI_Iallgather(g.data(), 2, MPI_INT, rg.data(), 2, MPI_INT, b, &q[2]);
    expect_libcomm("overlap: MPI_Iallgather on another communicator");
    int token_in = -1;
    const int token_out = value(me, round, 0);
    MPI_Irecv(&token_in, 1, MPI_INT, (me + p - 1) % p, 5, world, &q[3]);
    MPI_Isend(&token_out, 1, MPI_INT, (me + 1) % p, 5, world, &q[4]);
    if ((me + round) % 3 == 0) {  // newest collective first, then the rest together
      MPI_Wait(&q[2], MPI_STATUS_IGNORE);
      MPI_Wait(&q[1], MPI_STATUS_IGNORE);
      MPI_Waitall(5, q, MPI_STATUSES_IGNORE);
    } else if ((me + round) % 3 == 1) {  // whichever completes
      for (int k = 0; k < 5; ++k) {
        int index = MPI_UNDEFINED;
        MPI_Waitany(5, q, &index, MPI_STATUS_IGNORE);
        check(index != MPI_UNDEFINED, "overlap: MPI_Waitany returns one of the five");
      }
    } else {  // the point-to-point ones first, then polling the rest
      MPI_Waitall(2, q + 3, MPI_STATUSES_IGNORE);
      int done = 0;
      while (!done) MPI_Testall(3, q, &done, MPI_STATUSES_IGNORE);
    }
    for (const MPI_Request& r : q) check(r == MPI_REQUEST_NULL, "overlap: every request completed and freed");
    check(token_in == value((me + p - 1) % p, round, 0), "overlap: the point-to-point ring");
    auto w1 = filled<int>(n * np), w2 = filled<int>(n * np), wg = filled<int>(2 * np);
    pmpi_alltoall_int(s1, w1, n, a);
    pmpi_alltoall_int(s2, w2, n, a);
    PMPI_Allgather(g.data(), 2, MPI_INT, wg.data(), 2, MPI_INT, b);
    compare(r1, w1, "overlap: first alltoall");
    compare(r2, w2, "overlap: second alltoall");
    compare(rg, wg, "overlap: allgather");
  }
  unset_env("LIBCOMM_ALLTOALL");
  unset_env("LIBCOMM_ALLGATHER");
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// A communicator's first collective, when non-blocking, is the MPI library's own (making
// libcomm's state is a blocking MPI_Comm_dup); after a blocking one, libcomm takes them.
void fresh_communicator_case(MPI_Comm world) {
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  MPI_Comm c;
  MPI_Comm_dup(world, &c);
  std::vector<int> send(2 * static_cast<std::size_t>(p));
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = value(me, static_cast<int>(k / 2), static_cast<int>(k));
  for (const char* step : {"first, non-blocking", "blocking", "non-blocking after a blocking one"}) {
    const bool blocking = std::string(step) == "blocking";
    auto got = filled<int>(send.size()), want = got;
    MPI_Request r = MPI_REQUEST_NULL;
    if (blocking) {
      MPI_Alltoall(send.data(), 2, MPI_INT, got.data(), 2, MPI_INT, c);
    } else {
      MPI_Ialltoall(send.data(), 2, MPI_INT, got.data(), 2, MPI_INT, c, &r);
    }
    std::string(step) == "first, non-blocking" ? expect_pmpi(std::string("fresh communicator: ") + step)
                                               : expect_libcomm(std::string("fresh communicator: ") + step);
    if (!blocking) MPI_Wait(&r, MPI_STATUS_IGNORE);
    pmpi_alltoall_int(send, want, 2, c);
    compare(got, want, std::string("fresh communicator: ") + step);
  }
  MPI_Comm_free(&c);
}

// One persistent request started again and again with new input (MPI_IN_PLACE: the input is
// read at every start), two started together with MPI_Startall, and a start while running,
// which is an error.
void persistent_case(MPI_Comm world) {
  if (!kHavePersistent) return;
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  const auto np = static_cast<std::size_t>(p);
  MPI_Comm c;
  MPI_Comm_dup(world, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  std::vector<double> got(2 * np);
  MPI_Request r = MPI_REQUEST_NULL;
  MPIX_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), 2, MPI_DOUBLE, c, MPI_INFO_NULL, &r);
  expect_libcomm("persistent in-place alltoall");
  for (int round = 0; round < 4; ++round) {
    for (std::size_t k = 0; k < got.size(); ++k) got[k] = value(me, static_cast<int>(k / 2), static_cast<int>(k)) + 100 * round;
    auto want = got;
    check(MPI_Start(&r) == MPI_SUCCESS, "persistent: MPI_Start");
    if (round == 1 && p > 1) {
      const int rc = MPI_Start(&r);
      check(error_class(rc) == MPI_ERR_REQUEST, "persistent: MPI_Start of a running request gives MPI_ERR_REQUEST, got " +
                                                    std::to_string(error_class(rc)));
    }
    complete(&r);
    check(r != MPI_REQUEST_NULL, "persistent: the request stays after completion");
    PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want.data(), 2, MPI_DOUBLE, c);
    compare(got, want, "persistent in-place alltoall, start " + std::to_string(round));
  }
  MPI_Request_free(&r);
  // Two at once: allgatherv and reduce_scatter_block, started together.
  std::vector<int> counts(np), displs(np);
  for (int k = 0; k < p; ++k) {
    counts[static_cast<std::size_t>(k)] = k % 2 + 1;
    displs[static_cast<std::size_t>(k)] = k == 0 ? 0 : displs[static_cast<std::size_t>(k - 1)] + counts[static_cast<std::size_t>(k - 1)];
  }
  const int total = displs[np - 1] + counts[np - 1];
  std::vector<int> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]));
  auto gathered = filled<int>(static_cast<std::size_t>(total));
  std::vector<float> rs_in(3 * np), rs_out(3);
  MPI_Request two[2];
  MPIX_Allgatherv_init(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, gathered.data(), counts.data(),
                       displs.data(), MPI_INT, c, MPI_INFO_NULL, &two[0]);
  expect_libcomm("persistent allgatherv");
  MPIX_Reduce_scatter_block_init(rs_in.data(), rs_out.data(), 3, MPI_FLOAT, MPI_SUM, c, MPI_INFO_NULL, &two[1]);
  expect_libcomm("persistent reduce_scatter_block");
  for (int round = 0; round < 3; ++round) {
    for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = value(me, round, static_cast<int>(k));
    for (std::size_t k = 0; k < rs_in.size(); ++k) rs_in[k] = static_cast<float>((me + round) * (k % 5));
    MPI_Startall(2, two);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    auto want = filled<int>(static_cast<std::size_t>(total));
    PMPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_INT, want.data(), counts.data(),
                    displs.data(), MPI_INT, c);
    compare(gathered, want, "persistent allgatherv, start " + std::to_string(round));
    std::vector<float> want_rs(3);
    PMPI_Reduce_scatter_block(rs_in.data(), want_rs.data(), 3, MPI_FLOAT, MPI_SUM, c);
    compare(rs_out, want_rs, "persistent reduce_scatter_block, start " + std::to_string(round));
  }
  MPI_Request_free(&two[0]);
  MPI_Request_free(&two[1]);
  MPI_Comm_free(&c);
#else
  (void)world;
#endif
}

// The default on one node (all ranks share memory): `auto` is libcomm's online policy. The
// first calls of a size class run the MPI library's own collective (route "native", through
// libcomm), then the candidates are measured (native, the node's shared-window algorithms,
// the model's cheapest), then every rank runs one winner; every call delivers the MPI
// library's bytes. An algorithm named in the environment runs as named. (The other cases run
// with LIBCOMM_NODES=flat.)
void one_node_case(MPI_Comm world) {
  int p = 0, me = 0;
  MPI_Comm_size(world, &p);
  MPI_Comm_rank(world, &me);
  const char* before = std::getenv("LIBCOMM_NODES");
  const std::string saved = before != nullptr ? before : "";
  setenv("LIBCOMM_NODES", "shared", 1);  // read when libcomm's state for a communicator is made
  MPI_Comm c;
  MPI_Comm_dup(world, &c);
  const auto np = static_cast<std::size_t>(p);
  std::vector<int> send(2 * np);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = value(me, static_cast<int>(k / 2), static_cast<int>(k));
  auto want = filled<int>(send.size());
  PMPI_Alltoall(send.data(), 2, MPI_INT, want.data(), 2, MPI_INT, c);
  std::string first, last;
  for (int call = 0; call < 80; ++call) {  // (16 calls of native, then at most 63 measuring)
    auto got = filled<int>(send.size());
    MPI_Alltoall(send.data(), 2, MPI_INT, got.data(), 2, MPI_INT, c);
    const std::string what = "one node, auto, call " + std::to_string(call + 1);
    expect_libcomm(what);
    compare(got, want, what);
    (call == 0 ? first : last) = last_route();
  }
  check(first == "native", "one node, auto: the first call ran '" + first + "', expected native");
  // One winner on every rank: the same route name everywhere.
  std::vector<char> mine(32, '\0'), all(32 * np, '\0');
  std::copy_n(last.begin(), std::min<std::size_t>(last.size(), 31), mine.begin());
  PMPI_Allgather(mine.data(), 32, MPI_CHAR, all.data(), 32, MPI_CHAR, c);
  for (std::size_t r = 0; r < np; ++r)
    check(std::string(&all[32 * r]) == last, "one node, auto: rank " + std::to_string(r) + " settled on '" +
                                                 std::string(&all[32 * r]) + "', rank " + std::to_string(me) +
                                                 " on '" + last + "'");
  set_algo("LIBCOMM_ALLTOALL", "ring");
  auto got = filled<int>(send.size());
  MPI_Alltoall(send.data(), 2, MPI_INT, got.data(), 2, MPI_INT, c);
  check(last_route() == "ring", "one node, LIBCOMM_ALLTOALL=ring ran '" + last_route() + "'");
  compare(got, want, "one node, LIBCOMM_ALLTOALL=ring");
  unset_env("LIBCOMM_ALLTOALL");
  MPI_Comm_free(&c);
  if (saved.empty()) unsetenv("LIBCOMM_NODES");
  else setenv("LIBCOMM_NODES", saved.c_str(), 1);
}

// ---- The fallback table ---------------------------------------------------------------

// docs/fallbacks.md's table (commbench --fallbacks): (operation, algorithm) -> what runs at
// P = 1, 2, ... ("·": the algorithm itself).
std::map<std::pair<std::string, std::string>, std::vector<std::string>> read_fallback_table(const std::string& path) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> table;
  std::ifstream in(path);
  check(static_cast<bool>(in), "the fallback table " + path + " can be read");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.size() < 3 || cells[0] == "operation" || cells[0].rfind("---", 0) == 0) continue;
    table[{cells[0], cells[1]}] = std::vector<std::string>(cells.begin() + 2, cells.end());
  }
  return table;
}

// One small blocking call of `op` on `comm`: what the library ran for it (last route).
std::string probe(const std::string& op, MPI_Comm comm) {
  int p = 0;
  MPI_Comm_size(comm, &p);
  const auto n = static_cast<std::size_t>(p);
  std::vector<int> send(n, 1), recv(n), ones(n, 1), displs(n);
  for (std::size_t k = 0; k < n; ++k) displs[k] = static_cast<int>(k);
  if (op == "alltoall") MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
  if (op == "alltoallv")
    MPI_Alltoallv(send.data(), ones.data(), displs.data(), MPI_INT, recv.data(), ones.data(), displs.data(), MPI_INT,
                  comm);
  if (op == "allgather") MPI_Allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
  if (op == "reduce_scatter") MPI_Reduce_scatter_block(send.data(), recv.data(), 1, MPI_INT, MPI_SUM, comm);
  return last_route();
}

}  // namespace

int main(int argc, char** argv) {
  // Every rank a node of its own (unless the environment says otherwise); the default on
  // one node is tested by one_node_case.
  // Read when libcomm's state for a communicator is made: MPI_COMM_WORLD's in MPI_Init.
  setenv("LIBCOMM_NODES", "flat", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  check(last_route().rfind('(', 0) != 0, "libcomm_mpi is loaded (link it or LD_PRELOAD it)");
  {  // libcomm's state for MPI_COMM_WORLD is made in MPI_Init: a first collective that is
     // non-blocking runs in libcomm (on other communicators it would run in MPI, see
     // fresh_communicator_case)
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    std::vector<int> send(static_cast<std::size_t>(p), world_rank), got(static_cast<std::size_t>(p), -1);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Ialltoall(send.data(), 1, MPI_INT, got.data(), 1, MPI_INT, MPI_COMM_WORLD, &r);
    expect_libcomm("the first collective on MPI_COMM_WORLD, non-blocking");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int k = 0; k < p; ++k) check(got[static_cast<std::size_t>(k)] == k, "first MPI_Ialltoall on MPI_COMM_WORLD: value");
  }

  // Every algorithm through the environment variable, as a user would select it. The
  // names are those of libcomm (commbench --list); some need P of a given form and
  // then run their documented fallback. --quick (the LD_PRELOAD runs, which test the
  // loading rather than the algorithms) keeps auto and one explicit algorithm per op.
  bool quick = false;
  std::string fallback_path;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--quick") quick = true;
    if (a == "--fallbacks" && k + 1 < argc) fallback_path = argv[++k];
  }
  // --fallbacks FILE: every name set in the environment runs what docs/fallbacks.md says.
  const auto fallbacks = fallback_path.empty() ? decltype(read_fallback_table("")){} : read_fallback_table(fallback_path);
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
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
  for (const Form f : {Form::Blocking, Form::Nonblocking, Form::Persistent}) {
    if (f == Form::Persistent && !kHavePersistent) continue;
    form = f;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      for (const char* a : ops[k].second) {
        set_algo(ops[k].first, a);
        const std::string op = ops[k].first == std::string("LIBCOMM_ALLTOALL")    ? "alltoall"
                               : ops[k].first == std::string("LIBCOMM_ALLTOALLV") ? "alltoallv"
                               : ops[k].first == std::string("LIBCOMM_ALLGATHER") ? "allgather"
                                                                                 : "reduce_scatter";
        const auto row = fallbacks.find({op, a});
        if (f == Form::Blocking && row != fallbacks.end() &&
            static_cast<std::size_t>(world_size) <= row->second.size()) {
          const std::string want = row->second[static_cast<std::size_t>(world_size - 1)];
          const std::string ran = probe(op, MPI_COMM_WORLD);
          check(ran == (want == "·" ? std::string(a) : want),
                "fallback table: " + std::string(ops[k].first) + "=" + a + " on " + std::to_string(world_size) +
                    " ranks ran '" + ran + "', docs/fallbacks.md says '" + want + "'");
        }
        cases[k](MPI_COMM_WORLD, std::string(form_name(f)) + " " + a);
      }
      unset_env(ops[k].first);
    }
  }
  form = Form::Blocking;
  overlap_case(MPI_COMM_WORLD);
  fresh_communicator_case(MPI_COMM_WORLD);
  persistent_case(MPI_COMM_WORLD);
  one_node_case(MPI_COMM_WORLD);
  intercomm_case(MPI_COMM_WORLD);
  error_cases(MPI_COMM_WORLD);

  int total = 0;
  PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("dropin_semantics: %s (%d failed checks)\n", total == 0 ? "PASS" : "FAIL", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

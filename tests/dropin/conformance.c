/* Conformance of the drop-in library (libcomm_mpi.so) with the MPI library it stands in for.
 *
 * A plain MPI program in C: it knows nothing of libcomm except the two functions of
 * libcomm_mpi.h, looked up with dlsym (libcomm_mpi_last_route, libcomm_mpi_reload_environment),
 * so it runs linked with the library, preloaded, or (to prove that it then fails) without it.
 *
 * Every case runs one intercepted collective (MPI_Alltoall(v), MPI_Allgather(v),
 * MPI_Reduce_scatter(_block)) in one form (blocking, MPI_I<op>, or MPIX_<op>_init started
 * twice) and the MPI library's own blocking PMPI_<op> on the same input (where ranks
 * describe the exchange differently, on bytes every rank describes alike: see reference()),
 * and compares the two receive buffers byte for byte: whole allocations with guard zones on both sides,
 * prefilled with a fill byte, so that gaps of derived types and bytes past the end are
 * compared too (reductions compare the data bytes of each element: long double and the pair
 * types have padding that MPI's operations may leave as they find it). It also checks the
 * route libcomm_mpi_last_route reports: a libcomm algorithm (the one forced through
 * LIBCOMM_<OP>, or its fallback from docs/fallbacks.md) where libcomm should run, "pmpi"
 * where the README says the call goes to MPI (inter-communicators, reductions libcomm does
 * not implement).
 *
 * The cases cover every predefined datatype, derived types (contiguous, vector, indexed,
 * struct, resized with a lower bound, size 0), counts 0, 1 and odd ones, displacement
 * patterns of the v-variants, MPI_IN_PLACE on all or some ranks, ranks that describe the
 * same bytes with different types, five kinds of communicator, every completion call
 * (after the stack, the heap, the count arrays and the datatypes of the call have been
 * reused or freed), and the policies: the default (auto, online), LIBCOMM_ONLINE_AFTER=0
 * and every algorithm forced by name. Beyond that matrix: several requests in flight at once,
 * a communicator's first non-blocking call, persistent requests started again and together,
 * auto on one node, error classes, the environment read once, communicators made again.
 * Each failure prints one line naming the case and the rank; the verdict is reduced over
 * the ranks; exit 0 only when every case passed. */
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's MPIX_<op>_init (the pcollreq extension) */
#endif
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

/* ---- Bookkeeping: cases, failures, the verdict ------------------------------------------- */

static int world_rank = 0, world_size = 1;
static long n_cases = 0;               /* cases begun on this rank (the same on every rank) */
static unsigned char *failed_bits;     /* failed_bits[k]: case k failed on this rank */
static size_t failed_cap = 0;
static long lines_printed = 0, max_lines = 200;
static unsigned case_timeout = 60;     /* seconds without finishing a case: a hang */
static char case_label[1024];          /* the running case, for failure lines and the watchdog */
static const char *policy_label = "default";
static bool trace = false;             /* --trace: print every case as it starts */
static long only_from = 0, only_to = LONG_MAX; /* --cases FROM-TO: run only these cases of the matrix */

/* A case that does not finish is a hang (a known one: mismatched zero-size descriptions).
 * The watchdog names it and stops the rank; mpiexec then stops the others. */
static void watchdog(int sig) {
  (void)sig;
  static const char head[] = "conformance: FAIL: ";
  char tail[128];
  const int n = snprintf(tail, sizeof tail, " rank=%d: no progress for %u s (a hang); stopping\n", world_rank,
                         case_timeout);
  if (write(STDOUT_FILENO, head, sizeof head - 1) < 0 || write(STDOUT_FILENO, case_label, strlen(case_label)) < 0 ||
      write(STDOUT_FILENO, tail, (size_t)n) < 0) {
  }
  _exit(3);
}

static void begin_case(const char *fmt, ...) {
  if ((size_t)n_cases >= failed_cap) {
    failed_cap = failed_cap ? 2 * failed_cap : 4096;
    failed_bits = realloc(failed_bits, failed_cap);
    memset(failed_bits + n_cases, 0, failed_cap - (size_t)n_cases);
  }
  ++n_cases;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(case_label, sizeof case_label, fmt, ap);
  va_end(ap);
  alarm(case_timeout);
  if (trace) {
    printf("conformance: case %ld rank=%d: %s\n", n_cases, world_rank, case_label);
    fflush(stdout);
  }
}

static void fail(const char *fmt, ...) {
  failed_bits[n_cases - 1] = 1;
  if (lines_printed++ >= max_lines) {
    if (lines_printed == max_lines + 1)
      printf("conformance: rank %d: further failures are counted, not printed (--max-lines)\n", world_rank);
    return;
  }
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  printf("conformance: FAIL: %s rank=%d: %s\n", case_label, world_rank, what);
  fflush(stdout);
}

static void check(bool ok, const char *fmt, ...) {
  if (ok) return;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  fail("%s", what);
}

/* ---- libcomm_mpi.h, looked up at run time -------------------------------------------------- */

typedef const char *(*RouteFn)(void);
typedef void (*ReloadFn)(void);
static RouteFn route_fn;
static ReloadFn reload_fn;

static const char *last_route(void) { return route_fn ? route_fn() : "(libcomm_mpi is not loaded)"; }

static void reload_environment(void) {
  if (reload_fn) reload_fn();
}

/* Sets (value) or unsets (NULL) a variable on this rank and makes the library read its
 * environment again; every rank does the same between collectives. */
static void set_env(const char *var, const char *value) {
  if (value) setenv(var, value, 1);
  else unsetenv(var);
  reload_environment();
}

static char *saved_env(const char *var) {
  const char *v = getenv(var);
  return v ? strdup(v) : NULL;
}

static void restore_env(const char *var, char *saved) {
  set_env(var, saved);
  free(saved);
}

/* ---- Operations, forms, completions -------------------------------------------------------- */

enum { ALLTOALL, ALLTOALLV, ALLGATHER, ALLGATHERV, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, N_FN };
enum { BLOCKING, NONBLOCKING, PERSISTENT, N_FORM };
static const char *const fn_names[N_FN][N_FORM] = {
    {"MPI_Alltoall", "MPI_Ialltoall", "MPIX_Alltoall_init"},
    {"MPI_Alltoallv", "MPI_Ialltoallv", "MPIX_Alltoallv_init"},
    {"MPI_Allgather", "MPI_Iallgather", "MPIX_Allgather_init"},
    {"MPI_Allgatherv", "MPI_Iallgatherv", "MPIX_Allgatherv_init"},
    {"MPI_Reduce_scatter", "MPI_Ireduce_scatter", "MPIX_Reduce_scatter_init"},
    {"MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", "MPIX_Reduce_scatter_block_init"},
};
static const char *const form_names[N_FORM] = {"blocking", "non-blocking", "persistent"};
static bool is_reduce(int fn) { return fn == REDUCE_SCATTER || fn == REDUCE_SCATTER_BLOCK; }
static bool is_v(int fn) { return fn == ALLTOALLV || fn == ALLGATHERV; }

/* The four families of LIBCOMM_<OP> and the names commbench --list prints for each. */
enum { FAM_ALLTOALL, FAM_ALLTOALLV, FAM_ALLGATHER, FAM_REDUCE_SCATTER, N_FAM };
static const int fn_family[N_FN] = {FAM_ALLTOALL, FAM_ALLTOALLV, FAM_ALLGATHER, FAM_ALLGATHER, FAM_REDUCE_SCATTER,
                                    FAM_REDUCE_SCATTER};
static const char *const family_env[N_FAM] = {"LIBCOMM_ALLTOALL", "LIBCOMM_ALLTOALLV", "LIBCOMM_ALLGATHER",
                                              "LIBCOMM_REDUCE_SCATTER"};
static const char *const family_op[N_FAM] = {"alltoall", "alltoallv", "allgather", "reduce_scatter"};
static const char *const algorithms_alltoall[] = {
    "auto", "native", "linear", "ring", "ring_sendrecv", "pairwise", "factor", "factor_grouped", "bruck",
    "clustered_factor", "clustered_factor_fill", "leader", "send_aggregate", "recv_distribute", "tree_scheduled",
    "tree_scheduled_barrier", NULL};
static const char *const algorithms_alltoallv[] = {"auto", "native", "direct", "two_stage", "mesh", "four_stage",
                                                   NULL};
static const char *const algorithms_allgather[] = {"auto",        "native",    "ring",          "d_cycles",
                                                   "d_cycles_im", "send_spread", "butterfly", "shared_window",
                                                   NULL};
static const char *const algorithms_reduce_scatter[] = {"auto",          "native", "ring", "d_cycles",
                                                        "reduce_spread", "shared_window", NULL};
static const char *const *const family_algorithms[N_FAM] = {algorithms_alltoall, algorithms_alltoallv,
                                                            algorithms_allgather, algorithms_reduce_scatter};

enum {
  C_NONE, /* blocking */
  C_WAIT,
  C_TEST,
  C_WAITALL,
  C_WAITANY,
  C_WAITSOME,
  C_TESTALL,
  C_TESTANY,
  C_TESTSOME,
  C_GET_STATUS,
  C_FREE,
  N_COMPLETION
};
static const char *const completion_names[N_COMPLETION] = {
    "none",    "MPI_Wait",        "MPI_Test loop",        "MPI_Waitall+p2p",        "MPI_Waitany+p2p",
    "MPI_Waitsome+p2p", "MPI_Testall+p2p", "MPI_Testany+p2p", "MPI_Testsome+p2p", "MPI_Request_get_status loop",
    "MPI_Request_free+barrier"};
static int completion_rotation = 0;
static int next_completion(void) { return C_WAIT + completion_rotation++ % (N_COMPLETION - C_WAIT); }

enum { D_NONE, D_PACKED, D_GAPS, D_REVERSED, D_INTERLEAVED, N_DISPLS };
static const char *const displs_names[N_DISPLS] = {"-", "packed", "gaps", "reversed", "interleaved"};
enum { IP_NONE, IP_ALL, IP_SOME, N_IP };
static const char *const in_place_names[N_IP] = {"no", "all ranks", "even ranks"};

/* ---- Datatypes ------------------------------------------------------------------------------ */

/* Which reductions a type takes (MPI-3.1 s. 5.9.2), or none (C_MOVE: exchanged only). */
enum { C_MOVE, C_INT, C_MULTI, C_FLOAT, C_COMPLEX, C_BOOL, C_BYTE, C_PAIR, C_DERIVED };

/* x86's long double holds 10 data bytes in 16: the rest is padding no operation defines. */
#define LD_DATA ((LDBL_MANT_DIG == 64) ? 10 : (int)sizeof(long double))

typedef struct Dt {
  const char *name;
  MPI_Datatype type;
  int cls;
  void (*set)(void *, int);                 /* store a small integer value in one element */
  void (*add)(const void *, void *);        /* commutative user op on one element */
  void (*first)(const void *, void *);      /* non-commutative user op: the first non-zero */
  int data[2][2];                           /* data bytes of one element: {offset, length} */
  const struct Dt *base;                    /* derived: the predefined type of its slots */
  int slots[8], nslots;                     /* derived: byte offsets of the base elements */
  int size;
  MPI_Aint lb, extent, true_lb, true_extent;
} Dt;

/* Setters and the two user operations for each C type; values are small integers, so
 * every order of summation gives the same bytes. */
#define SCALAR_FNS(id, T)                                                                              \
  static void set_##id(void *p, int v) {                                                               \
    T x = (T)v;                                                                                        \
    memcpy(p, &x, sizeof x);                                                                           \
  }                                                                                                    \
  static void add_##id(const void *a, void *b) {                                                       \
    T x, y;                                                                                            \
    memcpy(&x, a, sizeof x);                                                                           \
    memcpy(&y, b, sizeof y);                                                                           \
    y = (T)(x + y);                                                                                    \
    memcpy(b, &y, sizeof y);                                                                           \
  }                                                                                                    \
  static void first_##id(const void *a, void *b) {                                                     \
    T x;                                                                                               \
    memcpy(&x, a, sizeof x);                                                                           \
    if (x != 0) memcpy(b, &x, sizeof x);                                                               \
  }
#define COMPLEX_FNS(id, T, R)                                                                          \
  static void set_##id(void *p, int v) {                                                               \
    T x = (T)(R)v + (T)(R)(v % 3) * (T)_Complex_I;                                                     \
    memcpy(p, &x, sizeof x);                                                                           \
  }                                                                                                    \
  static void add_##id(const void *a, void *b) {                                                       \
    T x, y;                                                                                            \
    memcpy(&x, a, sizeof x);                                                                           \
    memcpy(&y, b, sizeof y);                                                                           \
    y = x + y;                                                                                         \
    memcpy(b, &y, sizeof y);                                                                           \
  }                                                                                                    \
  static void first_##id(const void *a, void *b) {                                                     \
    T x;                                                                                               \
    memcpy(&x, a, sizeof x);                                                                           \
    if (x != 0) memcpy(b, &x, sizeof x);                                                               \
  }
/* The value-index pairs of MPI_MINLOC / MPI_MAXLOC; the user op is MINLOC again. Members
 * are copied one by one: MPI's last element may end at the int (MPI_LONG_DOUBLE_INT's
 * true extent is 20 of the struct's 32 bytes). */
#define PAIR_FNS(id, T)                                                                                \
  typedef struct {                                                                                     \
    T v;                                                                                               \
    int i;                                                                                             \
  } pair_##id;                                                                                         \
  static void get_##id(const void *p, pair_##id *x) {                                                  \
    memcpy(&x->v, (const char *)p + offsetof(pair_##id, v), sizeof x->v);                              \
    memcpy(&x->i, (const char *)p + offsetof(pair_##id, i), sizeof x->i);                              \
  }                                                                                                    \
  static void put_##id(void *p, const pair_##id *x) {                                                  \
    memcpy((char *)p + offsetof(pair_##id, v), &x->v, sizeof x->v);                                    \
    memcpy((char *)p + offsetof(pair_##id, i), &x->i, sizeof x->i);                                    \
  }                                                                                                    \
  static void set_##id(void *p, int v) {                                                               \
    pair_##id x;                                                                                       \
    memset(&x, 0, sizeof x);                                                                           \
    x.v = (T)(v % 4);                                                                                  \
    x.i = (v * 5 + 1) % 13;                                                                            \
    put_##id(p, &x);                                                                                   \
  }                                                                                                    \
  static void add_##id(const void *a, void *b) {                                                       \
    pair_##id x, y;                                                                                    \
    get_##id(a, &x);                                                                                   \
    get_##id(b, &y);                                                                                   \
    if (x.v < y.v || (x.v == y.v && x.i < y.i)) put_##id(b, &x);                                       \
  }                                                                                                    \
  static void first_##id(const void *a, void *b) {                                                     \
    pair_##id x;                                                                                       \
    get_##id(a, &x);                                                                                   \
    if (x.v != 0) put_##id(b, &x);                                                                     \
  }

SCALAR_FNS(char, char)
SCALAR_FNS(schar, signed char)
SCALAR_FNS(uchar, unsigned char)
SCALAR_FNS(short, short)
SCALAR_FNS(ushort, unsigned short)
SCALAR_FNS(int, int)
SCALAR_FNS(uint, unsigned)
SCALAR_FNS(long, long)
SCALAR_FNS(ulong, unsigned long)
SCALAR_FNS(llong, long long)
SCALAR_FNS(ullong, unsigned long long)
SCALAR_FNS(float, float)
SCALAR_FNS(double, double)
SCALAR_FNS(ldouble, long double)
SCALAR_FNS(wchar, wchar_t)
SCALAR_FNS(bool, _Bool)
SCALAR_FNS(i8, int8_t)
SCALAR_FNS(i16, int16_t)
SCALAR_FNS(i32, int32_t)
SCALAR_FNS(i64, int64_t)
SCALAR_FNS(u8, uint8_t)
SCALAR_FNS(u16, uint16_t)
SCALAR_FNS(u32, uint32_t)
SCALAR_FNS(u64, uint64_t)
SCALAR_FNS(aint, MPI_Aint)
SCALAR_FNS(offset, MPI_Offset)
SCALAR_FNS(count, MPI_Count)
COMPLEX_FNS(fcomplex, float _Complex, float)
COMPLEX_FNS(dcomplex, double _Complex, double)
COMPLEX_FNS(ldcomplex, long double _Complex, long double)
PAIR_FNS(float_int, float)
PAIR_FNS(double_int, double)
PAIR_FNS(long_int, long)
PAIR_FNS(two_int, int)
PAIR_FNS(short_int, short)
PAIR_FNS(ldouble_int, long double)

#define MAX_DT 72
static Dt dts[MAX_DT];
static int n_dts = 0;
static int n_predefined = 0;
/* The derived types, and the types the mixed descriptions use. */
static const Dt *DT_INT, *DT_BYTE, *DT_DOUBLE, *DT_FLOAT, *DT_LONG, *DT_DCOMPLEX, *DT_DOUBLE_INT, *DT_LDOUBLE,
    *DT_BOOL, *DT_CONTIG3, *DT_CONTIG2, *DT_VECTOR, *DT_INDEXED, *DT_STRUCT, *DT_RESIZED, *DT_ZERO;

static Dt *add_dt(const char *name, MPI_Datatype type, int cls) {
  Dt *d = &dts[n_dts++];
  memset(d, 0, sizeof *d);
  d->name = name;
  d->type = type;
  d->cls = cls;
  return d;
}

#define PREDEF(name, cls, id, ctype)                                                                   \
  do {                                                                                                 \
    Dt *d_ = add_dt(#name, name, cls);                                                                 \
    d_->set = set_##id;                                                                                \
    d_->add = add_##id;                                                                                \
    d_->first = first_##id;                                                                            \
    d_->data[0][1] = (int)sizeof(ctype);                                                               \
  } while (0)
#define PAIR(name, id, T)                                                                              \
  do {                                                                                                 \
    Dt *d_ = add_dt(#name, name, C_PAIR);                                                              \
    d_->set = set_##id;                                                                                \
    d_->add = add_##id;                                                                                \
    d_->first = first_##id;                                                                            \
    d_->data[0][0] = (int)offsetof(pair_##id, v);                                                      \
    d_->data[0][1] = sizeof(T) == sizeof(long double) ? LD_DATA : (int)sizeof(T);                     \
    d_->data[1][0] = (int)offsetof(pair_##id, i);                                                      \
    d_->data[1][1] = (int)sizeof(int);                                                                 \
  } while (0)

static const Dt *find_dt(const char *name) {
  for (int k = 0; k < n_dts; ++k)
    if (strcmp(dts[k].name, name) == 0) return &dts[k];
  return NULL;
}

static Dt *derived(const char *name, MPI_Datatype t, const Dt *base, const int *slots, int nslots) {
  MPI_Type_commit(&t);
  Dt *d = add_dt(name, t, base ? C_DERIVED : C_MOVE);
  d->base = base;
  d->nslots = nslots;
  for (int k = 0; k < nslots; ++k) d->slots[k] = slots[k];
  return d;
}

static void init_types(void) {
  PREDEF(MPI_CHAR, C_MOVE, char, char);
  PREDEF(MPI_SIGNED_CHAR, C_INT, schar, signed char);
  PREDEF(MPI_UNSIGNED_CHAR, C_INT, uchar, unsigned char);
  PREDEF(MPI_SHORT, C_INT, short, short);
  PREDEF(MPI_UNSIGNED_SHORT, C_INT, ushort, unsigned short);
  PREDEF(MPI_INT, C_INT, int, int);
  PREDEF(MPI_UNSIGNED, C_INT, uint, unsigned);
  PREDEF(MPI_LONG, C_INT, long, long);
  PREDEF(MPI_UNSIGNED_LONG, C_INT, ulong, unsigned long);
  PREDEF(MPI_LONG_LONG_INT, C_INT, llong, long long);
  PREDEF(MPI_LONG_LONG, C_INT, llong, long long);
  PREDEF(MPI_UNSIGNED_LONG_LONG, C_INT, ullong, unsigned long long);
  PREDEF(MPI_FLOAT, C_FLOAT, float, float);
  PREDEF(MPI_DOUBLE, C_FLOAT, double, double);
  PREDEF(MPI_LONG_DOUBLE, C_FLOAT, ldouble, long double);
  dts[n_dts - 1].data[0][1] = LD_DATA;
  PREDEF(MPI_WCHAR, C_MOVE, wchar, wchar_t);
  PREDEF(MPI_C_BOOL, C_BOOL, bool, _Bool);
  PREDEF(MPI_INT8_T, C_INT, i8, int8_t);
  PREDEF(MPI_INT16_T, C_INT, i16, int16_t);
  PREDEF(MPI_INT32_T, C_INT, i32, int32_t);
  PREDEF(MPI_INT64_T, C_INT, i64, int64_t);
  PREDEF(MPI_UINT8_T, C_INT, u8, uint8_t);
  PREDEF(MPI_UINT16_T, C_INT, u16, uint16_t);
  PREDEF(MPI_UINT32_T, C_INT, u32, uint32_t);
  PREDEF(MPI_UINT64_T, C_INT, u64, uint64_t);
  PREDEF(MPI_AINT, C_MULTI, aint, MPI_Aint);
  PREDEF(MPI_OFFSET, C_MULTI, offset, MPI_Offset);
  PREDEF(MPI_COUNT, C_MULTI, count, MPI_Count);
  PREDEF(MPI_C_COMPLEX, C_COMPLEX, fcomplex, float _Complex);
  PREDEF(MPI_C_FLOAT_COMPLEX, C_COMPLEX, fcomplex, float _Complex);
  PREDEF(MPI_C_DOUBLE_COMPLEX, C_COMPLEX, dcomplex, double _Complex);
  PREDEF(MPI_C_LONG_DOUBLE_COMPLEX, C_COMPLEX, ldcomplex, long double _Complex);
  dts[n_dts - 1].data[0][1] = LD_DATA;
  dts[n_dts - 1].data[1][0] = (int)sizeof(long double);
  dts[n_dts - 1].data[1][1] = LD_DATA;
#ifdef MPI_CXX_BOOL
  PREDEF(MPI_CXX_BOOL, C_BOOL, bool, _Bool); /* C++ bool: one byte, 0 or 1, as _Bool */
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
  PREDEF(MPI_CXX_FLOAT_COMPLEX, C_COMPLEX, fcomplex, float _Complex);
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
  PREDEF(MPI_CXX_DOUBLE_COMPLEX, C_COMPLEX, dcomplex, double _Complex);
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
  PREDEF(MPI_CXX_LONG_DOUBLE_COMPLEX, C_COMPLEX, ldcomplex, long double _Complex);
  dts[n_dts - 1].data[0][1] = LD_DATA;
  dts[n_dts - 1].data[1][0] = (int)sizeof(long double);
  dts[n_dts - 1].data[1][1] = LD_DATA;
#endif
  PREDEF(MPI_BYTE, C_BYTE, uchar, unsigned char);
  PREDEF(MPI_PACKED, C_MOVE, uchar, unsigned char);
  /* Fortran's types, as a C program may use them too (the library reduces those that are
   * C types of the same size); where the MPI library has no Fortran they have size 0. */
#ifdef MPI_INTEGER
#define FORTRAN(name, cls, id, ctype, n)                                                               \
  do {                                                                                                 \
    int size_ = 0;                                                                                     \
    MPI_Type_size(name, &size_);                                                                       \
    if (size_ == (n) * (int)sizeof(ctype)) PREDEF(name, cls, id, ctype);                               \
  } while (0)
  FORTRAN(MPI_CHARACTER, C_MOVE, char, char, 1);
  FORTRAN(MPI_LOGICAL, C_MOVE, int, int, 1);
  FORTRAN(MPI_INTEGER, C_MULTI, int, int, 1);
  FORTRAN(MPI_INTEGER4, C_MULTI, i32, int32_t, 1);
  FORTRAN(MPI_INTEGER8, C_MULTI, i64, int64_t, 1);
  FORTRAN(MPI_REAL, C_FLOAT, float, float, 1);
  FORTRAN(MPI_REAL4, C_FLOAT, float, float, 1);
  FORTRAN(MPI_REAL8, C_FLOAT, double, double, 1);
  FORTRAN(MPI_DOUBLE_PRECISION, C_FLOAT, double, double, 1);
  FORTRAN(MPI_COMPLEX, C_COMPLEX, fcomplex, float _Complex, 1);
  FORTRAN(MPI_DOUBLE_COMPLEX, C_COMPLEX, dcomplex, double _Complex, 1);
  FORTRAN(MPI_2INTEGER, C_MOVE, int, int, 2);
  FORTRAN(MPI_2REAL, C_MOVE, float, float, 2);
  FORTRAN(MPI_2DOUBLE_PRECISION, C_MOVE, double, double, 2);
#undef FORTRAN
#endif
  PAIR(MPI_FLOAT_INT, float_int, float);
  PAIR(MPI_DOUBLE_INT, double_int, double);
  PAIR(MPI_LONG_INT, long_int, long);
  PAIR(MPI_2INT, two_int, int);
  PAIR(MPI_SHORT_INT, short_int, short);
  PAIR(MPI_LONG_DOUBLE_INT, ldouble_int, long double);
  n_predefined = n_dts;
  DT_INT = find_dt("MPI_INT");
  DT_BYTE = find_dt("MPI_BYTE");
  DT_DOUBLE = find_dt("MPI_DOUBLE");
  DT_FLOAT = find_dt("MPI_FLOAT");
  DT_LONG = find_dt("MPI_LONG");
  DT_DCOMPLEX = find_dt("MPI_C_DOUBLE_COMPLEX");
  DT_DOUBLE_INT = find_dt("MPI_DOUBLE_INT");
  DT_LDOUBLE = find_dt("MPI_LONG_DOUBLE");
  DT_BOOL = find_dt("MPI_C_BOOL");
  const Dt *sh = find_dt("MPI_SHORT");

  /* Derived types; their (size, extent, lb) differ, which is how the user op tells them apart. */
  MPI_Datatype t;
  static const int contig3_slots[] = {0, 4, 8};
  MPI_Type_contiguous(3, MPI_INT, &t);
  DT_CONTIG3 = derived("contiguous(3,MPI_INT)", t, DT_INT, contig3_slots, 3);
  MPI_Type_contiguous(2, MPI_INT, &t);
  DT_CONTIG2 = derived("contiguous(2,MPI_INT)", t, NULL, NULL, 0);
  static const int vector_slots[] = {0, 8};
  MPI_Type_vector(2, 1, 2, MPI_INT, &t); /* two ints with a one-int gap: extent 12, size 8 */
  DT_VECTOR = derived("vector(2,1,2,MPI_INT)", t, DT_INT, vector_slots, 2);
  static const int indexed_blocks[] = {1, 3, 1}, indexed_displs[] = {0, 2, 6};
  static const int indexed_slots[] = {0, 4, 6, 8, 12};
  MPI_Type_indexed(3, indexed_blocks, indexed_displs, MPI_SHORT, &t); /* size 10, extent 14 */
  DT_INDEXED = derived("indexed(MPI_SHORT:1,3,1@0,2,6)", t, sh, indexed_slots, 5);
  {
    struct mixed {
      char c;
      double d;
      int i;
    };
    const int lens[] = {1, 1, 1};
    const MPI_Aint at[] = {offsetof(struct mixed, c), offsetof(struct mixed, d), offsetof(struct mixed, i)};
    const MPI_Datatype of[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Datatype s;
    MPI_Type_create_struct(3, lens, at, of, &s);
    MPI_Type_create_resized(s, 0, sizeof(struct mixed), &t);
    MPI_Type_free(&s);
    DT_STRUCT = derived("struct{char,double,int}", t, NULL, NULL, 0);
  }
  {
    /* One int 8 bytes into a 12-byte element whose lower bound is 4: lb, true lb and
     * extent all differ from the int's. */
    const int len = 1;
    const MPI_Aint at = 8;
    const MPI_Datatype of = MPI_INT;
    MPI_Datatype s;
    MPI_Type_create_struct(1, &len, &at, &of, &s);
    MPI_Type_create_resized(s, 4, 12, &t);
    MPI_Type_free(&s);
    static const int resized_slots[] = {8};
    DT_RESIZED = derived("resized(MPI_INT@8,lb=4,extent=12)", t, DT_INT, resized_slots, 1);
  }
  MPI_Type_contiguous(0, MPI_INT, &t);
  DT_ZERO = derived("contiguous(0,MPI_INT)", t, DT_INT, NULL, 0);
  for (int k = 0; k < n_dts; ++k) {
    Dt *d = &dts[k];
    MPI_Type_size(d->type, &d->size);
    MPI_Type_get_extent(d->type, &d->lb, &d->extent);
    MPI_Type_get_true_extent(d->type, &d->true_lb, &d->true_extent);
  }
}

/* The type behind a handle that a user op receives: a predefined one by handle, a derived
 * one (perhaps a duplicate the library made) by its size, extent and lower bound. */
static const Dt *dt_of(MPI_Datatype t) {
  for (int k = 0; k < n_predefined; ++k)
    if (dts[k].type == t) return &dts[k];
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_size(t, &size);
  PMPI_Type_get_extent(t, &lb, &extent);
  for (int k = n_predefined; k < n_dts; ++k)
    if (dts[k].base && dts[k].size == size && dts[k].extent == extent && dts[k].lb == lb) return &dts[k];
  return NULL;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *type, bool commutative) {
  const Dt *d = dt_of(*type);
  if (!d) {
    fprintf(stderr, "conformance: a user op got a datatype it does not know\n");
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  for (int k = 0; k < *len; ++k) {
    unsigned char *a = (unsigned char *)in + (MPI_Aint)k * d->extent, *b = (unsigned char *)inout + (MPI_Aint)k * d->extent;
    if (d->base) {
      for (int s = 0; s < d->nslots; ++s) d->base->add(a + d->slots[s], b + d->slots[s]);
    } else {
      (commutative ? d->add : d->first)(a, b);
    }
  }
}
static void user_commutative(void *in, void *inout, int *len, MPI_Datatype *type) {
  user_op(in, inout, len, type, true);
}
static void user_ordered(void *in, void *inout, int *len, MPI_Datatype *type) { user_op(in, inout, len, type, false); }
static MPI_Op op_user, op_user_ordered;

typedef struct {
  MPI_Op op;
  const char *name;
} OpName;

/* The reductions MPI defines for a type's class (PROD only where products stay exact). */
static int ops_for(const Dt *d, OpName *out) {
  int n = 0;
#define OP(o) (out[n++] = (OpName){o, #o})
  switch (d->cls) {
    case C_INT:
      OP(MPI_SUM), OP(MPI_MAX), OP(MPI_MIN), OP(MPI_BAND), OP(MPI_BOR), OP(MPI_BXOR), OP(MPI_LAND), OP(MPI_LOR),
          OP(MPI_LXOR);
      break;
    case C_MULTI: OP(MPI_SUM), OP(MPI_MAX), OP(MPI_MIN), OP(MPI_BAND), OP(MPI_BOR), OP(MPI_BXOR); break;
    case C_FLOAT: OP(MPI_SUM), OP(MPI_MAX), OP(MPI_MIN), OP(MPI_PROD); break;
    case C_COMPLEX: OP(MPI_SUM); break;
    case C_BOOL: OP(MPI_LAND), OP(MPI_LOR), OP(MPI_LXOR); break;
    case C_BYTE: OP(MPI_BAND), OP(MPI_BOR), OP(MPI_BXOR); break;
    case C_PAIR: OP(MPI_MINLOC), OP(MPI_MAXLOC); break;
    case C_DERIVED: break;
    default: return 0;
  }
#undef OP
  out[n++] = (OpName){op_user, "user op"};
  if (d->cls != C_DERIVED) out[n++] = (OpName){op_user_ordered, "non-commutative user op"};
  return n;
}

/* What libcomm reduces itself (README, "MPI semantics"); everything else goes to MPI. */
static bool libcomm_reduces(const Dt *d, MPI_Op op) {
  bool double_complex = d->type == MPI_C_DOUBLE_COMPLEX;
  bool real = d->type == MPI_DOUBLE || d->type == MPI_FLOAT || d->type == MPI_INT;
#ifdef MPI_CXX_DOUBLE_COMPLEX
  double_complex = double_complex || d->type == MPI_CXX_DOUBLE_COMPLEX;
#endif
#ifdef MPI_INTEGER
  /* libcomm_mpi/src/interpose.cpp, elem_type_of: the Fortran types that are those C types */
  double_complex = double_complex || (d->type == MPI_DOUBLE_COMPLEX && d->size == 16);
  real = real || ((d->type == MPI_DOUBLE_PRECISION || d->type == MPI_REAL8) && d->size == 8) ||
         ((d->type == MPI_REAL || d->type == MPI_REAL4) && d->size == 4) ||
         ((d->type == MPI_INTEGER || d->type == MPI_INTEGER4) && d->size == (int)sizeof(int));
#endif
  if (double_complex) return op == MPI_SUM;
  return real && (op == MPI_SUM || op == MPI_MAX || op == MPI_MIN);
}

/* ---- Communicators -------------------------------------------------------------------------- */

typedef struct {
  MPI_Comm comm;
  char name[64];
  int size, rank, blocks; /* blocks: ranks of the other group on an inter-communicator */
  bool inter, owned;
  bool nonnative[N_FAM];  /* a libcomm algorithm other than native ran under auto */
} CommInfo;

enum { COMM_WORLD, COMM_DUP, COMM_SPLIT, COMM_SELF, COMM_INTER, N_COMM };
typedef struct {
  CommInfo c[N_COMM];
  int n;
} Comms;

static void describe_comm(CommInfo *ci, MPI_Comm comm, const char *name, bool owned) {
  memset(ci, 0, sizeof *ci);
  ci->comm = comm;
  ci->owned = owned;
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  ci->inter = inter != 0;
  MPI_Comm_size(comm, &ci->size);
  MPI_Comm_rank(comm, &ci->rank);
  ci->blocks = ci->size;
  if (ci->inter) MPI_Comm_remote_size(comm, &ci->blocks);
  snprintf(ci->name, sizeof ci->name, "%s(%d%s%d)", name, ci->size, ci->inter ? "<->" : " of ", ci->inter ? ci->blocks : world_size);
}

/* One blocking call through the library makes its state for the communicator (a
 * non-blocking first call would go to MPI); LIBCOMM_NODES is read then. */
static void adopt(MPI_Comm comm, const char *nodes) {
  char *saved = saved_env("LIBCOMM_NODES");
  if (nodes) setenv("LIBCOMM_NODES", nodes, 1);
  int p = 0;
  MPI_Comm_size(comm, &p);
  int *a = calloc((size_t)p, sizeof(int)), *b = calloc((size_t)p, sizeof(int));
  MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm);
  free(a);
  free(b);
  if (saved) setenv("LIBCOMM_NODES", saved, 1);
  else unsetenv("LIBCOMM_NODES");
  free(saved);
}

/* MPI_COMM_WORLD (node map from the environment), a duplicate (2 ranks per node), a split
 * into uneven halves with its ranks reversed (one node: the machine), MPI_COMM_SELF, and the
 * inter-communicator between the halves. `fresh`: new ones only (no world, no self). */
static void make_comms(Comms *cs, bool fresh) {
  cs->n = 0;
  if (!fresh) describe_comm(&cs->c[cs->n++], MPI_COMM_WORLD, "MPI_COMM_WORLD", false);
  MPI_Comm dup, split;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  adopt(dup, "ppn=2");
  describe_comm(&cs->c[cs->n++], dup, fresh ? "dup'" : "dup", true);
  const int color = world_rank * 3 < world_size ? 0 : 1;
  MPI_Comm_split(MPI_COMM_WORLD, color, world_size - world_rank, &split);
  adopt(split, "shared");
  describe_comm(&cs->c[cs->n++], split, fresh ? "split'" : "split", true);
  if (!fresh) {
    adopt(MPI_COMM_SELF, "flat");
    describe_comm(&cs->c[cs->n++], MPI_COMM_SELF, "MPI_COMM_SELF", false);
  }
  if (!fresh && world_size > 1) {
    /* Each group's rank 0 is its highest world rank (the split reverses the order). */
    int last_of_first = 0;
    while ((last_of_first + 1) * 3 < world_size) ++last_of_first;
    const int other_leader = color == 0 ? world_size - 1 : last_of_first;
    MPI_Comm inter;
    MPI_Intercomm_create(split, 0, MPI_COMM_WORLD, other_leader, 77, &inter);
    describe_comm(&cs->c[cs->n++], inter, "inter", true);
  }
}

static void free_comms(Comms *cs) {
  for (int k = cs->n - 1; k >= 0; --k)
    if (cs->c[k].owned) MPI_Comm_free(&cs->c[k].comm);
  cs->n = 0;
}

static CommInfo *comm_named(Comms *cs, const char *prefix) {
  for (int k = 0; k < cs->n; ++k)
    if (strncmp(cs->c[k].name, prefix, strlen(prefix)) == 0) return &cs->c[k];
  return NULL;
}

/* ---- Policies and the routes they allow ----------------------------------------------------- */

/* The algorithm LIBCOMM_<OP> names for each family now (NULL: auto), and whether the
 * environment the program was started with named it. */
static const char *forced[N_FAM];
static bool forced_from_outside[N_FAM];

/* docs/fallbacks.md: what a named algorithm runs at P = 1, 2, ... ranks, and the
 * alternative of the algorithms that depend on the node map. */
#define MAX_ROWS 128
typedef struct {
  char op[32], algo[48];
  char cells[32][48];
  int ncells;
  bool per_p; /* the second table (by P); else the first's "otherwise" in cells[0] */
} FallbackRow;
static FallbackRow fallback_rows[MAX_ROWS];
static int n_fallback_rows = 0;
static bool have_fallbacks = false;
/* The algorithms a non-blocking call replaces with native (the paragraph of
 * docs/fallbacks.md that begins "One rule depends on the form of the call"). */
static char nonblocking_native[16][48];
static int n_nonblocking_native = 0;

static bool is_algorithm_name(const char *name) {
  for (int f = 0; f < N_FAM; ++f)
    for (const char *const *a = family_algorithms[f]; *a; ++a)
      if (strcmp(*a, name) == 0) return true;
  return false;
}

/* Collects the algorithm names in backticks of one line of that paragraph. */
static void note_nonblocking_rule(const char *line) {
  for (const char *at = strchr(line, '`'); at; at = strchr(at, '`')) {
    const char *end = strchr(at + 1, '`');
    if (!end) break;
    char name[48];
    snprintf(name, sizeof name, "%.*s", (int)(end - at - 1), at + 1);
    if (is_algorithm_name(name) && strcmp(name, "native") != 0 && n_nonblocking_native < 16)
      snprintf(nonblocking_native[n_nonblocking_native++], 48, "%s", name);
    at = end + 1;
  }
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '`') ++s;
  char *e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '`' || e[-1] == '\n')) *--e = '\0';
  return s;
}

static bool read_fallbacks(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[2048];
  int table = 0; /* 1: applies-to/otherwise, 2: by P */
  bool in_rule = false;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "One rule depends on the form of the call")) in_rule = true;
    if (in_rule && line[0] == '\n') in_rule = false;
    if (in_rule) note_nonblocking_rule(line);
    if (strncmp(line, "| ", 2) != 0) continue;
    char *cells[40];
    int n = 0;
    for (char *tok = strtok(line + 1, "|"); tok && n < 40; tok = strtok(NULL, "|")) cells[n++] = trim(tok);
    if (n < 3) continue;
    if (strcmp(cells[0], "operation") == 0) {
      table = strcmp(cells[2], "applies to") == 0 ? 1 : 2;
      continue;
    }
    if (strncmp(cells[0], "---", 3) == 0 || n_fallback_rows == MAX_ROWS) continue;
    if (n > 0 && cells[n - 1][0] == '\0') --n; /* the empty cell after the last | */
    FallbackRow *r = &fallback_rows[n_fallback_rows++];
    snprintf(r->op, sizeof r->op, "%s", cells[0]);
    snprintf(r->algo, sizeof r->algo, "%s", cells[1]);
    r->per_p = table == 2;
    r->ncells = 0;
    if (table == 2) {
      for (int k = 2; k < n && r->ncells < 32; ++k) snprintf(r->cells[r->ncells++], 48, "%s", cells[k]);
    } else if (n > 3) {
      snprintf(r->cells[0], 48, "%s", cells[3]);
      r->ncells = 1;
    }
  }
  fclose(f);
  return n_fallback_rows > 0;
}

/* Whether `route` is what forcing `algo` may run on `p` ranks: the algorithm itself or its
 * documented fallback. `why` gets what the table says. */
static bool forced_route_ok(int fam, const char *algo, int p, const char *route, char *why, size_t why_size) {
  snprintf(why, why_size, "%s", algo);
  if (strcmp(route, algo) == 0 && !have_fallbacks) return true;
  if (!have_fallbacks) {
    snprintf(why, why_size, "%s (or a fallback: give --fallbacks docs/fallbacks.md to check which)", algo);
    return strcmp(route, "pmpi") != 0 && strcmp(route, "native") != 0 && route[0] != '\0' && route[0] != '(';
  }
  for (int k = 0; k < n_fallback_rows; ++k) {
    const FallbackRow *r = &fallback_rows[k];
    if (!r->per_p || strcmp(r->op, family_op[fam]) != 0 || strcmp(r->algo, algo) != 0 || p > r->ncells) continue;
    const char *cell = r->cells[p - 1];
    const char *want = strcmp(cell, "·") == 0 ? algo : cell;
    snprintf(why, why_size, "%s (docs/fallbacks.md at P = %d)", want, p);
    return strcmp(route, want) == 0;
  }
  for (int k = 0; k < n_fallback_rows; ++k) {
    const FallbackRow *r = &fallback_rows[k];
    if (r->per_p || strcmp(r->op, family_op[fam]) != 0 || strcmp(r->algo, algo) != 0 || r->ncells == 0) continue;
    if (strncmp(r->cells[0], "refused", 7) == 0) break;
    snprintf(why, why_size, "%s or, where it does not apply, %s (docs/fallbacks.md)", algo, r->cells[0]);
    return strcmp(route, algo) == 0 || strcmp(route, r->cells[0]) == 0;
  }
  return strcmp(route, algo) == 0;
}

/* ---- One case: its description, buffers and arguments --------------------------------------- */

typedef struct {
  int fn, form, completion;
  const Dt *dt;       /* the type (all ranks), or NULL with a mix */
  int mix;            /* -1, or the mixed description (mixes[]) */
  int n;              /* the count parameter */
  int displs;         /* D_* (v-variants) */
  int in_place;       /* IP_* */
  OpName op;          /* reductions */
  CommInfo *comm;
  const char *note;   /* extra words for the label */
} Spec;

/* Ranks that describe the same bytes with different types: even ranks take the first
 * description, odd ranks the second; counts are units x multiplier. */
typedef struct {
  const char *label;
  const Dt **even_send, **even_recv, **odd_send, **odd_recv;
  int even_smul, even_rmul, odd_smul, odd_rmul;
} Mix;
static const Mix mixes[] = {
    {"even MPI_INT x 2n -> contiguous(2,MPI_INT) x n, odd the reverse", &DT_INT, &DT_CONTIG2, &DT_CONTIG2, &DT_INT, 2,
     1, 1, 2},
    {"even MPI_INT x 2n, odd MPI_BYTE x 8n", &DT_INT, &DT_INT, &DT_BYTE, &DT_BYTE, 2, 2, 8, 8},
    {"even vector(2,1,2,MPI_INT) x n -> MPI_INT x 2n, odd the reverse", &DT_VECTOR, &DT_INT, &DT_INT, &DT_VECTOR, 1, 2,
     2, 1},
    {"even struct{char,double,int} x n, odd MPI_BYTE x 13n", &DT_STRUCT, &DT_STRUCT, &DT_BYTE, &DT_BYTE, 1, 1, 13, 13},
    {"even contiguous(0,MPI_INT) x n -> MPI_INT x 0, odd the reverse", &DT_ZERO, &DT_INT, &DT_INT, &DT_ZERO, 1, 0, 0,
     1},
};
enum { N_MIX = sizeof mixes / sizeof mixes[0] };

static const char *spec_type_label(const Spec *s) { return s->mix >= 0 ? mixes[s->mix].label : s->dt->name; }

#define SPEC_LABEL_FORMAT                                                                              \
  "%s form=%s type=%s count=%d displs=%s in_place=%s op=%s comm=%s completion=%s policy=%s%s%s"
#define SPEC_LABEL_ARGS(s)                                                                             \
  fn_names[s->fn][s->form], form_names[s->form], spec_type_label(s), s->n, displs_names[s->displs],   \
      in_place_names[s->in_place], is_reduce(s->fn) ? s->op.name : "-", s->comm->name,                \
      completion_names[s->completion], policy_label, s->note ? " " : "", s->note ? s->note : ""

static void begin_spec_case(const Spec *s) { begin_case(SPEC_LABEL_FORMAT, SPEC_LABEL_ARGS(s)); }

/* The running case's label again, after its completion changed. */
static void relabel_spec_case(const Spec *s) {
  snprintf(case_label, sizeof case_label, SPEC_LABEL_FORMAT, SPEC_LABEL_ARGS(s));
}

#define GUARD 32 /* bytes compared on both sides of every receive buffer */

typedef struct {
  int p, me;
  bool in_place;                 /* this rank */
  const Dt *sdt, *rdt;           /* this rank's types */
  int scount, rcount;            /* regular forms */
  int *sc, *sd, *rc, *rd;        /* v-forms, reduce_scatter (rc) */
  size_t sspan, rspan;           /* bytes from the buffer address to the end of the data */
  size_t result_span;            /* reductions: bytes of this rank's result */
  long send_elems, recv_elems;   /* reductions: elements of the input (send or in place) */
} Layout;

static size_t span_of(const Dt *d, long elems) {
  if (elems <= 0 || d->size == 0) return 0;
  const MPI_Aint end = (MPI_Aint)(elems - 1) * d->extent + d->true_lb + d->true_extent;
  return end > 0 ? (size_t)end : 0;
}

/* Units exchanged from src to dst (alltoallv) or contributed by r (allgatherv,
 * reduce_scatter): zeros included, at most n. In place, alltoallv needs them symmetric. */
static int units_pair(const Spec *s, int src, int dst, bool symmetric) {
  if (symmetric) return (src + dst + src * dst + s->n) % (s->n + 1);
  return (src * 7 + dst * 3 + s->n) % (s->n + 1);
}
static int units_rank(const Spec *s, int r) { return (r * 5 + s->n) % (s->n + 1); }

/* Displacements (in elements of the side's type) of blocks with counts c[]. */
static long make_displs(int pattern, bool send_side, int p, const int *c, int *d) {
  long at = 0, end = 0;
  switch (pattern) {
    case D_GAPS:
      for (int r = 0; r < p; ++r) d[r] = (int)at, at += c[r] + r % 3 + 1;
      break;
    case D_REVERSED:
      for (int r = p - 1; r >= 0; --r) d[r] = (int)at, at += c[r];
      break;
    case D_INTERLEAVED:
      if (send_side) { /* overlapping send blocks, one element apart (MPI allows it) */
        for (int r = 0; r < p; ++r) d[r] = r;
      } else { /* odd ranks' blocks first, then the even ones, one element between */
        for (int r = 1; r < p; r += 2) d[r] = (int)at, at += c[r] + 1;
        for (int r = 0; r < p; r += 2) d[r] = (int)at, at += c[r] + 1;
      }
      break;
    default:
      for (int r = 0; r < p; ++r) d[r] = (int)at, at += c[r];
  }
  for (int r = 0; r < p; ++r)
    if (d[r] + c[r] > end) end = d[r] + c[r];
  return end;
}

static void build_layout(const Spec *s, Layout *L) {
  memset(L, 0, sizeof *L);
  const CommInfo *ci = s->comm;
  L->p = ci->blocks;
  L->me = ci->rank;
  const bool even = world_rank % 2 == 0;
  L->in_place = s->in_place == IP_ALL || (s->in_place == IP_SOME && even);
  int smul = 1, rmul = 1;
  if (s->mix >= 0) {
    const Mix *m = &mixes[s->mix];
    L->sdt = *(even ? m->even_send : m->odd_send);
    L->rdt = *(even ? m->even_recv : m->odd_recv);
    smul = even ? m->even_smul : m->odd_smul;
    rmul = even ? m->even_rmul : m->odd_rmul;
  } else {
    L->sdt = L->rdt = s->dt;
  }
  if (L->in_place) L->sdt = L->rdt, smul = rmul;
  const int p = L->p, me = L->me;
  switch (s->fn) {
    case ALLTOALL:
      L->scount = s->n * smul;
      L->rcount = s->n * rmul;
      L->sspan = span_of(L->sdt, (long)p * L->scount);
      L->rspan = span_of(L->rdt, (long)p * L->rcount);
      break;
    case ALLGATHER:
      L->scount = s->n * smul;
      L->rcount = s->n * rmul;
      L->sspan = span_of(L->sdt, L->scount);
      L->rspan = span_of(L->rdt, (long)p * L->rcount);
      break;
    case ALLTOALLV: {
      const bool sym = s->in_place != IP_NONE;
      L->sc = calloc((size_t)p, sizeof(int)), L->sd = calloc((size_t)p, sizeof(int));
      L->rc = calloc((size_t)p, sizeof(int)), L->rd = calloc((size_t)p, sizeof(int));
      for (int r = 0; r < p; ++r) {
        L->sc[r] = units_pair(s, me, r, sym) * smul;
        L->rc[r] = units_pair(s, r, me, sym) * rmul;
      }
      L->sspan = span_of(L->sdt, make_displs(s->displs, true, p, L->sc, L->sd));
      L->rspan = span_of(L->rdt, make_displs(s->displs, false, p, L->rc, L->rd));
      break;
    }
    case ALLGATHERV:
      L->scount = units_rank(s, me) * smul;
      L->sspan = span_of(L->sdt, L->scount);
      L->rc = calloc((size_t)p, sizeof(int)), L->rd = calloc((size_t)p, sizeof(int));
      for (int r = 0; r < p; ++r) L->rc[r] = units_rank(s, r) * rmul;
      L->rspan = span_of(L->rdt, make_displs(s->displs, false, p, L->rc, L->rd));
      break;
    case REDUCE_SCATTER:
    case REDUCE_SCATTER_BLOCK: {
      long total = 0;
      if (s->fn == REDUCE_SCATTER) {
        L->rc = calloc((size_t)p, sizeof(int));
        for (int r = 0; r < p; ++r) total += L->rc[r] = units_rank(s, r);
        L->rcount = L->rc[me];
      } else {
        L->rcount = s->n;
        total = (long)s->n * p;
      }
      L->send_elems = total;
      L->sspan = span_of(L->sdt, total);
      L->result_span = span_of(L->rdt, L->rcount);
      /* One element more than the result: it must stay untouched. In place, the input. */
      L->recv_elems = L->in_place ? total : L->rcount + 1;
      L->rspan = span_of(L->rdt, L->recv_elems);
      break;
    }
  }
}

static void free_layout(Layout *L) {
  free(L->sc), free(L->sd), free(L->rc), free(L->rd);
  L->sc = L->sd = L->rc = L->rd = NULL;
}

static const unsigned char kFill = 0xA5;

static unsigned char pattern_byte(size_t k, int seed) {
  const uint32_t x = (uint32_t)k * 2654435761u ^ (uint32_t)(world_rank + 1) * 40503u ^ (uint32_t)seed * 97u;
  return (unsigned char)(x >> 13 ^ x);
}

/* Small integer values of element k on this rank. */
static int value_of(long k, int seed) { return (int)((world_rank * 3 + k * 7 + seed) % 11); }

static void set_values(const Dt *d, unsigned char *buf, long elems, int seed) {
  if (d->base) {
    for (long k = 0; k < elems; ++k)
      for (int s = 0; s < d->nslots; ++s) d->base->set(buf + k * d->extent + d->slots[s], value_of(k * 8 + s, seed));
  } else {
    for (long k = 0; k < elems; ++k) d->set(buf + k * d->extent, value_of(k, seed));
  }
}

/* The send buffer (pattern bytes, or values for a reduction) and the receive buffer (the
 * fill byte; the input where this rank works in place). */
static void fill_buffers(const Spec *s, const Layout *L, unsigned char *send, size_t sbytes, unsigned char *recv,
                         size_t rbytes, int seed) {
  memset(recv, kFill, rbytes);
  if (is_reduce(s->fn)) {
    memset(send, 0, sbytes);
    set_values(L->sdt, send + GUARD, L->send_elems, seed);
    if (L->in_place) {
      memset(recv + GUARD, 0, L->rspan);
      set_values(L->rdt, recv + GUARD, L->send_elems, seed);
    }
    return;
  }
  for (size_t k = 0; k < sbytes; ++k) send[k] = pattern_byte(k, seed);
  if (L->in_place)
    for (size_t k = 0; k < L->rspan; ++k) recv[GUARD + k] = pattern_byte(k, seed);
}

/* Compares what the library delivered with what MPI did. Reductions compare the data bytes
 * of the result's elements (padding is undefined), and after an in-place reduction only the
 * result is defined; everything else is compared whole. */
static void compare(const Spec *s, const Layout *L, const unsigned char *got, const unsigned char *want,
                    size_t rbytes, const char *when) {
  for (size_t k = 0; k < rbytes; ++k) {
    if (got[k] == want[k]) continue;
    const long at = (long)k - GUARD;
    if (is_reduce(s->fn) && at >= 0) {
      const Dt *d = L->rdt;
      if ((size_t)at < L->result_span) {
        if (!d->base && d->extent > 0) {
          const long in = at % d->extent;
          bool data = false;
          for (int r = 0; r < 2; ++r)
            data = data || (in >= d->data[r][0] && in < d->data[r][0] + d->data[r][1]);
          if (!data) continue;
        }
      } else if (L->in_place && (size_t)at < L->rspan) {
        continue;
      }
    }
    fail("%sbytes differ from PMPI_%s at offset %ld%s (got 0x%02x, want 0x%02x)", when, fn_names[s->fn][0] + 4, at,
         at < 0 || (size_t)at >= (is_reduce(s->fn) ? L->result_span : L->rspan) ? ", outside the data" : "", got[k],
         want[k]);
    return;
  }
}

/* All arguments of one call. */
typedef struct {
  const void *sbuf;
  void *rbuf;
  int scount, rcount;
  const int *sc, *sd, *rc, *rd;
  MPI_Datatype stype, rtype;
  MPI_Op op;
  MPI_Comm comm;
} Args;

static Args args_of(const Spec *s, const Layout *L, unsigned char *send, unsigned char *recv) {
  Args a = {send + GUARD, recv + GUARD, L->scount, L->rcount, L->sc, L->sd, L->rc, L->rd, L->sdt->type, L->rdt->type,
            s->op.op, s->comm->comm};
  if (L->in_place) {
    a.sbuf = MPI_IN_PLACE;
    a.scount = 0;
    a.stype = MPI_DATATYPE_NULL;
    a.sc = a.sd = NULL;
  }
  return a;
}

/* The MPI library's blocking call (pmpi), or the call in `form` as the program makes it. */
static int invoke(int fn, int form, bool pmpi, const Args *a, MPI_Request *req) {
  if (pmpi) {
    switch (fn) {
      case ALLTOALL: return PMPI_Alltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
      case ALLTOALLV:
        return PMPI_Alltoallv(a->sbuf, a->sc, a->sd, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm);
      case ALLGATHER: return PMPI_Allgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
      case ALLGATHERV:
        return PMPI_Allgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm);
      case REDUCE_SCATTER: return PMPI_Reduce_scatter(a->sbuf, a->rbuf, a->rc, a->rtype, a->op, a->comm);
      default: return PMPI_Reduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
    }
  }
  if (form == BLOCKING) {
    switch (fn) {
      case ALLTOALL: return MPI_Alltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
      case ALLTOALLV:
        return MPI_Alltoallv(a->sbuf, a->sc, a->sd, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm);
      case ALLGATHER: return MPI_Allgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
      case ALLGATHERV:
        return MPI_Allgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm);
      case REDUCE_SCATTER: return MPI_Reduce_scatter(a->sbuf, a->rbuf, a->rc, a->rtype, a->op, a->comm);
      default: return MPI_Reduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
    }
  }
  if (form == NONBLOCKING) {
    switch (fn) {
      case ALLTOALL:
        return MPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, req);
      case ALLTOALLV:
        return MPI_Ialltoallv(a->sbuf, a->sc, a->sd, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm, req);
      case ALLGATHER:
        return MPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, req);
      case ALLGATHERV:
        return MPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm, req);
      case REDUCE_SCATTER: return MPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rc, a->rtype, a->op, a->comm, req);
      default: return MPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, req);
    }
  }
#if HAVE_PERSISTENT
  switch (fn) {
    case ALLTOALL:
      return MPIX_Alltoall_init(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, MPI_INFO_NULL,
                                req);
    case ALLTOALLV:
      return MPIX_Alltoallv_init(a->sbuf, a->sc, a->sd, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm,
                                 MPI_INFO_NULL, req);
    case ALLGATHER:
      return MPIX_Allgather_init(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, MPI_INFO_NULL,
                                 req);
    case ALLGATHERV:
      return MPIX_Allgatherv_init(a->sbuf, a->scount, a->stype, a->rbuf, a->rc, a->rd, a->rtype, a->comm,
                                  MPI_INFO_NULL, req);
    case REDUCE_SCATTER:
      return MPIX_Reduce_scatter_init(a->sbuf, a->rbuf, a->rc, a->rtype, a->op, a->comm, MPI_INFO_NULL, req);
    default:
      return MPIX_Reduce_scatter_block_init(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, MPI_INFO_NULL, req);
  }
#else
  (void)req;
  return MPI_ERR_OTHER;
#endif
}

/* ---- Routes ---------------------------------------------------------------------------------- */

static bool expects_pmpi(const Spec *s) {
  return s->comm->inter || (is_reduce(s->fn) && !libcomm_reduces(s->dt, s->op.op));
}

static void check_route(const Spec *s, const char *route) {
  if (trace) printf("conformance: case %ld rank=%d: ran %s\n", n_cases, world_rank, route);
  if (!route_fn) {
    fail("libcomm_mpi is not loaded: the call went to the MPI library directly");
    return;
  }
  if (expects_pmpi(s)) {
    check(strcmp(route, "pmpi") == 0, "ran '%s', expected the MPI library's (route pmpi: %s)", route,
          s->comm->inter ? "an inter-communicator" : "a reduction libcomm does not implement");
    return;
  }
  const int fam = fn_family[s->fn];
  if (route[0] == '\0' || strcmp(route, "pmpi") == 0) {
    fail("ran '%s': the call went to the MPI library, not to libcomm", route);
    return;
  }
  const char *algo = forced[fam];
  if (!algo || strcmp(algo, "auto") == 0) {
    if (strcmp(route, "native") != 0) s->comm->nonnative[fam] = true;
    return;
  }
  if (strcmp(algo, "native") == 0 && forced_from_outside[fam]) {
    fail("ran 'native' because %s=native: that is the MPI library's collective, no libcomm algorithm runs",
         family_env[fam]);
    return;
  }
  if (s->form == NONBLOCKING && strcmp(route, "native") == 0) {
    if (!have_fallbacks) return; /* (which algorithms a non-blocking call replaces: the table's text says) */
    for (int k = 0; k < n_nonblocking_native; ++k)
      if (strcmp(nonblocking_native[k], algo) == 0) return; /* documented: its plan is made collectively */
  }
  char why[256];
  check(forced_route_ok(fam, algo, s->comm->size, route, why, sizeof why), "%s=%s ran '%s', expected %s",
        family_env[fam], algo, route, why);
}

/* ---- Completion ------------------------------------------------------------------------------ */

/* Reuses the stack and the heap between the start of a call and its completion. */
static void __attribute__((noinline)) scribble_stack(void) {
  volatile unsigned char junk[1 << 16];
  for (size_t k = 0; k < sizeof junk; ++k) junk[k] = (unsigned char)(k * 7 + 0x3c);
}

static void churn_heap(void) {
  void *blocks[64];
  for (int k = 0; k < 64; ++k) {
    const size_t n = (size_t)16 << (k % 12);
    blocks[k] = malloc(n);
    memset(blocks[k], 0xEE, n);
  }
  for (int k = 0; k < 64; ++k) free(blocks[k]);
}

/* The program's own point-to-point ring on MPI_COMM_WORLD, beside the collective. */
typedef struct {
  int out, in;
  MPI_Request r[2];
} Ring;

static void ring_start(Ring *g, int tag) {
  g->out = world_rank * 1000 + tag % 1000;
  g->in = -1;
  MPI_Irecv(&g->in, 1, MPI_INT, (world_rank + world_size - 1) % world_size, tag, MPI_COMM_WORLD, &g->r[0]);
  MPI_Isend(&g->out, 1, MPI_INT, (world_rank + 1) % world_size, tag, MPI_COMM_WORLD, &g->r[1]);
}

static void ring_check(const Ring *g, int tag) {
  const int left = (world_rank + world_size - 1) % world_size;
  check(g->in == left * 1000 + tag % 1000, "the program's own MPI_Irecv beside it got %d, want %d", g->in,
        left * 1000 + tag % 1000);
}

static bool is_done(MPI_Request r, bool persistent) {
  if (r == MPI_REQUEST_NULL) return true;
  if (!persistent) return false;
  int flag = 0;
  PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

/* Completes *req (a collective, persistent or not) with `mode`. */
static void complete(int mode, MPI_Request *req, bool persistent) {
  const int tag = (int)(n_cases % 30000);
  Ring g;
  MPI_Request all[3];
  int rc = MPI_SUCCESS, flag = 0, idx = 0, out = 0, indices[3], seen_collective = 0;
  const bool with_ring = mode >= C_WAITALL && mode <= C_TESTSOME;
  if (with_ring) {
    ring_start(&g, tag);
    all[0] = *req, all[1] = g.r[0], all[2] = g.r[1];
  }
  switch (mode) {
    case C_WAIT: rc = MPI_Wait(req, MPI_STATUS_IGNORE); break;
    case C_TEST:
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
      break;
    case C_WAITALL: rc = MPI_Waitall(3, all, MPI_STATUSES_IGNORE), seen_collective = 1; break;
    case C_TESTALL:
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Testall(3, all, &flag, MPI_STATUSES_IGNORE);
      seen_collective = 1;
      break;
    case C_WAITANY:
      for (;;) {
        rc = MPI_Waitany(3, all, &idx, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED) break;
        seen_collective += idx == 0;
      }
      break;
    case C_TESTANY:
      for (;;) {
        rc = MPI_Testany(3, all, &idx, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || (flag && idx == MPI_UNDEFINED)) break;
        if (flag) seen_collective += idx == 0;
      }
      break;
    case C_WAITSOME:
    case C_TESTSOME:
      for (;;) {
        rc = mode == C_WAITSOME ? MPI_Waitsome(3, all, &out, indices, MPI_STATUSES_IGNORE)
                                : MPI_Testsome(3, all, &out, indices, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || out == MPI_UNDEFINED) break;
        for (int k = 0; k < out; ++k) seen_collective += indices[k] == 0;
      }
      break;
    case C_GET_STATUS:
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(req, MPI_STATUS_IGNORE);
      break;
    case C_FREE:
      rc = MPI_Request_free(req);
      check(*req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
      MPI_Barrier(MPI_COMM_WORLD);
      break;
  }
  check(rc == MPI_SUCCESS, "%s returned %d", completion_names[mode], rc);
  if (with_ring) {
    *req = all[0];
    check(seen_collective == 1, "%s reported the collective complete %d times", completion_names[mode],
          seen_collective);
    check(is_done(all[1], false) && is_done(all[2], false), "the program's own requests are not complete");
    ring_check(&g, tag);
  }
  if (mode == C_FREE) return;
  if (persistent) check(*req != MPI_REQUEST_NULL && is_done(*req, true), "the persistent request is not inactive and allocated after completion");
  else check(*req == MPI_REQUEST_NULL, "the completed request is not MPI_REQUEST_NULL");
}

/* What a non-blocking or persistent call keeps of its arguments after the start call
 * returns: copies of the count and displacement arrays and duplicates of derived types,
 * all overwritten or freed right after the start (mpi4py frees its arrays before MPI_Wait). */
typedef struct {
  int *arrays[4];
  MPI_Datatype types[2];
} Scratch;

static int *copy_ints(const int *a, int n) {
  if (!a) return NULL;
  int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  memcpy(c, a, (size_t)n * sizeof(int));
  return c;
}

static MPI_Datatype dup_derived(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return t;
  int ni, na, nt, combiner;
  MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return t; /* (a duplicate of MPI_INT would no longer be MPI_INT) */
  MPI_Datatype d;
  MPI_Type_dup(t, &d);
  return d;
}

static void scratch_args(Args *a, Scratch *x, int p) {
  x->arrays[0] = copy_ints(a->sc, p), x->arrays[1] = copy_ints(a->sd, p);
  x->arrays[2] = copy_ints(a->rc, p), x->arrays[3] = copy_ints(a->rd, p);
  a->sc = x->arrays[0], a->sd = x->arrays[1], a->rc = x->arrays[2], a->rd = x->arrays[3];
  x->types[0] = a->stype = dup_derived(a->stype);
  x->types[1] = a->rtype = dup_derived(a->rtype);
}

/* Overwrites and frees the arrays, frees the duplicated types. */
static void release_args(Scratch *x, const Args *orig, int p) {
  for (int k = 0; k < 4; ++k) {
    if (!x->arrays[k]) continue;
    for (int r = 0; r < p; ++r) x->arrays[k][r] = INT_MIN / 3 + r; /* absurd counts, should anyone read them */
    free(x->arrays[k]);
    x->arrays[k] = NULL;
  }
  if (x->types[0] != orig->stype) MPI_Type_free(&x->types[0]);
  if (x->types[1] != orig->rtype) MPI_Type_free(&x->types[1]);
  x->types[0] = orig->stype, x->types[1] = orig->rtype;
}

/* Right after the start call: reuse the stack and the heap, and release the call's arrays
 * and types where libcomm took the call (`now`). Where the call went to the MPI library,
 * they are released after it: Open MPI 4.1's own persistent collectives use a freed
 * datatype at MPI_Start, and this program tests libcomm, not them. */
static void scrub(Scratch *x, const Args *orig, int p, bool now) {
  if (now) release_args(x, orig, p);
  scribble_stack();
  churn_heap();
}

/* ---- The reference: the MPI library's own result ----------------------------------------------- */

/* Where the ranks describe one exchange differently (different types per rank, MPI_IN_PLACE
 * on some ranks only), Open MPI 4.1 itself may pick different algorithms on different ranks
 * and hang. Its result is then taken on bytes every rank describes alike: each rank packs
 * its outgoing blocks with MPI_Pack, PMPI_Alltoallv / PMPI_Allgatherv moves MPI_BYTEs, and
 * MPI_Unpack puts each block where this rank's receive description says. */
static int exchange_by_bytes(const Spec *s, const Layout *L, const Args *a, unsigned char *want, size_t rbytes) {
  const int p = L->p, me = L->me;
  const bool to_all = s->fn == ALLTOALL || s->fn == ALLTOALLV;
  const int nout = to_all ? p : 1;
  int *scnt = calloc((size_t)p, sizeof(int)), *sdsp = calloc((size_t)p, sizeof(int));
  int *rcnt = calloc((size_t)p, sizeof(int)), *rdsp = calloc((size_t)p, sizeof(int));
  int *bco = calloc((size_t)p, sizeof(int)), *bdo = calloc((size_t)p, sizeof(int));
  int *bci = calloc((size_t)p, sizeof(int)), *bdi = calloc((size_t)p, sizeof(int));
  for (int r = 0; r < p; ++r) {
    rcnt[r] = is_v(s->fn) ? L->rc[r] : L->rcount;
    rdsp[r] = is_v(s->fn) ? L->rd[r] : r * L->rcount;
  }
  /* What goes out: the send buffer, or in place the input in the receive buffer. */
  unsigned char *input = NULL;
  const unsigned char *src = a->sbuf;
  const Dt *sdt = L->sdt;
  if (L->in_place) {
    input = malloc(rbytes);
    memcpy(input, want, rbytes);
    src = input + GUARD;
    sdt = L->rdt;
    for (int b = 0; b < nout; ++b) scnt[b] = to_all ? rcnt[b] : rcnt[me], sdsp[b] = to_all ? rdsp[b] : rdsp[me];
  } else {
    for (int b = 0; b < nout; ++b) {
      scnt[b] = s->fn == ALLTOALLV ? L->sc[b] : L->scount;
      sdsp[b] = s->fn == ALLTOALLV ? L->sd[b] : b * L->scount;
    }
  }
  int out = 0, in = 0;
  for (int b = 0; b < nout; ++b) bdo[b] = out, out += bco[b] = scnt[b] * sdt->size;
  for (int r = 0; r < p; ++r) bdi[r] = in, in += bci[r] = rcnt[r] * L->rdt->size;
  unsigned char *packed_out = malloc((size_t)out + 1), *packed_in = malloc((size_t)in + 1);
  for (int b = 0; b < nout; ++b) {
    int at = bdo[b];
    MPI_Pack(src + (MPI_Aint)sdsp[b] * sdt->extent, scnt[b], sdt->type, packed_out, out + 1, &at, MPI_COMM_SELF);
  }
  const int rc = to_all ? PMPI_Alltoallv(packed_out, bco, bdo, MPI_BYTE, packed_in, bci, bdi, MPI_BYTE, a->comm)
                        : PMPI_Allgatherv(packed_out, out, MPI_BYTE, packed_in, bci, bdi, MPI_BYTE, a->comm);
  for (int r = 0; r < p && rc == MPI_SUCCESS; ++r) {
    int at = bdi[r];
    MPI_Unpack(packed_in, in + 1, &at, want + GUARD + (MPI_Aint)rdsp[r] * L->rdt->extent, rcnt[r], L->rdt->type,
               MPI_COMM_SELF);
  }
  free(scnt), free(sdsp), free(rcnt), free(rdsp), free(bco), free(bdo), free(bci), free(bdi);
  free(packed_out), free(packed_in), free(input);
  return rc;
}

/* The MPI library's blocking call on the case's input, into `want`. */
static int reference(const Spec *s, const Layout *L, const Args *a, unsigned char *want, size_t rbytes) {
  if (s->mix < 0 && s->in_place != IP_SOME) return invoke(s->fn, BLOCKING, true, a, NULL);
  if (!is_reduce(s->fn)) return exchange_by_bytes(s, L, a, want, rbytes);
  if (!L->in_place) return invoke(s->fn, BLOCKING, true, a, NULL);
  /* a reduction in place on some ranks: those send their input from a copy instead */
  unsigned char *input = malloc(rbytes);
  memcpy(input, want, rbytes);
  Args b = *a;
  b.sbuf = input + GUARD;
  const int rc = invoke(s->fn, BLOCKING, true, &b, NULL);
  free(input);
  return rc;
}

/* ---- Running one case ------------------------------------------------------------------------ */

static void run_spec(Spec *s) {
  if (s->form == PERSISTENT && !HAVE_PERSISTENT) return;
  if (s->form == BLOCKING) s->completion = C_NONE;
  else if (s->completion == C_NONE) s->completion = next_completion();
  begin_spec_case(s);
  if (n_cases < only_from || n_cases > only_to) return;
  Layout L;
  build_layout(s, &L);
  const size_t sbytes = L.sspan + 2 * GUARD, rbytes = L.rspan + 2 * GUARD;
  unsigned char *send = malloc(sbytes), *want = malloc(rbytes), *got = malloc(rbytes);
  fill_buffers(s, &L, send, sbytes, want, rbytes, 1);
  memcpy(got, want, rbytes);
  const Args ref = args_of(s, &L, send, want);
  int rc = reference(s, &L, &ref, want, rbytes);
  check(rc == MPI_SUCCESS, "the MPI library's own PMPI call failed (%d): the case is wrong", rc);
  Args mine = args_of(s, &L, send, got);
  if (!route_fn && (s->mix >= 0 || s->in_place == IP_SOME || (s->form != BLOCKING && s->in_place != IP_NONE))) {
    /* Without libcomm these calls are Open MPI 4.1's own, which lose step with the other
     * ranks (they, or the collectives after them, hang) where ranks describe the exchange
     * differently, and in place where a pair of MPI_Ialltoallv or MPIX_Alltoallv_init has
     * nothing to exchange: without libcomm, those cases fail unmade. */
    fail("libcomm_mpi is not loaded: the call would go to the MPI library directly");
  } else if (s->form == BLOCKING) {
    rc = invoke(s->fn, BLOCKING, false, &mine, NULL);
    check_route(s, last_route());
    check(rc == MPI_SUCCESS, "returned %d", rc);
    compare(s, &L, got, want, rbytes, "");
  } else {
    Scratch x;
    scratch_args(&mine, &x, L.p);
    MPI_Request req = MPI_REQUEST_NULL;
    rc = invoke(s->fn, s->form, false, &mine, &req);
    const char *route = last_route();
    check_route(s, route);
    check(rc == MPI_SUCCESS, "returned %d", rc);
    /* Two completions are for libcomm's requests only. A freed request is known to be
     * complete only where libcomm runs it (freeing completes it first): MPI's own may still
     * be running after the barrier. And Open MPI 4.1's MPI_Request_get_status does not
     * progress its own non-blocking collectives: polling it alone waits forever. */
    if ((s->completion == C_FREE || s->completion == C_GET_STATUS) && (!route_fn || strcmp(route, "pmpi") == 0)) {
      s->completion = C_WAIT;
      relabel_spec_case(s);
    }
    const bool libcomm_took = route_fn && route[0] != '\0' && strcmp(route, "pmpi") != 0;
    scrub(&x, &ref, L.p, libcomm_took);
    if (rc == MPI_SUCCESS && s->form == NONBLOCKING) {
      complete(s->completion, &req, false);
      compare(s, &L, got, want, rbytes, "");
    } else if (rc == MPI_SUCCESS) {
      /* Started twice: the second time with new input, read at that start. */
      for (int start = 0; start < 2; ++start) {
        if (start == 1) {
          fill_buffers(s, &L, send, sbytes, want, rbytes, 2);
          memcpy(got, want, rbytes);
          rc = reference(s, &L, &ref, want, rbytes);
          check(rc == MPI_SUCCESS, "the MPI library's own PMPI call failed (%d) at the second start", rc);
        }
        rc = MPI_Start(&req);
        check(rc == MPI_SUCCESS, "MPI_Start returned %d", rc);
        if (rc != MPI_SUCCESS) break;
        complete(start == 0 && s->completion == C_FREE ? C_WAIT : s->completion, &req, true);
        compare(s, &L, got, want, rbytes, start == 0 ? "first start: " : "second start: ");
      }
      if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
    }
    release_args(&x, &ref, L.p);
  }
  free(send), free(want), free(got);
  free_layout(&L);
}

static Spec spec(int fn, int form, const Dt *dt, int n, CommInfo *comm) {
  Spec s;
  memset(&s, 0, sizeof s);
  s.fn = fn, s.form = form, s.dt = dt, s.n = n, s.comm = comm, s.mix = -1;
  s.displs = is_v(fn) ? D_PACKED : D_NONE;
  s.op = (OpName){MPI_SUM, "MPI_SUM"};
  return s;
}

/* ---- Families of cases ----------------------------------------------------------------------- */

static bool quick = false; /* --quick: fewer counts and types (the sanitizer build) */

/* The policy the program was started with: LIBCOMM_<OP> from the environment. */
static char default_label[256];
static void policy_from_environment(void) {
  snprintf(default_label, sizeof default_label, "default");
  for (int f = 0; f < N_FAM; ++f) {
    const char *v = getenv(family_env[f]);
    forced[f] = v && *v && strcmp(v, "auto") != 0 ? v : NULL;
    forced_from_outside[f] = forced[f] != NULL;
    if (forced[f])
      snprintf(default_label + strlen(default_label), sizeof default_label - strlen(default_label), "%s%s=%s",
               strlen(default_label) == 7 ? " (" : ", ", family_env[f], forced[f]);
  }
  strcat(default_label, strlen(default_label) > 7 ? " from the environment)" : " (auto)");
  policy_label = default_label;
}

/* Names an algorithm of libcomm (not auto, not native) for every operation, the k-th of
 * each list (rotate = true), or goes back to the environment's (rotate = false). */
static char *rotation_saved[N_FAM];
static bool rotating = false;
static void rotate_algorithms(bool rotate, int k) {
  static char label[256];
  if (rotate && !rotating)
    for (int f = 0; f < N_FAM; ++f) rotation_saved[f] = saved_env(family_env[f]);
  if (!rotate) {
    if (rotating)
      for (int f = 0; f < N_FAM; ++f) restore_env(family_env[f], rotation_saved[f]);
    rotating = false;
    policy_from_environment();
    return;
  }
  rotating = true;
  label[0] = '\0';
  for (int f = 0; f < N_FAM; ++f) {
    int n = 0;
    while (family_algorithms[f][n]) ++n;
    const char *name = family_algorithms[f][2 + k % (n - 2)]; /* (after auto and native) */
    set_env(family_env[f], name);
    forced[f] = name;
    forced_from_outside[f] = false;
    snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s=%s", f ? "," : "", family_env[f], name);
  }
  policy_label = label;
}

/* Every datatype through every exchange (not reduction) in every form and count. With
 * `rotate`, a named algorithm of libcomm for every operation, another for each type: under
 * auto most calls of the sweep run native. */
static void sweep_exchanges(CommInfo *world, bool rotate) {
  static const int counts[] = {0, 1, 3, 7};
  int k = 0;
  for (int t = 0; t < n_dts; ++t) {
    if (quick && t % 4 != 0 && dts[t].base == NULL && t < n_predefined) continue;
    if (rotate) rotate_algorithms(true, t);
    for (int fn = ALLTOALL; fn <= ALLGATHERV; ++fn)
      for (int form = 0; form < N_FORM; ++form)
        for (int c = 0; c < 4; ++c, ++k) {
          if (quick && c != 3) continue;
          Spec s = spec(fn, form, &dts[t], counts[c], world);
          if (is_v(fn)) s.displs = D_PACKED + (c + t) % 4;
          s.in_place = (k / 4 + t) % 3 == 0 && !world->inter ? IP_ALL : IP_NONE;
          run_spec(&s);
        }
  }
}

/* Every datatype through both reductions with every operation MPI defines for it (with
 * `rotate`, as in sweep_exchanges). */
static void sweep_reductions(CommInfo *world, bool rotate) {
  static const int counts[] = {1, 7, 0, 3};
  int k = 0;
  for (int t = 0; t < n_dts; ++t) {
    OpName ops[16];
    const int nops = ops_for(&dts[t], ops);
    if (quick && t % 4 != 0 && !libcomm_reduces(&dts[t], MPI_SUM)) continue;
    if (rotate && nops > 0) rotate_algorithms(true, t);
    for (int o = 0; o < nops; ++o)
      for (int fn = REDUCE_SCATTER; fn <= REDUCE_SCATTER_BLOCK; ++fn)
        for (int form = 0; form < N_FORM; ++form) {
          /* Open MPI 4.1's own MPI_Ireduce_scatter(_block) rejects a zero-size type */
          if (dts[t].size == 0 && form != BLOCKING) continue;
          /* libcomm's own reductions at every count, the others at two */
          const int nc = libcomm_reduces(&dts[t], ops[o].op) ? 4 : 2;
          for (int c = 0; c < nc; ++c, ++k) {
            if (quick && c > 0) continue;
            Spec s = spec(fn, form, &dts[t], counts[c], world);
            s.op = ops[o];
            s.in_place = k % 2 ? IP_ALL : IP_NONE;
            run_spec(&s);
          }
        }
  }
}

/* Layouts on every communicator: the displacement patterns, MPI_IN_PLACE on all or some
 * ranks, derived and predefined types, small and larger counts. */
static void layouts(Comms *cs) {
  static const struct {
    const Dt **dt;
    int n;
  } kinds[] = {{&DT_INT, 3},    {&DT_VECTOR, 1},      {&DT_STRUCT, 7},  {&DT_RESIZED, 3}, {&DT_DOUBLE_INT, 1},
               {&DT_ZERO, 3},   {&DT_LDOUBLE, 7},     {&DT_BOOL, 1001}, {&DT_INDEXED, 5}, {&DT_INT, 0},
               {&DT_CONTIG3, 7}, {&DT_INT, 1001}};
  static const struct {
    const Dt **dt;
    const char *op;
  } reductions[] = {{&DT_INT, "MPI_SUM"},     {&DT_DOUBLE, "MPI_MAX"}, {&DT_FLOAT, "MPI_MIN"},
                    {&DT_DCOMPLEX, "MPI_SUM"}, {&DT_INT, "user op"},   {&DT_LONG, "MPI_SUM"},
                    {&DT_VECTOR, "user op"}};
  enum { NK = sizeof kinds / sizeof kinds[0], NR = sizeof reductions / sizeof reductions[0] };
  int k = 0;
  for (int c = 0; c < cs->n; ++c) {
    CommInfo *ci = &cs->c[c];
    for (int fn = 0; fn < N_FN; ++fn)
      for (int form = 0; form < N_FORM; ++form)
        for (int ip = IP_NONE; ip <= IP_ALL; ++ip) {
          if (ci->inter && ip != IP_NONE) continue; /* MPI_IN_PLACE is not defined on inter-communicators */
          if (is_reduce(fn)) {
            for (int r = 0; r < NR; ++r, ++k) {
              /* (Open MPI 4.1's own reductions on an inter-communicator of uneven groups fail
               * with MPI_ERR_TRUNCATE: the exchanges test the route there) */
              if (ci->inter) continue;
              Spec s = spec(fn, form, *reductions[r].dt, (int[]){3, 1, 7, 0, 5}[k % 5], ci);
              s.in_place = ip;
              s.op = strcmp(reductions[r].op, "user op") == 0   ? (OpName){op_user, "user op"}
                     : strcmp(reductions[r].op, "MPI_MAX") == 0 ? (OpName){MPI_MAX, "MPI_MAX"}
                     : strcmp(reductions[r].op, "MPI_MIN") == 0 ? (OpName){MPI_MIN, "MPI_MIN"}
                                                                : (OpName){MPI_SUM, "MPI_SUM"};
              run_spec(&s);
            }
            continue;
          }
          for (int d = is_v(fn) ? D_PACKED : D_NONE; d <= (is_v(fn) ? D_INTERLEAVED : D_NONE); ++d, ++k) {
            Spec s = spec(fn, form, *kinds[k % NK].dt, kinds[k % NK].n, ci);
            s.displs = d;
            s.in_place = ip;
            run_spec(&s);
          }
        }
  }
}

/* MPI_IN_PLACE on the even ranks only (MPI asks for it on all ranks; Open MPI accepts it on
 * some): those ranks stage their input, the others send from their send buffers. */
static void in_place_some(Comms *cs) {
  static const struct {
    const Dt **dt;
    int n;
  } exchanges[] = {{&DT_INT, 3}, {&DT_VECTOR, 1}, {&DT_DOUBLE_INT, 7}, {&DT_CONTIG3, 1}, {&DT_STRUCT, 3}, {&DT_LDOUBLE, 1}};
  static const struct {
    const Dt **dt;
    OpName op;
    int n;
  } reductions[] = {{&DT_INT, {0, "MPI_SUM"}, 3},   {&DT_DOUBLE, {0, "MPI_MAX"}, 1}, {&DT_FLOAT, {0, "MPI_MIN"}, 7},
                    {&DT_DCOMPLEX, {0, "MPI_SUM"}, 3}, {&DT_LONG, {0, "MPI_SUM"}, 1},  {&DT_INT, {0, "user op"}, 3}};
  int k = 0;
  for (int c = 0; c < cs->n; ++c) {
    CommInfo *ci = &cs->c[c];
    if (ci->inter) continue;
    for (int fn = 0; fn < N_FN; ++fn)
      for (int form = 0; form < N_FORM; ++form)
        for (int v = 0; v < (is_reduce(fn) ? 3 : 2); ++v, ++k) {
          Spec s;
          if (is_reduce(fn)) {
            const int r = (k + v) % 6;
            s = spec(fn, form, *reductions[r].dt, reductions[r].n, ci);
            s.op = reductions[r].op;
            s.op.op = strcmp(s.op.name, "MPI_MAX") == 0   ? MPI_MAX
                      : strcmp(s.op.name, "MPI_MIN") == 0 ? MPI_MIN
                      : strcmp(s.op.name, "user op") == 0 ? op_user
                                                          : MPI_SUM;
          } else {
            const int e = (k + v) % 6;
            s = spec(fn, form, *exchanges[e].dt, exchanges[e].n, ci);
            if (is_v(fn)) s.displs = D_PACKED + k % 4;
          }
          s.in_place = IP_SOME;
          run_spec(&s);
        }
  }
}

/* Ranks that describe the same bytes with different counts of different types. */
static void mixed_descriptions(Comms *cs) {
  int k = 0;
  for (int c = 0; c < cs->n; ++c) {
    CommInfo *ci = &cs->c[c];
    if (ci->inter) continue;
    for (int fn = ALLTOALL; fn <= ALLGATHERV; ++fn)
      for (int m = 0; m < N_MIX; ++m)
        for (int form = 0; form < N_FORM; ++form)
          for (int ip = IP_NONE; ip <= IP_ALL; ++ip, ++k) {
            Spec s = spec(fn, form, NULL, (int[]){1, 3, 0, 7}[k % 4], ci);
            s.mix = m;
            s.in_place = ip;
            if (is_v(fn)) s.displs = D_PACKED + k % 4;
            run_spec(&s);
          }
  }
}

/* The known hang: a zero-size type on one side and MPI_INT count 0 on the other, then the
 * reverse, then in place with each rank's own description (20 times, as it was found). */
static void zero_size_sequence(CommInfo *ci, int form) {
  const int p = ci->size;
  int *one = malloc((size_t)p * sizeof(int)), *zero = calloc((size_t)p, sizeof(int)), *d = calloc((size_t)p, sizeof(int));
  for (int r = 0; r < p; ++r) one[r] = 1;
  const MPI_Datatype z = DT_ZERO->type;
  for (int iteration = 0; iteration < 20; ++iteration) {
    begin_case("%s form=%s type=contiguous(0,MPI_INT) x 1 against MPI_INT x 0 (the three calls of the known hang, "
               "iteration %d) count=0 displs=packed in_place=odd/even alike op=- comm=%s completion=%s policy=%s",
               fn_names[ALLTOALLV][form], form_names[form], iteration + 1, ci->name,
               form == BLOCKING ? "none" : "MPI_Wait", policy_label);
    int sv = 0x12345678, v = 0x0badcafe;
    const int before = v;
    for (int call = 0; call < 3; ++call) {
      MPI_Request r = MPI_REQUEST_NULL;
      const bool odd = ci->rank % 2 == 1;
      Args a = {&sv, &v, 0, 0, one, d, zero, d, z, MPI_INT, MPI_SUM, ci->comm};
      if (call == 1) a.sc = zero, a.stype = MPI_INT, a.rc = one, a.rtype = z;
      if (call == 2) {
        a.sbuf = MPI_IN_PLACE, a.sc = a.sd = NULL, a.stype = MPI_DATATYPE_NULL;
        a.rc = odd ? zero : one, a.rtype = odd ? MPI_INT : z;
      }
      int rc = invoke(ALLTOALLV, form, false, &a, &r);
      check(rc == MPI_SUCCESS, "call %d returned %d", call + 1, rc);
      if (form == PERSISTENT && rc == MPI_SUCCESS) rc = MPI_Start(&r);
      if (form != BLOCKING && rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (form == PERSISTENT && r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      const char *route = last_route();
      check(route_fn && strcmp(route, "pmpi") != 0 && route[0] != '\0', "call %d ran '%s', expected libcomm", call + 1,
            route);
    }
    check(v == before && sv == 0x12345678, "zero bytes exchanged, yet the buffers changed");
  }
  free(one), free(zero), free(d);
}

/* Every completion call for every operation in both request forms. */
static void completions(Comms *cs) {
  static const char *const comm_names[] = {"MPI_COMM_WORLD", "split", "inter"};
  for (int c = 0; c < 3; ++c) {
    CommInfo *ci = comm_named(cs, comm_names[c]);
    if (!ci) continue;
    for (int fn = 0; fn < N_FN; ++fn)
      for (int form = NONBLOCKING; form <= PERSISTENT; ++form)
        for (int mode = C_WAIT; mode < N_COMPLETION; ++mode) {
          if (ci->inter && is_reduce(fn)) continue; /* (as in layouts()) */
          Spec s = spec(fn, form, is_reduce(fn) ? DT_DOUBLE : DT_INT, 7, ci);
          s.completion = mode;
          if (is_v(fn)) s.displs = D_GAPS;
          run_spec(&s);
        }
  }
}

/* Under the default policy the first 16 calls of a size class run native; repeated calls
 * reach the measured candidates, libcomm's own algorithms. */
static void repeated(Comms *cs, int times) {
  for (int c = 0; c < cs->n; ++c) {
    CommInfo *ci = &cs->c[c];
    if (ci->inter || strncmp(ci->name, "MPI_COMM_SELF", 13) == 0) continue;
    for (int fn = 0; fn < N_FN; ++fn)
      for (int k = 0; k < times; ++k) {
        Spec s = spec(fn, BLOCKING, is_reduce(fn) ? DT_INT : DT_INT, 3, ci);
        s.note = "(repeated)";
        run_spec(&s);
      }
  }
}

/* After the repetitions: every family ran a libcomm algorithm other than native on every
 * communicator of more than one rank (a program always given native would pass the rest). */
static void check_nonnative(Comms *cs) {
  for (int c = 0; c < cs->n; ++c) {
    CommInfo *ci = &cs->c[c];
    if (ci->inter || strncmp(ci->name, "MPI_COMM_SELF", 13) == 0) continue;
    for (int f = 0; f < N_FAM; ++f) {
      if (forced[f] && strcmp(forced[f], "auto") != 0) continue;
      begin_case("%s (all forms) comm=%s policy=%s: after repeated calls auto ran a libcomm algorithm besides native",
                 fn_names[f == FAM_REDUCE_SCATTER ? REDUCE_SCATTER : f == FAM_ALLGATHER ? ALLGATHER : f][0], ci->name,
                 policy_label);
      const int mine = ci->size > 1 && !ci->nonnative[f];
      check(!mine, "only native (the MPI library's collective) ran under auto on %d ranks: libcomm's "
                   "candidates never did", ci->size);
    }
  }
}

/* The cases run for each forced algorithm. */
static void forced_cases(int fam, Comms *cs) {
  static const struct {
    const Dt **dt;
    int n, displs, ip, mix;
  } exchanges[] = {{&DT_INT, 3, D_PACKED, IP_NONE, -1},     {&DT_VECTOR, 1, D_GAPS, IP_NONE, -1},
                   {&DT_DOUBLE, 7, D_REVERSED, IP_ALL, -1}, {NULL, 5, D_INTERLEAVED, IP_NONE, 1},
                   {&DT_INT, 0, D_PACKED, IP_NONE, -1},     {&DT_STRUCT, 3, D_GAPS, IP_SOME, -1},
                   {&DT_INT, 1001, D_REVERSED, IP_NONE, -1},  {&DT_INT, 16385, D_GAPS, IP_NONE, -1}};
  static const struct {
    const Dt **dt;
    const char *opname;
    int n, ip;
  } reductions[] = {{&DT_INT, "MPI_SUM", 3, IP_NONE},   {&DT_DOUBLE, "MPI_MAX", 7, IP_ALL},
                    {&DT_FLOAT, "MPI_MIN", 1, IP_SOME}, {&DT_DCOMPLEX, "MPI_SUM", 5, IP_NONE},
                    {&DT_INT, "MPI_SUM", 0, IP_NONE},   {&DT_INT, "MPI_MAX", 1001, IP_NONE},
                    {&DT_DOUBLE, "MPI_SUM", 16385, IP_NONE}};
  static const char *const comm_names[] = {"MPI_COMM_WORLD", "dup", "split"};
  for (int c = 0; c < 3; ++c) {
    CommInfo *ci = comm_named(cs, comm_names[c]);
    for (int fn = 0; fn < N_FN; ++fn) {
      if (fn_family[fn] != fam) continue;
      for (int form = 0; form < N_FORM; ++form) {
        if (is_reduce(fn)) {
          for (size_t v = 0; v < sizeof reductions / sizeof reductions[0]; ++v) {
            if (quick && v % 2) continue;
            Spec s = spec(fn, form, *reductions[v].dt, reductions[v].n, ci);
            s.in_place = reductions[v].ip;
            s.op = (OpName){strcmp(reductions[v].opname, "MPI_MAX") == 0   ? MPI_MAX
                            : strcmp(reductions[v].opname, "MPI_MIN") == 0 ? MPI_MIN
                                                                           : MPI_SUM,
                            reductions[v].opname};
            run_spec(&s);
          }
        } else {
          for (size_t v = 0; v < sizeof exchanges / sizeof exchanges[0]; ++v) {
            if (quick && v % 2) continue;
            Spec s = spec(fn, form, exchanges[v].dt ? *exchanges[v].dt : NULL, exchanges[v].n, ci);
            s.mix = exchanges[v].mix;
            s.in_place = exchanges[v].ip;
            if (is_v(fn)) s.displs = exchanges[v].displs;
            run_spec(&s);
          }
        }
      }
    }
  }
}

/* ---- Checks beyond the matrix: request lifetimes, state, errors ------------------------------ */

/* A plain alltoall of ints on `c`, `n` per block, values naming source, destination and index. */
static void ints_for(int *send, int p, int n, int salt) {
  for (int d = 0; d < p; ++d)
    for (int k = 0; k < n; ++k) send[d * n + k] = salt * 100000 + world_rank * 1000 + d * 10 + k % 10;
}

static void check_ints(const int *got, const int *want, int count, const char *what) {
  for (int k = 0; k < count; ++k)
    if (got[k] != want[k]) {
      fail("%s: element %d is %d, PMPI gives %d", what, k, got[k], want[k]);
      return;
    }
}

static void expect_libcomm_route(const char *what) {
  const char *r = last_route();
  check(route_fn && r[0] != '\0' && strcmp(r, "pmpi") != 0, "%s: ran '%s', expected libcomm", what, r);
}

/* libcomm's state for MPI_COMM_WORLD is made in MPI_Init, so even a first collective that
 * is non-blocking runs in libcomm there (run before any other collective). */
static void first_world_collective(CommInfo *world) {
  Spec s = spec(ALLTOALL, NONBLOCKING, DT_INT, 1, world);
  s.completion = C_WAIT;
  s.note = "(the first collective on MPI_COMM_WORLD)";
  run_spec(&s);
}

/* On any other communicator a first non-blocking collective runs in MPI (making libcomm's
 * state is a blocking MPI_Comm_dup); after a blocking one, libcomm takes them all. */
static void fresh_communicator(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const int p = world_size;
  int *send = malloc(sizeof(int) * 2 * (size_t)p), *got = malloc(sizeof(int) * 2 * (size_t)p),
      *want = malloc(sizeof(int) * 2 * (size_t)p);
  ints_for(send, p, 2, 1);
  static const char *const steps[] = {"first, non-blocking", "blocking", "non-blocking after a blocking one"};
  for (int k = 0; k < 3; ++k) {
    begin_case("%s form=%s type=MPI_INT count=2 comm=a fresh dup of MPI_COMM_WORLD completion=MPI_Wait policy=%s "
               "(fresh communicator: %s)",
               k == 1 ? "MPI_Alltoall" : "MPI_Ialltoall", k == 1 ? "blocking" : "non-blocking", policy_label, steps[k]);
    memset(got, 0xA5, sizeof(int) * 2 * (size_t)p);
    MPI_Request r = MPI_REQUEST_NULL;
    if (k == 1) MPI_Alltoall(send, 2, MPI_INT, got, 2, MPI_INT, c);
    else MPI_Ialltoall(send, 2, MPI_INT, got, 2, MPI_INT, c, &r);
    if (k == 0) check(strcmp(last_route(), "pmpi") == 0, "ran '%s', expected pmpi (no libcomm state yet)", last_route());
    else expect_libcomm_route("fresh communicator");
    if (k != 1) MPI_Wait(&r, MPI_STATUS_IGNORE);
    PMPI_Alltoall(send, 2, MPI_INT, want, 2, MPI_INT, c);
    check_ints(got, want, 2 * p, "fresh communicator");
  }
  free(send), free(got), free(want);
  MPI_Comm_free(&c);
}

/* Three collectives in flight (two on one communicator, one on another) beside the program's
 * own ring, completed in orders that differ between ranks: every completion call must
 * progress all of libcomm's collectives, or the ranks wait on each other forever. */
static void overlap(void) {
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  char *saved_a = saved_env("LIBCOMM_ALLTOALL"), *saved_g = saved_env("LIBCOMM_ALLGATHER");
  set_env("LIBCOMM_ALLTOALL", "bruck");
  set_env("LIBCOMM_ALLGATHER", "ring");
  const int p = world_size, n = 3;
  const size_t np = (size_t)p;
  int *s1 = malloc(sizeof(int) * n * np), *s2 = malloc(sizeof(int) * n * np), *r1 = malloc(sizeof(int) * n * np),
      *r2 = malloc(sizeof(int) * n * np), *rg = malloc(sizeof(int) * 2 * np), *w = malloc(sizeof(int) * n * np);
  int g[2] = {world_rank * 7 + 1, world_rank * 7 + 2};
  ints_for(s1, p, n, 1);
  ints_for(s2, p, n, 2);
  MPI_Alltoall(s1, n, MPI_INT, r1, n, MPI_INT, a); /* libcomm's state for both */
  MPI_Allgather(g, 2, MPI_INT, rg, 2, MPI_INT, b);
  for (int round = 0; round < 3; ++round) {
    begin_case("MPI_Ialltoall x 2 + MPI_Iallgather form=non-blocking type=MPI_INT count=3 comm=two dups of "
               "MPI_COMM_WORLD completion=%s policy=LIBCOMM_ALLTOALL=bruck LIBCOMM_ALLGATHER=ring (three in flight "
               "beside a point-to-point ring, round %d)",
               (world_rank + round) % 3 == 0   ? "MPI_Wait newest first, then MPI_Waitall"
               : (world_rank + round) % 3 == 1 ? "MPI_Waitany"
                                               : "MPI_Waitall of the ring, then MPI_Testall",
               round);
    memset(r1, 0xA5, sizeof(int) * n * np), memset(r2, 0xA5, sizeof(int) * n * np), memset(rg, 0xA5, sizeof(int) * 2 * np);
    MPI_Request q[5];
    MPI_Ialltoall(s1, n, MPI_INT, r1, n, MPI_INT, a, &q[0]);
    expect_libcomm_route("first MPI_Ialltoall");
    MPI_Ialltoall(s2, n, MPI_INT, r2, n, MPI_INT, a, &q[1]);
    expect_libcomm_route("second MPI_Ialltoall on the same communicator");
    MPI_Iallgather(g, 2, MPI_INT, rg, 2, MPI_INT, b, &q[2]);
    expect_libcomm_route("MPI_Iallgather on another communicator");
    int token_in = -1;
    const int token_out = world_rank * 10 + round;
    MPI_Irecv(&token_in, 1, MPI_INT, (world_rank + p - 1) % p, 5, MPI_COMM_WORLD, &q[3]);
    MPI_Isend(&token_out, 1, MPI_INT, (world_rank + 1) % p, 5, MPI_COMM_WORLD, &q[4]);
    if ((world_rank + round) % 3 == 0) {
      MPI_Wait(&q[2], MPI_STATUS_IGNORE);
      MPI_Wait(&q[1], MPI_STATUS_IGNORE);
      MPI_Waitall(5, q, MPI_STATUSES_IGNORE);
    } else if ((world_rank + round) % 3 == 1) {
      for (int k = 0; k < 5; ++k) {
        int index = MPI_UNDEFINED;
        MPI_Waitany(5, q, &index, MPI_STATUS_IGNORE);
        check(index != MPI_UNDEFINED, "MPI_Waitany returned no request while %d were pending", 5 - k);
      }
    } else {
      MPI_Waitall(2, q + 3, MPI_STATUSES_IGNORE);
      int done = 0;
      while (!done) MPI_Testall(3, q, &done, MPI_STATUSES_IGNORE);
    }
    for (int k = 0; k < 5; ++k) check(q[k] == MPI_REQUEST_NULL, "request %d is not MPI_REQUEST_NULL", k);
    check(token_in == ((world_rank + p - 1) % p) * 10 + round, "the point-to-point ring got %d", token_in);
    PMPI_Alltoall(s1, n, MPI_INT, w, n, MPI_INT, a);
    check_ints(r1, w, n * p, "first alltoall");
    PMPI_Alltoall(s2, n, MPI_INT, w, n, MPI_INT, a);
    check_ints(r2, w, n * p, "second alltoall");
    PMPI_Allgather(g, 2, MPI_INT, w, 2, MPI_INT, b);
    check_ints(rg, w, 2 * p, "allgather");
  }
  restore_env("LIBCOMM_ALLTOALL", saved_a);
  restore_env("LIBCOMM_ALLGATHER", saved_g);
  free(s1), free(s2), free(r1), free(r2), free(rg), free(w);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

static int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

/* One persistent request started again and again with new input (MPI_IN_PLACE: read at
 * every start), a start while it runs (an error), and two started together (MPI_Startall). */
static void persistent_requests(void) {
#if HAVE_PERSISTENT
  const int p = world_size;
  const size_t np = (size_t)p;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  double *got = malloc(sizeof(double) * 2 * np), *want = malloc(sizeof(double) * 2 * np);
  MPI_Request r = MPI_REQUEST_NULL;
  MPIX_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, 2, MPI_DOUBLE, c, MPI_INFO_NULL, &r);
  /* Starting a running request is an error libcomm reports; MPI's own requests may do
   * anything (Open MPI's lose step with the other ranks). */
  const bool libcomm_request = route_fn && strcmp(last_route(), "pmpi") != 0;
  for (int round = 0; round < 4; ++round) {
    begin_case("MPIX_Alltoall_init form=persistent type=MPI_DOUBLE count=2 in_place=all ranks comm=a dup of "
               "MPI_COMM_WORLD completion=MPI_Wait policy=%s (one request, start %d with new input%s)",
               policy_label, round + 1, round == 1 && p > 1 ? ", started again while running" : "");
    if (round == 0) expect_libcomm_route("persistent in-place alltoall");
    for (size_t k = 0; k < 2 * np; ++k) got[k] = want[k] = (double)(world_rank * 100 + (int)k + 1000 * round);
    check(MPI_Start(&r) == MPI_SUCCESS, "MPI_Start failed");
    if (round == 1 && p > 1 && libcomm_request) {
      const int rc = MPI_Start(&r);
      check(error_class(rc) == MPI_ERR_REQUEST, "MPI_Start of a running request gave error class %d, want "
                                                 "MPI_ERR_REQUEST",
            error_class(rc));
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(r != MPI_REQUEST_NULL, "the persistent request is gone after MPI_Wait");
    PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, 2, MPI_DOUBLE, c);
    check(memcmp(got, want, sizeof(double) * 2 * np) == 0, "differs from PMPI_Alltoall");
  }
  MPI_Request_free(&r);
  int *counts = malloc(sizeof(int) * np), *displs = malloc(sizeof(int) * np);
  int total = 0;
  for (int k = 0; k < p; ++k) counts[k] = k % 2 + 1, displs[k] = total, total += counts[k];
  int mine[2] = {0, 0};
  int *gathered = malloc(sizeof(int) * (size_t)total), *gwant = malloc(sizeof(int) * (size_t)total);
  float *rs_in = malloc(sizeof(float) * 3 * np), rs_out[3], rs_want[3];
  MPI_Request two[2];
  MPIX_Allgatherv_init(mine, counts[world_rank], MPI_INT, gathered, counts, displs, MPI_INT, c, MPI_INFO_NULL, &two[0]);
  MPIX_Reduce_scatter_block_init(rs_in, rs_out, 3, MPI_FLOAT, MPI_SUM, c, MPI_INFO_NULL, &two[1]);
  for (int round = 0; round < 3; ++round) {
    begin_case("MPIX_Allgatherv_init + MPIX_Reduce_scatter_block_init form=persistent type=MPI_INT, MPI_FLOAT "
               "comm=a dup of MPI_COMM_WORLD completion=MPI_Startall, MPI_Waitall policy=%s (two requests, start %d)",
               policy_label, round + 1);
    mine[0] = world_rank * 10 + round, mine[1] = -mine[0];
    for (size_t k = 0; k < 3 * np; ++k) rs_in[k] = (float)((world_rank + round) * (int)(k % 5));
    check(MPI_Startall(2, two) == MPI_SUCCESS, "MPI_Startall failed");
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    PMPI_Allgatherv(mine, counts[world_rank], MPI_INT, gwant, counts, displs, MPI_INT, c);
    check_ints(gathered, gwant, total, "allgatherv");
    PMPI_Reduce_scatter_block(rs_in, rs_want, 3, MPI_FLOAT, MPI_SUM, c);
    check(memcmp(rs_out, rs_want, sizeof rs_out) == 0, "reduce_scatter_block differs from PMPI");
  }
  MPI_Request_free(&two[0]);
  MPI_Request_free(&two[1]);
  free(got), free(want), free(counts), free(displs), free(gathered), free(gwant), free(rs_in);
  MPI_Comm_free(&c);
#endif
}

/* The default on one node (LIBCOMM_NODES=shared: every rank shares this machine): auto's
 * first calls of a size class run native (through libcomm), then the candidates are
 * measured, then every rank runs the same winner; every call delivers MPI's bytes. */
static void one_node(void) {
  char *saved_nodes = saved_env("LIBCOMM_NODES"), *saved_algo = saved_env("LIBCOMM_ALLTOALL");
  set_env("LIBCOMM_ALLTOALL", NULL);
  setenv("LIBCOMM_NODES", "shared", 1); /* read when libcomm's state for a communicator is made */
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const int p = world_size;
  int *send = malloc(sizeof(int) * 2 * (size_t)p), *got = malloc(sizeof(int) * 2 * (size_t)p),
      *want = malloc(sizeof(int) * 2 * (size_t)p);
  ints_for(send, p, 2, 3);
  PMPI_Alltoall(send, 2, MPI_INT, want, 2, MPI_INT, c);
  char first[64] = "", last[64] = "";
  for (int call = 0; call < 80; ++call) {
    begin_case("MPI_Alltoall form=blocking type=MPI_INT count=2 comm=a dup of MPI_COMM_WORLD (LIBCOMM_NODES=shared) "
               "completion=none policy=auto, one node (call %d of 80)", call + 1);
    memset(got, 0xA5, sizeof(int) * 2 * (size_t)p);
    MPI_Alltoall(send, 2, MPI_INT, got, 2, MPI_INT, c);
    expect_libcomm_route("one node, auto");
    check_ints(got, want, 2 * p, "one node, auto");
    snprintf(call == 0 ? first : last, 64, "%s", last_route());
  }
  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=2 comm=a dup of MPI_COMM_WORLD (LIBCOMM_NODES=shared) "
             "completion=none policy=auto, one node: native first, then one winner on every rank");
  check(strcmp(first, "native") == 0, "the first call ran '%s', expected native", first);
  char *all = malloc(64 * (size_t)p);
  PMPI_Allgather(last, 64, MPI_CHAR, all, 64, MPI_CHAR, c);
  for (int r = 0; r < p; ++r)
    check(strcmp(all + 64 * r, last) == 0, "rank %d settled on '%s', this rank on '%s'", r, all + 64 * r, last);
  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=2 comm=a dup of MPI_COMM_WORLD (LIBCOMM_NODES=shared) "
             "completion=none policy=LIBCOMM_ALLTOALL=ring, one node");
  set_env("LIBCOMM_ALLTOALL", "ring");
  memset(got, 0xA5, sizeof(int) * 2 * (size_t)p);
  MPI_Alltoall(send, 2, MPI_INT, got, 2, MPI_INT, c);
  check(strcmp(last_route(), "ring") == 0, "ran '%s', expected ring", last_route());
  check_ints(got, want, 2 * p, "one node, ring");
  restore_env("LIBCOMM_ALLTOALL", saved_algo);
  MPI_Comm_free(&c);
  if (saved_nodes) setenv("LIBCOMM_NODES", saved_nodes, 1);
  else unsetenv("LIBCOMM_NODES");
  free(saved_nodes), free(send), free(got), free(want), free(all);
}

/* Errors: MPI's own error class for arguments MPI rejects, MPI_ERR_ARG for disagreeing
 * ranks (with LIBCOMM_CHECK_ARGS=1) and for an unknown algorithm name; the environment
 * read once; communicators freed and made again. */
static void errors(void) {
  const int p = world_size;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, (int[1]){0}, 0, MPI_INT, comm); /* libcomm's state */
  int *a = calloc(4 * (size_t)p, sizeof(int)), *b = calloc(4 * (size_t)p, sizeof(int));
  char *saved_algo = saved_env("LIBCOMM_ALLTOALL");
  set_env("LIBCOMM_ALLTOALL", NULL);

  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=-1 comm=a dup of MPI_COMM_WORLD (MPI_ERRORS_RETURN) "
             "policy=%s: a negative count gives MPI's own error class", policy_label);
  const int mine = MPI_Alltoall(a, -1, MPI_INT, b, -1, MPI_INT, comm);
  const int theirs = PMPI_Alltoall(a, -1, MPI_INT, b, -1, MPI_INT, comm);
  check(mine != MPI_SUCCESS && error_class(mine) == error_class(theirs), "error class %d, MPI gives %d",
        error_class(mine), error_class(theirs));
  begin_case("MPI_Ialltoall form=non-blocking type=MPI_INT count=-1 comm=a dup of MPI_COMM_WORLD (MPI_ERRORS_RETURN) "
             "policy=%s: a negative count gives MPI's own error class", policy_label);
  MPI_Request r = MPI_REQUEST_NULL;
  const int nb = MPI_Ialltoall(a, -1, MPI_INT, b, -1, MPI_INT, comm, &r);
  check(nb != MPI_SUCCESS && error_class(nb) == error_class(theirs), "error class %d, MPI gives %d",
        error_class(nb), error_class(theirs));
  if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);

  if (p > 1) {
    begin_case("MPI_Alltoall form=blocking type=MPI_INT count=2 on rank 0, 1 elsewhere comm=a dup of MPI_COMM_WORLD "
               "policy=LIBCOMM_CHECK_ARGS=1: ranks that disagree get MPI_ERR_ARG, not a hang");
    set_env("LIBCOMM_CHECK_ARGS", "1");
    const int count = world_rank == 0 ? 2 : 1;
    const int rc = MPI_Alltoall(a, count, MPI_INT, b, count, MPI_INT, comm);
    check(error_class(rc) == MPI_ERR_ARG, "error class %d, want MPI_ERR_ARG", error_class(rc));
    set_env("LIBCOMM_CHECK_ARGS", NULL);
  }

  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=3 comm=a dup of MPI_COMM_WORLD policy=LIBCOMM_ALLTOALL "
             "changed without libcomm_mpi_reload_environment: not read again");
  setenv("LIBCOMM_ALLTOALL", "linear", 1);
  MPI_Alltoall(a, 3, MPI_INT, b, 3, MPI_INT, comm);
  check(strcmp(last_route(), "linear") != 0, "the change took effect without the reload (ran '%s')", last_route());
  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=3 comm=a dup of MPI_COMM_WORLD policy=LIBCOMM_ALLTOALL="
             "linear after libcomm_mpi_reload_environment");
  reload_environment();
  MPI_Alltoall(a, 3, MPI_INT, b, 3, MPI_INT, comm);
  check(strcmp(last_route(), "linear") == 0, "ran '%s'", last_route());

  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=1 comm=a dup of MPI_COMM_WORLD (MPI_ERRORS_RETURN) "
             "policy=LIBCOMM_ALLTOALL=no_such_algorithm: MPI_ERR_ARG on every rank");
  set_env("LIBCOMM_ALLTOALL", "no_such_algorithm");
  const int rc = MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm);
  check(error_class(rc) == MPI_ERR_ARG, "error class %d, want MPI_ERR_ARG", error_class(rc));
  begin_case("MPI_Alltoall form=blocking type=MPI_INT count=1 comm=a dup of MPI_COMM_WORLD policy=%s: a good call "
             "after the errors succeeds", policy_label);
  set_env("LIBCOMM_ALLTOALL", NULL);
  check(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm) == MPI_SUCCESS, "it failed");
  restore_env("LIBCOMM_ALLTOALL", saved_algo);
  free(a), free(b);
  MPI_Comm_free(&comm);

  /* Communicators freed and made again (MPI may hand out the same handle): no stale state. */
  for (int round = 0; round < 3; ++round) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, round == 1 ? world_rank % 2 : 0, p - world_rank, &c);
    CommInfo ci;
    describe_comm(&ci, c, round == 1 ? "remade split by parity" : "remade split", true);
    for (int fn = 0; fn < N_FN; ++fn) {
      Spec s = spec(fn, round == 2 ? NONBLOCKING : BLOCKING, DT_INT, 3, &ci);
      s.note = "(communicator freed and made again)";
      if (round == 2) { /* a first non-blocking call goes to MPI: make the state first */
        if (fn == 0) adopt(c, NULL);
        s.completion = C_WAIT;
      }
      run_spec(&s);
    }
    MPI_Comm_free(&c);
  }
}

/* --large: one MPI_Alltoall whose receive buffer holds more than 2^31 bytes on every rank
 * (at one rank, one block of that size), compared with PMPI chunk by chunk. */
static void large_exchange(void) {
  const size_t unit = 4096, total_min = ((size_t)1 << 31) + ((size_t)1 << 20);
  const int p = world_size;
  const int count = (int)((total_min + unit * (size_t)p - 1) / (unit * (size_t)p));
  const size_t bytes = (size_t)count * unit * (size_t)p, chunk = (size_t)1 << 20;
  MPI_Datatype block;
  MPI_Type_contiguous((int)unit, MPI_BYTE, &block);
  MPI_Type_commit(&block);
  unsigned char *send = malloc(bytes), *recv = malloc(bytes);
  const size_t nchunks = (bytes + chunk - 1) / chunk;
  uint64_t *sums = malloc(nchunks * sizeof(uint64_t));
  if (!send || !recv || !sums) {
    begin_case("MPI_Alltoall form=blocking type=contiguous(4096,MPI_BYTE) count=%d (--large)", count);
    fail("cannot allocate 2 x %zu bytes", bytes);
    free(send), free(recv), free(sums);
    return;
  }
  for (size_t k = 0; k < bytes; ++k) send[k] = pattern_byte(k, 9);
  memset(recv, kFill, bytes);
  PMPI_Alltoall(send, count, block, recv, count, block, MPI_COMM_WORLD);
  for (size_t c = 0; c < nchunks; ++c) { /* FNV-1a of each MiB */
    uint64_t h = 1469598103934665603ull;
    for (size_t k = c * chunk; k < (c + 1) * chunk && k < bytes; ++k) h = (h ^ recv[k]) * 1099511628211ull;
    sums[c] = h;
  }
  char *saved = saved_env("LIBCOMM_ALLTOALL");
  for (int form = BLOCKING; form <= NONBLOCKING; ++form) {
    set_env("LIBCOMM_ALLTOALL", "linear");
    forced[FAM_ALLTOALL] = "linear", forced_from_outside[FAM_ALLTOALL] = false;
    begin_case("%s form=%s type=contiguous(4096,MPI_BYTE) count=%d (%zu bytes received per rank) comm=MPI_COMM_WORLD "
               "completion=%s policy=LIBCOMM_ALLTOALL=linear (--large)",
               fn_names[ALLTOALL][form], form_names[form], count, bytes, form == BLOCKING ? "none" : "MPI_Wait");
    memset(recv, kFill, bytes);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = form == BLOCKING ? MPI_Alltoall(send, count, block, recv, count, block, MPI_COMM_WORLD)
                                    : MPI_Ialltoall(send, count, block, recv, count, block, MPI_COMM_WORLD, &r);
    check(rc == MPI_SUCCESS, "returned %d", rc);
    const char *route = last_route();
    check(strcmp(route, "linear") == 0, "ran '%s', expected linear", route);
    if (form == NONBLOCKING && rc == MPI_SUCCESS) MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (size_t c = 0; c < nchunks; ++c) {
      uint64_t h = 1469598103934665603ull;
      for (size_t k = c * chunk; k < (c + 1) * chunk && k < bytes; ++k) h = (h ^ recv[k]) * 1099511628211ull;
      if (h != sums[c]) {
        fail("MiB %zu of the receive buffer differs from PMPI_Alltoall's", c);
        break;
      }
    }
  }
  restore_env("LIBCOMM_ALLTOALL", saved);
  policy_from_environment();
  free(send), free(recv), free(sums);
  MPI_Type_free(&block);
}

/* ---- Main ------------------------------------------------------------------------------------- */

static void usage(FILE *out) {
  fprintf(out,
          "Usage: conformance [OPTIONS]   (under mpiexec, with libcomm_mpi.so linked or in LD_PRELOAD)\n"
          "Compares every collective libcomm_mpi intercepts, in every form, with the MPI library's own\n"
          "(PMPI_*) byte for byte, and checks which algorithm ran. Prints one line per failure and\n"
          "'conformance: PASS (N cases)' or 'conformance: FAIL (k of N cases failed)'; exit 0 only\n"
          "when every case passed on every rank.\n"
          "\n"
          "Options:\n"
          "  --fallbacks FILE    docs/fallbacks.md: a forced algorithm must run itself or the fallback\n"
          "                      the file gives for the communicator's size and the call's form\n"
          "                      (without it, any libcomm algorithm but native counts as a fallback,\n"
          "                      and native too for a non-blocking call)\n"
          "  --large             also one MPI_Alltoall of more than 2^31 bytes per rank (~4.3 GiB per rank)\n"
          "  --quick             fewer types and counts (for the sanitizer build)\n"
          "  --max-lines N       failure lines printed per rank (default 200; every failure is counted)\n"
          "  --case-timeout S    a case that takes longer is a hang: name it and stop (default 60)\n"
          "  --trace             print every case as it starts (rank by rank)\n"
          "  --cases FROM-TO     run only these cases of the matrix (numbers as --trace prints them),\n"
          "                      to reproduce one; the checks outside the matrix still run\n"
          "  --list              print the algorithm names it forces, per operation, and exit\n"
          "  --help              this text\n"
          "\n"
          "The environment the program starts with is its default policy: LIBCOMM_ALLTOALL=native there\n"
          "(no libcomm algorithm runs) fails, and so does a run without libcomm_mpi.\n");
}

int main(int argc, char **argv) {
  const char *fallbacks_path = NULL;
  bool large = false;
  for (int k = 1; k < argc; ++k) {
    if (strcmp(argv[k], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[k], "--list") == 0) {
      for (int f = 0; f < N_FAM; ++f) {
        printf("%s:", family_op[f]);
        for (const char *const *a = family_algorithms[f]; *a; ++a) printf(" %s", *a);
        printf("\n");
      }
      return 0;
    } else if (strcmp(argv[k], "--fallbacks") == 0 && k + 1 < argc) {
      fallbacks_path = argv[++k];
    } else if (strcmp(argv[k], "--large") == 0) {
      large = true;
    } else if (strcmp(argv[k], "--cases") == 0 && k + 1 < argc) {
      if (sscanf(argv[++k], "%ld-%ld", &only_from, &only_to) != 2) {
        fprintf(stderr, "conformance: error: --cases takes FROM-TO\n");
        return 2;
      }
    } else if (strcmp(argv[k], "--trace") == 0) {
      trace = true;
    } else if (strcmp(argv[k], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[k], "--max-lines") == 0 && k + 1 < argc) {
      max_lines = atol(argv[++k]);
    } else if (strcmp(argv[k], "--case-timeout") == 0 && k + 1 < argc) {
      case_timeout = (unsigned)atoi(argv[++k]);
    } else {
      fprintf(stderr, "conformance: error: unknown option '%s' (see --help)\n", argv[k]);
      return 2;
    }
  }
  /* Every rank a node of its own unless the environment says otherwise, as in the table of
   * docs/fallbacks.md; read when MPI_Init makes libcomm's state for MPI_COMM_WORLD. */
  setenv("LIBCOMM_NODES", "flat", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  /* (POSIX's way to turn dlsym's pointer into a function pointer) */
  *(void **)&route_fn = dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route");
  *(void **)&reload_fn = dlsym(RTLD_DEFAULT, "libcomm_mpi_reload_environment");
  signal(SIGALRM, watchdog);
  if (large && case_timeout < 1800) case_timeout = 1800;
  MPI_Op_create(user_commutative, 1, &op_user);
  MPI_Op_create(user_ordered, 0, &op_user_ordered);
  init_types();
  const double start = MPI_Wtime();

  /* The default policy: the environment as given. */
  policy_from_environment();

  begin_case("setup: libcomm_mpi is loaded (libcomm_mpi_last_route and libcomm_mpi_reload_environment are exported)");
  check(route_fn && reload_fn, "libcomm_mpi is not loaded: link the program with it or LD_PRELOAD it");
  if (fallbacks_path) {
    begin_case("setup: the fallback table %s can be read", fallbacks_path);
    have_fallbacks = read_fallbacks(fallbacks_path);
    check(have_fallbacks, "cannot read a table from %s", fallbacks_path);
    check(n_nonblocking_native > 0, "%s has no rule for non-blocking calls (\"One rule depends on the form of the call\")",
          fallbacks_path);
  }
  CommInfo world;
  describe_comm(&world, MPI_COMM_WORLD, "MPI_COMM_WORLD", false);
  first_world_collective(&world);

  Comms cs;
  make_comms(&cs, false);
  sweep_exchanges(&cs.c[COMM_WORLD], false);
  sweep_reductions(&cs.c[COMM_WORLD], false);
  sweep_exchanges(&cs.c[COMM_WORLD], true);
  sweep_reductions(&cs.c[COMM_WORLD], true);
  rotate_algorithms(false, 0);
  layouts(&cs);
  in_place_some(&cs);
  mixed_descriptions(&cs);
  /* (blocking only: Open MPI 4.1's own MPI_Ialltoallv hangs on the second call, a receive
   * of one zero-size element against a send of no MPI_INT) */
  zero_size_sequence(&cs.c[COMM_WORLD], BLOCKING);
  zero_size_sequence(comm_named(&cs, "split"), BLOCKING);
  completions(&cs);
  repeated(&cs, quick ? 20 : 40);
  check_nonnative(&cs);

  /* LIBCOMM_ONLINE_AFTER=0: auto measures from the first call (new communicators, whose
   * size classes have seen no call yet). */
  {
    char *saved_after = saved_env("LIBCOMM_ONLINE_AFTER"), *saved[N_FAM];
    for (int f = 0; f < N_FAM; ++f) saved[f] = saved_env(family_env[f]), setenv(family_env[f], "auto", 1);
    set_env("LIBCOMM_ONLINE_AFTER", "0");
    for (int f = 0; f < N_FAM; ++f) forced[f] = NULL, forced_from_outside[f] = false;
    policy_label = "LIBCOMM_ONLINE_AFTER=0";
    Comms fresh;
    make_comms(&fresh, true);
    layouts(&fresh);
    repeated(&fresh, 20); /* (native is measured first: 1 + 12 calls) */
    check_nonnative(&fresh);
    free_comms(&fresh);
    for (int f = 0; f < N_FAM; ++f) restore_env(family_env[f], saved[f]);
    restore_env("LIBCOMM_ONLINE_AFTER", saved_after);
    policy_from_environment();
  }

  /* Every algorithm by name, as a user of the drop-in selects it. */
  static char forced_label[128];
  for (int f = 0; f < N_FAM; ++f) {
    char *saved = saved_env(family_env[f]);
    for (const char *const *a = family_algorithms[f]; *a; ++a) {
      set_env(family_env[f], *a);
      forced[f] = strcmp(*a, "auto") == 0 ? NULL : *a;
      forced_from_outside[f] = false;
      snprintf(forced_label, sizeof forced_label, "%s=%s", family_env[f], *a);
      policy_label = forced_label;
      forced_cases(f, &cs);
    }
    restore_env(family_env[f], saved);
  }
  policy_from_environment();

  overlap();
  fresh_communicator();
  persistent_requests();
  one_node();
  errors();
  if (large) large_exchange();
  free_comms(&cs);
  alarm(0);

  /* The verdict: a case failed if it failed on any rank. */
  long most = 0, least = 0;
  PMPI_Allreduce(&n_cases, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  PMPI_Allreduce(&n_cases, &least, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  unsigned char *any = world_rank == 0 ? calloc((size_t)n_cases + 1, 1) : NULL;
  long failed = 0;
  if (most == least) {
    PMPI_Reduce(failed_bits, any, (int)n_cases, MPI_UNSIGNED_CHAR, MPI_BOR, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
      for (long k = 0; k < n_cases; ++k) failed += any[k] != 0;
  } else if (world_rank == 0) {
    printf("conformance: FAIL: the ranks ran different numbers of cases (%ld to %ld)\n", least, most);
    failed = most;
  }
  const double seconds = MPI_Wtime() - start;
  if (world_rank == 0) {
    printf("conformance: %d ranks, %.1f s\n", world_size, seconds);
    if (failed == 0) printf("conformance: PASS (%ld cases)\n", n_cases);
    else printf("conformance: FAIL (%ld of %ld cases failed)\n", failed, most);
    fflush(stdout);
  }
  int verdict = failed == 0 ? 0 : 1;
  PMPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(any);
  free(failed_bits);
  MPI_Op_free(&op_user);
  MPI_Op_free(&op_user_ordered);
  for (int k = n_predefined; k < n_dts; ++k) MPI_Type_free(&dts[k].type);
  MPI_Finalize();
  return verdict;
}

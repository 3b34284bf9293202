// Tuning tables: what `auto` runs, measured on the machine (or SimGrid platform) by
// apps/tune and stored as a readable text file in inputs/tuning/ (format below and in
// inputs/tuning/README.md). Every operation's Auto asks the active table first; where
// the table has no row for the request, Auto uses its built-in rule (the cost-model and
// size rules documented in alltoall.hpp, alltoallv.hpp, allgather.hpp, reduce_scatter.hpp).
//
// Format: one row per line, '#' starts a comment, blank lines are ignored.
//   OP  RANKS  PPN  FROM  TO  ALGORITHM  [spread=S] [topology=tree]
// OP is alltoall, alltoallv, allgather or reduce_scatter; RANKS the process count and PPN
// the ranks per node the row was measured with; FROM..TO the block sizes in bytes
// (inclusive; K/KiB/M/MiB/G/GiB suffixes, TO may be 'inf') for which ALGORITHM was the
// fastest. For alltoallv the size is the longest message (M_max) in bytes and `spread`
// the ratio of the longest to the mean message of the measured counts. `topology=tree`
// marks rows measured with a switch tree attached (attach_topology).
//
// A learned table (save_learned_tuning_table) also records what it was learned on, in
// comment lines that the rows' parser skips (so any reader takes the rows as before):
//   # learned-on ranks: 8                 MPI_COMM_WORLD's size
//   # learned-on nodes: sizes=4,4         the node layout (NodeMap spec: sizes=... or map=...)
//   # learned-on mpi: Open MPI v4.1.2, ...  the first line of MPI_Get_library_version
// A table with such a record is used only in a run that matches it (see
// active_tuning_table); a table without one (written by hand, or by tune) is used anywhere.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/comm.hpp"
#include "libcomm/node_map.hpp"

namespace libcomm {

struct TuningRow {
  std::string op;
  int ranks = 0;
  int ppn = 1;
  std::uint64_t from = 0, to = 0;  // block bytes, inclusive
  std::string algo;
  double spread = 1.0;    // alltoallv: max / mean message of the measured counts
  bool topology = false;  // measured with a switch tree attached
  int line = 0;           // line in the file, for messages
};

// What Auto asks: the operation, the shape of the communicator and the block size.
struct TuningQuery {
  std::string op;
  int ranks = 1;
  int ppn = 1;  // ranks per node (largest node) of the Comm's node map
  std::uint64_t bytes = 0;
  double spread = 1.0;
  bool topology = false;
};

// What a learned table was learned on (its "# learned-on" lines), or what this run is.
// An empty field (0 ranks, "" nodes or mpi) is not recorded, or not known yet.
struct LearnedOn {
  int ranks = 0;      // MPI_COMM_WORLD's size
  std::string nodes;  // node_layout_spec of the run's layout
  std::string mpi;    // the first line of MPI_Get_library_version
  bool operator==(const LearnedOn&) const = default;
};

// A field of a learned table's record that differs from the run: "ranks", "nodes" or "mpi",
// with the table's and the run's values.
struct LearnedMismatch {
  std::string field, table_value, run_value;
};

// The first field (mpi, then ranks, then nodes) recorded in `table` whose value differs
// from `run`'s; a field empty on either side is not compared.
std::optional<LearnedMismatch> learned_on_mismatch(const LearnedOn& table, const LearnedOn& run);
// The record as the "# learned-on" lines of a table (empty fields are left out).
std::string learned_on_text(const LearnedOn& on);
// A node layout as the record holds it: "sizes=4,4" when every node is a run of consecutive
// ranks in node order, else "map=0,1,0,1" (node ids renumbered in order of first rank). Two
// layouts are the same exactly when their specs are.
std::string node_layout_spec(const NodeMap& nodes);
// The first line of MPI_Get_library_version (callable before MPI_Init), trailing blanks
// removed; "" when the MPI library does not say.
std::string mpi_library_version();

struct TuningPick {
  std::string algo;    // an algorithm name of the operation
  std::string reason;  // "tuning table T line 12 (64 ranks, ppn 8, 1 KiB..4 KiB)"
};

class TuningTable {
 public:
  // Parses the text format. Errors are libcomm::Error naming `source` and the line:
  // "flat64.tune:7: unknown alltoall algorithm 'fast'". A "# learned-on" line with an
  // unknown key, a repeated key or a bad value is an error too (a malformed record must not
  // turn the check off), as is a nodes record without a ranks record or not covering it.
  static TuningTable parse(std::istream& in, const std::string& source);
  static TuningTable load(const std::string& path);  // Error if the file cannot be read

  // The row for a query: among the rows of q.op measured with the same kind of node map
  // (one rank per node, or several), the measured shape nearest to q (rank count first,
  // then ranks per node, then topology, then spread; distances in log scale, ties to the
  // smaller), then the row of that shape whose size range holds q.bytes. std::nullopt when
  // the table has no row for the operation or no range of the nearest shape holds the size.
  std::optional<TuningPick> lookup(const TuningQuery& q) const;
  const std::string& source() const { return source_; }
  const std::vector<TuningRow>& rows() const { return rows_; }
  // The record of a learned table; nullopt for a table without "# learned-on" lines.
  const std::optional<LearnedOn>& learned_on() const { return learned_on_; }

 private:
  std::string source_;
  std::vector<TuningRow> rows_;
  std::optional<LearnedOn> learned_on_;
};

// The table Auto uses: set_tuning_table's, else the file named by LIBCOMM_TUNING, else
// inputs/tuning/<LIBCOMM_PLATFORM>.tune when LIBCOMM_PLATFORM is set (scripts/simulate.sh
// sets it to the platform's name), else none (nullptr: every Auto uses its built-in
// rule). Loaded once; a named file that cannot be read or parsed is an Error.
//
// A learned table (one with a "# learned-on" record) is checked against this run before
// any decision uses it, and refused when a recorded field differs: then this returns
// nullptr from then on, as if no table had been given, and one warning goes to stderr
// (from MPI_COMM_WORLD's rank 0), naming the file, the field and both values. The MPI
// library and the rank count (MPI_COMM_WORLD's size) are checked at the first call once MPI
// is initialized; the node layout when it is known: from note_run_layout, else from the
// first communicator spanning MPI_COMM_WORLD that a decision consults the table on
// (tuning_table_for). Every input is the same on every rank, and the layout is taken at a
// call every rank makes, so every rank accepts or refuses alike. Until its layout is
// checked a learned table is returned here but used by no decision (tuning_table_for).
std::shared_ptr<const TuningTable> active_tuning_table();
// The active table as a decision on `comm` may use it: nullptr without a table, for a
// refused learned table, and for a learned table whose node layout is not checked yet when
// comm does not span MPI_COMM_WORLD (when it does, its node map is the run's layout and the
// check is made now).
std::shared_ptr<const TuningTable> tuning_table_for(const Comm& comm);
// Tells the learned-table check the run's node layout: comm must span MPI_COMM_WORLD (an
// Error otherwise). The drop-in calls it with MPI_COMM_WORLD's Comm at MPI_Init; a program
// of its own may, before its first decision on a sub-communicator (else the layout comes
// from the first decision on a communicator spanning MPI_COMM_WORLD). Every rank alike.
void note_run_layout(const Comm& comm);
// Replaces the active table (tests, programs that load their own); nullptr = no table.
// Decisions Auto remembered under the previous table are not used again. A learned table
// set here is checked as one loaded from the environment (setting the active table again
// keeps its check).
void set_tuning_table(std::shared_ptr<const TuningTable> table);
// Changes whenever the active table is replaced: the epoch Auto's remembered decisions
// (Comm::remembered_decision) are stored under.
std::uint64_t tuning_table_epoch();

// What auto's online policy learned in this process (LIBCOMM_AUTO=online, the default):
// one row per settled size class of every communicator this process is rank 0 of, as
// tuning-table text (the winner as the row, its measured times as a comment above it).
// A later run starts from such a table (LIBCOMM_TUNING=FILE): online then runs the
// learned winner of a row for exactly its shape without measuring again.
std::string learned_tuning_table();
// Collective over comm: every rank's learned rows, written by comm's rank 0 to `path`
// (each row once) under the record of what they were learned on: MPI_COMM_WORLD's size, the
// MPI library, and comm's node layout when comm spans MPI_COMM_WORLD (a table saved over a
// sub-communicator records no layout). Written as write_tuning_table_file does, so a reader
// never sees half a table. Error (on every rank, with rank 0's reason) when the file cannot
// be written; the file that was there is then left as it was.
void save_learned_tuning_table(const std::string& path, const Comm& comm);

// Writes `text` to `path` through a temporary file in the same directory (path + ".tmp."
// + process id + "." + a counter, made with O_EXCL), flushed to disk and renamed over path:
// a reader sees the old file or the new one, never part of one. When anything fails the
// temporary is removed, path is left as it was, and the Error names path, the step and the
// system's reason.
void write_tuning_table_file(const std::string& path, const std::string& text);

// The query fields every operation shares: ranks and ranks per node of comm, whether a
// topology is attached.
TuningQuery tuning_query(std::string op, const Comm& comm, std::uint64_t bytes);

// Asks the active table; nullopt without a table or row.
std::optional<TuningPick> tuned_choice(const TuningQuery& q);

// The fastest algorithm at every measured size: winner[k] indexes times (ties to the lower
// index; NaN entries did not run). Checks the input as tuned_ranges does below; `who`
// starts every error message (the caller, or the operation being tuned).
std::vector<std::size_t> fastest_at_each_size(const char* who,
                                              const std::vector<std::uint64_t>& sizes,
                                              const std::vector<std::vector<double>>& times);

// How apps/tune turns its measurements into the size ranges of a table. times[a][k] is
// algorithm a's median at sizes[k] (sizes strictly increasing; NaN where a did not run).
// At a measured size the fastest algorithm wins (ties to the lower index). Between two
// measured sizes every algorithm that ran at both is taken to cost the straight line
// between its two medians, and the range boundaries are where the lowest line changes,
// so a crossover sits where the measurements put it rather than halfway between them.
// Consecutive ranges of one algorithm are merged; the first starts at 0, the last ends at
// UINT64_MAX ("inf"). Error for empty or mismatched input, sizes out of order, or a size
// where nothing ran.
struct TunedRange {
  std::uint64_t from = 0, to = 0;  // inclusive
  std::size_t algo = 0;            // index into times
};
std::vector<TunedRange> tuned_ranges(const std::vector<std::uint64_t>& sizes,
                                     const std::vector<std::vector<double>>& times);

// Where apps/tune measures next (--refine): between two neighbouring measured sizes whose
// winners (as in tuned_ranges) differ, their geometric midpoint rounded down to a multiple
// of 8 bytes (every operation's element size divides it), when that lies strictly between
// them. A crossover is then measured rather than inferred from straight lines, which
// misplace it when a time jumps between the two sizes (a protocol switch). Same input
// rules and errors as tuned_ranges; the result is increasing.
std::vector<std::uint64_t> refinement_sizes(const std::vector<std::uint64_t>& sizes,
                                            const std::vector<std::vector<double>>& times);

}  // namespace libcomm

// What an app prints and writes (rank 0): a table with a header and one row per run, the
// closing validation line taken from the rows' verdicts, and the JSON record (--json).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace apps {

// A text table: each column a header, a width, a side (left-aligned or right) and the
// text that separates it from the column before (one space unless said otherwise).
class Table {
 public:
  struct Column {
    std::string header;
    int width;
    bool left = false;
    std::string sep = " ";
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // The header line, or one row (as many cells as columns; a wider cell pushes the rest).
  std::string header() const;
  std::string row(const std::vector<std::string>& cells) const;

 private:
  std::vector<Column> columns_;
};

// Cell texts: fixed(1.23456, 3) = "1.235"; scientific(1234.5, 2) = "1.23e+03";
// ratio(nullopt) = "" (no reference measured).
std::string fixed(double v, int digits);
std::string scientific(double v, int digits);
std::string ratio(const std::optional<double>& r, int digits = 2);

// The verdicts of an app's runs and the closing line every app prints:
//   "validation: PASS (<runs> <what>)", "validation: FAIL (<failed> of <runs> <what_failed>)"
//   or "validation: FAIL (no run)". The exit status follows from ok().
class Validation {
 public:
  void add(bool pass) {
    ++runs_;
    failed_ += pass ? 0 : 1;
  }
  int runs() const { return runs_; }
  int failed() const { return failed_; }
  bool ok() const { return runs_ > 0 && failed_ == 0; }
  std::string line(const std::string& what, const std::string& what_failed) const;
  const char* verdict() const { return ok() ? "PASS" : "FAIL"; }

 private:
  int runs_ = 0, failed_ = 0;
};

// Under SimGrid: whose decision rules chose native's algorithm (smpi/coll-selector, as
// scripts/simulate.sh --native-selector names them: "smpi" is SimGrid's "default") and the
// algorithm a --cfg smpi/<op>:ALGO forced for the collective `op`, "" where none did.
// Outside SimGrid both are "": native is the MPI library the program runs on.
std::pair<std::string, std::string> native_selector(const std::string& op);

// Writes the record to `path` (nothing when path is empty); an error names --json. Under
// SimGrid a record that does not say it gets "native_selector" (native_selector above).
void write_json(const std::string& path, const nlohmann::json& record);

}  // namespace apps

#include "apps/report.hpp"

#include <cstdio>
#include <fstream>

#include "libcomm/error.hpp"

#ifdef LIBCOMM_SIMGRID
#include <xbt/config.hpp>
#endif

namespace apps {

namespace {

std::string pad(const std::string& text, int width, bool left) {
  const auto n = static_cast<std::size_t>(width > 0 ? width : 0);
  if (text.size() >= n) return text;
  return left ? text + std::string(n - text.size(), ' ') : std::string(n - text.size(), ' ') + text;
}

std::string printed(const char* format, double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, format, digits, v);
  return text;
}

}  // namespace

std::string Table::header() const {
  std::vector<std::string> cells;
  for (const auto& c : columns_) cells.push_back(c.header);
  return row(cells);
}

std::string Table::row(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t k = 0; k < cells.size() && k < columns_.size(); ++k)
    line += (k ? columns_[k].sep : std::string()) + pad(cells[k], columns_[k].width, columns_[k].left);
  return line;
}

std::string fixed(double v, int digits) { return printed("%.*f", v, digits); }
std::string scientific(double v, int digits) { return printed("%.*e", v, digits); }
std::string ratio(const std::optional<double>& r, int digits) { return r ? fixed(*r, digits) : std::string(); }

std::string Validation::line(const std::string& what, const std::string& what_failed) const {
  if (runs_ == 0) return "validation: FAIL (no run)";
  if (failed_ == 0) return "validation: PASS (" + std::to_string(runs_) + " " + what + ")";
  return "validation: FAIL (" + std::to_string(failed_) + " of " + std::to_string(runs_) + " " + what_failed + ")";
}

std::pair<std::string, std::string> native_selector(const std::string& op) {
#ifdef LIBCOMM_SIMGRID
  std::string selector = simgrid::config::get_value<std::string>("smpi/coll-selector");
  if (selector == "default") selector = "smpi";
  std::string forced;
  try {
    forced = simgrid::config::get_value<std::string>("smpi/" + op);
  } catch (...) {  // (no per-collective setting of that name)
  }
  return {selector, forced};
#else
  (void)op;
  return {"", ""};
#endif
}

void write_json(const std::string& path, const nlohmann::json& record) {
  if (path.empty()) return;
  std::ofstream out(path);
  nlohmann::json with = record;
  if (const std::string sel = native_selector("alltoall").first; !sel.empty() && !with.contains("native_selector"))
    with["native_selector"] = sel;
  out << with.dump(2) << "\n";
  libcomm::require(static_cast<bool>(out), "--json: cannot write '" + path + "'");
}

}  // namespace apps

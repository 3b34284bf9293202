#include "grid.hpp"

#include <cctype>
#include <limits>
#include <vector>

#include "libcomm/error.hpp"

namespace fft3d {

std::string Extent::str() const {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
}

std::string ProcGrid::str() const { return std::to_string(pr) + "x" + std::to_string(pc); }

Range split(std::size_t n, int parts, int i) {
  const auto p = static_cast<std::size_t>(parts), k = static_cast<std::size_t>(i);
  const std::size_t base = n / p, extra = n % p;
  return {k * base + (k < extra ? k : extra), base + (k < extra ? 1 : 0)};
}

namespace {

// Splits "AxBxC" into positive integers; throws naming the option and the text.
std::vector<std::size_t> parse_dims(const std::string& text, const std::string& option,
                                    std::size_t expected, const std::string& form) {
  auto bad = [&](const std::string& why) {
    return libcomm::Error(option + ": '" + text + "' " + why + " (expected " + form + ")");
  };
  std::vector<std::size_t> dims;
  std::size_t pos = 0;
  while (true) {
    std::size_t end = pos;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == pos || end - pos > 12) throw bad("is not a list of positive integers");
    const std::size_t v = std::stoull(text.substr(pos, end - pos));
    if (v == 0) throw bad("has a dimension of 0");
    dims.push_back(v);
    if (end == text.size()) break;
    if (text[end] != 'x' && text[end] != 'X') throw bad("is not a list of positive integers");
    pos = end + 1;
  }
  if (dims.size() != expected)
    throw bad("has " + std::to_string(dims.size()) + " dimension(s), not " +
              std::to_string(expected));
  return dims;
}

}  // namespace

Extent parse_extent(const std::string& text, const std::string& option) {
  const auto d = parse_dims(text, option, 3, "NXxNYxNZ, e.g. 12x10x9");
  const Extent e{d[0], d[1], d[2]};
  libcomm::require(e.total() / e.nx / e.ny == e.nz && e.total() <= (std::size_t{1} << 40),
                   option + ": '" + text + "' is too large");
  return e;
}

Extent parse_cube(long long n, const std::string& option) {
  libcomm::require(n > 0, option + ": " + std::to_string(n) + " is not a positive grid size");
  libcomm::require(n <= 10000, option + ": " + std::to_string(n) + " is too large");
  const auto u = static_cast<std::size_t>(n);
  return {u, u, u};
}

ProcGrid parse_proc_grid(const std::string& text, const std::string& option, int nranks) {
  const auto d = parse_dims(text, option, 2, "PrxPc, e.g. 2x3");
  libcomm::require(d[0] <= 1000000 && d[1] <= 1000000, option + ": '" + text + "' is too large");
  const ProcGrid g{static_cast<int>(d[0]), static_cast<int>(d[1])};
  libcomm::require(static_cast<long long>(g.pr) * g.pc == nranks,
                   option + ": process grid " + g.str() + " has " +
                       std::to_string(static_cast<long long>(g.pr) * g.pc) +
                       " processes but the run has " + std::to_string(nranks) +
                       " ranks (Pr x Pc must equal the number of ranks)");
  return g;
}

ProcGrid choose_proc_grid(int nranks, const Extent& grid, std::size_t nzc) {
  ProcGrid best{nranks, 1};
  long best_score = std::numeric_limits<long>::max();
  for (int pc = 1; pc * pc <= nranks; ++pc) {
    if (nranks % pc) continue;
    const int pr = nranks / pc;
    const auto upr = static_cast<std::size_t>(pr), upc = static_cast<std::size_t>(pc);
    const int uneven = (grid.nx % upr != 0) + (grid.ny % upr != 0) + (grid.ny % upc != 0) +
                       (nzc % upc != 0);
    const long score = uneven * 1000000L + (pr - pc);
    if (score < best_score) best_score = score, best = {pr, pc};
  }
  return best;
}

}  // namespace fft3d

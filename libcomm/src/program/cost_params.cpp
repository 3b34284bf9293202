// Auto's cost-model parameters (libcomm/cost_params.hpp): files, defaults, the active set.
#include "libcomm/cost_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {

namespace {

// Each key and the scale from the file's unit to seconds (per byte).
struct Key {
  const char* name;
  double scale;
  double CostParams::*field;
};
constexpr Key kKeys[] = {
    {"alpha_us", 1e-6, &CostParams::alpha},
    {"beta_ns_per_byte", 1e-9, &CostParams::beta},
    {"alpha_intra_us", 1e-6, &CostParams::alpha_intra},
    {"beta_intra_ns_per_byte", 1e-9, &CostParams::beta_intra},
    {"overhead_us", 1e-6, &CostParams::overhead},
    {"copy_ns_per_byte", 1e-9, &CostParams::copy},
    {"gamma_ns_per_byte", 1e-9, &CostParams::gamma},
    {"share_inter", 1, &CostParams::share_inter},
    {"share_intra", 1, &CostParams::share_intra},
    {"share_fanout", 1, &CostParams::share_fanout},
    {"share_fanin", 1, &CostParams::share_fanin},
    {"network_links", 1, &CostParams::network_links},
    {"network_nodes", 1, &CostParams::network_nodes},
};
// The flat model's keys (commbench --calibrate; libcomm/cost_model.hpp) and what they stand for.
struct FlatKey {
  const char* name;
  double scale;
  const char* stands_for;
};
constexpr FlatKey kFlatKeys[] = {
    {"ts_us", 1e-6, "alpha_us"}, {"tc_td_us", 1e-6, "beta_ns_per_byte"}, {"tm_us", 1e-6, "copy_ns_per_byte"}};

// With no model file: in a simulation, the network the platform declares (sim::platform_times:
// what a message costs there, read rather than measured); elsewhere the generic defaults.
CostParams default_cost_params() {
  CostParams c;
  const std::vector<double> sizes{0, 64, 256, 1024, 4096, 8192, 16384, 65536, 262144, 1048576, 4194304};
  const auto t = sim::platform_times(sizes);
  if (!t) return c;
  c.sizes = t->sizes;
  c.one_way = t->inter;
  c.one_way_intra = t->intra;
  c.alpha = t->inter.front();
  c.alpha_intra = t->intra.front();
  c.beta = (t->inter.back() - t->inter.front()) / sizes.back();
  c.beta_intra = (t->intra.back() - t->intra.front()) / sizes.back();
  if (t->copy > 0) c.copy = t->copy;
  c.share_inter = t->inter_shared ? 1 : 0;
  c.share_intra = t->intra_shared ? 1 : 0;
  c.source = "the simulated platform (" + t->route + ")";
  return c;
}

std::mutex g_mutex;
std::optional<CostParams> g_active;

}  // namespace

double CostParams::slope(const std::vector<double>& t, double n, double fallback) const {
  if (t.size() < 2 || t.size() != sizes.size() || n <= 0) return fallback;
  // The time at n, interpolated (the last segment extended), minus the time at the first size.
  std::size_t k = 1;
  while (k + 1 < sizes.size() && sizes[k] < n) ++k;
  const double x0 = sizes[k - 1], x1 = sizes[k];
  const double at_n = t[k - 1] + (t[k] - t[k - 1]) * (n - x0) / (x1 - x0);
  return std::max(0.0, (at_n - t[0]) / (n - sizes[0]));
}

double CostParams::size_latency_at(double n) const {
  const std::size_t m = sizes.size();
  if (one_way.size() < 2 || one_way.size() != m || n <= sizes[0]) return 0.0;
  const double last_rate = (one_way[m - 1] - one_way[m - 2]) / (sizes[m - 1] - sizes[m - 2]);
  return std::max(0.0, (n - sizes[0]) * (slope(one_way, n, beta) - last_rate));
}

Layout Layout::of(const NodeMap& nodes) {
  Layout l;
  l.ranks = nodes.num_ranks();
  l.nodes = nodes.num_nodes();
  l.ppn = 1;
  for (int n = 0; n < l.nodes; ++n) l.ppn = std::max(l.ppn, nodes.node_size(n));
  return l;
}

bool detail::is_cost_table_key(std::string_view key) {
  return key == "one_way_us" || key == "one_way_intra_us" || key == "network_us" || key == "copy_us";
}

double detail::nonnegative_value(const std::string& where, const std::string& key, const std::string& value) {
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  require(used == value.size() && !value.empty() && std::isfinite(v) && v >= 0,
          where + ": " + key + " must be a finite number >= 0, got '" + value + "'");
  return v;
}

std::string detail::trim(std::string_view s) {
  const auto a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string_view::npos ? std::string() : std::string(s.substr(a, b - a + 1));
}

void detail::read_key_values(const std::string& path, const std::string& cannot_read, bool quote_trimmed,
                             const std::function<void(const std::string& where, const std::string& key,
                                                      const std::string& value)>& each) {
  std::ifstream in(path);
  require(static_cast<bool>(in), cannot_read);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    line = line.substr(0, line.find('#'));
    if (trim(line).empty()) continue;
    const auto eq = line.find('=');
    require(eq != std::string::npos,
            where + ": expected 'key = value', got '" + (quote_trimmed ? trim(line) : line) + "'");
    each(where, trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
  }
}

CostParams load_cost_params(const std::string& path) {
  std::map<std::string, double> seen;  // seconds (per byte)
  std::vector<std::vector<double>> table_sizes;
  std::map<std::string, std::vector<double>> tables;  // one_way_us, one_way_intra_us, network_us, copy_us
  const auto line = [&](const std::string& where, const std::string& key, const std::string& value) {
    if (key == "name") return;
    if (detail::is_cost_table_key(key)) {  // "BYTES:US BYTES:US ..."
      std::istringstream pairs(value);
      std::vector<double> xs, ys;
      for (std::string pair; pairs >> pair;) {
        const auto colon = pair.find(':');
        try {
          require(colon != std::string::npos, "");
          xs.push_back(std::stod(pair.substr(0, colon)));
          ys.push_back(std::stod(pair.substr(colon + 1)) * 1e-6);
        } catch (const std::exception&) {
          throw Error(where + ": " + key + " takes BYTES:US pairs, got '" + pair + "'");
        }
        require(std::isfinite(xs.back()) && xs.back() >= 0 && std::isfinite(ys.back()) && ys.back() >= 0 &&
                    (xs.size() == 1 || xs.back() > xs[xs.size() - 2]),
                where + ": " + key + ": sizes must increase and times be >= 0, got '" + pair + "'");
      }
      require(xs.size() >= 2, where + ": " + key + " needs at least 2 BYTES:US pairs");
      table_sizes.push_back(xs);
      tables[key] = ys;
      return;
    }
    const double v = detail::nonnegative_value(where, key, value);
    const auto known = std::find_if(std::begin(kKeys), std::end(kKeys), [&](const Key& k) { return key == k.name; });
    const auto flat =
        std::find_if(std::begin(kFlatKeys), std::end(kFlatKeys), [&](const FlatKey& k) { return key == k.name; });
    if (known != std::end(kKeys)) {
      seen[key] = v * known->scale;
    } else if (flat != std::end(kFlatKeys)) {
      seen.try_emplace(std::string("flat:") + flat->stands_for, v * flat->scale);
    } else {
      std::string valid = "name";
      for (const Key& k : kKeys) valid += std::string(", ") + k.name;
      for (const FlatKey& k : kFlatKeys) valid += std::string(", ") + k.name;
      throw Error(where + ": unknown key '" + key + "' (valid: " + valid + ")");
    }
  };
  detail::read_key_values(path, "cannot read the cost parameter file '" + path + "'", true, line);
  const auto value = [&](const char* name) -> std::optional<double> {
    if (const auto it = seen.find(name); it != seen.end()) return it->second;
    if (const auto it = seen.find(std::string("flat:") + name); it != seen.end()) return it->second;
    return std::nullopt;
  };
  CostParams c;
  for (const Key& k : kKeys)
    if (const auto v = value(k.name)) c.*k.field = *v;
  // One figure for both sides when the file measured only between nodes.
  if (!value("alpha_intra_us") && value("alpha_us")) c.alpha_intra = c.alpha;
  if (!value("beta_intra_ns_per_byte") && value("beta_ns_per_byte")) c.beta_intra = c.beta;
  require(value("alpha_us") && value("beta_ns_per_byte"),
          path + ": alpha_us and beta_ns_per_byte (or the flat model's ts_us and tc_td_us) are required");
  for (std::size_t k = 1; k < table_sizes.size(); ++k)
    require(table_sizes[k] == table_sizes[0],
            path + ": one_way_us, one_way_intra_us, network_us and copy_us must name the same sizes");
  if (!table_sizes.empty()) {
    c.sizes = table_sizes[0];
    c.one_way = tables["one_way_us"];
    c.one_way_intra = tables["one_way_intra_us"].empty() ? c.one_way : tables["one_way_intra_us"];
    if (c.one_way.empty()) c.one_way = c.one_way_intra;
    c.network = tables["network_us"];
    c.copy_in_cache = tables["copy_us"];
  }
  c.source = path;
  return c;
}

std::string cost_params_text(const CostParams& c) {
  std::ostringstream out;
  out << std::setprecision(6);
  for (const Key& k : kKeys) out << k.name << " = " << c.*k.field / k.scale << "\n";
  const auto table = [&](const char* key, const std::vector<double>& t) {
    if (t.size() != c.sizes.size() || t.empty()) return;
    out << key << " =";
    for (std::size_t i = 0; i < t.size(); ++i) out << " " << static_cast<long long>(c.sizes[i]) << ":" << t[i] * 1e6;
    out << "\n";
  };
  table("one_way_us", c.one_way);
  table("one_way_intra_us", c.one_way_intra);
  table("network_us", c.network);
  table("copy_us", c.copy_in_cache);
  return out.str();
}

const CostParams& active_cost_params() {
  std::lock_guard lock(g_mutex);
  if (g_active) return *g_active;
  const SettingsFile file = settings_file(Setting::Model, ".model");
  if (file.named) {
    try {
      g_active = load_cost_params(file.path);
    } catch (const Error& e) {
      g_active = CostParams{};  // (reported once; later calls use the defaults)
      throw Error(std::string("LIBCOMM_MODEL: ") + e.what());
    }
    return *g_active;
  }
  g_active = file.path.empty() ? default_cost_params() : load_cost_params(file.path);
  return *g_active;
}

void set_cost_params(const CostParams& c) {
  {
    std::lock_guard lock(g_mutex);
    g_active = c;
  }
  set_tuning_table(active_tuning_table());  // a new epoch: decisions made with the old figures go
}

}  // namespace libcomm

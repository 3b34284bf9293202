// Calibration of the flat model of paper 001 (section 2) on the machine it runs on, and
// the platform files that carry the result to commbench --predict file:PATH.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "libcomm/cost_model.hpp"

namespace libcomm {

void save_flat_platform(const FlatPlatform& f, const std::string& path,
                        const std::string& comment) {
  std::ofstream out(path);
  require(static_cast<bool>(out), "cannot write the platform file '" + path + "'");
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << std::setprecision(9) << "name = " << f.name << "\nts_us = " << f.ts_us
      << "\ntc_td_us = " << f.tc_td_us << "\ntm_us = " << f.tm_us << "\n";
  require(static_cast<bool>(out), "cannot write the platform file '" + path + "'");
}

FlatPlatform load_flat_platform(const std::string& path) {
  std::ifstream in(path);
  require(static_cast<bool>(in), "cannot read the platform file '" + path + "'");
  FlatPlatform f;
  f.name = path;
  bool have_ts = false, have_tc_td = false;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto eq = line.find('=');
    require(eq != std::string::npos, where + ": expected 'key = value', got '" + line + "'");
    auto trim = [](std::string t) {
      const auto a = t.find_first_not_of(" \t\r"), b = t.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : t.substr(a, b - a + 1);
    };
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key == "name") {
      f.name = value;
      continue;
    }
    double v = 0;
    std::size_t used = 0;
    try {
      v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == value.size() && !value.empty() && std::isfinite(v) && v >= 0,
            where + ": " + key + " must be a finite number >= 0, got '" + value + "'");
    if (key == "ts_us") {
      f.ts_us = v, have_ts = true;
    } else if (key == "tc_td_us") {
      f.tc_td_us = v, have_tc_td = true;
    } else if (key == "tm_us") {
      f.tm_us = v;
    } else {
      throw Error(where + ": unknown key '" + key + "' (valid: name, ts_us, tc_td_us, tm_us)");
    }
  }
  require(have_ts && have_tc_td, path + ": ts_us and tc_td_us are required");
  return f;
}

LineFit fit_line_relative(std::span<const double> x, std::span<const double> y) {
  require(x.size() == y.size() && x.size() >= 2, "fit_line_relative: needs at least 2 points");
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  auto weight = [](double t) { return t > 0 ? 1.0 / (t * t) : 1.0; };
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = weight(y[i]);
    sw += w, sx += w * x[i], sy += w * y[i], sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  require(det > 0, "fit_line_relative: the sizes must not all be equal");
  LineFit fit;
  fit.slope = (sw * sxy - sx * sy) / det;
  fit.intercept = (sy - fit.slope * sx) / sw;
  double rr = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (fit.intercept + fit.slope * x[i]);
    rr += y[i] > 0 ? (r / y[i]) * (r / y[i]) : 0;
  }
  fit.rms_relative = std::sqrt(rr / static_cast<double>(x.size()));
  return fit;
}

namespace {

// Round trips per timing: enough that a timing of small messages is not one clock tick,
// few for large ones.
int round_trips(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 22) / (bytes + 1), 2, 50));
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

FlatCalibration calibrate_flat_platform(MPI_Comm comm, std::span<const std::size_t> sizes,
                                        int reps) {
  int me = 0, p = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  require(p >= 2,
          "calibration needs at least 2 ranks (a ping-pong between rank 0 and the "
          "last rank), got " +
              std::to_string(p));
  require(reps >= 1, "calibration: reps must be at least 1, got " + std::to_string(reps));
  require(sizes.size() >= 2, "calibration needs at least 2 message sizes to fit a line");
  for (std::size_t s : sizes)
    require(s <= static_cast<std::size_t>(INT_MAX),
            "calibration: message size " + std::to_string(s) + " exceeds INT_MAX bytes");
  FlatCalibration cal;
  cal.peer = p - 1;
  const std::size_t biggest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::byte> a(biggest + 1, std::byte{1}), b(biggest + 1, std::byte{2});
  const int tag = 0x5ca1;
  for (std::size_t s : sizes) {
    const int n = round_trips(s), bytes = static_cast<int>(s);
    std::vector<double> one_way, copy;
    for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up, not kept
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      for (int k = 0; k < n; ++k) {
        if (me == 0) {
          MPI_Send(a.data(), bytes, MPI_BYTE, cal.peer, tag, comm);
          MPI_Recv(b.data(), bytes, MPI_BYTE, cal.peer, tag, comm, MPI_STATUS_IGNORE);
        } else if (me == cal.peer) {
          MPI_Recv(b.data(), bytes, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
          MPI_Send(a.data(), bytes, MPI_BYTE, 0, tag, comm);
        }
      }
      const double t1 = MPI_Wtime();
      if (me == 0) {
        for (int k = 0; k < n; ++k) {
          std::memcpy(b.data(), a.data(), s);
          a[k % (biggest + 1)] = b[(k + 1) % (biggest + 1)];  // keep the copies observable
        }
      }
      const double t2 = MPI_Wtime();
      if (rep >= 0) one_way.push_back((t1 - t0) / (2.0 * n)), copy.push_back((t2 - t1) / n);
    }
    cal.sizes.push_back(static_cast<double>(s));
    cal.one_way_s.push_back(median_of(one_way));
    cal.copy_s.push_back(median_of(copy));
  }
  // Rank 0's figures for everyone.
  MPI_Bcast(cal.one_way_s.data(), static_cast<int>(sizes.size()), MPI_DOUBLE, 0, comm);
  MPI_Bcast(cal.copy_s.data(), static_cast<int>(sizes.size()), MPI_DOUBLE, 0, comm);
  cal.transfer = fit_line_relative(cal.sizes, cal.one_way_s);
  cal.copy = fit_line_relative(cal.sizes, cal.copy_s);
  // A noisy fit can come out slightly negative (e.g. a copy cost hidden in clock
  // resolution); the platform takes 0 then, the fit keeps the raw value.
  cal.platform.name = "calibrated";
  cal.platform.ts_us = std::max(0.0, cal.transfer.intercept * 1e6);
  cal.platform.tc_td_us = std::max(0.0, cal.transfer.slope * 1e6);
  cal.platform.tm_us = std::max(0.0, cal.copy.slope * 1e6);
  return cal;
}

}  // namespace libcomm

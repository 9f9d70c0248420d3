// The device_peaks table: measured matrix-product peaks, one per host,
// device, precision and threads (migration 7 of share/sql/run_store.sql).
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {

namespace {

// The columns after host of a device_peaks row, in this order.
constexpr const char* kPeakColumns = "SELECT device, precision, threads, flops_per_s, method, measured_at";

DevicePeak peak_of_row(const std::string& host, SQLite::Statement& row) {
  return DevicePeak{host,
                    row.getColumn(0).getString(),
                    row.getColumn(1).getString(),
                    row.getColumn(2).getInt(),
                    row.getColumn(3).getDouble(),
                    row.getColumn(4).getString(),
                    row.getColumn(5).getString()};
}

}  // namespace

std::optional<DevicePeak> RunStore::device_peak(const std::string& host, const std::string& device,
                                                const std::string& precision, int threads) const {
  Impl& s = *impl_;
  return s.locked("reading the peak of " + device, [&]() -> std::optional<DevicePeak> {
    SQLite::Statement query(s.db, std::string(kPeakColumns) + " FROM device_peaks"
                                      " WHERE host = ? AND device = ? AND precision = ? AND threads = ?");
    query.bind(1, host);
    query.bind(2, device);
    query.bind(3, precision);
    query.bind(4, threads);
    if (!query.executeStep()) return std::nullopt;
    return peak_of_row(host, query);
  });
}

std::vector<DevicePeak> RunStore::device_peaks(const std::string& host) const {
  Impl& s = *impl_;
  return s.locked("reading the peaks of " + host, [&] {
    SQLite::Statement query(s.db, std::string(kPeakColumns) +
                                      " FROM device_peaks WHERE host = ? ORDER BY device, precision, threads");
    query.bind(1, host);
    std::vector<DevicePeak> peaks;
    while (query.executeStep()) peaks.push_back(peak_of_row(host, query));
    return peaks;
  });
}

void RunStore::record_device_peak(const DevicePeak& peak) {
  Impl& s = *impl_;
  s.locked("recording the peak of " + peak.device, [&] {
    SQLite::Statement insert(s.db,
                             "INSERT OR REPLACE INTO device_peaks"
                             " (host, device, precision, threads, flops_per_s, method, measured_at)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, peak.host);
    insert.bind(2, peak.device);
    insert.bind(3, peak.precision);
    insert.bind(4, peak.threads);
    insert.bind(5, peak.flops_per_s);
    insert.bind(6, peak.method);
    insert.bind(7, peak.measured_at.empty() ? utc_now_iso() : peak.measured_at);
    insert.exec();
  });
}

}  // namespace orchestrate

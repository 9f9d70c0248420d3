#include "store/metric_history.h"

#include <SQLiteCpp/Statement.h>

#include "store/read_only_database.h"
#include "store/store_error.h"
#include "store/store_sql.h"

namespace orchestrate {

MetricHistory read_metric_history(const std::string& db_path, std::int64_t run_id, const std::string& only) {
  try {
    SQLite::Database db = open_database_for_reading(db_path);
    // julianday 2440587.5 is 1970-01-01T00:00Z, the Unix epoch.
    SQLite::Statement query(db,
                            "SELECT m.name, m.step, m.epoch, m.value,"
                            " (julianday(m.recorded_at) - 2440587.5) * 86400.0,"
                            " (julianday(m.recorded_at) - julianday(r.started_at)) * 86400.0"
                            " FROM metrics m JOIN runs r ON r.id = m.run_id"
                            " WHERE m.run_id = ?1 AND (?2 = '' OR m.name = ?2) ORDER BY m.name, m.step, m.id");
    query.bind(1, run_id);
    query.bind(2, only);
    MetricHistory history;
    while (query.executeStep()) {
      MetricPoint point;
      point.step = query.getColumn(1).getInt64();
      point.epoch = query.getColumn(2).getInt64();
      point.value = real_column(query, 3);
      point.wall_time = query.getColumn(4).getDouble();
      point.seconds_since_start = query.getColumn(5).getDouble();
      history[query.getColumn(0).getString()].push_back(point);
    }
    return history;
  } catch (const SQLite::Exception& error) {
    throw_store_error(db_path, "reading the metrics of run " + std::to_string(run_id), error);
  }
}

}  // namespace orchestrate

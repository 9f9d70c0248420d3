// A crash breadcrumb (crash_breadcrumb.h) becoming its run's failure: what
// a store opened for writing does with the crashes its runs left behind.
#include <SQLiteCpp/Transaction.h>

#include <filesystem>

#include "crash_report/crash_breadcrumb.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {

// A crashed process could not write its end (crash_handler.h); its
// breadcrumb says how it ended. Recorded when the run is still marked
// running and its process is gone; a breadcrumb of an ended run is done
// with (rank 0 took a peer's cause when it ended the run), and one of a run
// still running waits (rank 0 of a job may still be ending it).
void RunStore::Impl::take_in_crash_breadcrumbs() {
  for (const auto& found : find_crash_breadcrumbs(path)) {
    if (!found.crumb) continue;  // not ours to delete: shown by nobody, harmless
    const std::int64_t run_id = found.crumb->run_id;
    bool done = false;
    locked("recording the crash of run " + std::to_string(run_id), [&] {
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      StoredRun stored;
      if (!read_stored_run(run_id, stored)) return;  // a store made again under the same name
      if (stored.status == to_string(RunStatus::running)) {
        if (!stored.lost) return;
        SQLite::Statement end(db, "UPDATE runs SET status = 'failed', error = ?, ended_at = " ORCHESTRATE_SQL_LAST_SEEN
                                  " WHERE id = ? AND status = 'running'");
        end.bind(1, found.crumb->message);
        end.bind(2, run_id);
        end.exec();
        ResetOnExit reset(insert_event);
        insert_event.bind(1, run_id);
        insert_event.bind(2, utc_now_iso());
        insert_event.bind(3, "crash");
        insert_event.bind(4, found.crumb->message + " (pid " + std::to_string(found.crumb->pid) + ")");
        insert_event.exec();
      }
      transaction.commit();
      done = true;
    });
    std::error_code ignored;
    if (done) std::filesystem::remove(found.path, ignored);
  }
}

}  // namespace orchestrate

#include "split_index.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>

namespace orchestrate::tfrecord {

namespace {

struct FileResult {
  FileIndex index;
  bool scanned = false;
  std::string cache_problem;
  std::string cache_damage;
  std::exception_ptr error;
};

FileResult index_one(const std::string& path, const RecordRules& rules, const std::string& fingerprint,
                     const IndexCache& cache) {
  FileResult result;
  const FileStamp before = stamp_of(path);
  if (auto cached = cache.load(path, before, fingerprint, result.cache_damage)) {
    result.index = std::move(*cached);
    return result;
  }
  result.index = index_file(path, [&](std::string_view data) { return check_record(data, rules); });
  result.scanned = true;
  // A file rewritten during the scan is indexed again next time.
  if (stamp_of(path) == before) result.cache_problem = cache.save(path, before, fingerprint, result.index);
  return result;
}

}  // namespace

SplitIndex index_split(std::vector<std::string> files, const RecordRules& rules, const IndexCache& cache) {
  const std::string fingerprint = rules.fingerprint();
  std::vector<FileResult> results(files.size());
  // Files are independent: one thread per core reads and checks them (the
  // scan is mostly CRC, protobuf and image decoding, not waiting on disk).
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      try {
        results[i] = index_one(files[i], rules, fingerprint, cache);
      } catch (...) {
        results[i].error = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();

  SplitIndex split;
  split.files = std::move(files);
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& result = results[i];
    if (result.error) std::rethrow_exception(result.error);
    const auto file = static_cast<std::uint32_t>(i);
    for (const auto& record : result.index.records) split.records.push_back({file, record});
    for (auto& record : result.index.bad) split.bad.push_back({file, std::move(record)});
    split.bytes += result.index.file_bytes;
    split.files_scanned += result.scanned;
    if (split.cache_problem.empty()) split.cache_problem = result.cache_problem;
    if (!result.cache_damage.empty() && split.damaged_cache_entries++ == 0)
      split.first_cache_damage = result.cache_damage;
  }
  return split;
}

}  // namespace orchestrate::tfrecord

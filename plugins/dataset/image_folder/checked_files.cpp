#include "checked_files.h"

#include <ATen/Parallel.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <map>

#include "image_bytes.h"
#include "orchestrate/image/image_decode.h"

namespace orchestrate::image_folder {

namespace {

// Positions into `files` in the order a limited run takes them: class by
// class in turn, each class's files in their order.
std::vector<std::size_t> round_robin(const std::vector<LabelledFile>& files) {
  std::map<std::int64_t, std::vector<std::size_t>> by_class;
  for (std::size_t i = 0; i < files.size(); ++i) by_class[files[i].label].push_back(i);
  std::vector<std::size_t> order;
  for (std::size_t rank = 0; order.size() < files.size(); ++rank)
    for (const auto& [label, members] : by_class)
      if (rank < members.size()) order.push_back(members[rank]);
  return order;
}

}  // namespace

std::string why_unusable(const std::string& path, const FileChecks& checks) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) return path + ": cannot be read (it went away after listing)";
  if (status.st_size == 0) return path + ": zero-byte file";
  if (!checks.verify_images) return "";
  try {
    decode_image(read_file_bytes(path), checks.channels, path, 0, checks.max_image_pixels);  // messages start with the path
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

CheckedFiles check_files(const std::vector<LabelledFile>& files, const FileChecks& checks) {
  std::vector<std::size_t> order(files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t wanted = checks.limit > 0 ? static_cast<std::size_t>(checks.limit) : files.size();
  if (wanted < files.size()) order = round_robin(files);

  CheckedFiles out;
  std::vector<std::size_t> kept;
  std::size_t next = 0;
  // Checked in rounds of as many files as are still wanted, each round in
  // parallel (decoding is most of the time); without a limit, one round.
  while (kept.size() < wanted && next < order.size()) {
    const std::size_t take = std::min(wanted - kept.size(), order.size() - next);
    std::vector<std::string> causes(take);
    at::parallel_for(0, static_cast<std::int64_t>(take), 16, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) causes[i] = why_unusable(files[order[next + i]].path, checks);
    });
    for (std::size_t i = 0; i < take; ++i) {
      if (causes[i].empty()) {
        kept.push_back(order[next + i]);
        continue;
      }
      out.bad.add(causes[i]);
    }
    next += take;
  }
  out.bad.seen = kept.size() + out.bad.bad;
  std::sort(kept.begin(), kept.end());
  for (const auto i : kept) out.usable.push_back(files[i]);
  return out;
}

}  // namespace orchestrate::image_folder

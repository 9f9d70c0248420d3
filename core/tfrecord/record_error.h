// A record that cannot be used, named the way a person finds it again: the
// file, the record's position in it (index and byte offset) and the cause.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

struct RecordPlace {
  std::string file;
  std::uint64_t index = 0;   // 0-based, in file order
  std::uint64_t offset = 0;  // of the record's length field
};

// "FILE: record N at byte B: CAUSE", on one line.
std::string describe_bad_record(const RecordPlace& place, const std::string& cause);

class RecordError : public DataError {
 public:
  RecordError(RecordPlace place, std::string cause);
  ~RecordError() override;
  const RecordPlace& place() const { return place_; }
  const std::string& cause() const { return cause_; }

 private:
  RecordPlace place_;
  std::string cause_;
};

}  // namespace orchestrate::tfrecord

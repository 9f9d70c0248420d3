#include "record_error.h"

#include <utility>

namespace orchestrate::tfrecord {

std::string describe_bad_record(const RecordPlace& place, const std::string& cause) {
  return place.file + ": record " + std::to_string(place.index) + " at byte " + std::to_string(place.offset) + ": " +
         cause;
}

RecordError::RecordError(RecordPlace place, std::string cause)
    : DataError(describe_bad_record(place, cause)), place_(std::move(place)), cause_(std::move(cause)) {}

RecordError::~RecordError() = default;

}  // namespace orchestrate::tfrecord

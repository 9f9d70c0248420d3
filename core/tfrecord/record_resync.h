// Finding the next intact record after a header whose length cannot be
// trusted (its CRC does not match). The format has no sync marker, so the
// only sign of a record start is a 12-byte header whose length matches its
// masked CRC-32C; that alone matches one offset in 2^32 by chance, so a
// candidate is taken only when the data it frames matches its CRC too.
//
// What is knowable about the bytes skipped: how many there are, exactly.
// How many records they held is not: the damaged record's true length is
// lost with its header, and the region may hold any number of whole
// records that are damaged too. A scan counts a skipped region as one lost
// record (a lower bound) and reports its bytes.
#pragma once

#include <cstdint>
#include <optional>

#include "byte_source.h"

namespace orchestrate::tfrecord {

// Bytes of claimed record data that a resynchronisation may check against
// CRCs, across one file: candidates whose length CRC matches (by chance, or
// planted in a hostile file every 12 bytes, each claiming the rest of the
// file) each cost a CRC over the data they claim, so without a budget the
// scan would be quadratic in the file's size. With the file's own size as
// the budget, every resynchronisation in a file together costs at most one
// more pass over it; a candidate the budget cannot pay for is passed over.
class ResyncBudget {
 public:
  explicit ResyncBudget(std::uint64_t bytes) : left_(bytes) {}
  // Whether `bytes` more may be checked; if so they are spent.
  bool spend(std::uint64_t bytes);

 private:
  std::uint64_t left_;
};

// The first offset at or after `from` where a whole intact record starts
// (header CRC, length within the source, data CRC), or nullopt when none
// does. Linear in the bytes after `from`, plus what `budget` pays for.
std::optional<std::uint64_t> find_intact_record(ByteSource& source, std::uint64_t from, ResyncBudget& budget);

}  // namespace orchestrate::tfrecord

// TFRecord framing (core/tfrecord/record_framing): any bytes as a TFRecord
// file, scanned front to back, and every record the scan found read again
// at its offset, as the dataset plugin does. Damage must surface as
// orchestrate::Error (DataError, RecordError); anything else escaping, or
// a sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/tfrecord/record_framing.h"
#include "scratch_file.h"

namespace tfrecord = orchestrate::tfrecord;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static orchestrate::fuzz::ScratchFile file("framing.tfrecord");
  const std::string& path = file.write(data, size);
  std::vector<tfrecord::ScannedRecord> found;
  try {
    tfrecord::TfRecordScanner scanner(path);
    tfrecord::ScannedRecord record;
    while (scanner.next(record)) found.push_back(record);
  } catch (const orchestrate::Error&) {
  }
  try {
    const tfrecord::RecordFile reader(path);
    for (const auto& record : found) {
      try {
        const std::string again = reader.read_at(record.place, record.data.size());
        // A record the scan took as whole must read back the same.
        if (record.damage.empty() && again != record.data) __builtin_trap();
      } catch (const orchestrate::Error&) {
      }
    }
  } catch (const orchestrate::Error&) {
  }
  return 0;
}

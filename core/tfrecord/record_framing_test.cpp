#include "record_framing.h"
#include "crc32c.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "byte_file_testing.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::tfrecord {
namespace {

using orchestrate::testing::ScratchDir;
using testing::flip_byte;
using testing::read_bytes;
using testing::truncate_to;

std::vector<ScannedRecord> scan(const std::string& path) {
  std::vector<ScannedRecord> records;
  TfRecordScanner scanner(path);
  ScannedRecord record;
  while (scanner.next(record)) records.push_back(record);
  return records;
}

class RecordFraming : public ::testing::Test {
 protected:
  void SetUp() override {
    offsets_.clear();
    TfRecordWriter writer(path_);
    for (const auto& data : records_) offsets_.push_back(writer.write(data));
    writer.close();
  }

  ScratchDir dir_;
  std::string path_ = dir_.file("records.tfrecord");
  std::vector<std::string> records_{"hello", "", std::string(70000, 'x') + "end", std::string("\0\1\2", 3)};
  std::vector<std::uint64_t> offsets_;
};

// tensorboard's RecordWriter writes exactly these bytes for b"hello".
TEST_F(RecordFraming, WritesTensorFlowsBytes) {
  EXPECT_EQ(read_bytes(path_).substr(0, 21),
            std::string("\x05\0\0\0\0\0\0\0\xea\xb2\x04\x3e" "hello" "\xbb\x1f\x1c\x19", 21));
  EXPECT_EQ(offsets_, (std::vector<std::uint64_t>{0, 21, 37, 37 + 70003 + 16}));
  EXPECT_EQ(read_bytes(path_).size(), offsets_.back() + framed_size(3));
}

TEST_F(RecordFraming, ScanReturnsEveryRecordWithItsPlace) {
  const auto records = scan(path_);
  ASSERT_EQ(records.size(), records_.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].data, records_[i]);
    EXPECT_EQ(records[i].damage, "");
    EXPECT_EQ(records[i].place.file, path_);
    EXPECT_EQ(records[i].place.index, i);
    EXPECT_EQ(records[i].place.offset, offsets_[i]);
  }
}

TEST_F(RecordFraming, ReadAtReturnsRecordsFromManyThreads) {
  const RecordFile file(path_);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        for (std::size_t i = 0; i < records_.size(); ++i)
          mismatches[t] += file.read_at({path_, i, offsets_[i]}, records_[i].size()) != records_[i];
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST_F(RecordFraming, FlippedDataByteIsABadDataCrcAndTheScanGoesOn) {
  flip_byte(path_, offsets_[0] + kRecordHeaderBytes + 1);
  const auto records = scan(path_);
  ASSERT_EQ(records.size(), records_.size());
  EXPECT_NE(records[0].damage.find("bad data CRC"), std::string::npos) << records[0].damage;
  EXPECT_FALSE(records[0].ends_scan);
  EXPECT_EQ(records[1].damage, "");
  EXPECT_EQ(records[2].data, records_[2]);
  try {
    RecordFile(path_).read_at({path_, 0, offsets_[0]}, records_[0].size());
    FAIL() << "expected a RecordError";
  } catch (const RecordError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path_ + ": record 0 at byte 0: bad data CRC (stored 0x", 0), 0u)
        << error.what();
  }
}

TEST_F(RecordFraming, FlippedLengthByteSkipsToTheNextIntactRecordCountingWhatItLost) {
  flip_byte(path_, offsets_[2] + 1);
  const auto records = scan(path_);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[1].damage, "");
  EXPECT_EQ(records[2].damage.rfind("bad length CRC (stored 0x", 0), 0u) << records[2].damage;
  const std::uint64_t lost = offsets_[3] - offsets_[2];
  EXPECT_NE(records[2].damage.find("): lost " + std::to_string(lost) +
                                   " bytes (at least 1 record) before the next intact record, at byte " +
                                   std::to_string(offsets_[3])),
            std::string::npos)
      << records[2].damage;
  EXPECT_EQ(records[2].region_bytes, lost);
  EXPECT_FALSE(records[2].ends_scan);
  EXPECT_EQ(records[2].place.offset, offsets_[2]);
  // The record after the damage is read whole, numbered as if the region held one record.
  EXPECT_EQ(records[3].damage, "");
  EXPECT_EQ(records[3].data, records_[3]);
  EXPECT_EQ(records[3].place.index, 3u);
  EXPECT_EQ(records[3].place.offset, offsets_[3]);
  try {
    RecordFile(path_).read_at({path_, 2, offsets_[2]}, records_[2].size());
    FAIL() << "expected a RecordError";
  } catch (const RecordError& error) {
    EXPECT_EQ(error.place().index, 2u);
    EXPECT_NE(error.cause().find("bad length CRC"), std::string::npos) << error.what();
  }
}

TEST_F(RecordFraming, ADamagedLengthWithNoIntactRecordAfterItLosesTheRestOfTheFile) {
  flip_byte(path_, offsets_[3] + 1);
  const auto records = scan(path_);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[2].data, records_[2]);
  EXPECT_NE(records[3].damage.find("): lost the remaining 19 bytes (at least 1 record): no intact record follows"),
            std::string::npos)
      << records[3].damage;
  EXPECT_EQ(records[3].region_bytes, 19u);
  EXPECT_TRUE(records[3].ends_scan);
}

TEST_F(RecordFraming, GarbageBetweenRecordsIsOneDamagedRegionOfItsExactSize) {
  auto bytes = read_bytes(path_);
  std::string garbage;
  for (int i = 0; i < 5000; ++i) garbage += static_cast<char>((i * 7919 + 13) % 251);
  bytes.insert(offsets_[1], garbage);
  TfRecordScanner scanner("in memory", bytes);
  std::vector<ScannedRecord> records;
  for (ScannedRecord record; scanner.next(record);) records.push_back(record);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].data, records_[0]);
  EXPECT_EQ(records[1].place.file, "in memory");
  EXPECT_EQ(records[1].place.offset, offsets_[1]);
  EXPECT_EQ(records[1].region_bytes, garbage.size());
  EXPECT_NE(records[1].damage.find("lost 5000 bytes (at least 1 record)"), std::string::npos) << records[1].damage;
  for (std::size_t i = 2; i < records.size(); ++i) {
    EXPECT_EQ(records[i].damage, "");
    EXPECT_EQ(records[i].data, records_[i - 1]);
    EXPECT_EQ(records[i].place.offset, offsets_[i - 1] + garbage.size());
  }
}

// A hostile file that plants a header with a matching length CRC every 12
// bytes, each claiming the rest of the file, would make the resync check
// ~n^2/24 bytes of CRC (here 100,000 candidates: ~60 GB, minutes); the
// budget keeps it to about two passes, so this test takes milliseconds.
TEST(RecordFramingResync, PlantedCandidatesCannotMakeTheScanQuadratic) {
  constexpr std::uint64_t kCandidates = 100000;
  const std::uint64_t size = kRecordHeaderBytes * (kCandidates + 1);
  std::string bytes(size, '\0');  // the first 12 bytes: a header whose CRC does not match
  for (std::uint64_t k = 1; k <= kCandidates; ++k) {
    char* header = bytes.data() + kRecordHeaderBytes * k;
    put_little_endian_u64(header, size - kRecordHeaderBytes * k - framed_size(0));
    put_little_endian_u32(header + 8, masked_crc32c(std::string_view(header, 8)));
  }
  TfRecordScanner scanner("planted", bytes);
  ScannedRecord record;
  ASSERT_TRUE(scanner.next(record));
  // The last candidate but one frames 8 bytes (the last one's length) whose
  // CRC follows them (the last one's length CRC): an intact record, found
  // although the first candidate spent nearly all the budget.
  EXPECT_EQ(record.region_bytes, size - 24);
  EXPECT_FALSE(record.ends_scan);
  ASSERT_TRUE(scanner.next(record));
  EXPECT_EQ(record.damage, "");
  EXPECT_EQ(record.data.size(), 8u);
  EXPECT_FALSE(scanner.next(record));

  ResyncBudget budget(10);
  EXPECT_TRUE(budget.spend(4));
  EXPECT_FALSE(budget.spend(7));  // more than is left: nothing spent
  EXPECT_TRUE(budget.spend(6));
}

TEST_F(RecordFraming, FlippedCrcByteIsACrcMismatchToo) {
  flip_byte(path_, offsets_[1] + kRecordHeaderBytes);  // record 1 is empty: its data CRC follows the header
  const auto records = scan(path_);
  EXPECT_NE(records[1].damage.find("bad data CRC"), std::string::npos) << records[1].damage;
}

TEST_F(RecordFraming, TruncationInEachPartIsNamed) {
  const std::uint64_t last = offsets_[3];
  const std::vector<std::pair<std::uint64_t, std::string>> cuts{
      {last + 5, "truncated: the file ends 5 bytes into the record's 12-byte header"},
      {last + 12 + 2, "truncated: the file ends 2 bytes into the record's 3-byte data"},
      {last + 12 + 3 + 1, "truncated: the file ends 1 bytes into the record's 4-byte data CRC"},
  };
  for (const auto& [size, cause] : cuts) {
    SCOPED_TRACE(cause);
    SetUp();  // the intact file again
    truncate_to(path_, size);
    const auto records = scan(path_);
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[2].damage, "");
    EXPECT_EQ(records[3].damage, cause);
    EXPECT_TRUE(records[3].ends_scan);
    EXPECT_THROW(RecordFile(path_).read_at({path_, 3, last}, 3), RecordError);
  }
}

TEST_F(RecordFraming, ReadAtRefusesALengthTheIndexDoesNotKnow) {
  try {
    RecordFile(path_).read_at({path_, 0, 0}, 6);
    FAIL() << "expected a RecordError";
  } catch (const RecordError& error) {
    EXPECT_NE(error.cause().find("holds 5 data bytes where the index says 6"), std::string::npos) << error.what();
  }
}

TEST(RecordFramingFiles, MissingFileIsADataErrorNamingIt) {
  try {
    TfRecordScanner scanner("/nonexistent/train-00000-of-00001");
    FAIL() << "expected a DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/train-00000-of-00001: cannot be opened"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(RecordFile("/nonexistent/file"), DataError);
}

TEST(RecordFramingFiles, EmptyFileHasNoRecords) {
  ScratchDir dir;
  TfRecordWriter(dir.file("empty")).close();
  EXPECT_TRUE(scan(dir.file("empty")).empty());
}

}  // namespace
}  // namespace orchestrate::tfrecord

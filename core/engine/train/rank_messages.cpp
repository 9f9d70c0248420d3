#include "engine/train/rank_messages.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <type_traits>

namespace orchestrate {

namespace {

// A step row travels as doubles: every field is an integer below 2^53 or a
// double, so the round trip is exact. The field list below is the wire
// format, read and written by the same table.
struct RowField {
  double (*read)(const StepTiming&);
  void (*write)(StepTiming&, double);
};

template <auto Member>
constexpr RowField row_field() {
  return {[](const StepTiming& row) { return static_cast<double>(row.*Member); },
          [](StepTiming& row, double value) {
            using Field = std::remove_reference_t<decltype(row.*Member)>;
            row.*Member = static_cast<Field>(value);
          }};
}

constexpr RowField kRowFields[] = {
    row_field<&StepTiming::step>(),        row_field<&StepTiming::epoch>(),    row_field<&StepTiming::images>(),
    row_field<&StepTiming::rank>(),        row_field<&StepTiming::data_wait_s>(), row_field<&StepTiming::compute_s>(),
    row_field<&StepTiming::sync_s>(),      row_field<&StepTiming::optimizer_s>(), row_field<&StepTiming::total_s>(),
    row_field<&StepTiming::loss>(),        row_field<&StepTiming::learning_rate>(),
    row_field<&StepTiming::bytes_sent>(),
};
constexpr std::int64_t kFieldCount = std::size(kRowFields);

// The agreement's fields, in the order of its tensor.
enum AgreementField : std::int64_t { kLoss, kStop, kSaveByTime, kAgreementFields };

}  // namespace

UpdateAgreement agree_on_update(Collective& collective, const at::Tensor& local_loss, bool stop_here,
                                bool save_by_time) {
  auto message = at::zeros({kAgreementFields}, at::kFloat);
  message[kStop] = stop_here ? 1.0F : 0.0F;
  message[kSaveByTime] = save_by_time ? 1.0F : 0.0F;
  message = message.to(local_loss.device());
  message.narrow(0, kLoss, 1).copy_(local_loss.detach().reshape({1}).to(at::kFloat));
  collective.all_reduce_sum(message);
  const auto sums = message.to(at::kCPU);
  UpdateAgreement agreed;
  agreed.stop = sums[kStop].item<float>() > 0;
  agreed.save_by_time = sums[kSaveByTime].item<float>() > 0;
  agreed.mean_loss = message[kLoss] / static_cast<double>(collective.world_size());
  return agreed;
}

std::vector<StepTiming> gather_step_rows(Collective& collective, std::vector<StepTiming>& mine) {
  const auto options = at::TensorOptions().dtype(at::kDouble).device(collective.device());
  const auto counts = collective.all_gather(at::full({1}, static_cast<double>(mine.size()), options));
  std::int64_t most = 0;
  for (const auto& count : counts) most = std::max(most, static_cast<std::int64_t>(count.item<double>()));
  std::vector<StepTiming> theirs;
  if (most == 0) return theirs;
  auto rows = at::zeros({most, kFieldCount}, at::kDouble);
  double* out = rows.data_ptr<double>();
  for (StepTiming row : mine) {
    row.rank = collective.rank();
    for (const auto& field : kRowFields) *out++ = field.read(row);
  }
  mine.clear();
  const auto all = collective.all_gather(rows.to(collective.device()));
  if (collective.rank() != 0) return theirs;
  for (std::size_t r = 1; r < all.size(); ++r) {
    const auto received = all[r].to(at::kCPU).contiguous();
    const double* in = received.data_ptr<double>();
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(counts[r].item<double>()); ++i) {
      StepTiming row;
      for (const auto& field : kRowFields) field.write(row, *in++);
      theirs.push_back(row);
    }
  }
  return theirs;
}

}  // namespace orchestrate

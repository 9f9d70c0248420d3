#include "engine/train/rank_messages.h"

#include <ATen/ATen.h>
#include <c10/core/impl/VirtualGuardImpl.h>

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

UpdateAgreement UpdateAgreements::agree(Collective& collective, const at::Tensor& local_loss, bool stop_here,
                                        bool save_by_time) {
  UpdateAgreement agreed;
  if (sums_pending_) {
    // Sent an update ago. When the GPU is the bottleneck the host waits
    // here for it to reach that point, so it runs at most an update ahead;
    // the GPU still has this update's forward and backward queued, so it
    // never idles for the wait.
    if (copied_ && !copied_->query()) copied_->synchronize();
    const float* sums = sums_on_host_.data_ptr<float>();
    agreed.stop = sums[kStop] > 0;
    agreed.save_by_time = sums[kSaveByTime] > 0;
    sums_pending_ = false;
  }
  // Filled on the device from host scalars (kernel arguments): a copy from
  // pageable host memory would wait for the device's queue.
  const auto device = local_loss.device();
  auto message = at::empty({kAgreementFields}, at::TensorOptions().dtype(at::kFloat).device(device));
  message.narrow(0, kStop, 1).fill_(stop_here ? 1.0 : 0.0);
  // A save the clock asked for is made at this update: asking again now
  // would save twice in a row, since rank 0's clock restarts only then.
  message.narrow(0, kSaveByTime, 1).fill_(save_by_time && !agreed.save_by_time ? 1.0 : 0.0);
  message.narrow(0, kLoss, 1).copy_(local_loss.detach().reshape({1}));
  collective.all_reduce_sum(message);
  const bool on_gpu = !device.is_cpu();
  if (!sums_on_host_.defined())
    sums_on_host_ = at::empty({kAgreementFields}, at::TensorOptions().dtype(at::kFloat).pinned_memory(on_gpu));
  sums_on_host_.copy_(message, /*non_blocking=*/on_gpu);
  if (on_gpu) {
    if (!copied_) copied_.emplace(device.type());
    copied_->record(c10::impl::VirtualGuardImpl(device.type()).getStream(device));
  }
  sums_pending_ = true;
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

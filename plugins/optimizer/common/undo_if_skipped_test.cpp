#include "undo_if_skipped.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

namespace {

using orchestrate::optimizers::TensorLists;
using orchestrate::optimizers::UndoIfSkipped;

// A model's usual tensors and the odd ones: channels-last (dense, not
// contiguous), a strided view (not dense) and an empty one.
struct Written {
  at::Tensor plain = at::arange(6, at::kFloat).reshape({2, 3});
  at::Tensor channels_last =
      at::arange(24, at::kFloat).reshape({1, 2, 3, 4}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor base = at::arange(20, at::kFloat).reshape({4, 5});
  at::Tensor strided = base.narrow(1, 1, 3);
  at::Tensor empty = at::empty({0}, at::kFloat);

  TensorLists lists() const { return {{plain, channels_last}, {strided, empty}}; }
  // What an overflowed step writes: inf and NaN everywhere.
  void overflow() {
    for (auto* t : {&plain, &channels_last, &strided}) {
      t->fill_(std::numeric_limits<float>::infinity());
      t->narrow(0, 0, 1).fill_(std::numeric_limits<float>::quiet_NaN());
    }
  }
};

TEST(UndoIfSkipped, WhatASkippedStepWroteIsUndoneBitForBit) {
  Written w;
  const auto before = Written();
  const UndoIfSkipped undo(at::ones({}), w.lists());
  w.overflow();
  undo.put_back_if_skipped(w.lists());
  EXPECT_TRUE(w.plain.equal(before.plain));
  EXPECT_TRUE(w.channels_last.equal(before.channels_last));
  EXPECT_TRUE(w.channels_last.is_contiguous(at::MemoryFormat::ChannelsLast)) << "the layout changed";
  EXPECT_TRUE(w.strided.equal(before.strided));
  EXPECT_TRUE(w.base.equal(before.base)) << "the view's base outside the view was written";
}

// Chunks of at most 7 elements: each tensor its own, the empty one with the strided view.
TEST(UndoIfSkipped, PutBackAChunkAtATimeItIsTheSame) {
  Written w;
  const auto before = Written();
  const UndoIfSkipped undo(at::ones({}), w.lists(), /*chunk_elements=*/7);
  w.overflow();
  undo.put_back_if_skipped(w.lists());
  EXPECT_TRUE(w.plain.equal(before.plain));
  EXPECT_TRUE(w.channels_last.equal(before.channels_last));
  EXPECT_TRUE(w.base.equal(before.base));
}

TEST(UndoIfSkipped, AStepTakenIsKept) {
  Written w;
  const UndoIfSkipped undo(at::zeros({}), w.lists());
  for (auto* t : {&w.plain, &w.channels_last, &w.strided}) t->mul_(-2.5);
  const auto taken = Written();
  undo.put_back_if_skipped(w.lists());
  EXPECT_TRUE(w.plain.equal(taken.plain.mul(-2.5)));
  EXPECT_TRUE(w.channels_last.equal(taken.channels_last.mul(-2.5)));
  EXPECT_TRUE(w.strided.equal(taken.strided.mul(-2.5)));
  EXPECT_TRUE(w.base.narrow(1, 0, 1).equal(taken.base.narrow(1, 0, 1))) << "outside the view";
}

// A state replaced rather than written (ftrl's accum) gets the kept values.
TEST(UndoIfSkipped, PutsTheKeptValuesIntoAReplacement) {
  auto state = at::full({3}, 0.1F);
  const UndoIfSkipped undo(at::ones({}), {{state}});
  auto replacement = at::full({3}, std::numeric_limits<float>::infinity());
  undo.put_back_if_skipped({{replacement}});
  EXPECT_TRUE(replacement.equal(at::full({3}, 0.1F)));
}

TEST(UndoIfSkipped, RefusesAReplacementLaidOutOtherwise) {
  const auto state = at::zeros({1, 2, 3, 4}).contiguous(at::MemoryFormat::ChannelsLast);
  const UndoIfSkipped undo(at::ones({}), {{state}});
  EXPECT_THROW(undo.put_back_if_skipped({{at::zeros({1, 2, 3, 4})}}), c10::Error);
}

TEST(UndoIfSkipped, KeepsNothingWithoutAFlag) {
  auto t = at::ones({3});
  const UndoIfSkipped undo(std::nullopt, {{t}});
  t.fill_(7);
  undo.put_back_if_skipped({{t}});
  EXPECT_TRUE(t.equal(at::full({3}, 7.0F)));
}

}  // namespace

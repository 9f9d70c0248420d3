// Text built in a fixed buffer without allocating, locking or calling stdio:
// the only way a fatal signal's handler may format a line. Hand-written
// because every formatting library (fmt, snprintf, iostreams) may allocate
// or take a lock. Truncates silently at the buffer's end.
#pragma once

#include <cstddef>
#include <cstdint>

namespace orchestrate {

class SignalSafeText {
 public:
  SignalSafeText(char* buffer, std::size_t capacity) noexcept : buffer_(buffer), capacity_(capacity) {
    if (capacity_ > 0) buffer_[0] = '\0';
  }

  SignalSafeText& add(const char* text) noexcept {
    for (; text && *text; ++text) put(*text);
    return *this;
  }
  SignalSafeText& add(char c) noexcept {
    put(c);
    return *this;
  }
  SignalSafeText& add(std::int64_t number) noexcept {
    char digits[24];
    int count = 0;
    const bool negative = number < 0;
    // Through unsigned, so the most negative number has a magnitude too.
    std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(number) : static_cast<std::uint64_t>(number);
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    if (negative) put('-');
    while (count > 0) put(digits[--count]);
    return *this;
  }

  const char* data() const noexcept { return buffer_; }
  std::size_t size() const noexcept { return size_; }

 private:
  void put(char c) noexcept {
    if (size_ + 1 >= capacity_) return;
    buffer_[size_++] = c;
    buffer_[size_] = '\0';
  }

  char* buffer_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

}  // namespace orchestrate

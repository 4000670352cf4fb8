// The fuzzer's input as a diff::Source (tests/core/op_source.hpp): each
// choice next(n) takes as few bytes as n needs (big-endian), so one byte
// mutation changes one decision; 0 once the input is used up. ByteRecorder is
// the inverse, used to write seed inputs from chosen decisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "op_source.hpp"

namespace ufq::fuzz {

// Bytes next(n) reads: enough for n - 1; none when n <= 1.
inline unsigned byte_width(std::uint64_t n) {
  unsigned w = 0;
  for (std::uint64_t span = n - 1; n > 1; span >>= 8) {
    ++w;
    if (span <= 0xFF) break;
  }
  return w;
}

class ByteSource : public diff::Source {
 public:
  ByteSource(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint64_t next(std::uint64_t n) override {
    std::uint64_t v = 0;
    for (unsigned i = byte_width(n); i > 0 && pos_ < n_; --i) v = (v << 8) | d_[pos_++];
    return n ? v % n : 0;
  }
  bool done() const override { return pos_ >= n_; }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t pos_ = 0;
};

// Takes its choices from another source and writes the bytes that make a
// ByteSource take the same ones.
class ByteRecorder : public diff::Source {
 public:
  explicit ByteRecorder(diff::Source& from) : from_(from) {}
  std::uint64_t next(std::uint64_t n) override {
    const std::uint64_t v = from_.next(n);
    for (unsigned i = byte_width(n); i > 0; --i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * (i - 1))));
    return v;
  }
  bool done() const override { return from_.done(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  diff::Source& from_;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace ufq::fuzz

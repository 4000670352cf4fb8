// The cost of one sendto() call on a UDP socket, as a program sees it: run
// plainly and under `ufq run` (bench/send_cost.py runs both, side by side).
//
//   send_cost [--count N] [--size BYTES] [--interval-ns NS] [--connected]
//
// Each call is timed alone (CLOCK_MONOTONIC before and after, the clock's own
// cost measured and printed beside it); calls are spaced --interval-ns apart
// (spinning), so under `ufq run` the pacer keeps up and no call waits for
// room in fq's queues: what is measured is the interception and the copy,
// not the pacing. Prints one JSON object: median, p10, p90, p99 (nearest
// rank, include/ufq/histogram.hpp) in ns.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ufq/histogram.hpp"

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "send_cost: %s\nusage: send_cost [--count N] [--size BYTES] [--interval-ns NS] [--connected]\n",
               why);
  std::exit(2);
}

std::uint64_t number(const char* opt, const char* word, std::uint64_t lo, std::uint64_t hi) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(word, &end, 10);
  if (errno || end == word || *end || word[0] == '-' || v < lo || v > hi) {
    std::fprintf(stderr, "send_cost: %s \"%s\" is not an integer in %llu..%llu\n", opt, word,
                 static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t count = 20000, size = 1200, interval = 20000;
  bool connected = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--count")
      count = number("--count", value(), 100, 10'000'000);
    else if (a == "--size")
      size = number("--size", value(), 1, 65507);
    else if (a == "--interval-ns")
      interval = number("--interval-ns", value(), 0, 1'000'000'000);
    else if (a == "--connected")
      connected = true;
    else
      usage(("unknown argument " + a).c_str());
  }

  // A receiver in this process that nobody reads: loopback drops what
  // overflows its buffer after the send call has returned.
  const int rx = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (rx < 0 || bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("send_cost: receiver");
    return 1;
  }
  const int tx = socket(AF_INET, SOCK_DGRAM, 0);
  if (tx < 0 || (connected && connect(tx, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)) {
    std::perror("send_cost: sender");
    return 1;
  }
  std::vector<char> payload(size, 'x');
  const sockaddr* to = connected ? nullptr : reinterpret_cast<sockaddr*>(&addr);
  const socklen_t to_len = connected ? 0 : sizeof addr;

  ufq::Histogram clock_cost, call;
  for (int k = 0; k < 1000; ++k) {
    const std::uint64_t a = now_ns();
    clock_cost.add(now_ns() - a);
  }
  std::uint64_t failed = 0, next = now_ns();
  const std::uint64_t warmup = count / 10;
  for (std::uint64_t k = 0; k < warmup + count; ++k) {
    while (now_ns() < next) {
    }
    const std::uint64_t t0 = now_ns();
    const ssize_t r = sendto(tx, payload.data(), payload.size(), 0, to, to_len);
    const std::uint64_t t1 = now_ns();
    next = t1 + interval;
    if (r < 0) ++failed;
    if (k >= warmup) call.add(t1 - t0);
  }
  std::printf(
      "{\"calls\": %llu, \"size\": %llu, \"interval_ns\": %llu, \"connected\": %s, \"failed\": %llu, "
      "\"median_ns\": %llu, \"p10_ns\": %llu, \"p90_ns\": %llu, \"p99_ns\": %llu, \"max_ns\": %llu, "
      "\"clock_median_ns\": %llu}\n",
      static_cast<unsigned long long>(count), static_cast<unsigned long long>(size),
      static_cast<unsigned long long>(interval), connected ? "true" : "false",
      static_cast<unsigned long long>(failed), static_cast<unsigned long long>(call.quantile(0.5)),
      static_cast<unsigned long long>(call.quantile(0.1)), static_cast<unsigned long long>(call.quantile(0.9)),
      static_cast<unsigned long long>(call.quantile(0.99)), static_cast<unsigned long long>(call.max()),
      static_cast<unsigned long long>(clock_cost.quantile(0.5)));
  close(tx);
  close(rx);
  return failed ? 1 : 0;
}

#include "pace/receiver.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>

#include "ufq/rt/clock.hpp"
#include "pace/wire.hpp"

namespace ufq::rt {
namespace {

// CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few readings.
std::int64_t realtime_offset() {
  std::int64_t best = 0;
  Time best_span = ~Time{0};
  for (int i = 0; i < 16; ++i) {
    const Time a = mono_now();
    timespec rt{};
    ::clock_gettime(CLOCK_REALTIME, &rt);
    const Time b = mono_now();
    const auto real = static_cast<std::int64_t>(rt.tv_sec) * 1'000'000'000 + rt.tv_nsec;
    if (b - a < best_span) {
      best_span = b - a;
      best = real - static_cast<std::int64_t>(a + (b - a) / 2);
    }
  }
  return best;
}

}  // namespace

UdpReceiver::UdpReceiver(const ReceiverConfig& cfg) : cfg_(cfg), flows_(cfg.flows) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  int buf = cfg_.rcvbuf;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&cfg_.bind), sizeof(cfg_.bind)) != 0) {
    const int e = errno;
    ::close(fd_);
    throw std::system_error(e, std::generic_category(), "bind");
  }
  realtime_minus_mono_ = realtime_offset();
}

UdpReceiver::~UdpReceiver() {
  stop();
  if (fd_ >= 0) ::close(fd_);
}

sockaddr_in UdpReceiver::local_address() const {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  return a;
}

void UdpReceiver::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void UdpReceiver::stop() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void UdpReceiver::drain() {
  constexpr unsigned kBatch = 64;
  std::array<mmsghdr, kBatch> msgs{};
  std::array<std::array<std::uint8_t, kWireHeaderSize>, kBatch> heads{};
  std::array<iovec, kBatch> iov{};
  struct alignas(alignof(cmsghdr)) Ctl {
    unsigned char buf[CMSG_SPACE(sizeof(timespec)) + 64];
  };
  std::array<Ctl, kBatch> ctl{};
  for (;;) {
    for (unsigned i = 0; i < kBatch; ++i) {
      iov[i] = iovec{heads[i].data(), heads[i].size()};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = ctl[i].buf;
      msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
    }
    // MSG_TRUNC: msg_len is the datagram's real length (only the header is copied).
    const int r = ::recvmmsg(fd_, msgs.data(), kBatch, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (r <= 0) return;
    ++totals_.recv_calls;
    const Time fallback = mono_now();
    for (int i = 0; i < r; ++i) {
      WireHeader h;
      const std::size_t len = msgs[i].msg_len;
      if (!read_wire_header(heads[i].data(), std::min<std::size_t>(len, kWireHeaderSize), h) ||
          h.flow >= flows_.size()) {
        ++totals_.foreign;
        continue;
      }
      Time at = fallback;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts{};
          std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
          const std::int64_t real = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
          at = static_cast<Time>(real - realtime_minus_mono_);
        }
      }
      FlowArrivals& f = flows_[h.flow];
      if (f.packets == 0) {
        f.first = at;
        f.first_intended = h.intended_ns;
      } else {
        gaps_.add_signed(static_cast<std::int64_t>(at - f.last));
      }
      f.last = std::max(f.last, at);
      f.last_intended = std::max<Time>(f.last_intended, h.intended_ns);
      if (h.seq < f.next_seq) {
        ++f.reordered;
      } else {
        f.gaps_seq += h.seq - f.next_seq;
        f.next_seq = h.seq + 1;
      }
      ++f.packets;
      f.bytes += len;
      ++totals_.packets;
      totals_.bytes += len;
      transit_.add_signed(static_cast<std::int64_t>(at - h.intended_ns));
    }
    count_.store(totals_.packets, std::memory_order_relaxed);
  }
}

void UdpReceiver::loop() {
  ::pthread_setname_np(::pthread_self(), "ufq-receiver");
  if (cfg_.cpu >= 0) pin_current_thread(cfg_.cpu);
  if (cfg_.nice != 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), cfg_.nice);
  set_timer_slack_ns(50'000);
  while (!stop_.load(std::memory_order_acquire)) {
    drain();
    ++totals_.wakeups;
    const Time next = (mono_now() / cfg_.poll_ns + 1) * cfg_.poll_ns;
    const timespec ts = to_timespec(next);
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  }
  drain();
  cpu_ = ufq::rt::thread_cpu_ns();
}

}  // namespace ufq::rt

// A UDP socket bound to an ephemeral loopback port, with a large receive
// buffer so that a burst is not lost before the test reads it: the receiving
// end of the rt tests that send real datagrams. `addr` is where to send.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ufq::rt {

struct LoopbackSocket {
  int fd = -1;
  sockaddr_in addr{};
  LoopbackSocket() {
    fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int buf = 8 << 20;
    // SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it, take what rmem_max allows.
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  ~LoopbackSocket() { close(); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace ufq::rt

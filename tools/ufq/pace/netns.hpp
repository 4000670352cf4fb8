// Two network namespaces joined by a veth pair, created for one run and
// removed afterwards (`ufq pace --netns`): the pacer sends from one, the
// receiver listens in the other, so packets cross a real (virtual) link
// instead of loopback. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and the
// `ip` command. The addresses exist only inside the two namespaces.
#pragma once

#include <netinet/in.h>

#include <functional>
#include <string>

namespace ufq::rt {

class NetnsPair {
 public:
  // Creates ufq<pid>a / ufq<pid>b with veth ends 10.213.<k>.1/30 and .2/30
  // (k from the pid). Throws std::runtime_error with the failing command.
  NetnsPair();
  ~NetnsPair();  // removes both namespaces (and with them the veth pair)
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  const std::string& sender_ns() const { return ns_a_; }
  const std::string& receiver_ns() const { return ns_b_; }
  in_addr sender_addr() const { return addr_a_; }
  in_addr receiver_addr() const { return addr_b_; }

  // Runs fn with the calling thread inside namespace a (sender) or b
  // (receiver); sockets created there stay in it. Restores the thread's
  // namespace afterwards.
  void in_sender(const std::function<void()>& fn) const { in_ns(fd_a_, fn); }
  void in_receiver(const std::function<void()>& fn) const { in_ns(fd_b_, fn); }

 private:
  static void in_ns(int fd, const std::function<void()>& fn);
  void teardown();
  std::string ns_a_, ns_b_, dev_a_, dev_b_;
  in_addr addr_a_{}, addr_b_{};
  int fd_a_ = -1, fd_b_ = -1;
};

}  // namespace ufq::rt

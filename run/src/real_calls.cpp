#include "real_calls.hpp"

#include <dlfcn.h>

namespace ufq::run {
namespace {

template <class F>
void resolve(F& f, const char* name) {
  f = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

RealCalls load() {
  RealCalls r{};
  resolve(r.send, "send");
  resolve(r.sendto, "sendto");
  resolve(r.sendmsg, "sendmsg");
  resolve(r.sendmmsg, "sendmmsg");
  resolve(r.write, "write");
  resolve(r.writev, "writev");
  resolve(r.socket, "socket");
  resolve(r.connect, "connect");
  resolve(r.close, "close");
  resolve(r.close_range, "close_range");
  resolve(r.dup, "dup");
  resolve(r.dup2, "dup2");
  resolve(r.dup3, "dup3");
  resolve(r.fcntl, "fcntl");
  resolve(r.fcntl64, "fcntl64");
  if (!r.fcntl64) r.fcntl64 = r.fcntl;
  resolve(r.ioctl, "ioctl");
  resolve(r.setsockopt, "setsockopt");
  resolve(r.poll, "poll");
  resolve(r.ppoll, "ppoll");
  resolve(r.select, "select");
  resolve(r.pselect, "pselect");
  resolve(r.epoll_ctl, "epoll_ctl");
  resolve(r.epoll_wait, "epoll_wait");
  resolve(r.epoll_pwait, "epoll_pwait");
  resolve(r.epoll_pwait2, "epoll_pwait2");
  resolve(r.execve, "execve");
  resolve(r.execvpe, "execvpe");
  resolve(r.exit_now, "_exit");
  resolve(r.syscall, "syscall");
  r.sigaction = ::dlsym(RTLD_NEXT, "sigaction");
  return r;
}

}  // namespace

const RealCalls& real() {
  static const RealCalls r = load();
  return r;
}

}  // namespace ufq::run

// The libc functions the preload library wraps, resolved with
// dlsym(RTLD_NEXT): what the program would have called without us. Every
// wrapper in interpose.cpp ends in one of these for what it does not pace.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>

namespace ufq::run {

struct RealCalls {
  ssize_t (*send)(int, const void*, std::size_t, int);
  ssize_t (*sendto)(int, const void*, std::size_t, int, const sockaddr*, socklen_t);
  ssize_t (*sendmsg)(int, const msghdr*, int);
  int (*sendmmsg)(int, mmsghdr*, unsigned, int);
  ssize_t (*write)(int, const void*, std::size_t);
  ssize_t (*writev)(int, const iovec*, int);
  int (*socket)(int, int, int);
  int (*connect)(int, const sockaddr*, socklen_t);
  int (*close)(int);
  int (*close_range)(unsigned, unsigned, int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*fcntl64)(int, int, ...);
  int (*ioctl)(int, unsigned long, ...);
  int (*setsockopt)(int, int, int, const void*, socklen_t);
  int (*poll)(pollfd*, nfds_t, int);
  int (*ppoll)(pollfd*, nfds_t, const timespec*, const sigset_t*);
  int (*select)(int, fd_set*, fd_set*, fd_set*, timeval*);
  int (*pselect)(int, fd_set*, fd_set*, fd_set*, const timespec*, const sigset_t*);
  int (*epoll_ctl)(int, int, int, epoll_event*);
  int (*epoll_wait)(int, epoll_event*, int, int);
  int (*epoll_pwait)(int, epoll_event*, int, int, const sigset_t*);
  int (*epoll_pwait2)(int, epoll_event*, int, const timespec*, const sigset_t*);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  void (*exit_now)(int);  // _exit
  long (*syscall)(long, ...);
  void* sigaction;  // int (*)(int, const struct sigaction*, struct sigaction*)
};

// Resolved once, on first use (any thread; the first caller resolves).
const RealCalls& real();

}  // namespace ufq::run

// Built by the install test with nothing but
//   c++ -std=c++20 pkgconfig_core.cpp $(pkg-config --cflags --libs ufq)
// against the installed prefix: the tc language and the scheduler.
#include <cstdio>

#include <ufq/scheduler.hpp>
#include <ufq/tc/fq_options.hpp>

int main() {
  const auto cfg = ufq::tc::parse_fq_line("quantum 9000 nopacing");
  if (!cfg) return 1;
  ufq::FqScheduler fq(*cfg);
  ufq::Packet p;
  p.len = 100;
  p.hash = 7;
  if (fq.enqueue(p, 0) != ufq::Verdict::queued || fq.dequeue(0) != &p) return 1;
  std::printf("fq %s\n", ufq::tc::format_fq_options(*cfg).c_str());
  return 0;
}

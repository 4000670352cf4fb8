// Every installed core header (ufq/, ufq/driver/, ufq/tc/), then the scheduler
// configured from tc words: what a user of ufq::core alone compiles and links.
#include "core_headers.hpp"

#include <cstdio>
#include <string>

int main() {
  const auto cfg = ufq::tc::parse_fq_line("limit 100 quantum 3028 maxrate 1mbit timer_slack 20us");
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().message.c_str());
    return 1;
  }
  ufq::FqScheduler fq(*cfg);
  ufq::FlowOwner owner{.id = 1};
  ufq::Packet p;
  p.len = 1514;
  p.owner = &owner;
  if (fq.enqueue(p, 0) != ufq::Verdict::queued || fq.dequeue(0) != &p) return 1;
  const std::string json = ufq::tc::fq_options_json(*cfg);
  std::printf("%s\n%s\n", ufq::tc::format_fq_options(*cfg).c_str(), json.c_str());
  return json.find("\"limit\":100") == std::string::npos;
}

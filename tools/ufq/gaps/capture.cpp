#include "gaps/capture.hpp"

#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace ufq::gaps {
namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop(int sig) { g_stop_signal.store(sig, std::memory_order_relaxed); }

// SIGINT/SIGTERM end a live capture cleanly (it still reports); restored after.
class StopHandlers {
 public:
  StopHandlers() {
    g_stop_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopHandlers(const StopHandlers&) = delete;
  StopHandlers& operator=(const StopHandlers&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

std::uint16_t be16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }

// The link header's length and the EtherType it carries; false: not IP.
bool link_payload(int dlt, const unsigned char* p, std::uint32_t caplen, std::uint32_t& offset,
                  std::uint16_t& ethertype) {
  switch (dlt) {
    case DLT_EN10MB:
      if (caplen < 14) return false;
      offset = 14;
      ethertype = be16(p + 12);
      if (ethertype == 0x8100 && caplen >= 18) {  // one 802.1Q tag
        ethertype = be16(p + 16);
        offset = 18;
      }
      return true;
    case DLT_LINUX_SLL:
      if (caplen < 16) return false;
      offset = 16;
      ethertype = be16(p + 14);
      return true;
    case DLT_LINUX_SLL2:
      if (caplen < 20) return false;
      offset = 20;
      ethertype = be16(p);
      return true;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
      if (caplen < 1) return false;
      offset = 0;
      ethertype = (p[0] >> 4) == 6 ? 0x86DD : 0x0800;
      return true;
    default:
      return false;
  }
}

// Fills `d` from an IPv4 or IPv6 packet holding a UDP header; false otherwise
// (no extension headers, no later fragments: they carry no UDP header).
bool parse_udp(const unsigned char* ip, std::uint32_t len, std::uint16_t ethertype, Datagram& d) {
  if (ethertype == 0x0800) {
    if (len < 20 || (ip[0] >> 4) != 4) return false;
    const std::uint32_t ihl = (ip[0] & 0x0FU) * 4U;
    if (ihl < 20 || ip[9] != 17 || (be16(ip + 6) & 0x1FFF) != 0 || len < ihl + 8) return false;
    d.ip_bytes = be16(ip + 2);
    const std::uint16_t ulen = be16(ip + ihl + 4);
    d.payload = ulen >= 8 ? ulen - 8U : 0U;
    return true;
  }
  if (ethertype == 0x86DD) {
    if (len < 48 || (ip[0] >> 4) != 6 || ip[6] != 17) return false;
    d.ip_bytes = 40U + be16(ip + 4);
    const std::uint16_t ulen = be16(ip + 40 + 4);
    d.payload = ulen >= 8 ? ulen - 8U : 0U;
    return true;
  }
  return false;
}

struct Sink {
  int dlt = 0;
  GapStats* stats = nullptr;
  CaptureCounts* counts = nullptr;
  std::uint64_t limit = 0;  // datagrams, 0: none
  std::uint32_t segment = 0;
  pcap_t* handle = nullptr;
};

extern "C" void on_packet(u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
  Sink& s = *reinterpret_cast<Sink*>(user);
  ++s.counts->captured;
  // Opened with nanosecond precision, so tv_usec holds nanoseconds.
  Datagram d;
  d.time_ns = static_cast<std::uint64_t>(h->ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(h->ts.tv_usec);
  std::uint32_t off = 0;
  std::uint16_t type = 0;
  if (!link_payload(s.dlt, bytes, h->caplen, off, type) || !parse_udp(bytes + off, h->caplen - off, type, d)) {
    ++s.counts->not_udp;
    return;
  }
  if (s.segment && d.payload > s.segment) {
    ++s.counts->gso_trains;
    const std::uint32_t headers = d.ip_bytes - d.payload;
    for (std::uint32_t left = d.payload; left > 0;) {
      const std::uint32_t seg = left < s.segment ? left : s.segment;
      s.stats->add({d.time_ns, seg, seg + headers});
      left -= seg;
    }
  } else {
    s.stats->add(d);
  }
  if (s.limit && s.stats->datagrams() >= s.limit) pcap_breakloop(s.handle);
}

struct PcapClose {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapPtr = std::unique_ptr<pcap_t, PcapClose>;

void check(pcap_t* p, int rc, const char* what) {
  if (rc < 0) throw std::runtime_error(std::string(what) + ": " + pcap_geterr(p));
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

void set_filter(pcap_t* p, const std::string& filter) {
  bpf_program prog{};
  if (pcap_compile(p, &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) < 0)
    throw std::runtime_error("filter \"" + filter + "\": " + pcap_geterr(p));
  const int rc = pcap_setfilter(p, &prog);
  pcap_freecode(&prog);
  check(p, rc, "pcap_setfilter");
}

void check_link(pcap_t* p) {
  const int dlt = pcap_datalink(p);
  switch (dlt) {
    case DLT_EN10MB: case DLT_LINUX_SLL: case DLT_LINUX_SLL2: case DLT_RAW: case DLT_IPV4: case DLT_IPV6:
      return;
    default: {
      const char* name = pcap_datalink_val_to_name(dlt);
      throw std::runtime_error(std::string("link type ") + (name ? name : std::to_string(dlt)) +
                               " is not one ufq gaps reads (EN10MB, LINUX_SLL, LINUX_SLL2, RAW)");
    }
  }
}

}  // namespace

CaptureCounts capture(const CaptureOptions& o, GapStats& stats, const std::function<void()>& ready) {
  CaptureCounts counts;
  char err[PCAP_ERRBUF_SIZE] = {};
  Sink sink;
  sink.stats = &stats;
  sink.counts = &counts;
  if (!o.file.empty()) {
    PcapPtr p(pcap_open_offline_with_tstamp_precision(o.file.c_str(), PCAP_TSTAMP_PRECISION_NANO, err));
    if (!p) throw std::runtime_error(o.file + ": " + err);
    check_link(p.get());
    set_filter(p.get(), o.filter);
    sink.dlt = pcap_datalink(p.get());
    sink.limit = o.max_datagrams;
    sink.segment = o.segment;
    sink.handle = p.get();
    const int rc = pcap_loop(p.get(), -1, on_packet, reinterpret_cast<u_char*>(&sink));
    if (rc == PCAP_ERROR) throw std::runtime_error(o.file + ": " + pcap_geterr(p.get()));
    return counts;
  }

  PcapPtr p(pcap_create(o.interface.c_str(), err));
  if (!p) throw std::runtime_error(o.interface + ": " + err);
  pcap_set_snaplen(p.get(), 128);  // headers only
  pcap_set_promisc(p.get(), 0);
  pcap_set_timeout(p.get(), 20);  // ms: the poll below wakes at least this often
  pcap_set_buffer_size(p.get(), static_cast<int>(o.buffer_bytes));
  if (pcap_set_tstamp_precision(p.get(), PCAP_TSTAMP_PRECISION_NANO) != 0)
    throw std::runtime_error(o.interface + ": this libpcap cannot give nanosecond timestamps");
  const int rc = pcap_activate(p.get());
  if (rc < 0) {
    const std::string why = rc == PCAP_ERROR_PERM_DENIED
                                ? std::string("no permission to capture (needs root or CAP_NET_RAW)")
                                : pcap_geterr(p.get());
    throw std::runtime_error(o.interface + ": " + why);
  }
  check_link(p.get());
  set_filter(p.get(), o.filter);
  check(p.get(), pcap_setnonblock(p.get(), 1, err), "pcap_setnonblock");
  sink.dlt = pcap_datalink(p.get());
  sink.limit = o.max_datagrams;
  sink.segment = o.segment;
  sink.handle = p.get();
  const int fd = pcap_get_selectable_fd(p.get());
  if (fd < 0) throw std::runtime_error(o.interface + ": no selectable descriptor");

  StopHandlers handlers;
  if (ready) ready();
  const std::uint64_t start = now_ns();
  std::uint64_t last_seen = 0;  // steady-clock time the count last grew
  std::uint64_t last_count = 0;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    ::poll(&pfd, 1, 20);
    if (pcap_dispatch(p.get(), -1, on_packet, reinterpret_cast<u_char*>(&sink)) == PCAP_ERROR)
      throw std::runtime_error(o.interface + ": " + pcap_geterr(p.get()));
    const std::uint64_t now = now_ns();
    if (stats.datagrams() != last_count) {
      last_count = stats.datagrams();
      last_seen = now;
    }
    if ((counts.stop_signal = g_stop_signal.load(std::memory_order_relaxed)) != 0) break;
    if (now - start >= o.max_ns) break;
    if (o.max_datagrams && stats.datagrams() >= o.max_datagrams) break;
    if (o.idle_ns && last_count && now - last_seen >= o.idle_ns) break;
  }
  pcap_stat ps{};
  if (pcap_stats(p.get(), &ps) == 0) {
    counts.kernel_dropped = ps.ps_drop;
    counts.interface_dropped = ps.ps_ifdrop;
  }
  return counts;
}

}  // namespace ufq::gaps

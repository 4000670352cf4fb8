#include "ufq/sim/pcap_trace.hpp"

#include <pcap/pcap.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>

namespace ufq::sim {

namespace {

using Tuple = std::array<std::uint8_t, 37>;  // protocol, addresses (v6 size), ports

// The 5-tuple of an IPv4/IPv6 packet starting at `ip`; false if not IP.
bool tuple_of(const std::uint8_t* ip, std::size_t len, Tuple& t) {
  t.fill(0);
  if (len < 1) return false;
  const unsigned version = ip[0] >> 4;
  std::size_t l4 = 0;
  std::uint8_t proto = 0;
  if (version == 4 && len >= 20) {
    proto = ip[9];
    std::memcpy(&t[1], ip + 12, 8);
    l4 = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
  } else if (version == 6 && len >= 40) {
    proto = ip[6];
    std::memcpy(&t[1], ip + 8, 32);
    l4 = 40;
  } else {
    return false;
  }
  t[0] = proto;
  if ((proto == 6 || proto == 17) && len >= l4 + 4) std::memcpy(&t[33], ip + l4, 4);
  return true;
}

}  // namespace

Trace read_pcap(const std::string& path) {
  std::array<char, PCAP_ERRBUF_SIZE> err{};
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> pc(pcap_open_offline(path.c_str(), err.data()), pcap_close);
  if (!pc) throw std::invalid_argument("cannot read capture " + path + ": " + err.data());
  const int link = pcap_datalink(pc.get());
  if (link != DLT_EN10MB && link != DLT_RAW)
    throw std::invalid_argument("capture " + path + ": link type " + std::to_string(link) +
                                " not supported (Ethernet or raw IP)");
  Trace trace;
  std::map<Tuple, std::uint32_t> ids;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  bool first = true;
  Time t0 = 0;
  int rc;
  while ((rc = pcap_next_ex(pc.get(), &h, &data)) == 1) {
    const Time t = static_cast<Time>(h->ts.tv_sec) * kNsecPerSec + static_cast<Time>(h->ts.tv_usec) * kNsecPerUsec;
    if (first) {
      t0 = t;
      first = false;
    }
    const std::uint8_t* ip = data;
    std::size_t caplen = h->caplen;
    if (link == DLT_EN10MB) {
      std::size_t off = 14;
      if (caplen >= 18 && data[12] == 0x81 && data[13] == 0x00) off = 18;  // one VLAN tag
      ip = caplen > off ? data + off : data;
      caplen = caplen > off ? caplen - off : 0;
    }
    Tuple tup;
    if (!tuple_of(ip, caplen, tup)) {
      ++trace.skipped;
      tup.fill(0xFF);
    }
    auto [it, fresh] = ids.try_emplace(tup, static_cast<std::uint32_t>(ids.size()));
    (void)fresh;
    trace.packets.push_back(TracePacket{t >= t0 ? t - t0 + 1 : 1, h->len, it->second});
  }
  if (rc == PCAP_ERROR)
    throw std::invalid_argument("capture " + path + ": " + pcap_geterr(pc.get()));
  trace.flows = ids.size();
  return trace;
}

}  // namespace ufq::sim

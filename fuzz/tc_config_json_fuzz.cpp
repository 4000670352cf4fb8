// libFuzzer target for the JSON configuration reader. Input: byte 0 selects
// the surroundings (fuzz_check.hpp), the rest is the JSON text.
// Properties: a refusal carries a message; an accepted configuration is
// valid, and its own `tc -j` qdisc output reads back as its kernel view.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "ufq/tc/config_json.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ufq;
  if (size == 0) return 0;
  const fuzz::Surroundings env = fuzz::surroundings(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto read = tc::fq_config_from_json(text, env.base);
  if (!read.ok()) {
    if (read.error().message.empty()) fuzz::broken("refusal without message", std::string(text));
    return 0;
  }
  const FqConfig& cfg = *read;
  if (const auto refused = validate(cfg)) fuzz::broken("accepted but invalid", refused->what());
  const std::string json = tc::format_qdisc_json(cfg);
  const auto again = tc::fq_config_from_json(json, fuzz::base_of(cfg));
  if (!again.ok()) fuzz::broken("own output refused", json + " -> " + again.error().message);
  if (!(*again == tc::dumped_config(cfg))) fuzz::broken("own output changed the config", json);
  const auto words = tc::fq_options_args(cfg);
  const auto parsed = tc::parse_fq_options(words, fuzz::base_of(cfg));
  if (!parsed.ok() || !(*parsed == cfg)) fuzz::broken("exact words differ", tc::join_words(words));
  return 0;
}

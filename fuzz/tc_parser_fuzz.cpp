// libFuzzer target for the tc-fq word parser. Input: byte 0 selects the
// surroundings (fuzz_check.hpp), the rest is split at whitespace into words.
// Properties:
//   * a refusal always carries a message;
//   * an accepted configuration passes ufq::validate();
//   * its exact words (fq_options_args) parse back to the same FqConfig;
//   * the tc line ends in a space and is stable through that re-parse;
//   * its `tc -j -s` qdisc JSON reads back as the kernel's view (dumped_config).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "ufq/tc/config_json.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ufq;
  if (size == 0) return 0;
  fuzz::Surroundings env = fuzz::surroundings(data[0]);
  std::vector<std::string> notes;
  env.options.notes = &notes;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<std::string> words = tc::split_words(text);

  const auto parsed = tc::parse_fq_options(words, env.base, env.options);
  if (!parsed.ok()) {
    if (parsed.error().message.empty()) fuzz::broken("refusal without message", tc::join_words(words));
    return 0;
  }
  const FqConfig& cfg = *parsed;
  if (const auto refused = validate(cfg)) fuzz::broken("accepted but invalid", refused->what());

  const std::vector<std::string> args = tc::fq_options_args(cfg);
  const auto again = tc::parse_fq_options(args, fuzz::base_of(cfg));
  if (!again.ok())
    fuzz::broken("exact words refused",
                 tc::join_words(words) + " -> " + tc::join_words(args) + " -> " + again.error().message);
  if (!(*again == cfg))
    fuzz::broken("exact words changed the config", tc::join_words(words) + " -> " + tc::join_words(args));

  const std::string line = tc::format_fq_options(cfg);
  if (line.empty() || line.back() != ' ') fuzz::broken("tc line without trailing space", line);
  if (tc::format_fq_options(*again) != line) fuzz::broken("tc line changed", line);

  const std::string json = std::string("[").append(tc::format_qdisc_json(cfg, FqStats{})).append("]");
  const auto from_json = tc::fq_config_from_json(json, fuzz::base_of(cfg));
  if (!from_json.ok()) fuzz::broken("tc -j output refused", json + " -> " + from_json.error().message);
  if (!(*from_json == tc::dumped_config(cfg))) fuzz::broken("tc -j output changed the config", json);
  return 0;
}

// Names of the scheduler's enumerations, as reports and tests print them.
#include "ufq/flow_info.hpp"
#include "ufq/verdict.hpp"

namespace ufq {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::queued: return "queued";
    case Verdict::drop_limit: return "limit";
    case Verdict::drop_flow_limit: return "flow_limit";
    case Verdict::drop_horizon: return "horizon";
  }
  return "?";
}

const char* to_string(FlowState s) {
  switch (s) {
    case FlowState::detached: return "detached";
    case FlowState::new_list: return "new";
    case FlowState::old_list: return "old";
    case FlowState::throttled: return "throttled";
  }
  return "?";
}
}  // namespace ufq

#include "ufq/tc/error.hpp"

namespace ufq::tc {

const char* to_string(Error::Kind kind) {
  switch (kind) {
    case Error::Kind::syntax: return "syntax";
    case Error::Kind::kernel: return "kernel";
    case Error::Kind::input: return "input";
  }
  return "?";
}

}  // namespace ufq::tc

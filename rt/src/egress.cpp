// Egress is header-only apart from this anchor for its vtable.
#include "ufq/rt/egress.hpp"

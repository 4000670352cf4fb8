#include <gtest/gtest.h>
TEST(Run, Placeholder) {}

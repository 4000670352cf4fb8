// iproute2 number, rate, time and size rules (docs/fq-rules.md#tc-parsing-and-units).
#include <gtest/gtest.h>

#include <optional>

#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

TEST(ParseUnsigned, DecimalHexOctal) {
  EXPECT_EQ(parse_unsigned("0"), 0U);
  EXPECT_EQ(parse_unsigned("10000"), 10000U);
  EXPECT_EQ(parse_unsigned("0x10"), 16U);
  EXPECT_EQ(parse_unsigned("0X1f"), 31U);
  EXPECT_EQ(parse_unsigned("010"), 8U);  // leading 0 = octal, as strtoul base 0
  EXPECT_EQ(parse_unsigned("4294967295"), 4294967295U);
  EXPECT_EQ(parse_unsigned("0xffffffff"), 4294967295U);
  EXPECT_EQ(parse_unsigned("+7"), 7U);
  EXPECT_EQ(parse_unsigned("-0"), 0U);
}

TEST(ParseUnsigned, Refusals) {
  EXPECT_EQ(parse_unsigned(""), std::nullopt);
  EXPECT_EQ(parse_unsigned("3028b"), std::nullopt);  // no unit suffix
  EXPECT_EQ(parse_unsigned("10000p"), std::nullopt);
  EXPECT_EQ(parse_unsigned("4294967296"), std::nullopt);
  EXPECT_EQ(parse_unsigned("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_unsigned("-1"), std::nullopt);
  EXPECT_EQ(parse_unsigned("08"), std::nullopt);  // 8 is not an octal digit
  EXPECT_EQ(parse_unsigned("1.5"), std::nullopt);
  EXPECT_EQ(parse_unsigned("0x"), std::nullopt);
  EXPECT_EQ(parse_unsigned(std::string_view("5\0" "1", 3)), std::nullopt);
}

TEST(ParseUnsigned, Base10) {
  EXPECT_EQ(parse_unsigned("010", 10), 10U);
  EXPECT_EQ(parse_unsigned("0x10", 10), std::nullopt);
}

TEST(ParseInteger, Range) {
  EXPECT_EQ(parse_integer("3"), 3);
  EXPECT_EQ(parse_integer("-5"), -5);
  EXPECT_EQ(parse_integer("2147483647"), 2147483647);
  EXPECT_EQ(parse_integer("2147483648"), std::nullopt);
  EXPECT_EQ(parse_integer("3x"), std::nullopt);
}

TEST(ParseRate, Suffixes) {
  EXPECT_EQ(parse_rate("8"), 1U);  // no suffix = bit/s
  EXPECT_EQ(parse_rate("8bit"), 1U);
  EXPECT_EQ(parse_rate("1kbit"), 125U);
  EXPECT_EQ(parse_rate("1mbit"), 125000U);
  EXPECT_EQ(parse_rate("1gbit"), 125000000U);
  EXPECT_EQ(parse_rate("0.01tbit"), 1250000000U);
  EXPECT_EQ(parse_rate("1kibit"), 128U);
  EXPECT_EQ(parse_rate("1mibit"), 131072U);
  EXPECT_EQ(parse_rate("1gibit"), 134217728U);
  EXPECT_EQ(parse_rate("0.001tibit"), 137438953U);  // 137438953.472 B/s, fraction dropped
  EXPECT_EQ(parse_rate("1bps"), 1U);              // bps is BYTES per second
  EXPECT_EQ(parse_rate("1kbps"), 1000U);
  EXPECT_EQ(parse_rate("1mbps"), 1000000U);
  EXPECT_EQ(parse_rate("1gbps"), 1000000000U);
  EXPECT_EQ(parse_rate("1kibps"), 1024U);
  EXPECT_EQ(parse_rate("1mibps"), 1048576U);
  EXPECT_EQ(parse_rate("1gibps"), 1073741824U);
  EXPECT_EQ(parse_rate("0.001tbps"), 1000000000U);
  EXPECT_EQ(parse_rate("0.000001tibps"), 1099511U);  // 1099511.627776 B/s, fraction dropped
}

TEST(ParseRate, CaseInsensitiveAndFractions) {
  EXPECT_EQ(parse_rate("550Kbit"), 68750U);
  EXPECT_EQ(parse_rate("10MBIT"), 1250000U);
  EXPECT_EQ(parse_rate("1.5mbit"), 187500U);
  EXPECT_EQ(parse_rate("1.5Gbit"), 187500000U);
  EXPECT_EQ(parse_rate("1e6"), 125000U);
  EXPECT_EQ(parse_rate("1MBps"), 1000000U);
}

// tc truncates to whole bytes/s (Linux 6.1 + iproute2 6.1: `maxrate 12345` shows
// `maxrate 12344bit`, tests/data/kernel-6.1/tc-params.txt) and refuses only what
// does not fit 32 bits.
TEST(ParseRate, WholeBytesWithin32Bits) {
  EXPECT_EQ(parse_rate("100bit"), 12U);  // 12.5 B/s
  EXPECT_EQ(parse_rate("12345"), 1543U);
  EXPECT_EQ(parse_rate("7bit"), 0U);
  EXPECT_EQ(parse_rate("4294967295.5bps"), 4294967295U);
  EXPECT_EQ(parse_rate("4294967295bps"), 4294967295U);
  EXPECT_EQ(parse_rate("4294967296bps"), std::nullopt);
  EXPECT_EQ(parse_rate("35gbit"), std::nullopt);  // > 2^32 B/s
  EXPECT_EQ(parse_rate("34gbit"), 4250000000U);
  EXPECT_EQ(parse_rate("0"), 0U);
  EXPECT_EQ(parse_rate("-0"), 0U);
  EXPECT_EQ(parse_rate("-8"), std::nullopt);
  EXPECT_EQ(parse_rate("inf"), std::nullopt);
  EXPECT_EQ(parse_rate("nan"), std::nullopt);
  EXPECT_EQ(parse_rate("10mbits"), std::nullopt);
  EXPECT_EQ(parse_rate("mbit"), std::nullopt);
  EXPECT_EQ(parse_rate(""), std::nullopt);
}

TEST(ParsePercent, Range) {
  EXPECT_DOUBLE_EQ(*parse_percent("10%"), 0.1);
  EXPECT_DOUBLE_EQ(*parse_percent("100%"), 1.0);
  EXPECT_DOUBLE_EQ(*parse_percent("0.5%"), 0.005);
  EXPECT_EQ(parse_percent("101%"), std::nullopt);
  EXPECT_EQ(parse_percent("-1%"), std::nullopt);
  EXPECT_EQ(parse_percent("10"), std::nullopt);
  EXPECT_EQ(parse_percent("10%x"), std::nullopt);
  EXPECT_EQ(parse_percent("%"), std::nullopt);
}

TEST(ParseTimeUs, Suffixes) {
  EXPECT_EQ(parse_time_us("40"), 40U);  // no suffix = us
  EXPECT_EQ(parse_time_us("40us"), 40U);
  EXPECT_EQ(parse_time_us("40usec"), 40U);
  EXPECT_EQ(parse_time_us("40usecs"), 40U);
  EXPECT_EQ(parse_time_us("40ms"), 40000U);
  EXPECT_EQ(parse_time_us("40msec"), 40000U);
  EXPECT_EQ(parse_time_us("40msecs"), 40000U);
  EXPECT_EQ(parse_time_us("10s"), 10000000U);
  EXPECT_EQ(parse_time_us("10sec"), 10000000U);
  EXPECT_EQ(parse_time_us("10secs"), 10000000U);
  EXPECT_EQ(parse_time_us("10S"), 10000000U);
  EXPECT_EQ(parse_time_us("1.5MS"), 1500U);
  EXPECT_EQ(parse_time_us("4.29e+03s"), 4290000000U);
}

TEST(ParseTimeUs, TruncationAndRefusals) {
  EXPECT_EQ(parse_time_us("1.9"), 1U);  // truncated toward zero
  EXPECT_EQ(parse_time_us("0.5us"), 0U);
  EXPECT_EQ(parse_time_us("4294967295"), 4294967295U);
  EXPECT_EQ(parse_time_us("4294967296"), std::nullopt);
  EXPECT_EQ(parse_time_us("4295s"), std::nullopt);
  EXPECT_EQ(parse_time_us("-1"), std::nullopt);
  EXPECT_EQ(parse_time_us("10ns"), std::nullopt);  // no ns for microsecond times
  EXPECT_EQ(parse_time_us("10m"), std::nullopt);
  EXPECT_EQ(parse_time_us("ms"), std::nullopt);
  EXPECT_EQ(parse_time_us("inf"), std::nullopt);
}

TEST(ParseTime64Ns, Suffixes) {
  EXPECT_EQ(parse_time64_ns("100"), 100);  // no suffix = ns
  EXPECT_EQ(parse_time64_ns("100ns"), 100);
  EXPECT_EQ(parse_time64_ns("100nsec"), 100);
  EXPECT_EQ(parse_time64_ns("100nsecs"), 100);
  EXPECT_EQ(parse_time64_ns("10us"), 10000);
  EXPECT_EQ(parse_time64_ns("8.57us"), 8570);
  EXPECT_EQ(parse_time64_ns("1ms"), 1000000);
  EXPECT_EQ(parse_time64_ns("2s"), 2000000000);
  EXPECT_EQ(parse_time64_ns("-5"), -5);
  EXPECT_EQ(parse_time64_ns("1e19"), std::nullopt);
  EXPECT_EQ(parse_time64_ns("5x"), std::nullopt);
}

TEST(FormatSize, Rounding) {
  EXPECT_EQ(format_size(0), "0b");
  EXPECT_EQ(format_size(1023), "1023b");
  EXPECT_EQ(format_size(1024), "1Kb");
  EXPECT_EQ(format_size(3028), "3028b");
  EXPECT_EQ(format_size(15140), "15140b");
  EXPECT_EQ(format_size(9000), "9000b");
  EXPECT_EQ(format_size(10240), "10Kb");
  EXPECT_EQ(format_size(10255), "10Kb");   // 15 bytes off: still Kb
  EXPECT_EQ(format_size(10256), "10256b");  // 16 bytes off: plain bytes
  EXPECT_EQ(format_size(10225), "10Kb");
  EXPECT_EQ(format_size(18432), "18Kb");
  EXPECT_EQ(format_size(900000), "900000b");
  EXPECT_EQ(format_size(1048576), "1Mb");
  EXPECT_EQ(format_size(1048576 + 1023), "1Mb");
  EXPECT_EQ(format_size(1048576 + 1024), "1025Kb");
  EXPECT_EQ(format_size(2147483648ULL), "2Gb");
  EXPECT_EQ(format_size(3221225472ULL + 1000), "3Gb");
  EXPECT_EQ(format_size(4294967295ULL), "4Gb");
}

TEST(FormatRate, ThousandsUnits) {
  EXPECT_EQ(format_rate(0), "0bit");
  EXPECT_EQ(format_rate(100), "800bit");
  EXPECT_EQ(format_rate(125), "1Kbit");
  EXPECT_EQ(format_rate(68750), "550Kbit");
  EXPECT_EQ(format_rate(12500), "100Kbit");
  EXPECT_EQ(format_rate(1250), "10Kbit");
  EXPECT_EQ(format_rate(187500), "1500Kbit");
  EXPECT_EQ(format_rate(125000), "1Mbit");
  EXPECT_EQ(format_rate(1000000), "8Mbit");
  EXPECT_EQ(format_rate(125000000), "1Gbit");
  EXPECT_EQ(format_rate(1001), "8008bit");  // not divisible, < 1e6: stays in bit
  EXPECT_EQ(format_rate(154321), "1234Kbit");  // >= 1e6: divided, precision lost (as tc)
  EXPECT_EQ(format_rate(4294967295ULL), "34359Mbit");
}

TEST(FormatTime, Microseconds) {
  EXPECT_EQ(format_time_us(0), "0us");
  EXPECT_EQ(format_time_us(100), "100us");
  EXPECT_EQ(format_time_us(999), "999us");
  EXPECT_EQ(format_time_us(1000), "1ms");
  EXPECT_EQ(format_time_us(1500), "1.5ms");
  EXPECT_EQ(format_time_us(40000), "40ms");
  EXPECT_EQ(format_time_us(123456), "123ms");
  EXPECT_EQ(format_time_us(10000000), "10s");
  EXPECT_EQ(format_time_us(4294967295U), "4.29e+03s");
}

TEST(FormatTime, Nanoseconds) {
  EXPECT_EQ(format_time64_ns(0), "0ns");
  EXPECT_EQ(format_time64_ns(100), "100ns");
  EXPECT_EQ(format_time64_ns(10000), "10us");
  EXPECT_EQ(format_time64_ns(8570), "8.57us");
  EXPECT_EQ(format_time64_ns(50000), "50us");
  EXPECT_EQ(format_time64_ns(1234567), "1.23ms");
  EXPECT_EQ(format_time64_ns(2000000000), "2s");
  EXPECT_EQ(format_time64_ns(-5), "-5ns");
}

TEST(FormatG3, SignificantDigits) {
  EXPECT_EQ(format_g3(1.0), "1");
  EXPECT_EQ(format_g3(1.5), "1.5");
  EXPECT_EQ(format_g3(1.2345), "1.23");
  EXPECT_EQ(format_g3(4294.967295), "4.29e+03");
}

}  // namespace
}  // namespace ufq::tc

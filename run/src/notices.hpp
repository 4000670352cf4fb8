// Messages to the user on stderr, "ufq run: ..." (written with the real
// write(2), never through stdio: the program's buffers are its own).
#pragma once

#include <atomic>
#include <string>

namespace ufq::run {

// One line on stderr.
void say(const std::string& line);
// Text as it is (several lines, each ending in a newline).
void say_raw(const std::string& text);

// What cannot be paced, said once per process (and again in a fork child).
enum class Notice : unsigned { raw_socket, packet_socket, io_uring, corked, unmodelled_cmsg, count };
void say_once(Notice n, const std::string& line);
// A fork child says its notices again (it is another process).
void reset_notices();

}  // namespace ufq::run

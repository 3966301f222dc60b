#include "tracker/access_list.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "protocol/text.hpp"

namespace sk {

namespace {

/// At most 60 characters of a bad line, control bytes as '?'.
std::string shown(std::string_view s) {
  std::string out(s.substr(0, 60));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) c = '?';
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace

const char* to_string(access_mode m) noexcept {
  switch (m) {
    case access_mode::off:
      return "off";
    case access_mode::allow:
      return "allow";
    case access_mode::deny:
      return "deny";
  }
  return "off";
}

std::optional<access_mode> parse_access_mode(std::string_view text) noexcept {
  if (text == "off") return access_mode::off;
  if (text == "allow") return access_mode::allow;
  if (text == "deny") return access_mode::deny;
  return std::nullopt;
}

std::vector<info_hash> access_list::sorted() const {
  std::vector<info_hash> out(set_.begin(), set_.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<access_list> access_list::parse(std::string_view text, std::string* error) {
  access_list list;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() == '#') continue;
    info_hash h;
    bool ok = line.size() == 40;
    for (std::size_t i = 0; ok && i < 20; ++i) {
      const int hi = hex_digit(line[2 * i]);
      const int lo = hex_digit(line[2 * i + 1]);
      ok = hi >= 0 && lo >= 0;
      if (ok) h.bytes[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    if (!ok) {
      if (error != nullptr)
        *error = "line " + std::to_string(line_no) + ": '" + shown(line) +
                 "' is not an info_hash (40 hex digits)";
      return std::nullopt;
    }
    list.add(h);  // a repeated hash is harmless
  }
  return list;
}

std::string access_list::to_text() const {
  std::string out = "# swarmkeeper access list: one info_hash (40 hex digits) per line\n";
  for (const auto& h : sorted()) {
    out += h.hex();
    out += '\n';
  }
  return out;
}

std::optional<access_list> load_access_file(const std::string& path, std::string* error) {
  std::ifstream f{path, std::ios::binary};
  if (!f) {
    if (error != nullptr) *error = "cannot read '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream content;
  content << f.rdbuf();
  if (f.bad()) {
    if (error != nullptr) *error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  std::string why;
  auto list = access_list::parse(content.str(), &why);
  if (!list && error != nullptr) *error = path + ": " + why;
  return list;
}

bool save_access_file(const std::string& path, const access_list& list, std::string* error) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const std::string text = list.to_text();
  auto fail = [&](const char* what) {
    if (error != nullptr) *error = std::string(what) + " '" + tmp + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return fail("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("cannot sync");
  }
  if (::close(fd) != 0) return fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    if (error != nullptr)
      *error = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

access_control::access_control(access_mode mode, std::string file, access_list initial)
    : mode_(mode),
      file_(std::move(file)),
      cell_(std::make_shared<const access_list>(std::move(initial))) {}

bool access_control::check(access_mode m, const info_hash& h) const noexcept {
  // One cached snapshot per thread (I/O threads, UDP workers): no lock and
  // no reference count per request while the list does not change.
  thread_local snapshot_reader<access_list> reader;
  const bool listed = reader.get(cell_)->contains(h);
  return m == access_mode::allow ? listed : !listed;
}

access_control::change_result access_control::set_allowed(const info_hash& h, bool allow) {
  const access_mode m = mode();
  if (m == access_mode::off) return {false, "access list is off"};
  std::lock_guard<std::mutex> lock{write_mutex_};
  access_list next = *cell_.load();
  const bool listed = allow == (m == access_mode::allow);
  if (listed)
    next.add(h);
  else
    next.remove(h);
  auto published = std::make_shared<const access_list>(std::move(next));
  cell_.store(published);
  if (!file_.empty()) {
    std::string error;
    if (!save_access_file(file_, *published, &error))
      return {false, "changed in memory, but " + error};
  }
  return {true, {}};
}

access_control::change_result access_control::reload() {
  if (file_.empty()) return {false, "no access file configured (access.file)"};
  std::lock_guard<std::mutex> lock{write_mutex_};
  std::string error;
  auto list = load_access_file(file_, &error);
  if (!list) return {false, error};
  cell_.store(std::make_shared<const access_list>(std::move(*list)));
  return {true, {}};
}

void access_control::restore(access_list list) {
  std::lock_guard<std::mutex> lock{write_mutex_};
  cell_.store(std::make_shared<const access_list>(std::move(list)));
}

}  // namespace sk

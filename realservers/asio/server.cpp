// asio-server: real boost.asio (standalone asio, Debian's libasio-dev)
// beside the model of it, concbench's sharedqueue: one asio::io_context
// run by THREADS threads, which share its one operation queue (asio's
// scheduler over its epoll_reactor, the reactor token in the queue), one
// TCP acceptor whose async_accept is re-armed from its own handler, and
// per connection async_read_some -> every complete request in the buffer
// answered -> one async_write of the answers -> async_read_some again
// (keep-alive). It answers the HTTP dialect's /work as the harness's
// nginx does (harness/nginx.go, NginxBody; must match): status 200, a
// fixed body, Content-Length, keep-alive; any other path 404 with an
// empty body. It does none of the workload's work. Malformed input
// closes the connection.
//
// Usage: asio-server THREADS HOST PORT (PORT 0: the kernel's choice).
// Once every thread runs it prints one line to stdout,
//
//	listening HOST:PORT asio/1.22.1
//
// and then answers the harness's control channel on stdin, a command a
// line: "stats" prints
//
//	stats ACCEPTED TID:REQUESTS TID:REQUESTS ...
//
// (connections accepted so far; a pair per io_context thread, its kernel
// thread id and the requests it answered so far); "quit", or the end of
// stdin, stops the io_context, joins its threads and exits 0.
//
// Built by make asio: g++ -O2 -std=c++17 -pthread.

#include <asio.hpp>
#include <asio/version.hpp>

#include <unistd.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using asio::ip::tcp;

namespace {

// The fixed body of /work: harness.NginxBody (must match).
constexpr std::string_view kBody = "concbench\n";

const std::string kOK =
    "HTTP/1.1 200 OK\r\nServer: asio\r\nContent-Type: text/plain\r\nContent-Length: " +
    std::to_string(kBody.size()) + "\r\nConnection: keep-alive\r\n\r\n" + std::string(kBody);
const std::string kOKClose =
    "HTTP/1.1 200 OK\r\nServer: asio\r\nContent-Type: text/plain\r\nContent-Length: " +
    std::to_string(kBody.size()) + "\r\nConnection: close\r\n\r\n" + std::string(kBody);
const std::string kNotFound =
    "HTTP/1.1 404 Not Found\r\nServer: asio\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n";
const std::string kNotFoundClose =
    "HTTP/1.1 404 Not Found\r\nServer: asio\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

// A request's head and body must fit the connection's buffer: a larger
// one is malformed here (the dialect's /work requests are a few hundred
// bytes).
constexpr std::size_t kBufSize = 16 << 10;

// Slot is one io_context thread's counters, on a cache line of its own;
// the harness reads them from the control thread ("stats").
struct alignas(64) Slot {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<long> tid{0};
};

thread_local Slot* my_slot = nullptr;
std::atomic<std::uint64_t> accepted{0};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parsed is what parse found at the front of a buffer.
enum class Parsed { kRequest, kIncomplete, kMalformed };

// parse parses one HTTP/1.x request at the front of buf: on kRequest it
// sets used (head and body), work (the path is /work, the query aside)
// and close (Connection: close, or HTTP/1.0 without keep-alive).
Parsed parse(std::string_view buf, std::size_t& used, bool& work, bool& close) {
  std::size_t end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return buf.size() >= kBufSize ? Parsed::kMalformed : Parsed::kIncomplete;
  }
  std::string_view head = buf.substr(0, end + 2);  // each line ends in CRLF
  std::size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  std::size_t sp1 = line.find(' ');
  std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Parsed::kMalformed;
  }
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  bool keep_alive;
  if (version == "HTTP/1.1") {
    keep_alive = true;
  } else if (version == "HTTP/1.0") {
    keep_alive = false;
  } else {
    return Parsed::kMalformed;
  }
  if (target.empty() || target.front() != '/') return Parsed::kMalformed;
  work = target.substr(0, target.find('?')) == "/work";
  std::uint64_t length = 0;
  for (std::size_t at = eol + 2; at < head.size();) {
    std::size_t next = head.find("\r\n", at);
    std::string_view h = head.substr(at, next - at);
    at = next + 2;
    std::size_t colon = h.find(':');
    if (colon == 0 || colon == std::string_view::npos || h.find_first_of(" \t") < colon) {
      return Parsed::kMalformed;
    }
    std::string_view name = h.substr(0, colon), value = trim(h.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string_view::npos) {
        return Parsed::kMalformed;
      }
      length = std::stoull(std::string(value));
    } else if (iequals(name, "Transfer-Encoding")) {
      return Parsed::kMalformed;  // the dialect sends no chunked bodies
    } else if (iequals(name, "Connection")) {
      if (iequals(value, "close")) keep_alive = false;
      if (iequals(value, "keep-alive")) keep_alive = true;
    }
  }
  std::size_t total = end + 4 + length;
  if (total > kBufSize) return Parsed::kMalformed;
  if (buf.size() < total) return Parsed::kIncomplete;
  used = total;
  close = !keep_alive;
  return Parsed::kRequest;
}

// Conn is one connection: its handlers hold it (shared_ptr) while an
// operation on it is outstanding; the last one to let go closes the
// socket. Only one operation is outstanding at a time (a read, or the
// write of a read's answers), so its handlers never run concurrently
// and need no strand.
class Conn : public std::enable_shared_from_this<Conn> {
 public:
  explicit Conn(tcp::socket s) : sock_(std::move(s)) {}

  void read() {
    auto self = shared_from_this();
    sock_.async_read_some(asio::buffer(buf_.data() + have_, buf_.size() - have_),
                          [self](const asio::error_code& ec, std::size_t n) { self->on_read(ec, n); });
  }

 private:
  void on_read(const asio::error_code& ec, std::size_t n) {
    if (ec) return;  // EOF, reset or stopped: closed with the last reference
    have_ += n;
    out_.clear();
    std::size_t off = 0;
    bool close = false;
    std::uint64_t answered = 0;
    while (!close) {
      std::size_t used = 0;
      bool work = false;
      Parsed p = parse(std::string_view(buf_.data() + off, have_ - off), used, work, close);
      if (p == Parsed::kMalformed) {
        asio::error_code ignored;
        sock_.shutdown(tcp::socket::shutdown_both, ignored);
        return;
      }
      if (p == Parsed::kIncomplete) break;
      out_ += work ? (close ? kOKClose : kOK) : (close ? kNotFoundClose : kNotFound);
      off += used;
      answered++;
    }
    if (off > 0) {
      std::memmove(buf_.data(), buf_.data() + off, have_ - off);
      have_ -= off;
    }
    if (answered == 0) {
      read();
      return;
    }
    if (my_slot != nullptr) my_slot->requests.fetch_add(answered, std::memory_order_relaxed);
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(out_), [self, close](const asio::error_code& ec, std::size_t) {
      if (ec) return;
      if (close) {
        asio::error_code ignored;
        self->sock_.shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->read();
    });
  }

  tcp::socket sock_;
  std::array<char, kBufSize> buf_;
  std::size_t have_ = 0;
  std::string out_;
};

// accept arms one async_accept; its handler starts the connection and
// arms the next one (asio's one connection per operation).
void accept(tcp::acceptor& acc) {
  acc.async_accept([&acc](const asio::error_code& ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted) return;  // stopped
    if (!ec) {
      accepted.fetch_add(1, std::memory_order_relaxed);
      asio::error_code ignored;
      s.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Conn>(std::move(s))->read();
    }
    // Another error (EMFILE, a connection reset before it was
    // accepted): the next accept may succeed.
    accept(acc);
  });
}

int usage() {
  std::fprintf(stderr, "usage: asio-server THREADS HOST PORT\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return usage();
  char* end = nullptr;
  long threads = std::strtol(argv[1], &end, 10);
  long port = std::strtol(argv[3], nullptr, 10);
  if (*end != '\0' || threads < 1 || threads > 4096 || port < 0 || port > 65535) return usage();
  try {
    asio::io_context io(static_cast<int>(threads));
    tcp::endpoint ep(asio::ip::make_address(argv[2]), static_cast<unsigned short>(port));
    tcp::acceptor acc(io);
    acc.open(ep.protocol());
    acc.set_option(tcp::acceptor::reuse_address(true));
    acc.bind(ep);
    acc.listen(asio::socket_base::max_listen_connections);
    accept(acc);

    std::unique_ptr<Slot[]> slots(new Slot[threads]);
    std::mutex mu;
    std::condition_variable cv;
    long started = 0;
    std::vector<std::thread> pool;
    for (long i = 0; i < threads; i++) {
      pool.emplace_back([&, i] {
        my_slot = &slots[i];
        my_slot->tid.store(static_cast<long>(::syscall(SYS_gettid)));
        {
          std::lock_guard<std::mutex> l(mu);
          started++;
        }
        cv.notify_one();
        io.run();
      });
    }
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return started == threads; });
    }
    tcp::endpoint at = acc.local_endpoint();
    std::string host = at.address().to_string();
    if (at.address().is_v6()) host = "[" + host + "]";
    std::cout << "listening " << host << ":" << at.port() << " asio/" << ASIO_VERSION / 100000 << "."
              << ASIO_VERSION / 100 % 1000 << "." << ASIO_VERSION % 100 << std::endl;

    std::string cmd;
    while (std::getline(std::cin, cmd) && cmd != "quit") {
      if (cmd == "stats") {
        std::string line = "stats " + std::to_string(accepted.load(std::memory_order_relaxed));
        for (long i = 0; i < threads; i++) {
          line += " " + std::to_string(slots[i].tid.load()) + ":" +
                  std::to_string(slots[i].requests.load(std::memory_order_relaxed));
        }
        std::cout << line << std::endl;
      } else {
        std::cout << "error unknown command" << std::endl;
      }
    }
    io.stop();
    for (auto& t : pool) t.join();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asio-server: %s\n", e.what());
    return 1;
  }
  return 0;
}

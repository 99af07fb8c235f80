#include "server/http_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "server/api_error.h"

namespace eagerlm::server {

using Clock = std::chrono::steady_clock;

namespace {

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

int poll_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<int64_t>(left, 0, 100));  // wake at least every 100 ms to re-check
}

constexpr size_t kMaxRequestsPerConnection = 1000;

// When the job now running on this thread was queued.
thread_local Clock::time_point t_enqueued;

}  // namespace

// A fixed set of threads, each serving one connection at a time; connections beyond them wait.
class ConnectionPool final : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ConnectionPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back({Clock::now(), std::move(fn)});
      waiting_ = jobs_.size();
    }
    ready_.notify_one();
  }

  // Runs what is queued (each job sees the server stopped and closes at once), then joins.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }

  size_t waiting() const { return waiting_.load(); }

 private:
  void work() {
    for (;;) {
      std::pair<Clock::time_point, std::function<void()>> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
        waiting_ = jobs_.size();
      }
      t_enqueued = job.first;
      job.second();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<Clock::time_point, std::function<void()>>> jobs_;
  std::atomic<size_t> waiting_{0};
  bool stop_ = false;
};

namespace {

// One connection's socket as cpp-httplib's Stream, with the limits above. Reads are buffered
// (the parser reads header lines a byte at a time); the buffer lives as long as the connection,
// so pipelined requests keep their bytes.
class Connection final : public httplib::Stream {
 public:
  Connection(int fd, const TransportLimits& limits) : fd_(fd), limits_(limits) {}

  void begin_request() {
    deadline_ = Clock::now() + seconds(limits_.read_timeout_s);
    request_bytes_ = end_ - begin_;
    too_large = timed_out = false;
  }

  // Waits up to `idle_s` for the next request's first byte; false when it did not come, or
  // give_up() said to stop waiting.
  bool wait_for_request(double idle_s, const std::function<bool()>& give_up) {
    if (begin_ < end_) return true;
    const auto deadline = Clock::now() + seconds(idle_s);
    while (Clock::now() < deadline) {
      if (give_up()) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, std::max(1, poll_ms(deadline)));
      if (r > 0) return true;  // data, or a hang-up the next read reports
      if (r < 0 && errno != EINTR) return false;
    }
    return false;
  }

  bool gone() const {
    if (write_failed) return true;
    pollfd p{fd_, short(POLLIN | POLLRDHUP), 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLERR | POLLHUP | POLLRDHUP)) return true;
    if (p.revents & POLLIN) {
      char c;
      return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;  // 0: orderly close
    }
    return false;
  }

  bool is_readable() const override {
    if (begin_ < end_) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  bool is_writable() const override {
    if (write_failed) return false;
    pollfd p{fd_, POLLOUT, 0};
    return ::poll(&p, 1, 0) > 0 && !(p.revents & (POLLERR | POLLHUP));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_ && !fill()) return -1;
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (write_failed) return -1;
    const auto deadline = Clock::now() + seconds(limits_.write_timeout_s);
    for (;;) {
      const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) break;
      if (Clock::now() >= deadline) break;  // the client stopped reading
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, std::max(1, poll_ms(deadline))) < 0 && errno != EINTR) break;
      if (p.revents & (POLLERR | POLLHUP)) break;
    }
    write_failed = true;
    return -1;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
  socket_t socket() const override { return fd_; }

  bool close_requested = false, too_large = false, timed_out = false, write_failed = false;

 private:
  bool fill() {
    if (request_bytes_ >= limits_.max_request_bytes) {
      too_large = true;
      return false;
    }
    for (;;) {
      if (Clock::now() >= deadline_) {
        timed_out = true;
        return false;
      }
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, std::max(1, poll_ms(deadline_)));
      if (r < 0 && errno != EINTR) return false;
      if (r <= 0) continue;
      const size_t room = std::min(sizeof buffer_, limits_.max_request_bytes - request_bytes_);
      const ssize_t n = ::recv(fd_, buffer_, room, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) return false;  // closed, or an error
      begin_ = 0;
      end_ = size_t(n);
      request_bytes_ += size_t(n);
      return true;
    }
  }

  void address(bool peer, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int r = peer ? ::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len)
                       : ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    ip.clear();
    port = -1;
    if (r != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      port = ntohs(in->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
      ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
      port = ntohs(in6->sin6_port);
    }
    ip = text;
  }

  int fd_;
  TransportLimits limits_;
  char buffer_[4096];
  size_t begin_ = 0, end_ = 0;
  Clock::time_point deadline_{};
  size_t request_bytes_ = 0;
};

thread_local Connection* t_connection = nullptr;

}  // namespace

HttpServer::HttpServer(const TransportLimits& limits) : limits_(limits) {
  new_task_queue = [this] {
    auto* pool = new ConnectionPool(std::max<size_t>(limits_.threads, 1));
    pool_ = pool;
    return pool;
  };
  set_tcp_nodelay(true);  // streamed tokens go out at once, not after Nagle's delay
}

HttpServer::~HttpServer() = default;

bool HttpServer::set_backlog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

bool HttpServer::client_gone() { return t_connection && t_connection->gone(); }
void HttpServer::close_after_response() {
  if (t_connection) t_connection->close_requested = true;
}
bool HttpServer::request_too_large() { return t_connection && t_connection->too_large; }
bool HttpServer::request_timed_out() { return t_connection && t_connection->timed_out; }

void HttpServer::reject_unserved(socket_t sock) {
  const std::string body = error_body(503, "the server is overloaded: the connection waited too long for a thread");
  const std::string response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                               "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(sock, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  if (Clock::now() - t_enqueued > seconds(limits_.read_timeout_s)) {
    reject_unserved(sock);
  } else {
    Connection c(sock, limits_);
    t_connection = &c;
    size_t served = 0;
    while (svr_sock_ != INVALID_SOCKET) {
      const auto give_up = [&] {
        if (svr_sock_ == INVALID_SOCKET) return true;
        // A kept-alive connection yields to waiting ones, and to draining; a new one is answered.
        const ConnectionPool* pool = pool_.load();
        return served > 0 && (closing_ || (pool && pool->waiting() > 0));
      };
      if (!c.wait_for_request(served == 0 ? limits_.read_timeout_s : limits_.idle_timeout_s, give_up)) break;
      c.begin_request();
      const bool last = closing_ || served + 1 >= kMaxRequestsPerConnection;
      bool closed = false, ok = false;
      try {
        ok = process_request(c, last, closed, nullptr);
      } catch (...) {
        ok = false;  // a handler's failure ends this connection, never the server
      }
      ++served;
      if (!ok || closed || last || c.close_requested || c.write_failed) break;
    }
    t_connection = nullptr;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return true;
}

}  // namespace eagerlm::server

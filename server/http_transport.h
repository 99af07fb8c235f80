// Connections: cpp-httplib parses HTTP and routes; this layer owns the sockets, so that every
// limit holds whatever a client does. Each connection is served by one thread of a fixed pool:
//  - a request's headers and body must arrive within read_timeout in all (not per read), and
//    within max_request_bytes, so a slow or endless sender is cut off;
//  - an idle keep-alive connection is closed after idle_timeout, or at once when connections are
//    waiting for a thread, or when the server is draining;
//  - a write the client does not take within write_timeout fails;
//  - a connection that waited for a thread longer than read_timeout is answered 503 unread;
//  - handlers can ask, on their own thread, whether the client has gone (the peer closed the
//    connection or a write failed), to cancel work nobody will read.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>

namespace eagerlm::server {

struct TransportLimits {
  double read_timeout_s = 10;
  double idle_timeout_s = 5;
  double write_timeout_s = 10;
  size_t max_request_bytes = (1u << 20) + (64u << 10);  // headers and body of one request
  size_t threads = 64;                                   // connections served at once
};

class ConnectionPool;

class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(const TransportLimits& limits);
  ~HttpServer() override;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Draining: from now on every response says "Connection: close" and idle connections end.
  void close_connections() { closing_ = true; }
  const TransportLimits& limits() const { return limits_; }
  // After binding: cpp-httplib listens with a backlog of 5 (compiled into Debian's library), so a
  // burst of connections on a busy machine overflowed it and clients saw resets. Linux lets
  // listen() be called again to raise it (the kernel caps it at net.core.somaxconn).
  bool set_backlog(int backlog);

  // For handlers, about the connection of the calling thread (false outside a connection):
  static bool client_gone();            // the peer closed its side, or a write failed
  static void close_after_response();   // the connection ends after this response
  static bool request_too_large();      // reading stopped at max_request_bytes
  static bool request_timed_out();      // reading stopped at read_timeout

 private:
  bool process_and_close_socket(socket_t sock) override;
  void reject_unserved(socket_t sock);

  TransportLimits limits_;
  std::atomic<bool> closing_{false};
  std::atomic<ConnectionPool*> pool_{nullptr};
};

}  // namespace eagerlm::server

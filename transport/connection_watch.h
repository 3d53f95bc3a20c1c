#ifndef ACTEX_TRANSPORT_CONNECTION_WATCH_H_
#define ACTEX_TRANSPORT_CONNECTION_WATCH_H_

#include <chrono>
#include <expected>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

namespace actex {

// What happened to one tcp connection of a watched socket.
struct ConnectionEvent {
  enum class Kind {
    kAccepted,         // a peer connected to the bound socket
    kConnected,        // the connecting socket reached its peer
    kDisconnected,     // the connection closed (peer crashed, exited or network lost)
    kHandshakeFailed,  // the peer did not speak ZeroMQ (ZMTP) correctly; dropped
  };
  Kind kind;
  // The connection's file descriptor for kAccepted, kConnected and kDisconnected,
  // the same value zmq_msg_get(ZMQ_SRCFD) reports on messages it carried; the
  // protocol error code (ZMQ_PROTOCOL_ERROR_*) or errno for kHandshakeFailed.
  int value = 0;
  std::string endpoint;  // the socket's own endpoint the event concerns
};

// Watches the tcp connections of one socket with zmq_socket_monitor, so a peer
// whose process died is noticed as soon as its connection closes, and a stranger
// writing garbage into a port is noticed at all (ZeroMQ drops such a connection
// before any message reaches the application).
//
// The watch must be used from the thread that uses the watched socket, and must be
// destroyed before that socket is closed: it stops the monitor then. It follows the
// ZeroMQ socket itself, not the zmq::socket_t naming it, so the socket_t may move
// (into a struct returned by value, say) while watched. A monitor left running past
// its reader would block ZeroMQ's I/O thread, and with it every connection of the
// context, at the socket's next event (libzmq sends events blocking).
// Events arrive asynchronously, shortly after the fact; nothing is lost while the
// watch is not read, up to the monitor socket's high-water mark (1000 events), where
// the same blocking begins: read it every turn of the loop that uses the socket.
class ConnectionWatch {
 public:
  static std::expected<std::unique_ptr<ConnectionWatch>, std::string> Create(
      zmq::context_t& context, zmq::socket_t& watched);
  ~ConnectionWatch();

  // Readable when events are waiting, for zmq::poll beside the watched socket.
  zmq::socket_t& socket() { return events_; }
  // Every event that arrived so far, without blocking. Events of no interest
  // (listening, retries, ...) are skipped.
  std::vector<ConnectionEvent> Drain();

 private:
  ConnectionWatch(void* watched, zmq::socket_t events);
  void* watched_;  // libzmq's socket, which moving a zmq::socket_t leaves where it is
  zmq::socket_t events_;
};

}  // namespace actex

#endif  // ACTEX_TRANSPORT_CONNECTION_WATCH_H_

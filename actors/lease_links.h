#ifndef ACTEX_ACTORS_LEASE_LINKS_H_
#define ACTEX_ACTORS_LEASE_LINKS_H_

#include <zmq.hpp>

#include "actors/loader_actor.h"
#include "actors/writer_actor.h"

namespace actex {

// A leased host's inproc links between its loader, its writer and the node, which
// relays them to the coordinator (PROTOCOL.md section 4, leased job): the node's ends
// of them, and the endpoints the two actors are given.
class LeaseLinks {
 public:
  // Binds and connects the node's ends; the loader and writer bind theirs later
  // (inproc allows either order).
  explicit LeaseLinks(zmq::context_t& context);

  // Points the writer at the node and the loader: listings, acks, chunks through.
  void ConfigureWriter(WriterConfig& writer) const;
  LoaderConfig::Leasing LoaderLeasing() const;

  zmq::socket_t& requests() { return requests_; }  // PULL: LeaseRequest from the loader
  zmq::socket_t& listings() { return listings_; }  // PULL: ListingIntent, ChunksListed
  zmq::socket_t& grants() { return grants_; }      // PUSH: LeaseGrant to the loader
  zmq::socket_t& acks() { return acks_; }          // PUSH: ListingAck to the writer

 private:
  zmq::socket_t requests_, listings_, grants_, acks_;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_LEASE_LINKS_H_

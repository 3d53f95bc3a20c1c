#include "actors/lease_links.h"

#include "transport/interrupted.h"

namespace actex {
namespace {

constexpr std::chrono::seconds kListingInterval{1};

constexpr const char* kRequestsEndpoint = "inproc://lease-requests";  // loader -> node
constexpr const char* kListingsEndpoint = "inproc://listings";        // writer -> node
constexpr const char* kAcksEndpoint = "inproc://listing-acks";        // node -> writer
// node (grants) and writer (chunks through the pipeline) -> loader
constexpr const char* kLoaderInboxEndpoint = "inproc://loader-inbox";

zmq::socket_t MakeSocket(zmq::context_t& context, zmq::socket_type type) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, 0);
  // A PUSH to an actor that ended (a drain) must not block the node: what it never
  // reads is given back with the host's other unlisted chunks.
  if (type == zmq::socket_type::push) socket.set(zmq::sockopt::sndtimeo, 0);
  return socket;
}

}  // namespace

LeaseLinks::LeaseLinks(zmq::context_t& context)
    : requests_(MakeSocket(context, zmq::socket_type::pull)),
      listings_(MakeSocket(context, zmq::socket_type::pull)),
      grants_(MakeSocket(context, zmq::socket_type::push)),
      acks_(MakeSocket(context, zmq::socket_type::push)) {
  RetryInterrupted([&] { requests_.bind(kRequestsEndpoint); });
  RetryInterrupted([&] { listings_.bind(kListingsEndpoint); });
  RetryInterrupted([&] { grants_.connect(kLoaderInboxEndpoint); });
  RetryInterrupted([&] { acks_.connect(kAcksEndpoint); });
}

void LeaseLinks::ConfigureWriter(WriterConfig& writer) const {
  writer.listings_endpoint = kListingsEndpoint;
  writer.listing_acks_endpoint = kAcksEndpoint;
  writer.chunks_through_endpoint = kLoaderInboxEndpoint;
  // A host lost between asking to list chunks and having listed them leaves them to
  // its folder; listing at most once a second keeps that window a small part of its
  // time, whatever the shard size.
  writer.shards.listing_interval = kListingInterval;
}

LoaderConfig::Leasing LeaseLinks::LoaderLeasing() const {
  return {.requests_endpoint = kRequestsEndpoint, .inbox_endpoint = kLoaderInboxEndpoint};
}

}  // namespace actex

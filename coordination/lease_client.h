#ifndef ACTEX_COORDINATION_LEASE_CLIENT_H_
#define ACTEX_COORDINATION_LEASE_CLIENT_H_

#include <vector>

#include "transport/schema.h"

namespace actex {

// A node's side of work leases (PROTOCOL.md "Leases"), as its supervisor relays them
// between the loader and writer and the coordinator: a request is answered by a grant
// and a listing intent by an ack, which arrive while the client is serviced and wait
// for TakeGrants and TakeListingAcks; a listing is not answered. CoordinatorClient
// implements it; the coordinator's side is LeaseDesk (lease_desk.h).
class LeaseClient {
 public:
  virtual ~LeaseClient() = default;

  // Asks the coordinator for a chunk for the replica the request names.
  virtual void RequestLease(const LeaseRequestMessage& request) = 0;
  // Asks whether the writer may list these chunks (the ack says).
  virtual void ReportListing(const ListingIntentMessage& intent) = 0;
  // Tells the coordinator these chunks are listed in the host's folder.
  virtual void ReportListed(const ChunksListedMessage& listed) = 0;
  // The grants and acks that arrived since the last call, in order of arrival.
  virtual std::vector<LeaseGrantMessage> TakeGrants() = 0;
  virtual std::vector<ListingAckMessage> TakeListingAcks() = 0;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_LEASE_CLIENT_H_

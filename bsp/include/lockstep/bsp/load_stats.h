#pragma once

// What a worker's load of its partition read and kept, which the job reports (runner::JobDetails::
// on_partition_loaded): figures of the load library (lockstep/load/partitioned_load.h), kept
// below both the load that fills them and the runner that hands them on.

#include <cstdint>

namespace lockstep::bsp {

// How much of the input a worker handled: a partitioned load is meant to keep these a fraction of
// the whole (tests check it).
struct PartitionLoadStats {
  uint64_t lines_parsed = 0;    // lines of its shares of the files
  uint64_t records_parsed = 0;  // vertices and edges on those lines
  uint64_t vertices_known = 0;  // owned vertices and remote ends of its edges
  uint64_t edges_received = 0;  // stored edges with an end it owns
  uint64_t rounds = 0;
  uint64_t direct_rounds = 0;  // rounds of an edge list whose IDs its direct table covered
  // Edge records received with their partitions in their IDs (8 bytes each, not 12), and of those
  // the ones with 3-byte IDs (6 bytes each).
  uint64_t records_with_partitions = 0;
  uint64_t slim_records = 0;
  // Of the 6-byte ones, those whose IDs are less the load's base (IDs far from 0).
  uint64_t based_records = 0;
  bool oriented = false;  // the part's edges go to the build oriented (PartEdges)
  // Bytes of the received edges' blocks whose pages became the packed edges' (moved, not faulted
  // in afresh).
  uint64_t bytes_moved = 0;
  // Where the worker stopped receiving integer IDs raw (docs/design.md §4.4): it never did (not an
  // edge list, or turned off); at an announcement or a record it could not keep so; at the
  // ranking, because another worker had stopped; or it never stopped, and the global indexes
  // came from the union of the owned IDs' bitmaps.
  enum class RawEnd : uint8_t { kNotRaw, kAnnouncement, kRecord, kRanking, kBitmaps };
  RawEnd raw_end = RawEnd::kNotRaw;
  // The load's ID base, from its first round's least IDs: 0 for IDs that begin near 0. Receiving
  // raw keeps IDs less it; 6-byte records of IDs far from 0 spell them less it.
  uint64_t id_base = 0;
};

}  // namespace lockstep::bsp
